"""Memory (DESIGN F1–F5): what is remembered, its versions, recall, and forgetting that really forgets.

The eight invariants of issue #14 are checked by `assert_invariants` after every forget, and by a
property test over random conversations; the brand-colour case of seed §7.3 is the reference case.
"""
from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert, select, text, update

from conftest import LomoEnv
from lomo_tui import memory
from lomo_tui.memory import forget as forgetting
from lomo_tui.memory import service, store
from lomo_tui.memory.extract import extract_local, validate_candidates
from lomo_tui.memory.listing import memory_rows
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


# ---- helpers ------------------------------------------------------------------------------------------------
class Mind:
    """A runtime opened on a sandbox database (no workers): the creator speaks through `Runtime.send`."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.db = rt.db

    async def say(self, words: str, task_id: str | None = None) -> str:
        message_id, _ = await self.rt.send(words, task_id)
        return message_id

    async def rows(self, every: bool = True) -> list[dict[str, Any]]:
        async with self.db.read() as conn:
            return await memory_rows(conn, every_version=every)

    async def active(self) -> list[dict[str, Any]]:
        return await self.rows(every=False)

    async def table(self, table: Any) -> list[dict[str, Any]]:
        async with self.db.read() as conn:
            return [dict(r._mapping) for r in (await conn.execute(select(table))).all()]

    async def fts(self) -> list[tuple[str, str]]:
        async with self.db.read() as conn:
            return [tuple(r) for r in (await conn.execute(text("SELECT version_id, search_text FROM memory_fts"))).all()]

    async def fts_terms(self) -> set[str]:
        async with self.db.read() as conn:
            await conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_vocab USING "
                                       "fts5vocab(main, memory_fts, 'row')")
            return {r[0] for r in (await conn.exec_driver_sql("SELECT term FROM temp.memory_vocab")).all()}

    async def fts_blobs(self) -> bytes:
        async with self.db.read() as conn:
            return b"".join(bytes(r[0] or b"") for r in (await conn.exec_driver_sql(
                "SELECT block FROM memory_fts_data")).all())


async def open_mind(lomo: LomoEnv) -> Mind:
    """A runtime on LOMO's database (a migrated copy: see conftest)."""
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.open()
    return Mind(rt)


@pytest.fixture
async def mind(lomo: LomoEnv):
    m = await open_mind(lomo)
    yield m
    await m.rt.close()


async def assert_invariants(m: Mind) -> None:
    """Issue #14 invariants 1–3, on the whole database."""
    async with m.db.read() as conn:
        revoked = set((await conn.execute(select(s.memory_evidence.c.id).where(
            s.memory_evidence.c.eligible.is_(False)))).scalars())
        links = (await conn.execute(select(s.memory_evidence_links, s.memory_versions.c.status).join(
            s.memory_versions, s.memory_versions.c.id == s.memory_evidence_links.c.version_id))).all()
        # 1. no active version is reachable from revoked evidence
        assert not [l for l in links if l.status == "active" and l.evidence_id in revoked]
        # 2. no summary or profile field derives from a deleted version
        forgotten = set((await conn.execute(select(s.memory_versions.c.id).where(
            s.memory_versions.c.status == "forgotten"))).scalars())
        live_targets = set((await conn.execute(select(s.memory_profiles.c.id).where(
            s.memory_profiles.c.status != "forgotten"))).scalars()) | set((await conn.execute(select(
            s.memory_summaries.c.id).where(s.memory_summaries.c.status != "forgotten"))).scalars())
        derived = (await conn.execute(select(s.memory_derivations).where(
            s.memory_derivations.c.target_kind.in_(("profile", "summary")),
            s.memory_derivations.c.source_kind == "version"))).all()
        assert not [d for d in derived if d.target_id in live_targets and d.source_id in forgotten]
        assert all(not r.text for r in (await conn.execute(select(s.memory_versions).where(
            s.memory_versions.c.status == "forgotten"))).all())
        active = set((await conn.execute(select(s.memory_versions.c.id).where(
            s.memory_versions.c.status == "active"))).scalars())
        vectors = set((await conn.execute(select(s.memory_vectors.c.version_id))).scalars())
    # 3. index rows equal the active memories (vectors: never one of a version no longer active)
    assert sorted(v for v, _ in await m.fts()) == sorted(active)
    assert vectors <= active


