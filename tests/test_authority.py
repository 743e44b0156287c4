"""Money and authority under real concurrency: the daily cap, one grant per gate, one end per job, and
what a stop or an archive calls off. Run on SQLite and on a real PostgreSQL server."""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from sqlalchemy import insert, select, update

from conftest import LomoEnv, async_wait_for
from lomo_tui.errors import LomoError
from lomo_tui.governance.gates import open_gate
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.store.engine import Database

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def env(request: pytest.FixtureRequest, lomo: LomoEnv) -> LomoEnv:
    if request.param == "postgres":
        lomo.db_url = request.getfixturevalue("postgres_server")()
    return lomo


def image(prompt: str) -> dict[str, Any]:
    return {"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": prompt}}]}


def budget_config(env: LomoEnv, **values: float) -> None:
    folder = env.root / "cfg" / "lomo"
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{k} = {v}\n" for k, v in values.items())
    (folder / "config.toml").write_text(f"[budget]\n{body}")
    (env.root / "cfg" / "config.toml").write_text(f"[budget]\n{body}")


async def _open(env: LomoEnv, **overrides: Any) -> Runtime:
    rt = Runtime(env.settings(**overrides), watch=False)
    await rt.open()
    return rt


# ---- the daily free cap --------------------------------------------------------------------------------
@pytest.mark.slow
def test_six_processes_never_spend_past_the_daily_free_cap_without_approval(env: LomoEnv, kill_on_exit) -> None:
    budget_config(env, daily_free_cap=0.10, free_per_call=0.10)
    env.replay(*[image(f"a cat number {n}") for n in range(12)])

    async def setup() -> list[str]:
        rt = await _open(env)
        try:
            tasks = []
            for n in range(12):
                task = await rt.ledger.create_task(f"Cat {n}")
                await rt.ledger.deliver(task, f"one picture of cat {n}")
                tasks.append(task)
            return tasks
        finally:
            await rt.db.close()

    asyncio.run(setup())
    slow = {"LOMO_TIME_SCALE": "0.2"}  # deadlines far beyond the renders: nothing expires and is refunded
    procs = [env.popen("--run-once", "--max-wait", "60", **slow) for _ in range(6)]
    for proc in procs:
        kill_on_exit(proc)
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    state = env.inspect()
    charged = round(sum(c["amount"] for c in state["charges"] if c["status"] == "charged"), 4)
    assert charged <= 0.10 and not asyncio.run(_authorisations(env)), (charged, state["charges"])
    assert any(g["kind"] == "spend" for g in state["gates"])  # the rest asked instead of spending


async def _authorisations(env: LomoEnv) -> list[Any]:
    db = Database(env.db_url)
    try:
        async with db.read() as conn:
            return list((await conn.execute(select(s.authorisations))).all())
    finally:
        await db.close()


# ---- a gate resolves once --------------------------------------------------------------------------------
async def test_eight_concurrent_approvals_of_a_plan_grant_its_budget_once(env: LomoEnv) -> None:
    rt = await _open(env)
    try:
        task = await rt.ledger.create_task("Posters")
        async with rt.db.write() as conn:
            gate = await open_gate(conn, task_id=task, kind="plan", question="Approve the plan, 0.12 credits?",
                                   options=["Approve", "Not now"], dedupe_key="plan:test",
                                   scope={"budget": 0.12, "task": task})
    finally:
        await rt.db.close()
    dbs = [Database(env.db_url) for _ in range(8)]  # eight processes' connections
    try:
        outcomes = await asyncio.gather(*[resolve_gate(db, gate.id, approve=True, by=f"creator:{n}")
                                          for n, db in enumerate(dbs)], return_exceptions=True)
        async with dbs[0].read() as conn:
            grants = (await conn.execute(select(s.authorisations))).all()
            resolved = (await conn.execute(select(s.events).where(s.events.c.type == "gate_resolved"))).all()
    finally:
        for db in dbs:
            await db.close()
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(outcomes) - len(refused) == 1
    assert all(isinstance(o, LomoError) and "already approved" in str(o) for o in refused), refused
    assert [(g.scope, g.amount) for g in grants] == [("plan", 0.12)] and len(resolved) == 1


