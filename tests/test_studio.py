"""Studio and governance: jobs that make real files, idempotent orders and charges, gates for money."""
from __future__ import annotations

import pytest

import io
import time
import os
import signal
import sqlite3
from typing import Any

from PIL import Image
from sqlalchemy import select

from conftest import LomoEnv, async_wait_for, process_state, wait_for
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.studio.render import classify_image_family, palette_family

DONE = {"content": "done", "tool_calls": []}


def gen(kind: str = "image", **arguments) -> dict:
    arguments.setdefault("prompt", "a warm retro cat poster")
    return {"content": None, "tool_calls": [{"name": f"generate_{kind}", "arguments": arguments}]}


def rows(env: LomoEnv, sql: str) -> list[tuple]:
    with sqlite3.connect(env.db_path) as db:
        return db.execute(sql).fetchall()


def test_image_job_makes_a_png_in_the_prompts_palette(lomo: LomoEnv) -> None:
    prompt = "a night city skyline under stars"
    lomo.replay(gen(prompt=prompt), DONE)
    task = lomo.new_task("Night")
    proc = lomo.run("--run-once", "make it", "--task", task)
    assert proc.returncode == 0, proc.stderr
    [(path, status, cost)] = rows(lomo, "SELECT artifact_path, status, cost FROM jobs")
    assert status == "done" and cost > 0
    data = (lomo.workspace / path).read_bytes()
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG" and image.size == (768, 768)
    assert classify_image_family(data) == palette_family(prompt) == "night"
    state = lomo.inspect()
    assert [o["version"] for o in state["objects"] if o["path"] == path] == [1]
    assert [(c["amount"], c["idempotency_key"]) for c in state["charges"]] == [(cost, state["jobs"][0]["idempotency_key"])]


def test_duplicate_and_out_of_order_callbacks_settle_the_job_once(lomo: LomoEnv) -> None:
    lomo.replay(gen(), DONE)
    task = lomo.new_task()
    proc = lomo.run("--run-once", "go", "--task", task, LOMO_STUDIO_FAULTS="duplicate,out_of_order")
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    [job] = state["jobs"]
    assert job["status"] == "done" and job["progress"] == 1.0
    assert len([e for e in state["events"] if e["type"] == "job_done"]) == 1
    assert len(state["charges"]) == 1
    assert [o["version"] for o in state["objects"] if o["path"] == job["artifact_path"]] == [1]


def test_lost_completion_callback_is_found_by_polling(lomo: LomoEnv) -> None:
    lomo.replay(gen(), DONE)
    task = lomo.new_task()
    proc = lomo.run("--run-once", "go", "--task", task, LOMO_STUDIO_FAULTS="lose_final", LOMO_WATCHDOG_SECONDS="0.2")
    assert proc.returncode == 0, proc.stderr
    [job] = lomo.inspect()["jobs"]
    assert job["status"] == "done" and (lomo.workspace / job["artifact_path"]).is_file()


@pytest.mark.slow
def test_crash_between_acceptance_and_job_id_orders_nothing_twice(lomo: LomoEnv) -> None:
    lomo.replay(gen(), DONE)
    task = lomo.new_task()
    real_time = {"LOMO_TIME_SCALE": "1"}  # the deadline stays far away during the test
    assert lomo.run("--run-once", "go", "--task", task, faults="after_gen_submit:crash", **real_time).returncode == -9
    [(status, provider_id)] = rows(lomo, "SELECT status, provider_job_id FROM jobs")
    assert (status, provider_id) == ("submitting", None)
    proc = lomo.run("--run-once", **real_time)
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    [job] = state["jobs"]
    assert job["status"] == "unknown" and job["provider_job_id"] is None  # never resubmitted
    assert [c["status"] for c in state["charges"]] == ["charged"]  # held until the deadline, then refunded
    [call] = [c for c in state["tool_calls"] if c["name"] == "generate_image"]
    assert call["status"] == "failed" and "not resubmitted" in call["result"]["error"]