async def assert_nowhere(m: Mind, canary: str, other_task: str | None = None) -> None:
    """Invariant 4: CANARY is in no memory, summary, profile, index row, nor in what another task's next step
    would carry from memory."""
    needle = canary.casefold()
    for table in (s.memory_versions, s.memory_summaries, s.memory_profiles, s.context_summaries):
        for row in await m.table(table):
            assert needle not in " ".join(str(v) for v in row.values()).casefold(), (table.name, row)
    assert not [r for r in await m.fts() if needle in " ".join(r).casefold()]
    assert not [t for t in await m.fts_terms() if needle in t]
    assert needle.encode() not in (await m.fts_blobs()).lower()
    assert needle not in (await memory.profile_snapshot(m.db)).casefold()
    if other_task:
        recalled = await memory.recall_for_step(m.db, other_task, canary, limit=10)
        assert not [r for r in recalled if needle in r.text.casefold()]


async def summarise_history(m: Mind, task_id: str) -> None:
    """TASK_ID's creator messages as its history holds them once read, summarised as one segment (E3)."""
    from lomo_tui.context import summaries
    from lomo_tui.context.history import History

    async with m.db.write() as conn:
        rows = (await conn.execute(select(s.inbox).where(s.inbox.c.task_id == task_id).order_by(s.inbox.c.sent_at))).all()
        for n, row in enumerate(rows, 1):
            await conn.execute(insert(s.messages).values(task_id=task_id, step=n, role="user", content=row.text,
                                                         created_at=time.time()))
        await conn.execute(update(s.inbox).where(s.inbox.c.task_id == task_id).values(status="consumed"))
        history = History(task_id)
        await history.refresh(conn)
        span = history.verbatim()
        await summaries.store(conn, task_id, span, summaries.extractive(span), "extractive", None)


def unrelated(rows: list[dict[str, Any]], memory_ids: set[str]) -> list[dict[str, Any]]:
    return [r for r in rows if r["id"] not in memory_ids]


# ---- extraction (F2) ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("words", [
    "I usually like low-saturation palettes.",
    "我通常喜歡低飽和度的配色",
    "я обычно предпочитаю приглушённые цвета",
    "いつも淡い色が好き",
])
async def test_a_long_term_preference_becomes_a_stated_memory_in_each_language(mind: Mind, words: str) -> None:
    message_id = await mind.say(words)
    rows = await mind.active()
    assert [(r["kind"], r["scope"], r["stated"], r["text"], r["evidence"]) for r in rows] == [
        ("preference", "creator", True, words, [{"message_id": message_id, "role": "origin"}])]


@pytest.mark.parametrize("words", ["This time try a saturated red.", "這次先試試高飽和的紅色", "今回は赤で試して",
                                   "в этот раз попробуй насыщенный красный", "make a poster of a cat"])
async def test_a_one_off_request_stays_with_its_task_and_is_not_remembered(mind: Mind, words: str) -> None:
    await mind.say(words)
    assert await mind.rows() == []
    async with mind.db.read() as conn:
        inbox = (await conn.execute(select(s.inbox.c.text))).scalars().all()
    assert words in inbox


async def test_a_rule_and_a_brand_fact_are_kept_as_constraint_and_fact(mind: Mind) -> None:
    await mind.say("Never put text over faces. Our brand colour is teal.")
    assert sorted((r["kind"], r["text"]) for r in await mind.active()) == [
        ("constraint", "Never put text over faces."), ("fact", "Our brand colour is teal.")]


async def test_replies_tool_output_and_files_never_become_personal_facts(mind: Mind) -> None:
    main = await mind.rt.ledger.main_task_id()
    async with mind.db.write() as conn:
        for role in ("assistant", "tool"):
            await conn.execute(insert(s.messages).values(task_id=main, role=role, created_at=time.time(),
                                                         content="I usually like neon cyberpunk palettes."))
    (mind.rt.settings.workspace / "notes.md").write_text("I always prefer bright orange.")
    await service.maintain(mind.db)
    assert await mind.rows() == []
    # a model's candidate that cites no message of the creator's (its own text, a tool result) is dropped
    valid, dropped = validate_candidates({"candidates": [{"text": "likes neon", "evidence_id": "tool-output"}]},
                                         {"msg-1"})
    assert valid == [] and dropped == ["candidate 0: cites no message of the creator's"]


