"""Memory reaches the model's context (E1, F4): the profile rides in the stable prefix of every task's next
step, and after a forget no trace of it is in any task's next prompt."""
from __future__ import annotations

import pytest

import json

from conftest import LomoEnv

CANARY = "zebra-stripe teal"


def context_text(lomo: LomoEnv, task_id: str | None = None) -> str:
    proc = lomo.run("context", *([task_id] if task_id else []), "--json", model="lomo/local")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return "\n".join(m["content"] or "" for m in doc["messages"])


@pytest.mark.slow
def test_a_stated_preference_is_in_every_tasks_prompt_until_it_is_forgotten(lomo: LomoEnv) -> None:
    said = lomo.run("--run-once", f"I always prefer {CANARY} palettes", "--json", model="lomo/local")
    assert said.returncode == 0, said.stderr
    task = lomo.new_task("Poster series")
    assert CANARY in context_text(lomo, task)
    assert CANARY in context_text(lomo)  # the main thread's next step too

    [memory] = json.loads(lomo.run("memory", "list", "--json", model="lomo/local").stdout)
    gone = lomo.run("memory", "forget", memory["id"], "--yes", "--json", model="lomo/local")
    assert gone.returncode == 0, gone.stderr
    assert CANARY not in context_text(lomo, task)


# ---- in process: summaries, deadlines, the step's commit, cache figures ------------------------------------------
import time  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from sqlalchemy import insert, select, update  # noqa: E402

from lomo_tui import memory  # noqa: E402
from lomo_tui.context import summaries  # noqa: E402
from lomo_tui.context.history import History  # noqa: E402
from lomo_tui.memory import store  # noqa: E402
from lomo_tui.memory.extract import extract_local  # noqa: E402
from lomo_tui.memory.recall import interrupt_after  # noqa: E402
from lomo_tui.runtime.context import TurnContext  # noqa: E402
from lomo_tui.store import schema as s  # noqa: E402
from test_memory import Mind, assert_invariants, open_mind  # noqa: E402


@pytest.fixture
async def mind(lomo: LomoEnv):
    m = await open_mind(lomo)
    yield m
    await m.rt.close()


async def next_prompt(m: Mind, task_id: str) -> str:
    from lomo_tui.runtime.prompt_view import describe

    doc = await describe(m.rt, task_id)
    return "\n".join(message["content"] or "" for message in doc["messages"])


async def held_prompt(m: Mind, context: Any) -> str:
    """The next step's prompt from CONTEXT, a TurnContext kept from step to step as a turn keeps it."""
    from lomo_tui.store.engine import fetch

    async with m.db.read() as conn:
        [task] = await fetch(conn, "SELECT * FROM tasks WHERE id = :id", {"id": context.task_id})
        await context.refresh(conn, task)
        extra, hints = await m.rt.context_extras(conn, task, [])
    profile, recall, _ = await context.memory_inputs(task, [])
    prompt = await context.build(task, extra, hints, [], profile=profile, recall=recall)
    return "\n".join(str(message.get("content") or "") for message in prompt.messages)


async def segment_over(m: Mind, task_id: str) -> Any:
    """TASK_ID's one summary segment; the first call summarises its whole history, the way a step does."""
    history = History(task_id)
    async with m.db.write() as conn:
        await conn.execute(update(s.inbox).where(s.inbox.c.task_id == task_id).values(status="consumed"))  # read
        await history.refresh(conn)
        span = history.verbatim()
        if span:
            await summaries.store(conn, task_id, span, summaries.extractive(span), "extractive", None)
        return (await conn.execute(select(s.context_summaries).where(
            s.context_summaries.c.task_id == task_id))).one()