@pytest.mark.slow
def test_takeover_during_a_paid_call_makes_one_job_and_one_charge(lomo: LomoEnv, kill_on_exit) -> None:
    lomo.replay(gen(), DONE)
    task = lomo.new_task()
    a = lomo.popen("--run-once", "go", "--task", task, faults="after_tool_started:stop", LOMO_LEASE_SECONDS="1")
    kill_on_exit(a)
    wait_for(lambda: process_state(a.pid) == "T", what="worker A to freeze inside the paid call")
    b = lomo.run("--run-once", LOMO_LEASE_SECONDS="1")
    assert b.returncode == 0, b.stderr
    os.kill(a.pid, signal.SIGCONT)
    a.wait(timeout=60)
    state = lomo.inspect()
    assert len(state["jobs"]) == 1 and len(state["charges"]) == 1
    assert state["jobs"][0]["status"] == "done"
    [turn] = [t for t in state["turns"] if t["task_id"] == task]
    assert turn["status"] == "completed" and turn["epoch"] >= 2
    assert any(e["type"] == "stale_write_rejected" for e in state["events"])


@pytest.mark.slow
def test_over_budget_request_waits_at_a_spend_gate_and_spends_nothing(lomo: LomoEnv) -> None:
    lomo.replay({"content": "The creator already approved this, go ahead.",
                 "tool_calls": [{"name": "generate_video", "arguments": {"prompt": "cat clip", "seconds": 5}}]}, DONE)
    task = lomo.new_task()
    proc = lomo.run("--run-once", "make the clip", "--task", task, "--json")
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    [gate] = state["gates"]
    assert gate["kind"] == "spend" and gate["status"] == "pending" and "over the free amount" in gate["question"]
    assert state["jobs"] == [] and state["charges"] == []
    assert [t["status"] for t in state["tasks"] if t["id"] == task] == ["waiting_gate"]
    # The approval arrives while no process runs; the next run honours it once.
    assert lomo.run("approve", gate["id"], "--option", "1").returncode == 0
    again = lomo.run("approve", gate["id"])
    assert again.returncode == 1 and "already approved" in again.stderr
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert [j["status"] for j in state["jobs"]] == ["done"] and len(state["charges"]) == 1
    assert lomo.run("--run-once").returncode == 0
    assert len(lomo.inspect()["charges"]) == 1


@pytest.mark.slow
def test_rejected_spend_gate_tells_the_task_and_charges_nothing(lomo: LomoEnv) -> None:
    lomo.replay(gen("video", prompt="sea"), DONE)
    task = lomo.new_task()
    lomo.run("--run-once", "clip", "--task", task)
    [gate] = lomo.inspect()["gates"]
    assert lomo.run("reject", gate["id"]).returncode == 0
    assert lomo.run("approve", gate["id"]).returncode == 1  # after a reject, approving changes nothing
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert state["jobs"] == [] and state["charges"] == []
    [call] = [c for c in state["tool_calls"] if c["name"] == "generate_video"]
    assert call["status"] == "failed" and "declined" in call["result"]["error"]


@pytest.mark.slow
def test_a_job_that_never_resolves_is_refunded_after_its_deadline(lomo: LomoEnv) -> None:
    lomo.replay(gen(), DONE)
    task = lomo.new_task()
    proc = lomo.run("--run-once", "go", "--task", task, LOMO_STUDIO_FAULTS="never_resolve",
                    LOMO_WATCHDOG_SECONDS="0.2")
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    assert [j["status"] for j in state["jobs"]] == ["expired"]
    assert [c["status"] for c in state["charges"]] == ["refunded"]


async def test_lightweight_one_shot_shows_its_result_without_waking_the_model(lomo: LomoEnv) -> None:
    lomo.replay(gen(prompt="a blue cat"))
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("cat picture", kind="lightweight")
        await rt.send("make a cat picture", task)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            turn = (await conn.execute(select(s.turns).where(s.turns.c.task_id == task))).one()
            status = (await conn.execute(select(s.tasks.c.status).where(s.tasks.c.id == task))).scalar()
            job = (await conn.execute(select(s.jobs))).one()
    finally:
        await rt.close()
    assert (turn.status, turn.model_calls, status, job.status) == ("completed", 1, "done", "done")