def test_a_malformed_candidate_is_dropped_alone() -> None:
    valid, dropped = validate_candidates({"candidates": [
        {"text": "I usually like muted colours", "kind": "preference", "evidence_id": "m1"},
        {"text": "", "evidence_id": "m1"},
        {"text": "likes jazz", "kind": "mood", "evidence_id": "m1"},
        "not an object",
        {"text": "works in A4", "kind": "fact", "scope": "creator", "stated": True, "evidence_id": "m1"},
    ]}, {"m1"})
    assert [c.text for c in valid] == ["I usually like muted colours", "works in A4"]
    assert len(dropped) == 3


async def test_repeated_style_requests_make_an_inferred_candidate_never_shown_as_the_creators_words(
        mind: Mind) -> None:
    for subject in ("a cat", "a city", "a robot"):
        await mind.say(f"make {subject} in cyberpunk style")
    rows = await mind.active()
    assert [(r["stated"], r["text"]) for r in rows] == [(False, "often asks for cyberpunk (inferred from 3 requests)")]
    assert len(rows[0]["evidence"]) == 3
    assert await memory.profile_snapshot(mind.db) == ""  # the profile holds only what the creator said
    recalled = await memory.recall_for_step(mind.db, "main", "cyberpunk poster")
    assert recalled and "inference" in recalled[0].render() and "the creator said" not in recalled[0].render()


async def test_failed_extraction_is_retried_later_and_the_message_still_arrives(mind: Mind) -> None:
    async def broken(_evidence: list[dict[str, str]]) -> Any:
        raise ConnectionError("the extraction model is down")

    message_id, _ = await mind.rt.ledger.deliver("main", "I usually like low-saturation palettes.")
    out = await memory.record_creator_message(mind.db, message_id, "main", "I usually like low-saturation palettes.",
                                              extractor=broken)
    assert out["versions"] == []
    async with mind.db.write() as conn:
        row = (await conn.execute(select(s.memory_evidence).where(s.memory_evidence.c.id == message_id))).one()
        assert (row.extract_status, row.attempts) == ("failed", 1)
        await conn.execute(update(s.memory_evidence).values(created_at=row.created_at - 5))
    await service.maintain(mind.db)
    assert [r["text"] for r in await mind.active()] == ["I usually like low-saturation palettes."]


async def test_a_withdrawn_message_is_taken_back_from_memory(mind: Mind) -> None:
    message_id = await mind.say("I always prefer narwhalpink colours.")
    await mind.say("I always use a serif font.")
    await mind.rt.ledger.withdraw(message_id)
    await mind.rt.sweep()
    assert [r["text"] for r in await mind.active()] == ["I always use a serif font."]
    await assert_nowhere(mind, "narwhalpink")
    other = await mind.say("I usually like walruscyan tones.")
    replacement = await mind.rt.ledger.withdraw(other, "I usually like muted sage tones.")
    await mind.rt.sweep()
    rows = await mind.active()
    assert sorted(r["text"] for r in rows) == ["I always use a serif font.", "I usually like muted sage tones."]
    assert {"message_id": replacement, "role": "origin"} in [e for r in rows for e in r["evidence"]]
    await assert_nowhere(mind, "walruscyan")


# ---- versions (F3) ----------------------------------------------------------------------------------------------
async def test_a_refinement_makes_v2_and_supersedes_v1_while_a_confirmation_only_adds_evidence(mind: Mind) -> None:
    first = await mind.say("我們品牌的主色是藍色。")
    second = await mind.say("藍色搭配米白，整體會更柔和一些。")
    third = await mind.say("沒錯，還是藍色。")
    rows = await mind.rows()
    assert [(r["version"], r["status"]) for r in rows] == [(1, "superseded"), (2, "active")]
    assert rows[0]["evidence"] == [{"message_id": first, "role": "origin"}]
    assert rows[1]["evidence"] == [{"message_id": first, "role": "origin"}, {"message_id": second, "role": "refine"},
                                   {"message_id": third, "role": "confirm"}]
    assert "米白" in rows[1]["text"] and "藍色" in rows[1]["text"]
    await assert_invariants(mind)


