"""Deciding before a run (#16 §4, DESIGN J3/D3): the decision is a pure function of persisted state, it is
recorded with its scheduler hint, and waiting costs no model call."""
from __future__ import annotations

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.decision import Decision, TaskState, decide
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


def test_the_decision_reads_only_the_state() -> None:
    base = dict(kind="persistent", status="active", planned=True, now=100.0)
    cases = [
        (dict(open_steps=(False, True)), ("run", "now")),
        (dict(open_steps=(True,)), ("ask", "creator")),  # only a checkpoint is next: the runtime opens the card
        (dict(open_steps=()), ("quiet", "event")),  # a finished goal goes quiet
        (dict(open_steps=(False,), retry_at=160.0), ("wait", "backoff")),  # repeated failures back off
        (dict(open_steps=(False,), live_jobs=2), ("wait", "event")),
        (dict(open_steps=(False,), pending_gates=1), ("wait", "creator")),
        (dict(open_steps=(False,), status="paused"), ("wait", "pause")),
        (dict(open_steps=(False,), status="stopped", inbox=1), ("quiet", "pause")),
        (dict(open_steps=(True,), inbox=1), ("run", "now")),  # the creator spoke: the model reads it
        (dict(open_steps=(False,), goal_after_plan=True), ("replan", "now")),
        (dict(open_steps=(False,), missing=("posters/1.png",)), ("repair", "now")),
        (dict(open_steps=(), status="done", missing=("posters/1.png",)), ("repair", "now")),  # a hole in done work
        (dict(open_steps=(), stale=("the creator's answer expired at …",)), ("repair", "now")),  # re-validate
        (dict(open_steps=(), status="done", goal_after_plan=True), ("replan", "now")),  # a finished plan, old goal
        (dict(open_steps=(False,), missing=("posters/1.png",), live_jobs=1), ("wait", "event")),  # never mid-job
        (dict(open_steps=(), status="done"), ("quiet", "event")),
        (dict(planned=False), ("wait", "creator")),
    ]
    for extra, expected in cases:
        chosen = decide(TaskState(**dict(base, **extra)))
        assert (chosen.action, chosen.hint) == expected, extra
    assert decide(TaskState(**dict(base, open_steps=(False,), retry_at=160.0))).until == 160.0
    assert decide(TaskState(**dict(base, open_steps=(False,), retry_at=90.0))) == Decision(
        "run", "now", "checklist work remains")  # a back-off that ran out


async def _calls(rt: Runtime, task: str) -> list[float]:
    async with rt.db.read() as conn:
        return list((await conn.execute(select(s.model_calls.c.created_at).where(
            s.model_calls.c.task_id == task).order_by(s.model_calls.c.id))).scalars())


async def test_settled_jobs_and_an_approved_checkpoint_cost_no_model_call(lomo: LomoEnv) -> None:
    lomo.replay(
        {"content": None, "tool_calls": [{"name": "update_plan", "arguments": {"brief": "one jazz poster", "steps": [
            {"title": "Poster", "tool": "generate_image", "args": {"prompt": "a jazz poster"}},
            {"title": "Review the poster", "needs_confirmation": True}]}}]},
        {"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "a jazz poster",
                                                                                  "step": "1"}}]})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Jazz poster")
        await rt.send("a jazz poster, then let me review it", task)
        assert await rt.run_until_quiescent(60)
        before = await _calls(rt, task)
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
            job = (await conn.execute(select(s.jobs).where(s.jobs.c.task_id == task))).one()
            status = (await conn.execute(select(s.tasks.c.status).where(s.tasks.c.id == task))).scalar()
        assert (job.status, status, gate.status) == ("done", "waiting_gate", "pending")
        # the plan and the order were the model's; after the job settled the runtime opened the card itself
        assert len(before) == 2 and before[-1] < job.finished_at
        await resolve_gate(rt.db, gate.id, approve=True, option=1, by="creator:test")
        await rt.sweep()
        assert await rt.run_until_quiescent(30)
        after = await _calls(rt, task)
        async with rt.db.read() as conn:
            row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
            decided = (await conn.execute(select(s.events.c.data).where(
                s.events.c.task_id == task, s.events.c.type == "run_decided").order_by(s.events.c.id))).scalars().all()
    finally:
        await rt.close()
    assert len(after) == 2  # the approval finished the checklist: the task went quiet without asking again
    assert (row.status, row.status_reason) == ("done", "checklist complete")
    seen = [(d["stage"], d["action"], d["hint"]) for d in decided]
    assert ("step", "ask", "creator") in seen and seen[-1] == ("gate_answered", "quiet", "event")
    assert ("turn_end", "wait", "creator") in seen  # the card waits for the creator