# ---- one end per job ---------------------------------------------------------------------------------------
JOBS = 6


async def _finished_renders(rt: Runtime, task: str, count: int) -> list[Any]:
    """COUNT embedded image jobs whose render is finished but whose completion was not yet delivered (as if the
    callback were lost), each past its deadline: completion and expiry are both due."""
    provider = rt.studio.provider
    await provider.start()
    jobs = []
    t = time.time()
    for n in range(count):
        key = f"test/{task}/{n}"
        params = {"prompt": f"a red fox {n}", "size_px": [128, 128], "input_files": [], "inputs": []}
        pjid = await provider.submit("image", params, key)
        job_id = f"job-race{n}-{task[-4:]}"
        async with rt.db.write() as conn:
            await conn.execute(insert(s.jobs).values(
                id=job_id, workspace=rt.studio.workspace_key, idempotency_key=key, task_id=task, kind="image",
                provider=provider.name, provider_job_id=pjid, status="running", prompt=params["prompt"],
                params=params, cost=0.04, deadline=t - 1, created_at=t, updated_at=t))
            await conn.execute(insert(s.charges).values(id=f"chg-race{n}-{task[-4:]}", job_id=job_id, task_id=task,
                                                        amount=0.04, idempotency_key=key, status="charged",
                                                        created_at=t))
        jobs.append((job_id, pjid))

    async def rendered() -> bool:
        return all([(await provider.status(pjid)).status == "done" for _, pjid in jobs])

    await async_wait_for(rendered, timeout=30, what="the renders to finish")
    return jobs


async def _ends(db: Database, job_id: str) -> list[str]:
    async with db.read() as conn:
        rows = (await conn.execute(select(s.events.c.type, s.events.c.data).where(
            s.events.c.type.in_(("job_done", "job_expired", "job_failed", "job_cancelled"))))).all()
    return [r.type for r in rows if (r.data or {}).get("job_id") == job_id]


async def test_a_completion_racing_the_expiry_ends_each_job_once_and_delivers_only_if_done(env: LomoEnv) -> None:
    completer = await _open(env, studio_faults="lose_final")
    expirer = await _open(env)  # another process: it only sees the database
    try:
        task = await completer.ledger.create_task("Foxes")
        jobs = await _finished_renders(completer, task, JOBS)
        events = [await completer.studio.provider.status(pjid) for _, pjid in jobs]
        await asyncio.gather(*[completer.studio.on_event(e) for e in events], expirer.studio.reconcile())
        for job_id, _ in jobs:
            async with completer.db.read() as conn:
                job = (await conn.execute(select(s.jobs).where(s.jobs.c.id == job_id))).one()
                charge = (await conn.execute(select(s.charges.c.status).where(s.charges.c.job_id == job_id))).scalar()
                objects = (await conn.execute(select(s.objects.c.path).where(
                    s.objects.c.path.like(f"%{job_id[-6:]}%")))).scalars().all()
            ends = await _ends(completer.db, job_id)
            files = list(env.workspace.glob(f"renders/**/*{job_id[-6:]}*"))
            assert ends == [f"job_{job.status}"], (job_id, ends)
            if job.status == "done":
                assert charge == "charged" and len(files) == 1 and objects == [job.artifact_path]
            else:
                assert (job.status, charge, files, objects) == ("expired", "refunded", [], [])
    finally:
        await completer.studio.provider.stop()
        await completer.db.close()
        await expirer.db.close()