async def test_a_changed_fact_keeps_the_old_one_true_for_its_own_time(mind: Mind) -> None:
    await mind.say("Our brand colour is blue.")
    await mind.say("Our brand colour is now green.")
    old, new = await mind.rows()
    assert (old["status"], new["status"], new["text"]) == ("superseded", "active", "Our brand colour is now green.")
    assert old["valid_to"] == pytest.approx(new["valid_from"], abs=1) and new["valid_to"] is None
    assert old["text"] == "Our brand colour is blue."  # a true fact for its time, not forgotten


async def test_actually_i_prefer_corrects_the_earlier_preference_instead_of_adding_a_second_one(mind: Mind) -> None:
    """Memory drill: "actually I prefer warm colours" after "I always prefer muted colours" left both active."""
    await mind.say("I always prefer muted colours")
    await mind.say("actually I prefer warm colours")
    old, new = await mind.rows()
    assert (old["status"], new["status"]) == ("superseded", "active") and old["id"] == new["id"]
    assert "warm" in new["text"]


# ---- recall ------------------------------------------------------------------------------------------------------
async def test_recall_is_bounded_scoped_and_relevant(mind: Mind) -> None:
    for n in range(12):
        await mind.say(f"I usually like palette number{n} for posters.")
    await mind.say("I always use a serif font.")
    other = await mind.rt.ledger.create_task("Other project")
    mine = await mind.rt.ledger.create_task("Brand project")
    await mind.say("For this project I always want square images.", mine)
    await mind.say("In this project I never use gold.", other)
    recalled = await memory.recall_for_step(mind.db, mine, "which font for the posters", limit=5)
    texts = [r.text for r in recalled]
    assert len(recalled) == 5 and texts[0] == "For this project I always want square images."
    assert "I always use a serif font." in texts and "In this project I never use gold." not in texts
    assert await memory.recall_for_step(mind.db, mine, "font", limit=0) == []


async def test_a_recall_slower_than_its_budget_is_skipped_for_the_step(mind: Mind) -> None:
    await mind.say("I always use a serif font.")
    assert await memory.recall_for_step(mind.db, "main", "font", timeout=0) == []
    assert [r.text for r in await memory.recall_for_step(mind.db, "main", "font")] == ["I always use a serif font."]


async def test_the_profile_snapshot_is_small_versioned_and_stated_only(mind: Mind) -> None:
    assert await memory.profile_snapshot(mind.db) == ""
    for n in range(store.PROFILE_ENTRIES + 4):
        await mind.say(f"I usually like motif{n} in my work.")
    snapshot = await memory.profile_snapshot(mind.db)
    assert snapshot.count("\n- ") == store.PROFILE_ENTRIES and "motif11" in snapshot
    profiles = await mind.table(s.memory_profiles)
    assert [p["status"] for p in profiles].count("current") == 1 and len(profiles) == store.PROFILE_ENTRIES + 4


# ---- forgetting (F4): the reference case and the invariants -------------------------------------------------------
async def test_forgetting_blue_rebuilds_the_brand_memory_from_the_refinement_that_stands_alone(mind: Mind) -> None:
    blue = await mind.say("Our brand's main colour is zebrablue.")
    cream = await mind.say("Paired with cream it feels softer overall.")
    other = await mind.say("I always use a serif font.")
    before = await mind.rows()
    brand = before[0]["id"]
    assert [r["status"] for r in before if r["id"] == brand] == ["superseded", "active"]
    result = await memory.forget(mind.db, evidence_ids=[blue])
    assert result["forgotten"] == [brand] and result["rebuilt"] == [brand]
    rows = [r for r in await mind.rows() if r["id"] == brand]
    assert [(r["version"], r["status"], r["text"]) for r in rows] == [
        (1, "forgotten", ""), (2, "forgotten", ""), (3, "active", "Paired with cream it feels softer overall.")]
    assert rows[2]["evidence"] == [{"message_id": cream, "role": "origin"}]
    assert unrelated(await mind.rows(), {brand}) == unrelated(before, {brand})  # invariant 5
    await assert_invariants(mind)
    await assert_nowhere(mind, "zebrablue", other_task="main")
    assert other