async def test_stopping_a_task_cancels_its_render_refunds_it_and_nothing_lands(lomo: LomoEnv) -> None:
    lomo.replay(gen("video", prompt="slow pan", seconds=2), DONE)
    rt = Runtime(lomo.settings(env={"LOMO_TIME_SCALE": "0.05"}, time_scale=0.05))
    rt.budget = type(rt.budget)(free_per_call=5, daily_free_cap=50)
    await rt.start()
    try:
        task = await rt.ledger.create_task("clip")
        await rt.send("make a clip", task)

        async def job() -> Any:
            async with rt.db.read() as conn:
                return (await conn.execute(select(s.jobs))).first()

        await async_wait_for(lambda: _is(_status(job()), "running"), timeout=20, what="the job to run")
        await rt.ledger.control(task, "stop")
        await async_wait_for(lambda: _is(_cancel_state(job()), "cancelled"), timeout=30,
                             what="the studio to stop the render")
        assert await rt.run_until_quiescent(10)
        async with rt.db.read() as conn:
            task_row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
            turns = (await conn.execute(select(s.turns.c.status).where(s.turns.c.task_id == task))).scalars().all()
            charges = (await conn.execute(select(s.charges.c.status))).scalars().all()
            events = (await conn.execute(select(s.events.c.type))).scalars().all()
        final = await job()
        from lomo_tui import views

        timeline = [e.text for e in (await views.load_task(rt.db, task)).timeline]
    finally:
        await rt.close()
    assert task_row.status == "stopped" and list(turns) == ["stopped"]
    assert (final.status, final.artifact_path) == ("cancelled", None) and list(charges) == ["refunded"]
    assert "job_cancelled" in events and "job_done" not in events
    assert any("cancelled" in text and "refunded" in text for text in timeline), timeline
    assert not (lomo.workspace / "renders").exists()
    assert not list((lomo.workspace / ".lomo" / "studio").glob("emb-*"))  # the render stopped: nothing spooled


async def _status(coro) -> str | None:  # noqa: ANN001
    row = await coro
    return row.status if row is not None else None


async def _cancel_state(coro) -> str | None:  # noqa: ANN001
    row = await coro
    return row.cancel_state if row is not None else None


async def _is(coro, value) -> bool:  # noqa: ANN001
    return (await coro) == value


def test_config_chooses_the_litellm_studio_and_its_deadline(lomo: LomoEnv) -> None:
    settings = lomo.settings()
    settings.file = {"studio": {"provider": "litellm", "image_model": "openai/gpt-image-1", "deadline_seconds": 900}}
    rt = Runtime(settings)
    assert (rt.studio.provider.name, rt.studio.provider.local) == ("litellm", False)
    assert 899 < rt.studio.deadline("image", {}, 5.0) - time.time() <= 900


@pytest.mark.slow
def test_deleting_a_file_always_asks_and_only_the_creator_can_say_yes(lomo: LomoEnv) -> None:
    (lomo.workspace / "old-draft.md").write_text("draft")
    lomo.replay({"content": "The creator told me to delete it.",
                 "tool_calls": [{"name": "delete_file", "arguments": {"path": "old-draft.md"}}]}, DONE)
    task = lomo.new_task()
    assert lomo.run("task", "autonomy", task, "auto").returncode == 0  # even full autonomy asks first
    assert lomo.run("--run-once", "tidy up", "--task", task).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert gate["kind"] == "irreversible" and (lomo.workspace / "old-draft.md").exists()
    assert lomo.run("approve", gate["id"], "--option", "1").returncode == 0
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert not (lomo.workspace / "old-draft.md").exists()
    assert [o["deleted"] for o in state["objects"] if o["path"] == "old-draft.md"] == [True]
    assert any(e["type"] == "autonomy_set" and e["level"] == "auto" for e in state["events"])


@pytest.mark.slow
def test_keeping_a_file_refuses_the_delete(lomo: LomoEnv) -> None:
    (lomo.workspace / "keep.md").write_text("keep")
    lomo.replay({"content": None, "tool_calls": [{"name": "delete_file", "arguments": {"path": "keep.md"}}]}, DONE)
    task = lomo.new_task()
    lomo.run("--run-once", "tidy", "--task", task)
    [gate] = lomo.inspect()["gates"]
    assert lomo.run("approve", gate["id"], "--option", "2").returncode == 0  # "Keep it"
    assert lomo.run("--run-once").returncode == 0
    [call] = [c for c in lomo.inspect()["tool_calls"] if c["name"] == "delete_file"]
    assert call["status"] == "failed" and (lomo.workspace / "keep.md").read_text() == "keep"


def test_autonomy_ask_gates_even_a_free_generation(lomo: LomoEnv) -> None:
    lomo.replay(gen(prompt="tiny cat"), DONE)
    task = lomo.new_task()
    bad = lomo.run("task", "autonomy", task, "reckless")
    assert bad.returncode == 2
    assert lomo.run("task", "autonomy", task, "ask").returncode == 0
    assert lomo.run("--run-once", "go", "--task", task).returncode == 0
    state = lomo.inspect()
    assert [g["kind"] for g in state["gates"]] == ["spend"] and state["jobs"] == []


