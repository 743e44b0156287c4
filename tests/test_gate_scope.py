"""A gate blocks only its scope (G4, #11 §4): a plan or spend card holds its orders; the task's other work goes on."""
from __future__ import annotations

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


async def test_work_a_card_does_not_cover_goes_on_while_it_waits(lomo: LomoEnv) -> None:
    plan = [{"title": "Poster", "tool": "generate_image", "args": {"prompt": "a jazz poster"}}, {"title": "Shot list"}]
    lomo.replay(
        {"content": None, "tool_calls": [{"name": "update_plan", "arguments": {"brief": "b", "steps": plan}}]},
        {"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "a jazz poster",
                                                                                  "step": "1"}}]},
        {"content": None, "tool_calls": [
            {"name": "write_file", "arguments": {"path": "shotlist.md", "content": "1. the poster\n",
                                                 "base_version": None}},
            {"name": "complete_step", "arguments": {"step": "2", "evidence": "wrote it",
                                                    "artifacts": ["shotlist.md"]}}]},
        {"content": "the poster waits for your approval; the shot list is written", "tool_calls": []})
    rt = Runtime(lomo.settings())
    rt.budget = type(rt.budget)(free_per_call=0.0, daily_free_cap=0.0)  # every paid call asks first
    await rt.start()
    try:
        task = await rt.ledger.create_task("Jazz night")
        await rt.send("a jazz poster, and a shot list", task)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
            jobs = (await conn.execute(select(s.jobs))).all()
            turn = (await conn.execute(select(s.turns).where(s.turns.c.task_id == task))).one()
        # the card still waits, nothing was ordered or charged — and the unpaid work went on meanwhile
        assert (gate.kind, gate.status, jobs) == ("plan", "pending", [])  # paid work waits for the plan's card
        assert (lomo.workspace / "shotlist.md").read_text() == "1. the poster\n"
        assert (turn.status, turn.wait_kind) == ("waiting", "step")  # the turn waits for the card only now

        await rt.resolve_gate(gate.id, approve=True, option=1)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            job = (await conn.execute(select(s.jobs))).one()
            charges = (await conn.execute(select(s.charges))).all()
            call = (await conn.execute(select(s.tool_calls).where(s.tool_calls.c.name == "generate_image"))).one()
            turn = (await conn.execute(select(s.turns).where(s.turns.c.task_id == task))).one()
    finally:
        await rt.close()
    # the approved order ran by itself with its own key: one job, one charge, no second order by the model
    assert (job.status, job.idempotency_key, len(charges)) == ("done", call.id, 1)
    assert (call.status, call.executions) == ("done", 1) and (lomo.workspace / job.artifact_path).is_file()
    assert turn.status == "completed"


async def test_a_held_order_with_nothing_else_to_do_waits_for_its_card_without_asking_again(lomo: LomoEnv) -> None:
    lomo.replay({"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "a cat"}}]},
                *[{"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "a cat"}}]}] * 3)
    rt = Runtime(lomo.settings())
    rt.budget = type(rt.budget)(free_per_call=0.0, daily_free_cap=0.0)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Cat")
        await rt.send("a cat", task)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            gates = (await conn.execute(select(s.gates.c.kind).where(s.gates.c.task_id == task))).scalars().all()
            calls = (await conn.execute(select(s.model_calls.c.id).where(s.model_calls.c.task_id == task))).all()
    finally:
        await rt.close()
    assert gates == ["spend"] and len(calls) == 1  # no plan names other work: the model is not asked to re-order