async def test_forget_rewrites_the_history_summary_that_held_it_and_no_prompt_carries_it(mind: Mind) -> None:
    task = await mind.rt.ledger.create_task("Café poster")
    other = await mind.rt.ledger.create_task("Menu card")
    first = "Make a poster for the café opening."
    said = "I always prefer okapiviolet colours. Keep the title short."
    later = "Put the logo bottom left."
    for words in (first, said, later):
        await mind.say(words, task)
    memory_id, version = next((r["id"], r["version_id"]) for r in await mind.active() if "okapiviolet" in r["text"])
    async with mind.db.write() as conn:  # the task's history as its steps wrote it
        await conn.execute(insert(s.turns).values(id="turn-p", task_id=task, status="completed", created_at=0,
                                                  updated_at=0))
        for step, role, content in ((1, "user", first), (1, "assistant", "A café poster, planned."),
                                    (2, "user", said), (2, "assistant", "Done in okapiviolet, as you like it."),
                                    (3, "user", later), (3, "assistant", "The logo sits bottom left.")):
            await conn.execute(insert(s.messages).values(task_id=task, turn_id="turn-p", step=step, role=role,
                                                         content=content, created_at=time.time()))
    await memory.record_context_use(mind.db, task, "turn-p", 2, [version])
    before = await segment_over(mind, task)
    assert "okapiviolet" in before.text and "okapiviolet" in await next_prompt(mind, other)
    held = TurnContext(mind.rt, task)  # a turn's context, held across its steps while the forget happens
    assert "okapiviolet" in await held_prompt(mind, held)

    await memory.forget(mind.db, memory_ids=[memory_id])
    assert "okapiviolet" not in (await held_prompt(mind, held)).casefold()
    after = await segment_over(mind, task)  # the same segment (one per span), rewritten in place
    assert (after.id, after.from_message, after.to_message, after.method) == (
        before.id, before.from_message, before.to_message, "rebuilt")
    assert "okapiviolet" not in after.text
    assert "Keep the title short." in after.text and "Put the logo bottom left." in after.text
    assert "café opening" in after.text
    for task_id in (task, other, None):
        assert "okapiviolet" not in (await next_prompt(mind, task_id)).casefold()
    await assert_invariants(mind)
    async with mind.db.read() as conn:  # the raw conversation itself stays
        assert said in (await conn.execute(select(s.messages.c.content).where(s.messages.c.role == "user"))).scalars().all()


async def test_forgetting_a_whole_message_takes_it_out_of_the_summary(mind: Mind) -> None:
    task = await mind.rt.ledger.create_task("Brand sheet")
    words = ["Start a brand sheet.", "Our brand's main colour is quokkablue.", "Add a second page."]
    ids = [await mind.say(w, task) for w in words]
    async with mind.db.write() as conn:
        for n, content in enumerate(words, 1):
            await conn.execute(insert(s.messages).values(task_id=task, step=n, role="user", content=content,
                                                         created_at=time.time()))
    before = await segment_over(mind, task)
    assert "quokkablue" in before.text
    await memory.forget(mind.db, evidence_ids=[ids[1]])
    after = await segment_over(mind, task)
    assert "quokkablue" not in after.text and "Add a second page." in after.text
    assert after.text.splitlines()[0] == before.text.splitlines()[0]  # the span it covers is unchanged
    assert "quokkablue" not in await next_prompt(mind, task)


async def test_a_recall_past_its_deadline_is_cut_short_not_waited_for(mind: Mind,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    async with mind.db.write() as conn:
        for n in range(40):
            message_id = f"m-{n}"
            await store.record_evidence(conn, message_id, None, f"I usually like palette number{n} for posters.")
            for candidate in extract_local(f"I usually like palette number{n} for posters.", message_id):
                await store.apply(conn, candidate, task_id=None, evidence_created=time.time())
    caplog.set_level("INFO", logger="lomo.memory")
    # a positive deadline already past: the statements run on this thread, so only the deadline itself
    # (checked by SQLite and between statements) can cut the recall short
    assert await memory.recall_for_step(mind.db, "main", "palette posters", timeout=1e-9) == []
    assert "skipped for this step" in caplog.text
    assert len(await memory.recall_for_step(mind.db, "main", "palette posters")) == memory.recall.RECALL_LIMIT


async def test_sqlite_interrupts_a_statement_still_running_at_the_deadline(mind: Mind) -> None:
    endless = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) "
               "SELECT count(*) FROM n")
    with pytest.raises(Exception, match="interrupted"):
        async with mind.db.read() as conn:
            with interrupt_after(conn, time.monotonic() - 1):
                await conn.exec_driver_sql(endless)
    async with mind.db.read() as conn:  # the next read is unaffected
        assert (await conn.exec_driver_sql("SELECT 1")).scalar() == 1