async def test_a_completion_racing_the_stop_either_delivers_or_cancels_and_never_revives(env: LomoEnv) -> None:
    completer = await _open(env, studio_faults="lose_final")
    stopper = await _open(env)
    try:
        tasks = [await completer.ledger.create_task(f"Fox {n}") for n in range(JOBS)]
        jobs = [(task, *(await _finished_renders(completer, task, 1))[0]) for task in tasks]
        async with completer.db.write() as conn:
            await conn.execute(update(s.jobs).values(deadline=time.time() + 600))
        events = [await completer.studio.provider.status(pjid) for _, _, pjid in jobs]
        await asyncio.gather(*[completer.studio.on_event(e) for e in events],
                             *[stopper.ledger.control(task, "stop") for task, _, _ in jobs])
        for task, job_id, _ in jobs:
            async with completer.db.read() as conn:
                job = (await conn.execute(select(s.jobs).where(s.jobs.c.id == job_id))).one()
                charge = (await conn.execute(select(s.charges.c.status).where(s.charges.c.job_id == job_id))).scalar()
                row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
                turns = (await conn.execute(select(s.turns.c.status).where(s.turns.c.task_id == task))).scalars().all()
            files = list(env.workspace.glob(f"renders/**/*{job_id[-6:]}*"))
            assert await _ends(completer.db, job_id) == [f"job_{job.status}"]
            assert row.status == "stopped" and "queued" not in turns
            if job.status == "done":
                assert charge == "charged" and len(files) == 1
            else:
                assert (job.status, charge, files) == ("cancelled", "refunded", [])
    finally:
        await completer.studio.provider.stop()
        await completer.db.close()
        await stopper.db.close()


# ---- stop and archive call off what waits -------------------------------------------------------------------
@pytest.mark.slow
def test_a_stopped_tasks_gate_expires_and_approving_it_is_refused(env: LomoEnv) -> None:
    async def setup() -> tuple[str, str]:
        rt = await _open(env)
        try:
            task = await rt.ledger.create_task("Poster series")
            async with rt.db.write() as conn:
                gate = await open_gate(conn, task_id=task, kind="plan", question="Approve the plan?",
                                       options=["Approve", "Not now"], dedupe_key="plan:stop",
                                       scope={"budget": 0.12, "task": task})
            return task, gate.id
        finally:
            await rt.db.close()

    task, gate = asyncio.run(setup())
    assert env.run("task", "stop", task).returncode == 0
    assert json.loads(env.run("gates", "--json").stdout) == []
    answer = env.run("approve", gate)
    assert answer.returncode == 1 and "expired" in answer.stderr and "Traceback" not in answer.stderr, answer.stderr
    state = env.inspect()
    [row] = state["gates"]
    assert row["status"] == "expired"
    assert [t["status"] for t in state["tasks"] if t["id"] == task] == ["stopped"]
    types = [e["type"] for e in state["events"] if e.get("task_id") == task]
    assert "gate_resolved" not in types and "turn_completed" not in types and not asyncio.run(_authorisations(env))


@pytest.mark.slow
def test_the_main_thread_cannot_be_stopped_archived_or_given_autonomy(env: LomoEnv) -> None:
    assert env.run("inspect", "--json").returncode == 0  # the main thread exists
    for argv in (("task", "stop", "main"), ("task", "archive", "main"), ("task", "autonomy", "main", "auto")):
        proc = env.run(*argv)
        assert proc.returncode == 1 and "main thread" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    [main] = [t for t in env.inspect()["tasks"] if t["id"] == "main"]
    assert main["status"] != "stopped" and not main.get("archived")


# ---- a re-quote counts what is still to pay for --------------------------------------------------------------
def _plan(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"content": None, "tool_calls": [{"name": "update_plan", "arguments": {"brief": "cats", "steps": steps}}]}


