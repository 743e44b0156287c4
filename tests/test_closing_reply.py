"""A persistent task that the runtime settles (no model call after the last job or the last checkpoint) still
tells the creator it is done and what it made; a model's own last word is not repeated."""
from __future__ import annotations

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

PLAN = {"content": None, "tool_calls": [{"name": "update_plan", "arguments": {"brief": "one jazz poster", "steps": [
    {"title": "Poster", "tool": "generate_image", "args": {"prompt": "a jazz poster"}},
    {"title": "Review the poster", "needs_confirmation": True}]}}]}
ORDER = {"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "a jazz poster",
                                                                                   "step": "1"}}]}


async def _replies(rt: Runtime, task: str) -> list[str]:
    async with rt.db.read() as conn:
        return [r.content for r in (await conn.execute(select(s.messages).where(
            s.messages.c.task_id == task, s.messages.c.role == "assistant").order_by(s.messages.c.id))).all()
            if r.content and not r.tool_calls]


async def _approve_the_review(rt: Runtime, task: str) -> None:
    assert await rt.run_until_quiescent(60)
    async with rt.db.read() as conn:
        gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
    await resolve_gate(rt.db, gate.id, approve=True, option=1, by="creator:test")
    await rt.sweep()
    assert await rt.run_until_quiescent(30)


async def test_an_approved_last_checkpoint_ends_with_a_closing_word_in_the_tasks_language(lomo: LomoEnv) -> None:
    lomo.replay(PLAN, ORDER)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("爵士海报")
        async with rt.db.write() as conn:
            await conn.execute(s.tasks.update().where(s.tasks.c.id == task).values(language="zh"))
        await rt.send("一张爵士海报，然后让我看看", task)
        await _approve_the_review(rt, task)
        replies = await _replies(rt, task)
        async with rt.db.read() as conn:
            status = (await conn.execute(select(s.tasks.c.status).where(s.tasks.c.id == task))).scalar()
            made = (await conn.execute(select(s.jobs.c.artifact_path).where(s.jobs.c.task_id == task))).scalar()
    finally:
        await rt.close()
    assert status == "done"
    assert replies[-1].startswith("全部完成：爵士海报"), replies
    assert made and made in replies[-1]  # what was made, by its path
    assert sum("全部完成" in r for r in replies) == 1


async def test_a_models_own_last_word_is_not_repeated(lomo: LomoEnv) -> None:
    lomo.replay(PLAN, ORDER)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Jazz poster")
        await rt.send("a jazz poster, then let me review it", task)
        await _approve_the_review(rt, task)
        first = await _replies(rt, task)
        async with rt.db.write() as conn:  # a second finish (say, the watchdog re-settling it) adds nothing
            await rt.reactions.say_finished(conn, task)
        again = await _replies(rt, task)
    finally:
        await rt.close()
    assert first[-1].startswith("All done: Jazz poster")
    assert again == first
