"""Tasks belong to the workspace they were made in: a Lomo opened on another folder of the same database does
not run their turns, route messages to them or show their cards (and so never reads or writes their files
in the wrong folder); back in their folder they go on."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sqlalchemy import select, update

from conftest import LomoEnv
from lomo_tui import views
from lomo_tui.router import index
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.workspace import scope
from lomo_tui.workspace.objects import register_workspace


async def _open(lomo: LomoEnv, folder: Path) -> Runtime:
    runtime = Runtime(lomo.settings(workspace=folder), watch=False)
    await runtime.open()
    return runtime


async def test_another_folder_neither_runs_nor_routes_to_nor_shows_a_task(lomo: LomoEnv, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    here = await _open(lomo, lomo.workspace)
    try:
        task_id = await here.ledger.create_task("Jazz night posters", goal="a poster series for a jazz night")
        _, turn_id = await here.ledger.deliver(task_id, "make the second poster warmer")
        gate_task = await here.ledger.create_task("Fox film", goal="a 15-second film of a fox")
        async with here.db.write() as conn:
            await conn.execute(s.gates.insert().values(
                id="gate_fox", task_id=gate_task, kind="spend", question="Spend 1.85?", options=[{"label": "yes"}, {"label": "no"}],
                status="pending", created_at=1.0))
        async with here.db.read() as conn:
            made_in = (await conn.execute(select(s.tasks.c.workspace_id).where(s.tasks.c.id == task_id))).scalar()
        assert made_in == here.workspace.id
    finally:
        await here.close()

    there = await _open(lomo, other)
    try:
        assert there.workspace.id != made_in
        assert turn_id not in [r.id for r in await there.ledger.runnable_turns()]
        assert await there.ledger.claim(turn_id, there.owner) is None  # refused even when asked directly
        assert await there.quiet()  # run-once there does not wait for a turn it will never run
        assert task_id not in await views.load_cards(there.db) and gate_task not in await views.load_cards(there.db)
        assert [g.id for g in await views.load_gates(there.db)] == []
        assert (await views.load_header(there.db, there.settings)).gates == 0
        async with there.db.read() as conn:
            assert task_id not in [r.id for r in await index.recent(conn)]
            assert await index.search(conn, "jazz night posters") == []
        assert scope.serving() == there.workspace.id
    finally:
        await there.close()

    back = await _open(lomo, lomo.workspace)
    try:
        assert turn_id in [r.id for r in await back.ledger.runnable_turns()]
        assert task_id in await views.load_cards(back.db)
        assert [g.id for g in await views.load_gates(back.db)] == ["gate_fox"]
        async with back.db.read() as conn:
            assert task_id in [r.id for r in await index.recent(conn)]
    finally:
        await back.close()


def test_a_follow_up_typed_in_another_folder_does_not_reach_a_task_of_this_one(lomo: LomoEnv,
                                                                               tmp_path: Path) -> None:
    """The creator's case: a film made in one folder, then "make the third shot warmer" typed with another folder
    open. Before, the message went to the film, whose turn ran there, found none of its files and stopped the
    task ("run_production failed twice … does not exist in the workspace")."""
    other = tmp_path / "other"
    other.mkdir()
    made = lomo.run("--run-once", "make a picture of a red fox in the snow", "--json", model="lomo/local")
    assert made.returncode == 0, made.stderr
    [fox] = [t for t in json.loads(made.stdout)["tasks"] if t["kind"] != "main"]
    sent = lomo.run("--workspace", str(other), "--run-once", "make the red fox picture warmer", "--json",
                    model="lomo/local")
    assert sent.returncode == 0, sent.stderr
    report = json.loads(sent.stdout)
    assert report["quiescent"] is True
    assert fox["id"] not in [t["id"] for t in report["tasks"]]  # nothing there touched the fox task
    doc = lomo.inspect()
    [still] = [t for t in doc["tasks"] if t["id"] == fox["id"]]
    assert still["status"] == fox["status"]
    assert doc["objects"] and all(o["version"] == 1 for o in doc["objects"])  # the fox picture was not remade


async def test_tasks_from_before_workspaces_go_to_the_folder_that_holds_their_files(lomo: LomoEnv,
                                                                                    tmp_path: Path) -> None:
    (lomo.workspace / "poster.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    here = await _open(lomo, lomo.workspace)
    try:
        await here.start()  # indexes the folder
        with_file = await here.ledger.create_task("Poster", goal="a poster")
        without = await here.ledger.create_task("Notes", goal="some notes")
        async with here.db.write() as conn:
            object_id = (await conn.execute(select(s.objects.c.id).where(s.objects.c.path == "poster.png"))).scalar()
            await conn.execute(s.task_objects.insert().values(task_id=with_file, object_id=object_id, role="output",
                                                              updated_at=1.0))
            await conn.execute(update(s.tasks).where(s.tasks.c.kind != "main").values(workspace_id=None))  # as 0016
        workspace_id = here.workspace.id
    finally:
        await here.close()
    other = tmp_path / "other"
    other.mkdir()
    there = await _open(lomo, other)
    try:
        assert await register_workspace(there.db, other) == there.workspace.id
        async with there.db.read() as conn:
            owners = dict((await conn.execute(select(s.tasks.c.id, s.tasks.c.workspace_id).where(
                s.tasks.c.kind != "main"))).all())
        assert owners == {with_file: None, without: None}  # this folder holds neither's files
    finally:
        await there.close()
    back = await _open(lomo, lomo.workspace)
    try:
        async with back.db.read() as conn:
            owners = dict((await conn.execute(select(s.tasks.c.id, s.tasks.c.workspace_id).where(
                s.tasks.c.kind != "main"))).all())
        assert owners == {with_file: workspace_id, without: None}  # no file: seen from every folder, as before
    finally:
        await back.close()


async def test_a_message_typed_with_another_folder_open_is_routed_there(lomo: LomoEnv, tmp_path: Path) -> None:
    """Two Lomo windows on one database, one per folder: a message typed in the second is routed by the second,
    among its tasks, even while the first is running (the main thread is shared)."""
    other = tmp_path / "other"
    other.mkdir()
    first = Runtime(lomo.settings(workspace=lomo.workspace, model="lomo/local"), watch=False)
    await first.start()
    second = Runtime(lomo.settings(workspace=other, model="lomo/local"), watch=False)
    await second.open()
    try:
        posters = await first.ledger.create_task("Jazz night posters", goal="a poster series for a jazz night")
        main = await second.ledger.main_task_id()
        message_id, turn_id = await second.ledger.deliver(main, "make the jazz night posters warmer")
        await first.sweep()  # the first window's watchdog pass: it must leave that message alone
        assert await first.ledger.claim(turn_id, first.owner) is None
        async with first.db.read() as conn:
            status = (await conn.execute(select(s.inbox.c.status).where(s.inbox.c.id == message_id))).scalar()
            reached = (await conn.execute(select(s.inbox.c.id).where(s.inbox.c.task_id == posters))).first()
        assert status == "pending" and reached is None
        await second.start()
        assert await second.run_until_quiescent(30)
        async with second.db.read() as conn:
            status = (await conn.execute(select(s.inbox.c.status).where(s.inbox.c.id == message_id))).scalar()
            reached = (await conn.execute(select(s.inbox.c.id).where(s.inbox.c.task_id == posters))).first()
        assert status == "consumed" and reached is None  # routed by the second window, not to the first's task
    finally:
        await asyncio.gather(first.close(), second.close())