@pytest.mark.slow
def test_a_revised_plan_is_quoted_for_the_paid_steps_not_yet_done(lomo: LomoEnv) -> None:
    budget_config(lomo, daily_free_cap=0.10, free_per_call=0.10)
    cats = [{"title": f"Cat {n}", "tool": "generate_image", "args": {"prompt": f"cat {n}"}} for n in range(3)]
    first = {"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "cat 0", "step": "1"}}]}
    lomo.replay(_plan(cats), first)
    task = lomo.new_task("Cats")
    slow = {"LOMO_TIME_SCALE": "0.2"}  # no job nears its deadline on a loaded machine
    assert lomo.run("--run-once", "three cats", "--task", task, **slow).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert "0.12" in gate["question"]
    assert lomo.run("approve", gate["id"]).returncode == 0
    lomo.replay(_plan(cats), first, {"content": "ok", "tool_calls": []})
    assert lomo.run("--run-once", **slow).returncode == 0
    state = lomo.inspect()
    assert [j["status"] for j in state["jobs"]] == ["done"]
    ids = [row[0] for row in _sqlite(lomo, "SELECT id FROM checklist ORDER BY position")]
    revised = [dict(step, id=item) for step, item in zip(cats, ids)]
    revised.append({"title": "Cat 3", "tool": "generate_image", "args": {"prompt": "cat 3"}})
    [(calls,)] = _sqlite(lomo, "SELECT count(*) FROM model_calls")
    lomo.replay(*[{"content": "ok", "tool_calls": []}] * calls, _plan(revised), {"content": "ok", "tool_calls": []})
    assert lomo.run("--run-once", "add a fourth cat", "--task", task, **slow).returncode == 0
    gates = lomo.inspect()["gates"]
    [again] = [g for g in gates if g["status"] == "pending"]
    # three paid steps left (0.12) and 0.08 of the approved 0.12 unspent: it asks for the three, not all four
    assert "0.12" in again["question"] and "0.16" not in again["question"], again["question"]


def _sqlite(env: LomoEnv, sql: str) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(env.db_path) as db:
        return db.execute(sql).fetchall()


# ---- gate deadlines ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_an_unanswered_question_expires_at_its_deadline_and_says_what_happened_instead(lomo: LomoEnv) -> None:
    ask = {"name": "ask_user", "arguments": {"question": "Warm or cool palette?", "options": ["Warm", "Cool"],
                                             "deadline_minutes": 0.001, "if_unanswered": "Cool"}}
    lomo.replay({"content": None, "tool_calls": [ask]}, {"content": "went cool", "tool_calls": []})
    task = lomo.new_task("Palette")
    assert lomo.run("--run-once", "pick a palette", "--task", task).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert json.loads(lomo.run("gates", "--json").stdout) == []  # past its deadline: out of the inbox
    late = lomo.run("approve", gate["id"], "--option", "1")
    assert late.returncode == 1 and "expired (its deadline passed); went on with “Cool”" in late.stderr, late.stderr
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert [g["status"] for g in state["gates"]] == ["expired"]
    [call] = [c for c in state["tool_calls"] if c["name"] == "ask_user"]
    assert (call["status"], call["result"]["answer"], call["result"]["expired"]) == ("done", "Cool", True)
    assert any(e["type"] == "gate_expired" for e in state["events"])


# ---- a step after a gate re-reads what changed --------------------------------------------------------------
@pytest.mark.slow
def test_key_frames_ordered_after_the_plan_gate_use_the_storyboard_as_edited_meanwhile(lomo: LomoEnv) -> None:
    budget_config(lomo, daily_free_cap=0.05, free_per_call=0.10)
    board = lomo.workspace / "storyboard.md"
    board.write_text("# Coffee\n\nShot 1: a cup on a table\n\nShot 2: a red car outside\n")
    read = {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "storyboard.md"}}]}
    frames = [{"title": f"Key frame {n}", "tool": "generate_image", "args": {"prompt": p}}
              for n, p in ((1, "a cup on a table"), (2, "a red car outside"))]
    order = {"content": None, "tool_calls": [
        {"name": "generate_image", "arguments": {"prompt": "a cup on a table", "step": "1"}},
        {"name": "generate_image", "arguments": {"prompt": "a red car outside", "step": "2"}}]}
    lomo.replay(read, _plan(frames), order)
    task = lomo.new_task("Coffee storyboard")
    slow = {"LOMO_TIME_SCALE": "0.2"}  # no job nears its deadline on a loaded machine
    assert lomo.run("--run-once", "key frames for the storyboard", "--task", task, **slow).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert gate["kind"] == "plan" and lomo.inspect()["jobs"] == []
    board.write_text("# Coffee\n\nShot 1: a cup on a table\n\nShot 2: a blue bicycle outside\n")  # in vim, say
    reordered = {"content": None, "tool_calls": [
        {"name": "generate_image", "arguments": {"prompt": "a cup on a table", "step": "1"}},
        {"name": "generate_image", "arguments": {"prompt": "a blue bicycle outside", "step": "2"}}]}
    # the held orders waited on the plan card while the turn went on (G4: it told the model so, which said done)
    lomo.replay(read, _plan(frames), order, {"content": "waiting for the plan", "tool_calls": []}, read, reordered,
                {"content": "done", "tool_calls": []})
    assert lomo.run("approve", gate["id"]).returncode == 0
    assert lomo.run("--run-once", **slow).returncode == 0
    state = lomo.inspect()
    prompts = sorted(j["prompt"] if "prompt" in j else "" for j in state["jobs"])
    stale = [c for c in state["tool_calls"] if c["name"] == "generate_image" and c["status"] == "failed"]
    calls = [(c["name"], c["status"], c["arguments"]) for c in state["tool_calls"]]
    assert stale and all("storyboard.md changed" in json.dumps(c["result"]) for c in stale), calls
    assert _sqlite(lomo, "SELECT prompt FROM jobs WHERE prompt LIKE '%red car%'") == []
    assert _sqlite(lomo, "SELECT count(*) FROM jobs WHERE prompt LIKE '%blue bicycle%'") == [(1,)], prompts
    assert _sqlite(lomo, "SELECT status FROM notices") == [("seen",)]  # read again: the notice closed


