"""Nothing spins, one request stays one request, failures are failures (issue 11 §2–§3, 12 §2)."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from sqlalchemy import insert, select

from conftest import LomoEnv
from lomo_tui.base.bus import Bus, Notice
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.tasks import stopcheck

DONE = {"content": "done", "tool_calls": []}
PY_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|Traceback")
BROKEN_PNG = b"\x89PNG\r\n\x1a\n" + b"not really an image" * 8  # passes for a PNG, cannot be decoded


def call(name: str, **arguments: object) -> dict:
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


def write_replay(lomo: LomoEnv, *lines: dict) -> None:
    """Like LomoEnv.replay, with ASCII escapes, so a line may carry a lone surrogate as a model could."""
    lomo.replay_file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="ascii")


async def state(rt: Runtime) -> dict:
    async with rt.db.read() as conn:
        out = {}
        for name in ("tasks", "turns", "jobs", "gates", "inbox", "events", "tool_calls"):
            table = getattr(s, name)
            out[name] = list((await conn.execute(select(table))).all())
    return out


def run_once_json(lomo: LomoEnv, *args: str, **env: str) -> tuple[int, dict]:
    proc = lomo.run("--run-once", *args, "--json", model="lomo/local", **env)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


# ---- §2 nothing spins ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_filling_in_the_sound_of_a_storyboard_makes_a_sound_and_orders_nothing_from_the_storyboard(
        lomo: LomoEnv) -> None:
    """The offline planner reads "fill in the sound …" as a sound (not an image made from storyboard.md)."""
    code, report = run_once_json(lomo, "storyboard for a 30s coffee ad", LOMO_TIME_SCALE="0.05")
    [board] = [t for t in report["tasks"] if t["kind"] == "persistent"]
    assert code == 0 and board["status"] == "done", report
    with open(lomo.workspace / "storyboard.md", "a", encoding="utf-8") as fh:  # the creator edits it: newest
        fh.write("\nShot 2: more steam over the cup\n")
    jobs_before = len(lomo.inspect()["jobs"])
    code, report = run_once_json(lomo, "fill in the sound for every shot of the coffee storyboard",
                                 "--max-wait", "40")
    assert report["quiescent"] and code == 0, report  # it became quiet by itself, long before --max-wait
    new = lomo.inspect()["jobs"][jobs_before:]
    assert [j["kind"] for j in new] == ["audio"] and all(j["status"] == "done" for j in new), new
    assert not any("storyboard.md" in json.dumps(j.get("params") or {}) for j in new)


def test_a_storyboard_passed_as_an_image_input_stops_the_task_quickly_with_a_reason_and_a_card(lomo: LomoEnv
                                                                                               ) -> None:
    (lomo.workspace / "storyboard.md").write_text("## Shot 1\n- Frame: a cup\n", encoding="utf-8")
    plan = call("update_plan", brief="the sound of every shot", steps=[{"title": "Shot sounds", "tool": "generate_image"}])
    order = call("generate_image", prompt="shot 1 with its sound", inputs=["storyboard.md"], step="1")
    lomo.replay(plan, *[order] * 8)
    task = lomo.new_task("Coffee ad")
    proc = lomo.run("--run-once", "fill in the sound for every shot", "--task", task, "--json", "--max-wait", "40")
    report = json.loads(proc.stdout)
    assert report["quiescent"], report  # it became quiet by itself, long before --max-wait
    [board] = [t for t in report["tasks"] if t["id"] == task]
    assert board["status"] == "failed" and "storyboard.md" in board["reason"] and "not an image" in board["reason"]
    [card] = [g for g in report["gates"] if g["task_id"] == task]
    assert [o["label"] for o in card["options"]] == ["Try again", "Change the request", "Stop the task"]
    assert lomo.inspect()["jobs"] == []  # the bad input was refused before anything was ordered
    assert not any(PY_EXCEPTION.search(text) for text in board["replies"] + [board["reason"], card["question"]])
    assert proc.returncode == 0  # quiescent: the failure is the task's, told in the report (CONTRACTS §1)


async def test_the_same_job_failure_twice_stops_the_task_instead_of_ordering_again(lomo: LomoEnv) -> None:
    (lomo.workspace / "broken.png").write_bytes(BROKEN_PNG)
    plan = call("update_plan", brief="a poster", steps=[{"title": "Poster", "tool": "generate_image"}])
    order = call("generate_image", prompt="a poster from the photo", inputs=["broken.png"], step="1")
    write_replay(lomo, plan, *[order] * 8)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Poster")
        await rt.send("make a poster from broken.png", task)
        assert await rt.run_until_quiescent(60)
        st = await state(rt)
    finally:
        await rt.close()
    [row] = [t for t in st["tasks"] if t.id == task]
    assert row.status == "failed" and "failed twice the same way" in row.status_reason
    assert [j.status for j in st["jobs"]] == ["failed", "failed"]  # two orders, not eight
    assert all(not PY_EXCEPTION.search(j.error or "") for j in st["jobs"])  # the log has the exception
    [card] = [g for g in st["gates"] if g.task_id == task]
    assert card.status == "pending" and len(card.options) == 3
    assert "task_failed" in [e.type for e in st["events"] if e.task_id == task]


@pytest.mark.slow
def test_the_same_failure_twice_stops_the_task_on_postgres_too(pg_lomo: LomoEnv) -> None:
    (pg_lomo.workspace / "notes.md").write_text("# notes\n")
    plan = call("update_plan", brief="b", steps=[{"title": "Cover", "tool": "generate_image"}])
    order = call("generate_image", prompt="a cover", inputs=["notes.md"], step="1")
    write_replay(pg_lomo, plan, *[order] * 6)
    task = pg_lomo.new_task("Cover")
    proc = pg_lomo.run("--run-once", "make a cover from notes.md", "--task", task, "--json")
    assert proc.returncode == 0, proc.stderr
    state = pg_lomo.inspect()
    [row] = [t for t in state["tasks"] if t["id"] == task]
    assert row["status"] == "failed" and "notes.md is a text document" in row["status_reason"]
    assert [c["status"] for c in state["tool_calls"] if c["name"] == "generate_image"] == ["failed", "failed"]
    assert [g["status"] for g in state["gates"] if g["task_id"] == task] == ["pending"]


async def test_a_failed_job_is_not_progress(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings())
    await rt.open()
    try:
        task = await rt.ledger.create_task("Poster")
        since = time.time()
        async with rt.db.write() as conn:
            for status in ("failed", "expired"):
                await conn.execute(insert(s.jobs).values(
                    id=f"job-{status}", workspace=str(lomo.workspace), idempotency_key=f"key-{status}", task_id=task,
                    kind="image", provider="embedded", status=status, prompt="p", params={}, cost=0.1,
                    deadline=since + 60, created_at=since + 0.1, updated_at=since + 0.1))
        async with rt.db.read() as conn:
            assert not await stopcheck.made_progress(conn, task, since)
        async with rt.db.write() as conn:
            await conn.execute(insert(s.jobs).values(
                id="job-ok", workspace=str(lomo.workspace), idempotency_key="key-ok", task_id=task, kind="image",
                provider="embedded", status="running", prompt="p", params={}, cost=0.1, deadline=since + 60,
                created_at=since + 0.2, updated_at=since + 0.2))
        async with rt.db.read() as conn:
            assert await stopcheck.made_progress(conn, task, since)  # an order still under way is progress
    finally:
        await rt.close()


async def test_a_transient_failure_already_worked_past_does_not_keep_the_task_backing_off(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings())
    await rt.open()
    try:
        task = await rt.ledger.create_task("Posters")
        t0 = time.time()
        async with rt.db.write() as conn:
            for turn in ("turn-a", "turn-b"):
                await conn.execute(insert(s.turns).values(id=turn, task_id=task, status="completed", epoch=1,
                                                          created_at=t0, updated_at=t0))
            await conn.execute(insert(s.tool_calls).values(
                id="turn-a/1/0", turn_id="turn-a", step=1, seq=0, name="generate_image", arguments={},
                status="failed", result=json.dumps({"error": "expired", "error_kind": "job_expired"}),
                idempotency_key="turn-a/1/0", side_effect="paid", epoch=1, started_at=t0, finished_at=t0 + 1))
        async with rt.db.read() as conn:
            row = await rt.ledger.task_row(conn, task)
            failure, stops, tries = await stopcheck.repeated_failure(conn, row, "turn-a")
            assert (failure.kind, stops, tries) == ("job_expired", False, 1)  # the turn that failed backs off
            assert await stopcheck.repeated_failure(conn, row, "turn-b") is None  # a later turn is not held by it
    finally:
        await rt.close()


async def test_answering_the_failure_card_tries_again_or_stops_the_task(lomo: LomoEnv) -> None:
    (lomo.workspace / "notes.md").write_text("# notes\n")
    plan = call("update_plan", brief="b", steps=[{"title": "Cover", "tool": "generate_image"}])
    order = call("generate_image", prompt="a cover", inputs=["notes.md"], step="1")
    write_replay(lomo, plan, order, order, order, order, order)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Cover")
        await rt.send("make a cover from notes.md", task)
        assert await rt.run_until_quiescent(60)
        [card] = [g for g in (await state(rt))["gates"] if g.task_id == task]
        await rt.resolve_gate(card.id, approve=True, option=1)  # try again: two more failures, a new card
        assert await rt.run_until_quiescent(60)
        st = await state(rt)
        cards = sorted((g for g in st["gates"] if g.task_id == task), key=lambda g: g.created_at)
        assert [g.status for g in cards] == ["approved", "pending"]
        assert [c.status for c in st["tool_calls"] if c.name == "generate_image"] == ["failed"] * 4
        await rt.resolve_gate(cards[1].id, approve=True, option=3)  # stop
        assert await rt.run_until_quiescent(30)
        [row] = [t for t in (await state(rt))["tasks"] if t.id == task]
    finally:
        await rt.close()
    assert row.status == "stopped"


async def test_a_new_message_to_a_failed_task_closes_its_failure_card(lomo: LomoEnv) -> None:
    (lomo.workspace / "notes.md").write_text("# notes\n")
    plan = call("update_plan", brief="b", steps=[{"title": "Cover", "tool": "generate_image"}])
    order = call("generate_image", prompt="a cover", inputs=["notes.md"], step="1")
    write_replay(lomo, plan, order, order, {"content": "noted", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Cover")
        await rt.send("make a cover from notes.md", task)
        assert await rt.run_until_quiescent(60)
        await rt.send("use no input at all", task)
        assert await rt.run_until_quiescent(60)
        st = await state(rt)
    finally:
        await rt.close()
    [card] = [g for g in st["gates"] if g.task_id == task]
    assert card.status == "expired"  # answered by the message, no longer waiting in the inbox


@pytest.mark.slow
async def test_an_expired_job_is_retried_after_a_growing_pause_then_the_task_stops(lomo: LomoEnv) -> None:
    plan = call("update_plan", brief="b", steps=[{"title": "Cover", "tool": "generate_image"}])
    order = call("generate_image", prompt="a cover", step="1")
    write_replay(lomo, plan, *[order] * 8)
    settings = lomo.settings(env={"LOMO_STUDIO_FAULTS": "never_resolve"})
    rt = Runtime(settings)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Cover")
        await rt.send("make a cover", task)
        assert await rt.run_until_quiescent(120)
        st = await state(rt)
        async with rt.db.read() as conn:
            decided = list((await conn.execute(select(s.events.c.data).where(
                s.events.c.task_id == task, s.events.c.type == "run_decided").order_by(s.events.c.id))).scalars())
    finally:
        await rt.close()
    backoffs = [d for d in decided if d["hint"] == "backoff"]  # each recorded with its time (#16 §4)
    assert len(backoffs) == stopcheck.TRANSIENT_LIMIT - 1 and {d["action"] for d in backoffs} == {"wait"}
    assert all(a["until"] < b["until"] for a, b in zip(backoffs, backoffs[1:]))
    jobs = sorted(st["jobs"], key=lambda j: j.created_at)
    assert [j.status for j in jobs] == ["expired"] * stopcheck.TRANSIENT_LIMIT
    for n, (failed, retried) in enumerate(zip(jobs, jobs[1:])):  # each retry waited out its back-off
        assert retried.created_at - failed.finished_at >= stopcheck.BACKOFF_SECONDS * 2 ** n * settings.time_scale
    [row] = [t for t in st["tasks"] if t.id == task]
    assert row.status == "failed" and f"{stopcheck.TRANSIENT_LIMIT} times" in row.status_reason
    assert [g.status for g in st["gates"] if g.task_id == task] == ["pending"]


async def test_bad_arguments_become_tool_errors_the_model_can_act_on_not_a_failed_turn(lomo: LomoEnv) -> None:
    step = {"content": None, "tool_calls": [
        {"name": "generate_image", "arguments": {"prompt": "a cat", "inputs": "c"}},
        {"name": "generate_video", "arguments": {"prompt": "a dog", "seconds": "three"}},
        {"name": "write_file", "arguments": {"path": "note.md", "content": "caf\ud800e"}},
    ]}
    write_replay(lomo, step, DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Bad arguments")
        await rt.send("go", task)
        assert await rt.run_until_quiescent(30)
        st = await state(rt)
    finally:
        await rt.close()
    [turn] = [t for t in st["turns"] if t.task_id == task]
    assert turn.status == "completed" and not rt.errors
    results = {c.name: (c.status, json.loads(c.result) if isinstance(c.result, str) else c.result)
               for c in st["tool_calls"]}
    assert results["generate_image"] == ("failed", {"error": "generate_image: inputs must be a list, not 'c'",
                                                    "error_kind": "invalid_arguments",  # and the creator's wording:
                                                    "error_said": {"key": "call_error.invalid_arguments", "fields": {
                                                        "tool": {"key": "tui_tools.generate_image", "fields": {}}}}})
    assert results["generate_video"][1]["error"] == "generate_video: seconds must be a number, not 'three'"
    assert results["write_file"][0] == "failed" and "not valid Unicode" in results["write_file"][1]["error"]
    assert st["jobs"] == [] and not (lomo.workspace / "note.md").exists()


SAMPLE = {"string": "x", "integer": 3, "number": 2.5, "boolean": True, "array": [], "object": {}, "null": None}


def sample(schema: dict) -> object:
    """A value that fits SCHEMA (the keywords the tools use)."""
    wanted = schema.get("type", "string")
    wanted = wanted[0] if isinstance(wanted, list) else wanted
    if wanted == "object":
        return {k: sample(v) for k, v in schema.get("properties", {}).items()}
    if wanted == "array" and isinstance(schema.get("items"), dict):
        return [sample(schema["items"])]
    return SAMPLE[wanted]


def test_every_tool_checks_its_arguments_as_json_schema_does() -> None:
    from jsonschema import Draft202012Validator

    from lomo_tui.tools import default_registry

    wrong = ["three", 3, True, None, [1], {"a": 1}, 1.5]
    for tool in default_registry().tools.values():
        oracle = Draft202012Validator(tool.parameters)
        good = sample(tool.parameters)
        cases = [good, {}] + [dict(good, **{key: value}) for key in good for value in wrong]
        for args in cases:
            given = {k: v for k, v in args.items() if v is not None or k in tool.parameters.get("required", ())}
            assert (tool.check(args) is None) == oracle.is_valid(given), (tool.name, args, tool.check(args))


# ---- §3 one request is one request; failures are failures ------------------------------------------------

@pytest.mark.slow
def test_three_messages_sent_while_nothing_runs_are_answered_each_on_its_own(lomo: LomoEnv) -> None:
    for text in ("a picture of a cat", "a 5-second clip of a dog", "what is 12*7?"):
        assert lomo.run("send", text).returncode == 0
    code, report = run_once_json(lomo, LOMO_TIME_SCALE="0.05")
    assert code == 0, report
    state = lomo.inspect()
    routed = [m for m in state["inbox"] if m["task_id"] == "main"]
    assert len({m["consumed_turn"] for m in routed}) == 3  # one turn, one routing decision, per message
    [main] = [t for t in report["tasks"] if t["id"] == "main"]
    assert any("84" in reply for reply in main["replies"])
    made = [t for t in state["tasks"] if t["kind"] != "main"]
    assert len(made) == 2 and not any("12" in t["title"] for t in made)
    titles = [t["title"].lower() for t in made]  # each titled with what was asked for ("Picture of a cat")
    cats = [title for title in titles if "cat" in title and "dog" not in title]
    dogs = [title for title in titles if "dog" in title and "cat" not in title]
    assert len(cats) == 1 and len(dogs) == 1, titles


async def test_four_picture_requests_make_four_pictures(lomo: LomoEnv) -> None:
    # at 0.05 an embedded job's deadline (6 s) outlasts a render on a loaded machine
    rt = Runtime(lomo.settings(model="lomo/local", env={"LOMO_TIME_SCALE": "0.05"}, time_scale=0.05))
    await rt.open()
    for subject in ("a cat", "a lighthouse", "a red bicycle", "a bowl of ramen"):
        await rt.send(f"a picture of {subject}")
    try:
        assert await rt.run_until_quiescent(90)
        st = await state(rt)
    finally:
        await rt.close()
    one_shots = [t for t in st["tasks"] if t.kind == "lightweight"]
    assert len(one_shots) == 4 and {t.status for t in one_shots} == {"done"}
    assert sorted(j.status for j in st["jobs"]) == ["done"] * 4


@pytest.mark.slow
def test_a_one_shot_whose_job_expired_is_reported_failed_with_the_reason(lomo: LomoEnv) -> None:
    code, report = run_once_json(lomo, "a picture of a cat", LOMO_STUDIO_FAULTS="never_resolve")
    [shot] = [t for t in report["tasks"] if t["kind"] == "lightweight"]
    assert shot["status"] == "failed" and "expired" in shot["reason"], report
    assert code == 0 and not any(PY_EXCEPTION.search(text) for text in shot["replies"] + [shot["reason"]])
    state = lomo.inspect()
    assert [j["status"] for j in state["jobs"]] == ["expired"]
    assert [t["status"] for t in state["tasks"] if t["id"] == shot["id"]] == ["failed"]
    assert "task_failed" in [e["type"] for e in state["events"] if e["task_id"] == shot["id"]]


async def test_a_model_error_on_the_main_thread_is_put_on_its_message_and_the_next_message_tries_again(
        lomo: LomoEnv) -> None:
    lomo.replay_file.write_text("not a response\nnot a response either\n"
                                + json.dumps({"content": "Hello!", "tool_calls": []}) + "\n")
    rt = Runtime(lomo.settings())
    bus = rt.bus.subscribe()
    await rt.start()
    try:
        first, _ = await rt.send("hello there, please answer")
        assert await rt.run_until_quiescent(30)
        [main] = [t for t in (await state(rt))["tasks"] if t.kind == "main"]
        assert main.status != "failed"  # the main thread never stays failed
        second, _ = await rt.send("are you there?")
        assert await rt.run_until_quiescent(30)
        third, _ = await rt.send("and now?")
        assert await rt.run_until_quiescent(30)
        st = await state(rt)
    finally:
        await rt.close()
    inbox = {m.id: m for m in st["inbox"]}
    assert (inbox[first].status, inbox[second].status, inbox[third].status) == ("failed", "failed", "consumed")
    failed = [e for e in st["events"] if e.type == "message_failed"]
    assert [e.data["message_id"] for e in failed] == [first, second]
    assert all("replay file" in e.data["reason"] for e in failed)
    notices = []
    while not bus.empty():
        notices.append(bus.get_nowait())
    assert [n.data["message_id"] for n in notices if n.type == Notice.MESSAGE_FAILED] == [first, second]
    [main] = [t for t in st["tasks"] if t.kind == "main"]
    assert main.status == "idle"


@pytest.mark.slow
def test_a_message_that_keeps_crashing_the_main_thread_fails_alone_and_the_next_one_is_answered(lomo: LomoEnv
                                                                                                ) -> None:
    ask = call("ask_user", question="which one?", options=["a", "b"])
    lomo.replay(ask, {"content": "Hello!", "tool_calls": []})
    assert lomo.run("send", "choose for me").returncode == 0
    assert lomo.run("send", "hello").returncode == 0
    for _ in range(3):
        assert lomo.run("--run-once", faults="after_tool_started:crash").returncode == -9
    final = lomo.run("--run-once")
    assert final.returncode == 1 and "after 3 crashes" in final.stderr, final.stderr
    state = lomo.inspect()
    first, second = [m for m in state["inbox"] if m["task_id"] == "main"]
    assert [e["message_id"] for e in state["events"] if e["type"] == "message_failed"] == [first["id"]]
    assert second["status"] == "consumed" and second["consumed_turn"] != first["consumed_turn"]
    assert [t["status"] for t in state["tasks"] if t["id"] == "main"] == ["idle"]
    assert "Hello!" in final.stdout  # the next message was answered in the same run


# ---- §8 one set of notice names -------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[1] / "lomo_tui"


def published_notices() -> set[Notice]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.publish\(\s*['\"]", text), f"{path} publishes a notice by a bare string"
        found |= {Notice[name] for name in re.findall(r"\.publish\(\s*Notice\.([A-Z_]+)", text)}
    return found


def test_the_tui_listens_only_for_notices_the_runtime_publishes() -> None:
    from lomo_tui.tui import live

    listened = set(live.PROGRESS_TYPES) | set(live.STREAM_TYPES) | set(live.END_LIVE) | set(live.FILE_TYPES)
    published = published_notices()
    assert all(isinstance(n, Notice) for n in listened)
    assert listened <= published, listened - published
    assert Notice.JOB_DONE in live.FILE_TYPES  # a finished job refreshes files and cards
    for path in (PACKAGE / "tui").rglob("*.py"):  # and every screen compares with the enum, not a name
        assert not re.search(r"notice\.type\s*[!=]=\s*['\"]", path.read_text(encoding="utf-8")), path


def test_publishing_a_notice_name_nobody_declared_is_refused() -> None:
    bus = Bus()
    queue = bus.subscribe()
    bus.publish(Notice.JOB_DONE, "task-1", job_id="j")
    bus.publish("job_done", "task-1", job_id="k")
    with pytest.raises(ValueError):
        bus.publish("job_finished", "task-1")
    received = [queue.get_nowait(), queue.get_nowait()]
    assert [n.type for n in received] == [Notice.JOB_DONE, Notice.JOB_DONE] and queue.empty()