async def test_each_steps_memory_use_is_committed_with_its_decision(mind: Mind) -> None:
    await mind.say("I always use a serif font.")
    await mind.say("hello there")
    assert await mind.rt.run_until_quiescent(30)
    async with mind.db.read() as conn:
        steps = {(r.turn_id, r.step): r.created_at for r in (await conn.execute(select(s.steps))).all()}
        uses = (await conn.execute(select(s.memory_context_uses))).all()
    assert steps and {(u.turn_id, u.step) for u in uses} == set(steps)  # every step carried the profile
    assert all(u.created_at >= steps[(u.turn_id, u.step)] - 1 for u in uses)


async def test_cache_figures_per_task_and_overall(mind: Mind) -> None:
    from lomo_tui.cli.state import render_task, task_document
    from lomo_tui.context.usage import load_cache_usage

    task = await mind.rt.ledger.create_task("Cached")
    async with mind.db.write() as conn:
        for task_id, prompt, read, wrote in ((task, 1000, 800, 100), (task, 500, 0, 400), (None, 200, 100, 0)):
            await conn.execute(insert(s.model_calls).values(
                task_id=task_id, purpose="worker", model="m", prompt_tokens=prompt, completion_tokens=1,
                cached_tokens=read, cache_write_tokens=wrote, latency_ms=1, created_at=time.time()))
    doc = await task_document(mind.db, task)
    assert doc["cache"] == {"calls": 2, "prompt_tokens": 1500, "cache_read_tokens": 800, "cache_write_tokens": 500,
                            "cache_read_share": 0.5333}
    assert await load_cache_usage(mind.db, task) == doc["cache"]
    assert (await load_cache_usage(mind.db))["cache_read_tokens"] == 900
    assert "Prompt cache: 800 of 1,500 prompt tokens read from the cache (53%), 500 written" in render_task(doc)


async def test_a_summary_written_after_a_forget_leaves_the_forgotten_message_out(mind: Mind) -> None:
    task = await mind.rt.ledger.create_task("Long poster series")
    words = ["Start a long poster series.", "Our brand's main colour is dugongblue.", "Keep every poster square."]
    ids = [await mind.say(w, task) for w in words]
    async with mind.db.write() as conn:
        await conn.execute(update(s.inbox).where(s.inbox.c.task_id == task).values(status="consumed"))
        for n, content in enumerate(words, 1):
            await conn.execute(insert(s.messages).values(task_id=task, turn_id="turn-l", step=n, role="user",
                                                         content=content, created_at=time.time()))
        for n in range(4, 40):  # a long history: the next step must summarise its oldest span
            await conn.execute(insert(s.messages).values(task_id=task, turn_id="turn-l", step=n, role="assistant",
                                                         content=f"Poster {n} is done. " * 60, created_at=time.time()))
    await memory.forget(mind.db, evidence_ids=[ids[1]])
    mind.rt.settings.file = {"context": {"budget_tokens": 9000}}
    from lomo_tui.runtime.prompt_view import describe

    doc = await describe(mind.rt, task)
    prompt = "\n".join(m["content"] or "" for m in doc["messages"])
    assert doc["pending_summaries"] >= 1 and "Keep every poster square." in prompt  # summarised, kept
    assert "dugongblue" not in prompt