async def test_a_refinement_that_does_not_stand_alone_goes_with_the_origin(mind: Mind) -> None:
    origin = await mind.say("I always prefer quokkamuted colours.")
    await mind.say("Yes.")
    result = await memory.forget(mind.db, evidence_ids=[origin])
    assert result["rebuilt"] == [] and await mind.active() == []
    await assert_nowhere(mind, "quokkamuted")


async def test_origin_revoked_but_an_independent_confirmation_keeps_the_memory_as_a_new_version(mind: Mind) -> None:
    origin = await mind.say("I usually like low-saturation palettes.")
    confirm = await mind.say("Yes, I still prefer low-saturation palettes.")
    memory_id = (await mind.active())[0]["id"]
    await memory.forget(mind.db, evidence_ids=[origin])
    active = await mind.active()
    assert [(r["id"], r["version"], r["text"]) for r in active] == [
        (memory_id, 2, "Yes, I still prefer low-saturation palettes.")]
    assert active[0]["evidence"] == [{"message_id": confirm, "role": "origin"}]
    await assert_invariants(mind)


async def test_forgetting_a_confirmation_only_drops_its_link(mind: Mind) -> None:
    await mind.say("I usually like low-saturation palettes.")
    confirm = await mind.say("Yes, still low-saturation palettes.")
    before = await mind.active()
    assert [e["role"] for e in before[0]["evidence"]] == ["origin", "confirm"]
    result = await memory.forget(mind.db, evidence_ids=[confirm])
    after = await mind.active()
    assert result["forgotten"] == [] and [e["role"] for e in after[0]["evidence"]] == ["origin"]
    assert (after[0]["version_id"], after[0]["text"]) == (before[0]["version_id"], before[0]["text"])