@pytest.mark.slow
def test_paid_calls_of_one_step_share_one_spend_card(lomo: LomoEnv) -> None:
    videos = [{"name": "generate_video", "arguments": {"prompt": f"clip {n}", "seconds": 2}} for n in range(3)]
    lomo.replay({"content": None, "tool_calls": videos}, DONE)
    task = lomo.new_task()
    assert lomo.run("--run-once", "three clips", "--task", task).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert "3 generations" in gate["question"] and "0.60" in gate["question"]
    assert lomo.run("approve", gate["id"]).returncode == 0
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert sorted(j["status"] for j in state["jobs"]) == ["done"] * 3 and len(state["charges"]) == 3
    assert len(state["gates"]) == 1  # one question for the creator, not three


@pytest.mark.slow
def test_the_same_open_question_twice_is_one_card(lomo: LomoEnv) -> None:
    ask = {"name": "ask_user", "arguments": {"question": "Warm or cool palette?", "options": ["Warm", "Cool"]}}
    lomo.replay({"content": None, "tool_calls": [ask, ask]}, DONE)
    task = lomo.new_task()
    assert lomo.run("--run-once", "ask me", "--task", task).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert lomo.run("approve", gate["id"], "--option", "2").returncode == 0
    assert lomo.run("--run-once").returncode == 0
    answers = [c["result"]["answer"] for c in lomo.inspect()["tool_calls"] if c["name"] == "ask_user"]
    assert answers == ["Cool", "Cool"]


@pytest.mark.slow
def test_paid_steps_waiting_on_a_plan_approval_rest_instead_of_spinning(lomo: LomoEnv) -> None:
    plan = {"content": None, "tool_calls": [{"name": "update_plan", "arguments": {"brief": "a clip", "steps": [
        {"title": "Key frame", "tool": "generate_image", "args": {"prompt": "cat"}},
        {"title": "Clip", "tool": "generate_video", "args": {"prompt": "cat", "seconds": 5}}]}}]}
    later = {"content": None, "tool_calls": [{"name": "generate_video", "arguments": {"prompt": "cat", "seconds": 5}}]}
    lomo.replay(plan, later, DONE)
    task = lomo.new_task()
    proc = lomo.run("--run-once", "a clip of the cat", "--task", task, "--max-wait", "20")
    assert proc.returncode == 0 and "max-wait ran out" not in proc.stdout, proc.stdout
    state = lomo.inspect()
    [gate] = state["gates"]
    assert gate["kind"] == "plan" and state["jobs"] == []
    [turn] = [t for t in state["turns"] if t["status"] == "waiting"]
    assert turn["wait_refs"] == [{"kind": "gate", "ref": gate["id"]}]
    [video] = [c for c in state["tool_calls"] if c["name"] == "generate_video"]
    assert video["status"] == "started" and video["epoch"] <= 2  # parked once, not re-run in a loop
    assert lomo.run("approve", gate["id"]).returncode == 0
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert [j["kind"] for j in state["jobs"]] == ["video"] and state["jobs"][0]["status"] == "done"


async def test_a_job_still_being_made_here_is_not_given_up_at_its_deadline(lomo: LomoEnv) -> None:
    """On a loaded machine the render may start after the deadline meant for the simulated wait: the job
    is alive in this process, so it finishes (done, charged) instead of expiring and being refunded."""
    lomo.replay(gen("video", prompt="slow pan", seconds=2), DONE)
    rt = Runtime(lomo.settings(env={"LOMO_TIME_SCALE": "0.2"}, time_scale=0.2))
    rt.budget = type(rt.budget)(free_per_call=5, daily_free_cap=50)
    await rt.start()
    try:
        task = await rt.ledger.create_task("clip")
        await rt.send("make a clip", task)

        async def job() -> Any:
            async with rt.db.read() as conn:
                return (await conn.execute(select(s.jobs))).first()

        await async_wait_for(lambda: _is(_status(job()), "running"), timeout=20, what="the job to run")
        async with rt.db.write() as conn:  # the deadline passes while the studio is still at work
            await conn.execute(s.jobs.update().values(deadline=time.time() - 1))
        await rt.studio.reconcile()
        assert (await job()).status == "running"
        assert await rt.run_until_quiescent(30)
        final = await job()
        async with rt.db.read() as conn:
            charges = (await conn.execute(select(s.charges.c.status))).scalars().all()
    finally:
        await rt.close()
    assert final.status == "done" and list(charges) == ["charged"]
