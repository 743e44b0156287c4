"""Repair and replan act (#16 §4, DESIGN J2/J3): the runtime re-opens a step whose result broke and marks a plan
made for an older goal itself, and the next turn is told exactly what to do — real runs of the offline planner
`lomo/local` with the embedded studio, real files."""
from __future__ import annotations

import json

import pytest

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui import metrics, views
from lomo_tui.runtime import remedy
from lomo_tui.runtime.prompt_view import describe
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.tasks import checklist


async def _series(lomo: LomoEnv, message: str) -> tuple[Runtime, str]:
    """A poster series made by the offline planner, waiting at its review card."""
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    task = await rt.ledger.create_task("Posters", goal=message)
    await rt.send(message, task)
    assert await rt.run_until_quiescent(60)
    return rt, task


async def _rows(rt: Runtime, table, task: str) -> list:
    async with rt.db.read() as conn:
        return (await conn.execute(select(table).where(table.c.task_id == task))).all()


async def _events(rt: Runtime, task: str) -> list[tuple[str, dict]]:
    async with rt.db.read() as conn:
        rows = (await conn.execute(select(s.events.c.type, s.events.c.data).where(
            s.events.c.task_id == task).order_by(s.events.c.id))).all()
    return [(r.type, r.data or {}) for r in rows]


async def test_a_deleted_poster_is_reopened_by_the_runtime_and_only_it_is_made_again(lomo: LomoEnv) -> None:
    rt, task = await _series(lomo, "a retro poster series for a jazz night, three posters")
    try:
        async with rt.db.read() as conn:
            steps = await checklist.items(conn, task)
        [review] = [g for g in await _rows(rt, s.gates, task) if g.status == "pending"]
        assert [i.state for i in steps] == ["done", "done", "done", "pending"] and len(await _rows(rt, s.jobs, task)) == 3
        second = steps[1]
        [rel] = second.artifacts
        (lomo.workspace / rel).unlink()  # the creator deletes the second poster …
        await rt.workspace.observe(rel, deleted=True)
        calls_before = len(await _rows(rt, s.model_calls, task))
        await resolve_gate(rt.db, review.id, approve=True, option=1, by="creator:test")  # … and approves the review

        # the runtime re-opened the step in the answer's own transaction, before any model call …
        async with rt.db.read() as conn:
            reopened = await checklist.find(conn, task, second.id)
        assert reopened.state == "pending" and reopened.why == f"re-opened: {rel} was deleted"
        [card_item] = [i for i in await views.load_checklist(rt.db, task) if i.why]  # the card says why
        assert card_item.why == f"re-opened: {rel} was deleted"
        types = [(t, d.get("stage"), d.get("action")) for t, d in await _events(rt, task)]
        at = types.index(("run_decided", "gate_answered", "repair"))
        assert types[at + 1][0] == "step_reopened" and len(await _rows(rt, s.model_calls, task)) == calls_before
        # … and the next step's context says exactly what to make again
        text = "\n".join(m["content"] or "" for m in (await describe(rt, task))["messages"])
        assert "Repair: the runtime re-opened these steps" in text
        assert f"- step 2 “{second.title}” (id {second.id}): re-opened: {rel} was deleted" in text

        await rt.sweep()
        assert await rt.run_until_quiescent(60)
        jobs = await _rows(rt, s.jobs, task)
        async with rt.db.read() as conn:
            after = await checklist.items(conn, task)
            row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
            stats = await metrics.compute(conn, task_id=task)
    finally:
        await rt.close()
    fresh = [j for j in jobs if (j.params or {}).get("step") == second.id]
    assert len(jobs) == 4 and len(fresh) == 2  # one new job, for the deleted poster's step only
    assert [i.state for i in after] == ["done", "done", "done", "done"] and row.status == "done"
    assert after[1].artifacts == (rel,) and (lomo.workspace / rel).is_file()  # made again where it was
    assert stats["counts"]["duplicate_jobs"] == 0  # remaking what you deleted is a repair, not duplicate work


async def test_a_goal_change_marks_the_plan_and_the_offline_planner_rebuilds_it(lomo: LomoEnv) -> None:
    rt, task = await _series(lomo, "two posters for a jazz night")
    try:
        [review] = [g for g in await _rows(rt, s.gates, task) if g.status == "pending"]
        changed = lomo.run("task", "goal", task, "three posters for a blues night", "--why", "the gig moved",
                           "--json")  # the creator's change, from the command line
        assert changed.returncode == 0, changed.stderr
        assert json.loads(changed.stdout)["action"] == "replan"
        async with rt.db.read() as conn:
            marked = await checklist.items(conn, task)
            gate = (await conn.execute(select(s.gates.c.status).where(s.gates.c.id == review.id))).scalar()
            context = await remedy.context(conn, task)
        assert gate == "expired"  # the review asked about work planned for the old goal
        assert {i.why for i in marked} == {"planned for goal v2; the goal is now v3: to re-plan"}
        assert "! planned for goal v2" in lomo.run("task", "show", task).stdout
        text, hints = context
        assert "Old goal: two posters for a jazz night" in text[0] and "New goal: three posters for a blues night" \
            in text[0] and hints["replan"]["new"]["why"] == "the gig moved"

        await rt.sweep()
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            rebuilt = await checklist.items(conn, task)
            removed = [i for i in await checklist.items(conn, task, include_removed=True) if i.state == "removed"]
            left = await remedy.context(conn, task)
        events = await _events(rt, task)
        jobs = await _rows(rt, s.jobs, task)
    finally:
        await rt.close()
    assert [i.title for i in rebuilt] == ["Poster 1 of 3", "Poster 2 of 3", "Poster 3 of 3", "Review the series"]
    assert [i.state for i in rebuilt] == ["done", "done", "done", "pending"] and all(not i.why for i in rebuilt)
    assert {i.id for i in removed} == {i.id for i in marked} and left == ([], {})
    assert all("blues" in (j.prompt or "") for j in jobs[2:]) and len(jobs) == 5
    types = [(t, d.get("stage"), d.get("action")) for t, d in events]
    decided = types.index(("run_decided", "goal_changed", "replan"))
    outdated = next(i for i, (t, d) in enumerate(events) if t == "plan_outdated")
    rebuilt_at = max(i for i, (t, d) in enumerate(events) if t == "plan_updated")
    assert decided < outdated < rebuilt_at
    assert events[outdated][1]["items"] == [i.id for i in marked] and events[outdated][1]["new_goal"] == \
        "three posters for a blues night"