@pytest.mark.slow
def test_archiving_a_task_at_a_spend_gate_calls_the_step_off_and_nothing_revives_it(lomo: LomoEnv) -> None:
    clip = {"content": None, "tool_calls": [{"name": "generate_video", "arguments": {"prompt": "a cat", "seconds": 2}}]}
    lomo.replay(clip, {"content": "done", "tool_calls": []})
    task = lomo.new_task("Clip")
    assert lomo.run("--run-once", "a clip", "--task", task).returncode == 0
    [gate] = lomo.inspect()["gates"]
    assert gate["kind"] == "spend"
    before = _sqlite(lomo, "SELECT count(*) FROM model_calls")  # the card held the clip; the turn went on
    assert lomo.run("task", "archive", task).returncode == 0
    refused = lomo.run("approve", gate["id"])
    assert refused.returncode == 1 and "expired (the task was archived)" in refused.stderr, refused.stderr
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert [g["status"] for g in state["gates"]] == ["expired"] and state["jobs"] == []
    assert [t["status"] for t in state["turns"] if t["task_id"] == task] == ["stopped"]
    assert _sqlite(lomo, "SELECT count(*) FROM model_calls") == before  # nothing ran after the archive


@pytest.mark.slow
def test_only_the_creators_resume_restarts_a_stopped_task(lomo: LomoEnv) -> None:
    ask = {"name": "ask_user", "arguments": {"question": "Warm or cool?", "options": ["Warm", "Cool"]}}
    lomo.replay({"content": None, "tool_calls": [ask]}, {"content": "starting over, warm", "tool_calls": []})
    task = lomo.new_task("Palette")
    assert lomo.run("--run-once", "pick", "--task", task).returncode == 0
    assert lomo.run("task", "stop", task).returncode == 0
    refused = lomo.run("--run-once", "go on", "--task", task)
    assert refused.returncode == 1 and "stopped" in refused.stderr  # a message does not restart it
    assert lomo.run("--run-once").returncode == 0
    assert _sqlite(lomo, "SELECT count(*) FROM model_calls") == [(1,)]
    assert lomo.run("task", "resume", task).returncode == 0
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert [t["status"] for t in state["turns"] if t["task_id"] == task] == ["stopped", "completed"]
    assert [t["status"] for t in state["tasks"] if t["id"] == task] != ["stopped"]