async def test_after_forget_the_canary_is_nowhere_but_the_raw_conversation(mind: Mind, lomo: LomoEnv,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    poster = await mind.rt.ledger.create_task("Poster")
    await mind.say("I always prefer wombatgrey muted colours.", poster)
    await mind.say("I always use a serif font.")
    memory_id = next(r["id"] for r in await mind.active() if "wombatgrey" in r["text"])
    async with mind.db.write() as conn:  # the poster task finished: it has an episodic summary
        await conn.execute(update(s.tasks).where(s.tasks.c.id == poster).values(status="done"))
    await service.maintain(mind.db)
    summaries = await mind.table(s.memory_summaries)
    assert "wombatgrey" in summaries[0]["text"]
    assert "wombatgrey" in await memory.profile_snapshot(mind.db)
    result = await memory.forget(mind.db, memory_ids=[memory_id])
    assert result == {"forgotten": [memory_id], "rebuilt": [], "versions": result["versions"]}
    await assert_invariants(mind)
    await assert_nowhere(mind, "wombatgrey", other_task=poster)
    summaries = await mind.table(s.memory_summaries)
    assert [x["status"] for x in summaries] == ["forgotten", "active"] and summaries[1]["text"].startswith("Poster")
    assert "serif" in await memory.profile_snapshot(mind.db)
    assert "wombatgrey" not in caplog.text
    async with mind.db.read() as conn:  # the raw conversation itself is kept (memory use, not history)
        assert "wombatgrey" in " ".join((await conn.execute(select(s.inbox.c.text))).scalars())


async def test_replies_of_steps_that_used_a_forgotten_memory_leave_later_contexts(mind: Mind) -> None:
    await mind.say("I always prefer koalateal colours.")
    task = await mind.rt.ledger.create_task("Poster")
    version = (await mind.active())[0]["version_id"]
    async with mind.db.write() as conn:
        await conn.execute(insert(s.turns).values(id="turn-x", task_id=task, status="completed", created_at=0,
                                                  updated_at=0))
        for step, role in ((1, "assistant"), (1, "tool"), (2, "assistant")):
            await conn.execute(insert(s.messages).values(task_id=task, turn_id="turn-x", step=step, role=role,
                                                         content=f"{role} {step}", created_at=time.time()))
        ids = dict(((r.step, r.role), r.id) for r in (await conn.execute(select(s.messages).where(
            s.messages.c.task_id == task))).all())
    await memory.record_context_use(mind.db, task, "turn-x", 1, [version])
    assert await memory.excluded_message_ids(mind.db, task) == set()
    await memory.forget(mind.db, memory_ids=[(await mind.active())[0]["id"]])
    assert await memory.excluded_message_ids(mind.db, task) == {ids[(1, "assistant")], ids[(1, "tool")]}


async def test_the_model_repeating_a_forgotten_fact_does_not_bring_it_back_but_the_creator_can(mind: Mind) -> None:
    said = await mind.say("I always prefer ibexmauve colours.")
    await memory.forget(mind.db, memory_ids=[(await mind.active())[0]["id"]])

    async def model_repeats(evidence: list[dict[str, str]]) -> Any:  # a remote extractor citing the old message
        return {"candidates": [{"text": "I always prefer ibexmauve colours.", "evidence_id": said}]}

    async with mind.db.write() as conn:
        await conn.execute(update(s.memory_evidence).where(s.memory_evidence.c.id == said).values(
            extract_status="pending"))
    assert await service.extract_evidence(mind.db, said, extractor=model_repeats) == []
    main = await mind.rt.ledger.main_task_id()
    async with mind.db.write() as conn:
        await conn.execute(insert(s.messages).values(task_id=main, role="assistant", created_at=time.time(),
                                                     content="As you said, I always prefer ibexmauve colours."))
    await service.maintain(mind.db)
    assert await mind.active() == []
    again = await mind.say("I always prefer ibexmauve colours.")
    assert [(r["text"], r["evidence"]) for r in await mind.active()] == [
        ("I always prefer ibexmauve colours.", [{"message_id": again, "role": "origin"}])]


async def test_forgetting_twice_equals_forgetting_once(mind: Mind) -> None:
    first = await mind.say("Our brand's main colour is lynxblue.")
    await mind.say("Paired with cream it feels softer overall.")
    await mind.say("I always use a serif font.")
    await memory.forget(mind.db, evidence_ids=[first])
    tables = (s.memory_versions, s.memory_evidence_links, s.memory_profiles, s.memory_summaries, s.memory_evidence)
    once = [await mind.table(t) for t in tables] + [await mind.fts()]
    again = await memory.forget(mind.db, evidence_ids=[first])
    assert again["versions"] == [] and again["rebuilt"] == []
    assert [await mind.table(t) for t in tables] + [await mind.fts()] == once


async def test_a_stream_forget_waits_for_the_irreversible_gate(mind: Mind) -> None:
    await mind.say("I always prefer muted, low-saturation colours.")
    await mind.say("I always use a serif font.")
    await mind.say("forget that I like muted colours")
    async with mind.db.read() as conn:
        gate = (await conn.execute(select(s.gates))).one()
    assert gate.kind == "irreversible" and gate.status == "pending"
    assert "I always prefer muted, low-saturation colours." in gate.options[0]["consequence"]
    assert "serif" not in gate.options[0]["consequence"]
    assert len(await mind.active()) == 2  # nothing goes before the creator answers
    await mind.rt.resolve_gate(gate.id, approve=True, option=1, by="creator:test")
    assert [r["text"] for r in await mind.active()] == ["I always use a serif font."]
    await assert_nowhere(mind, "low-saturation")
    async with mind.db.read() as conn:  # the answered card no longer quotes what was forgotten
        gate = (await conn.execute(select(s.gates))).one()
    assert gate.status == "approved" and "low-saturation" not in str(gate.options)


async def test_a_rejected_forget_gate_forgets_nothing(mind: Mind) -> None:
    await mind.say("I always prefer muted, low-saturation colours.")
    await mind.say("忘記我喜歡低飽和的顏色")  # matches nothing in English: no gate
    await mind.say("please forget that I prefer muted colours")
    async with mind.db.read() as conn:
        gate = (await conn.execute(select(s.gates))).one()
    await mind.rt.resolve_gate(gate.id, approve=False, by="creator:test")
    assert len(await mind.active()) == 1
    assert [f["status"] for f in await mind.table(s.memory_forgets)] == ["cancelled"]


# ---- property test: random conversations, random forgets ------------------------------------------------------------
TOPIC_LINES = {
    "colour": ["Our brand's main colour is {c}.", "Paired with {c} it feels softer overall.",
               "Yes, I still prefer {c} colours."],
    "font": ["I always use a {c} font.", "Yes, still the {c} font."],
    "format": ["I usually work in {c} format.", "Yes, still {c} format."],
}
CANARIES = [f"canary{n}x" for n in range(12)]


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(st.tuples(st.sampled_from(sorted(TOPIC_LINES)), st.integers(0, 2), st.integers(0, 11)),
                       min_size=2, max_size=8),
       forget_picks=st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True))