@pytest.mark.slow
def test_lomo_approve_sees_a_poster_deleted_while_no_watcher_ran(lomo: LomoEnv) -> None:
    """The drills' order: the creator deletes a poster with Lomo closed, then `lomo approve`s the review. The
    approval reads the task's files as they are, so the runtime repairs instead of finishing on a hole."""
    task = lomo.new_task("Market posters")
    made = lomo.run("--run-once", "a poster series for a spring farmers market, two posters", "--task", task,
                    "--json", model="lomo/local")
    assert made.returncode == 0, made.stderr
    shown = json.loads(lomo.run("task", "show", task, "--json").stdout)
    [review] = [g for g in shown["gates"] if g["status"] == "pending"]
    (lomo.workspace / sorted(shown["artifacts"])[0]).unlink()
    approved = lomo.run("approve", review["id"], "--option", "1", model="lomo/local")
    assert approved.returncode == 0, approved.stderr
    again = lomo.run("--run-once", "--json", model="lomo/local")
    assert again.returncode == 0, again.stderr
    shown = json.loads(lomo.run("task", "show", task, "--json").stdout)
    assert shown["status"] == "done" and [j["status"] for j in shown["jobs"]] == ["done"] * 3
    assert len([p for p in shown["artifacts"] if p.endswith(".png")]) == 2


async def test_between_steps_the_runtime_reopens_a_deleted_result_before_the_model_is_asked(lomo: LomoEnv) -> None:
    """Stage `step`: the poster is deleted while the task waits on a question; when the answer lets the turn go on,
    the decision between steps re-opens the poster's step itself, and the next model call makes it again."""
    question = {"question": "Go on with the notes?", "options": ["Yes", "No"]}

    def call(name: str, args: dict) -> dict:
        return {"content": None, "tool_calls": [{"name": name, "arguments": args}]}

    lomo.replay(call("update_plan", {"brief": "b", "steps": [
                    {"title": "Poster", "tool": "generate_image", "args": {"prompt": "a jazz poster"}},
                    {"title": "Ask", "tool": "ask_user", "args": question},
                    {"title": "Notes", "tool": "write_file"}]}),
                call("generate_image", {"prompt": "a jazz poster", "step": "1"}),
                call("ask_user", question),
                call("generate_image", {"prompt": "a jazz poster", "step": "1"}),
                call("complete_step", {"step": "2"}),
                call("write_file", {"path": "notes.md", "content": "notes\n", "base_version": None}),
                call("complete_step", {"step": "3", "artifacts": ["notes.md"]}),
                {"content": "finished", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Poster and notes")
        await rt.send("a jazz poster, then notes", task)
        assert await rt.run_until_quiescent(60)
        [asked] = [g for g in await _rows(rt, s.gates, task) if g.status == "pending"]
        async with rt.db.read() as conn:
            [rel] = (await checklist.items(conn, task))[0].artifacts
        (lomo.workspace / rel).unlink()
        await rt.workspace.observe(rel, deleted=True)
        await rt.resolve_gate(asked.id, approve=True, option=1, by="creator:test")
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            steps = await checklist.items(conn, task)
            reopened = (await conn.execute(select(s.events).where(
                s.events.c.task_id == task, s.events.c.type == "step_reopened"))).one()
            decided = (await conn.execute(select(s.events).where(
                s.events.c.task_id == task, s.events.c.type == "run_decided").order_by(s.events.c.id))).all()
            calls = (await conn.execute(select(s.model_calls.c.created_at).where(
                s.model_calls.c.task_id == task).order_by(s.model_calls.c.id))).scalars().all()
        jobs = await _rows(rt, s.jobs, task)
    finally:
        await rt.close()
    assert [i.state for i in steps] == ["done", "done", "done"] and len(jobs) == 2
    assert reopened.data["by"] == "run_decided:step" and reopened.data["why"] == f"{rel} was deleted"
    repair = next(d for d in decided if d.data["action"] == "repair")
    assert repair.data["stage"] == "step" and repair.id < reopened.id
    assert len([c for c in calls if c < reopened.at]) == 3  # plan, poster, question: none spent finding the hole
