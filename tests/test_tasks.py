"""Task life: plan to finish with no "continue", no spinning, checkpoints, promotion, inbox changes."""
from __future__ import annotations

import pytest

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


async def task_state(rt: Runtime, task: str) -> tuple[str, str, int, list[str]]:
    async with rt.db.read() as conn:
        row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
        calls = (await conn.execute(select(s.model_calls.c.id).where(s.model_calls.c.task_id == task))).all()
        steps = (await conn.execute(select(s.checklist.c.state).where(s.checklist.c.task_id == task).order_by(
            s.checklist.c.position))).scalars().all()
    return row.status, row.status_reason, len(calls), list(steps)


async def test_poster_series_goes_from_plan_to_finished_without_continue(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Jazz posters")
        await rt.send("a retro poster series for a jazz night, four posters", task)
        assert await rt.run_until_quiescent(60)
        status, _, _, steps = await task_state(rt, task)
        assert status == "waiting_gate" and steps == ["done"] * 4 + ["pending"]  # at the review checkpoint
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
            images = (await conn.execute(select(s.objects.c.path).where(s.objects.c.kind == "image"))).scalars().all()
        assert gate.kind == "question" and "Review" in gate.question and len(images) == 4
        await resolve_gate(rt.db, gate.id, approve=True, option=1, by="creator:test")
        await rt.sweep()
        assert await rt.run_until_quiescent(30)
        status, reason, _, steps = await task_state(rt, task)
        assert (status, steps) == ("done", ["done"] * 5) and reason == "checklist complete"
        async with rt.db.read() as conn:
            inbox = (await conn.execute(select(s.inbox).where(s.inbox.c.task_id == task))).all()
        assert len(inbox) == 1  # the creator never had to say "continue"
    finally:
        await rt.close()


async def test_a_task_without_progress_stops_instead_of_spinning(lomo: LomoEnv) -> None:
    plan = {"content": None, "tool_calls": [{"name": "update_plan", "arguments": {
        "brief": "b", "steps": [{"title": "Make the thing"}]}}]}
    chatter = [{"content": f"thinking about it ({n})", "tool_calls": []} for n in range(10)]
    lomo.replay(plan, *chatter)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Spinner")
        await rt.send("do the thing", task)
        assert await rt.run_until_quiescent(30)
        status, reason, model_calls, _ = await task_state(rt, task)
    finally:
        await rt.close()
    assert status == "blocked" and "no meaningful progress in 3 turns" in reason
    assert model_calls == 4  # the plan step and three turns of chatter, then it stopped


async def test_a_change_request_during_a_job_is_kept_for_the_next_step(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local", env={"LOMO_TIME_SCALE": "0.3"}, time_scale=0.3))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Posters")
        await rt.send("a retro poster series for a jazz night", task)

        async def job_running() -> bool:
            async with rt.db.read() as conn:
                return (await conn.execute(select(s.jobs.c.id).where(s.jobs.c.status.in_(
                    ("queued", "running"))))).first() is not None

        from conftest import async_wait_for

        await async_wait_for(job_running, timeout=20, what="a job in flight")
        message_id, _ = await rt.send("make it bluer", task)
        async with rt.db.read() as conn:
            jobs_before = (await conn.execute(select(s.jobs.c.id, s.jobs.c.prompt))).all()
            pending = (await conn.execute(select(s.inbox.c.status).where(s.inbox.c.id == message_id))).scalar()
        assert pending == "pending"  # received; it will apply at the next step
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            consumed = (await conn.execute(select(s.inbox).where(s.inbox.c.id == message_id))).one()
            jobs_after = (await conn.execute(select(s.jobs.c.id, s.jobs.c.prompt))).all()
        assert consumed.status == "consumed" and consumed.consumed_step is not None
        assert set(jobs_before) <= set(jobs_after)  # the job in flight was not altered
        assert any("bluer" in prompt for _, prompt in jobs_after)
    finally:
        await rt.close()


async def test_a_one_shot_revised_twice_becomes_persistent_keeping_its_history(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    try:
        task = await rt.ledger.create_task("cat picture", kind="lightweight")
        for text in ("make a cat picture", "make it bluer", "now at night"):
            await rt.send(text, task)
            assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
            promoted = (await conn.execute(select(s.events).where(s.events.c.type == "task_promoted"))).all()
            users = (await conn.execute(select(s.messages.c.content).where(
                s.messages.c.task_id == task, s.messages.c.role == "user").order_by(s.messages.c.id))).scalars().all()
            jobs = (await conn.execute(select(s.jobs.c.prompt).where(s.jobs.c.task_id == task))).scalars().all()
    finally:
        await rt.close()
    assert row.kind == "persistent" and row.revisions == 2 and len(promoted) == 1
    assert list(users) == ["make a cat picture", "make it bluer", "now at night"]  # same task, same history
    assert len(jobs) == 3


@pytest.mark.slow
def test_promote_and_archive_from_the_command_line(lomo: LomoEnv) -> None:
    task = lomo.new_task()
    proc = lomo.run("task", "promote", task)
    assert proc.returncode == 1 and "already persistent" in proc.stderr
    assert lomo.run("task", "archive", task).returncode == 0
    [row] = [t for t in lomo.inspect()["tasks"] if t["id"] == task]
    assert row["archived"] is True
    refused = lomo.run("--run-once", "hello", "--task", task)
    assert refused.returncode == 1 and "archived" in refused.stderr


async def test_a_named_input_file_reaches_the_plan_as_its_workspace_path(lomo: LomoEnv) -> None:
    """Chinese runs words together: "用海报_1.png做…" names posters/海报_1.png, and the plan must use that path,
    not the run-together "用海报_1.png" (nor a bare name that is not a path)."""
    from PIL import Image

    (lomo.workspace / "posters").mkdir()
    Image.new("RGB", (64, 48), (200, 80, 40)).save(lomo.workspace / "posters" / "海报_1.png")
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    try:
        task = await rt.ledger.create_task("动画")
        await rt.send("用海报_1.png做一个3秒的动画", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            args = [r.args for r in (await conn.execute(select(s.checklist.c.args).where(
                s.checklist.c.task_id == task))).all()]
        inputs = [i for a in args if a for i in (a.get("inputs") if isinstance(a, dict) else []) or []]
        assert "posters/海报_1.png" in inputs, args
        assert not any("用" in i for i in inputs), args
    finally:
        await rt.close()