def test_any_conversation_forgets_completely_and_touches_nothing_else(script: list[tuple[str, int, int]],
                                                                        forget_picks: list[int]) -> None:
    async def scenario(root: Path) -> None:
        m = await open_mind(LomoEnv(root))
        try:
            said: list[tuple[str, str]] = []
            for topic, line, canary in script:
                words = TOPIC_LINES[topic][line % len(TOPIC_LINES[topic])].format(c=CANARIES[canary])
                said.append((await m.say(words), CANARIES[canary]))
            picks = [said[i] for i in forget_picks if i < len(said)]
            if not picks:
                return
            await summarise_history(m, await m.rt.ledger.main_task_id())  # a history summary quotes them all
            before = await m.rows()
            async with m.db.read() as conn:  # memories a picked message supports in any role (confirm included)
                touched = set((await conn.execute(select(s.memory_versions.c.memory_id).join(
                    s.memory_evidence_links, s.memory_evidence_links.c.version_id == s.memory_versions.c.id).where(
                    s.memory_evidence_links.c.evidence_id.in_([p for p, _ in picks])))).scalars())
            await memory.forget(m.db, evidence_ids=[message_id for message_id, _ in picks])
            await assert_invariants(m)
            kept = {canary for message_id, canary in said if message_id not in {p for p, _ in picks}}
            for _, canary in picks:
                if canary not in kept:  # a canary the creator also said elsewhere may stand on that message
                    await assert_nowhere(m, canary, other_task="main")
            async with m.db.read() as conn:
                affected = set((await conn.execute(select(s.memory_versions.c.memory_id).where(
                    s.memory_versions.c.status == "forgotten"))).scalars())
            assert unrelated(await m.rows(), affected | touched) == unrelated(before, affected | touched)
        finally:
            await m.rt.close()

    with tempfile.TemporaryDirectory() as root:
        asyncio.run(scenario(Path(root)))


def test_the_local_extractor_reads_each_sentence_on_its_own() -> None:
    found = extract_local("I usually like low-saturation palettes. This time try a saturated red! 我一直用宋體字。")
    assert [c.text for c in found] == ["I usually like low-saturation palettes.", "我一直用宋體字。"]


async def test_recall_and_forgetting_work_on_postgres(pg_lomo: LomoEnv) -> None:
    rt = Runtime(pg_lomo.settings(model="lomo/local"))
    await rt.open()
    m = Mind(rt)
    try:
        await m.say("I always use a serif font.")
        await m.say("I usually like low-saturation palettes.")
        recalled = await memory.recall_for_step(m.db, "main", "which font for the poster")
        assert [r.text for r in recalled] == ["I always use a serif font."]
        await memory.forget(m.db, memory_ids=[recalled[0].id])
        assert await memory.recall_for_step(m.db, "main", "which font for the poster") == []
        assert "serif" not in await memory.profile_snapshot(m.db)
        assert [r["text"] for r in await m.active()] == ["I usually like low-saturation palettes."]
    finally:
        await rt.close()


async def test_a_requests_own_constraint_is_not_a_lasting_memory_and_adding_to_a_piece_is_no_refinement(
        mind: Mind) -> None:
    await mind.say("Two café posters, always teal and cream, never red.")
    await mind.say("Revision 1: keep the teal and cream, add steam over the cups.")
    assert await mind.active() == []
    await mind.say("I always use a serif font.")
    await mind.say("Add a drop shadow to the title.")
    assert [r["text"] for r in await mind.active()] == ["I always use a serif font."]
