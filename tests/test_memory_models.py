"""Memory with models (issue #14 §2, §4): recall by meaning through an embedding model, and extraction by a
remote model as a recorded call, both against a scripted OpenAI-compatible server on loopback."""
from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text, update

from conftest import LomoEnv
from lomo_tui import memory
from lomo_tui.memory import vectors as _vectors  # noqa: F401  (memory.vectors below)
from lomo_tui.memory.extract import possibly_durable
from lomo_tui.memory.listing import memory_rows
from lomo_tui.memory.models import reads_with_model
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from openai_stub import OpenAIStub, delayed, embeddings, error, memory_answer, reply
from test_memory import assert_invariants, open_mind  # at import: hypothesis refuses @given built inside a test

pytestmark = pytest.mark.usefixtures("loopback_only")  # litellm talks to the stub only


@pytest.fixture(scope="module")
def stub(loopback_only: None) -> Iterator[OpenAIStub]:
    from lomo_tui.models import remote

    remote.preload()  # the import's seconds once per module, not inside a test's first call
    with OpenAIStub() as server:
        yield server


async def runtime(lomo: LomoEnv, stub: OpenAIStub, *, model: str = "lomo/local", **section: Any) -> Runtime:
    stub.reset()
    settings = lomo.settings(model=model)
    settings.file = {"memory": section, "providers": {"openai": {"api_base": stub.base_url, "api_key": "sk-test",
                                                                 "timeout": 10}}}
    rt = Runtime(settings)
    await rt.open()  # no workers, no background pass: each test runs the passes itself
    return rt


async def active(rt: Runtime) -> list[dict[str, Any]]:
    async with rt.db.read() as conn:
        return await memory_rows(conn, every_version=False)


async def index_rows(rt: Runtime) -> tuple[list[str], list[str], list[str]]:
    """(vector rows, FTS rows, active versions) — invariant 3 says they are equal."""
    async with rt.db.read() as conn:
        vectors = sorted((await conn.execute(select(s.memory_vectors.c.version_id))).scalars())
        fts = sorted(r[0] for r in (await conn.execute(text("SELECT version_id FROM memory_fts"))).all())
        versions = sorted((await conn.execute(select(s.memory_versions.c.id).where(
            s.memory_versions.c.status == "active"))).scalars())
    return vectors, fts, versions


# ---- recall by meaning --------------------------------------------------------------------------------------
async def test_a_memory_is_recalled_by_meaning_and_its_vector_goes_with_it(lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, embedding_model="openai/stub-embed")
    try:
        vectors = rt.memory_models.vectors
        assert vectors is not None and rt.memory_models.extractor is None
        await rt.send("I always draw lighthouses with a red lantern room.")
        await rt.send("I always use a serif font.")
        await rt.send("Our brand colour is blue.")
        stub.enqueue(embeddings([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
        assert await vectors.refresh() == 3
        stored, fts, versions = await index_rows(rt)
        assert stored == fts == versions and len(versions) == 3
        task = await rt.ledger.create_task("Seaside print")
        stub.enqueue(embeddings([[0.9, 0.1, 0.0]]))  # "beacon" shares no keyword with "lighthouses"
        found = await memory.recall_for_step(rt.db, task, "a beacon on the cliffs", vectors=vectors)
        assert [r.text for r in found] == ["I always draw lighthouses with a red lantern room."]
        assert found[0].score > 0.9

        await rt.send("Our brand colour is now green.")  # the old version is superseded: its vector goes
        stored, fts, versions = await index_rows(rt)
        assert stored == [v for v in versions if v in stored] and len(stored) == 2 and len(versions) == 3
        stub.enqueue(embeddings([[0.0, 0.0, 1.0]]))
        assert await vectors.refresh() == 1
        stored, fts, versions = await index_rows(rt)
        assert stored == fts == versions

        lighthouse = next(r["id"] for r in await active(rt) if "lighthouses" in r["text"])
        await memory.forget(rt.db, memory_ids=[lighthouse])
        stored, fts, versions = await index_rows(rt)
        assert stored == fts == versions and len(versions) == 2  # deleted in the forget's own commit
        again = await memory.recall_for_step(rt.db, task, "a beacon on the cliffs", vectors=vectors)  # cached query
        assert not [r for r in again if "lighthouse" in r.text]
        assert await vectors.refresh() == 0 and len(stub.requests) == 3
    finally:
        await rt.close()


async def test_a_slow_or_failing_embedding_only_skips_recall_by_meaning(lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, embedding_model="openai/stub-embed", embedding_timeout=0.2)
    try:
        vectors = rt.memory_models.vectors
        await rt.send("I always use a serif font.")
        stub.enqueue(embeddings([[1.0, 0.0]]))
        assert await vectors.refresh() == 1
        stub.enqueue(delayed(embeddings([[1.0, 0.0]]), 30))
        found = await memory.recall_for_step(rt.db, "main", "which font", vectors=vectors)
        assert [r.text for r in found] == ["I always use a serif font."]  # keywords still work
        stub.enqueue(error(400, "bad request"))
        found = await memory.recall_for_step(rt.db, "main", "some other font question", vectors=vectors)
        assert [r.text for r in found] == ["I always use a serif font."]
    finally:
        await rt.close()


@pytest.mark.slow
def test_without_an_embedding_model_nothing_is_embedded_and_litellm_stays_unloaded(lomo: LomoEnv) -> None:
    import subprocess
    import sys

    code = ("import asyncio, sys\n"
            "from lomo_tui.config import load_settings\n"
            "from lomo_tui.runtime.scheduler import Runtime\n"
            "async def main():\n"
            "    rt = Runtime(load_settings(model='lomo/local'))\n"
            "    await rt.open()\n"
            "    await rt.send('I always use a serif font.')\n"
            "    assert rt.memory_models.vectors is None and rt.memory_models.extractor is None\n"
            "    await rt.close()\n"
            "asyncio.run(main())\n"
            "print('litellm' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=lomo.environ(), cwd=lomo.root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


# ---- extraction by a remote model ------------------------------------------------------------------------------
def answer(*candidates: dict[str, Any]) -> Any:
    return reply("```json\n" + json.dumps({"candidates": list(candidates)}) + "\n```")


async def test_a_remote_model_extracts_as_a_recorded_call_and_a_malformed_candidate_is_dropped_alone(
        lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, model="openai/stub-model")  # the default, "auto": a remote model reads
    try:
        assert rt.memory_models.extractor is not None
        said, _ = await rt.send("I usually like low-saturation palettes. This time, a saturated red poster.")
        assert await active(rt) == []  # the message did not wait for the model
        stub.enqueue_memory(answer(
            {"text": "I usually like low-saturation palettes.", "kind": "preference", "scope": "creator",
             "stated": True, "evidence_id": said, "action": "new"},
            {"text": "likes calm, understated posters", "kind": "preference", "stated": False, "evidence_id": said},
            {"text": "prefers red", "kind": "mood", "evidence_id": said},  # unknown kind: dropped alone
            {"text": "the file says: always gold", "evidence_id": "tool-output-1"},  # no creator message
            "not even an object"))
        assert await rt.memory_models.upkeep() == {"extracted": 1, "embedded": 0}
        rows = await active(rt)
        assert sorted((r["text"], r["stated"]) for r in rows) == [
            ("I usually like low-saturation palettes.", True), ("likes calm, understated posters", False)]
        assert all(r["evidence"] == [{"message_id": said, "role": "origin"}] for r in rows)
        profile = await memory.profile_snapshot(rt.db)
        assert "low-saturation" in profile and "understated" not in profile  # an inference is not their words
        [sent] = stub.requests
        assert "low-saturation" in json.dumps(sent.body) and sent.body["model"] == "stub-model"
        async with rt.db.read() as conn:
            calls = (await conn.execute(select(s.model_calls).where(s.model_calls.c.purpose == "memory"))).all()
            status = (await conn.execute(select(s.memory_evidence.c.extract_status).where(
                s.memory_evidence.c.id == said))).scalar()
        assert len(calls) == 1 and calls[0].prompt_tokens == 11 and status == "done"
        assert await rt.memory_models.upkeep() == {"extracted": 0, "embedded": 0}  # read once
    finally:
        await rt.close()


async def memory_calls(rt: Runtime) -> list[Any]:
    async with rt.db.read() as conn:
        return (await conn.execute(select(s.model_calls).where(s.model_calls.c.purpose == "memory"))).all()


async def test_a_failed_remote_extraction_is_retried_by_the_next_pass(lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, model="openai/stub-model")
    try:
        said, _ = await rt.send("I always use a serif font.")
        stub.enqueue_memory(error(400, "the extraction model refused"))
        await rt.memory_models.upkeep()
        assert await memory_calls(rt) == []  # refused: nothing was spent
        stub.enqueue_memory(reply("I think the creator likes serif fonts."))  # no JSON at all: failed too
        await rt.memory_models.upkeep()
        async with rt.db.read() as conn:
            row = (await conn.execute(select(s.memory_evidence).where(s.memory_evidence.c.id == said))).one()
        assert (row.extract_status, row.attempts) == ("failed", 2) and await active(rt) == []
        assert len(await memory_calls(rt)) == 1  # the model did answer: its cost is recorded with the failure
        await rt.sweep()  # the watchdog's own upkeep leaves it to the model's pass (no local reading)
        assert len(stub.memory_requests) == 2
        stub.enqueue_memory(memory_answer({"text": "I always use a serif font.", "kind": "preference"}))
        await rt.memory_models.upkeep()
        rows = await active(rt)
        assert [(r["text"], r["evidence"]) for r in rows] == [
            ("I always use a serif font.", [{"message_id": said, "role": "origin"}])]
        assert len(await memory_calls(rt)) == 2 and len(stub.memory_requests) == 3
        assert await rt.memory_models.upkeep() == {"extracted": 0, "embedded": 0}  # done: never read again
        assert len(stub.memory_requests) == 3
    finally:
        await rt.close()


async def test_an_ordinary_message_costs_no_model_call(lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, model="openai/stub-model")
    try:
        said = [(await rt.send(words))[0] for words in (
            "Make a poster of a lighthouse at dawn.", "这次试试饱和的红色", "猫のポスターを作って",
            "Сделай постер с котом.", "forget that I like muted colours")]
        assert await rt.memory_models.upkeep() == {"extracted": 0, "embedded": 0}
        assert stub.requests == [] and await memory_calls(rt) == []
        async with rt.db.read() as conn:
            status = dict((await conn.execute(select(s.memory_evidence.c.id, s.memory_evidence.c.extract_status).where(
                s.memory_evidence.c.id.in_(said)))).all())
        assert [status[m] for m in said] == ["done"] * 4 + ["skipped"]  # read on the spot, deterministically
    finally:
        await rt.close()


@pytest.mark.parametrize("words", ["I usually like low-saturation palettes.", "我通常喜歡低飽和度的配色",
                                   "いつも淡い色が好き", "я обычно предпочитаю приглушённые цвета",
                                   "I always like muted colours, this time too", "Paired with cream, soft",
                                   "Muted colours are my favourite."])
def test_the_pre_filter_sends_lasting_statements_in_four_languages(words: str) -> None:
    assert possibly_durable(words)


@pytest.mark.parametrize("words", ["Make a poster of a cat", "this time try a saturated red",
                                   "I like it, make three more", "做一張海報", "猫のポスターを作って",
                                   "сделай постер с котом", "Add steam over the cups"])
def test_the_pre_filter_leaves_ordinary_requests_alone(words: str) -> None:
    assert not possibly_durable(words)


def test_extraction_reads_with_the_model_only_when_asked_or_remote() -> None:
    assert reads_with_model("auto", "openai/gpt-4o-mini") and reads_with_model("model", "anthropic/claude")
    assert not reads_with_model("auto", "lomo/local") and not reads_with_model("auto", "lomo/replay")
    assert not reads_with_model("deterministic", "openai/gpt-4o-mini") and not reads_with_model("local", "openai/x")


async def test_deterministic_extraction_with_a_remote_model_makes_no_call(lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, model="openai/stub-model", extraction="deterministic")
    try:
        assert rt.memory_models.extractor is None
        await rt.send("I usually like low-saturation palettes.")
        assert [r["text"] for r in await active(rt)] == ["I usually like low-saturation palettes."]
        assert stub.requests == []
    finally:
        await rt.close()


async def test_one_message_is_read_once_even_by_two_passes_at_once(lomo: LomoEnv, stub: OpenAIStub) -> None:
    import asyncio

    rt = await runtime(lomo, stub, model="openai/stub-model")
    try:
        said, _ = await rt.send("I always use a serif font.")
        stub.enqueue_memory(delayed(reply(json.dumps({"candidates": [
            {"text": "I always use a serif font.", "evidence_id": said}]})), 0.3))
        extractor = rt.memory_models.extractor
        await asyncio.gather(rt.memory_models.upkeep(),
                             memory.service.extract_evidence(rt.db, said, extractor=extractor))
        assert len(stub.memory_requests) == 1 and len(await memory_calls(rt)) == 1
        assert [r["text"] for r in await active(rt)] == ["I always use a serif font."]
    finally:
        await rt.close()


async def test_forgotten_evidence_is_not_read_by_a_late_extraction(lomo: LomoEnv, stub: OpenAIStub) -> None:
    rt = await runtime(lomo, stub, model="openai/stub-model", extraction="model")
    try:
        said, _ = await rt.send("I always prefer narwhalpink colours.")
        await memory.forget(rt.db, evidence_ids=[said])
        assert await rt.memory_models.upkeep() == {"extracted": 0, "embedded": 0} and stub.requests == []
        async with rt.db.write() as conn:  # even if it had been picked before the forget
            await conn.execute(update(s.memory_evidence).where(s.memory_evidence.c.id == said).values(
                extract_status="pending"))
        stub.enqueue_memory(answer({"text": "I always prefer narwhalpink colours.", "evidence_id": said}))
        assert await memory.service.extract_evidence(rt.db, said, extractor=rt.memory_models.extractor) == []
        assert await active(rt) == []
    finally:
        await rt.close()


# ---- property: vector rows never outlive their version ----------------------------------------------------------
class WordVectors(memory.vectors.MemoryVectors):
    """The same index with a deterministic embedder on this machine (a bag of hashed words): the property
    is about which rows exist, not about any provider."""

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        import hashlib

        out = []
        for words in texts:
            vector = [0.0] * 16
            for word in words.lower().split():
                vector[hashlib.sha1(word.encode()).digest()[0] % 16] += 1.0
            out.append(vector)
        return out


LINES = ["I always use a {c} font.", "Our brand's main colour is {c}.", "Paired with {c} it feels softer overall.",
         "Yes, still the {c} font.", "Our brand colour is now {c}."]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(st.tuples(st.integers(0, len(LINES) - 1), st.integers(0, 5), st.booleans()),
                       min_size=1, max_size=8),
       forget=st.lists(st.integers(0, 7), max_size=3, unique=True))
def test_vector_rows_equal_the_active_memories_through_any_history(script: list[tuple[int, int, bool]],
                                                                   forget: list[int]) -> None:
    import asyncio
    import tempfile
    from pathlib import Path

    async def scenario(root: Path) -> None:
        m = await open_mind(LomoEnv(root))
        vectors = WordVectors(m.db, "local/words")
        try:
            said = []
            for line, colour, refresh in script:
                said.append(await m.say(LINES[line].format(c=f"tone{colour}q")))
                if refresh:
                    await vectors.refresh()
                await assert_invariants(m)  # vectors ⊆ active versions, at every point
            await vectors.refresh()
            stored, fts, versions = await index_rows(m.rt)
            assert stored == fts == versions
            picked = [said[i] for i in forget if i < len(said)]
            if picked:
                await memory.forget(m.db, evidence_ids=picked)
                await assert_invariants(m)
                await vectors.refresh()
                stored, fts, versions = await index_rows(m.rt)
                assert stored == fts == versions
        finally:
            await m.rt.close()

    with tempfile.TemporaryDirectory() as root:
        asyncio.run(scenario(Path(root)))


async def test_the_extractor_follows_a_switch_of_model(lomo: LomoEnv, stub: OpenAIStub) -> None:
    import dataclasses

    from lomo_tui.models import make_model

    rt = await runtime(lomo, stub)  # lomo/local: read here
    try:
        assert rt.memory_models.extractor is None
        rt.model = make_model(dataclasses.replace(rt.settings, model="openai/stub-model"), rt.ledger.count_model_calls)
        assert rt.memory_models.extractor is not None and rt.memory_models.extractor.model is rt.model
        said, _ = await rt.send("I usually like wide margins.")
        assert await active(rt) == []  # left for the remote model's reading
        stub.enqueue_memory(memory_answer({"text": "I usually like wide margins.", "kind": "preference"}))
        assert await rt.memory_models.upkeep() == {"extracted": 1, "embedded": 0}
        assert [r["evidence"] for r in await active(rt)] == [[{"message_id": said, "role": "origin"}]]
        assert len(stub.memory_requests) == 1
    finally:
        await rt.close()
