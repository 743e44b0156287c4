"""Group commit: a step of reads only is not fsynced on the spot, everything else is (store.engine.Database.write).

The promises checked here: a grouped commit is safe from a process crash at once, reaches the disk within the
sync window (or with the next durable commit), and only reads are grouped — a decision that leads to a write,
a spend or a reply is fsynced before it is acted on.
"""
from __future__ import annotations

import sqlite3
import time

from sqlalchemy import text

from conftest import LomoEnv, async_wait_for
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import migrate
from lomo_tui.store.engine import Database
from test_fault_drills import DONE, READ, WRITE, calls_of, turn_of

ROW = text("INSERT INTO events (type, at) VALUES ('probe', 0)")


async def _synchronous(conn) -> int:  # noqa: ANN001
    return (await conn.exec_driver_sql("PRAGMA synchronous")).scalar()


async def test_grouped_commits_skip_the_fsync_until_the_window_ends(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url, sync_window=0.1)
    await migrate.upgrade(db)
    try:
        async with db.write(durable=False) as conn:
            await conn.execute(ROW)
            assert await _synchronous(conn) == 1  # NORMAL: WAL frames written, no fsync at commit
        assert db.commits["grouped"] == 1 and db.pending_sync
        await async_wait_for(lambda: not db.pending_sync, timeout=10, what="the background flush")
        async with db.write() as conn:
            await conn.execute(ROW)
            assert await _synchronous(conn) == 2  # FULL again for a durable commit
        assert db.commits["synced"] >= 1 and not db.pending_sync
    finally:
        await db.close()


async def test_a_durable_commit_covers_the_grouped_ones_before_it(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url, sync_window=30)
    await migrate.upgrade(db)
    try:
        async with db.write(durable=False) as conn:
            await conn.execute(ROW)
        assert db.pending_sync
        async with db.write() as conn:
            await conn.execute(ROW)
        assert not db.pending_sync  # one fsync of the log took both
    finally:
        await db.close()


async def test_a_grouped_commit_waits_no_longer_than_the_window(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url, sync_window=0.05)
    await migrate.upgrade(db)
    before = dict(db.commits)
    try:
        async with db.write(durable=False) as conn:
            await conn.execute(ROW)
        time.sleep(0.1)  # the loop is busy (no await): the flush timer cannot run; the window has passed anyway
        async with db.write(durable=False) as conn:
            await conn.execute(ROW)
            assert await _synchronous(conn) == 2  # promoted to a durable commit
        assert {k: v - before[k] for k, v in db.commits.items()} == {"synced": 1, "grouped": 1, "flushes": 0}
        assert not db.pending_sync
    finally:
        await db.close()


async def test_without_a_window_every_commit_is_fsynced(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url)  # sync_window 0
    await migrate.upgrade(db)
    try:
        async with db.write(durable=False) as conn:
            await conn.execute(ROW)
            assert await _synchronous(conn) == 2
        assert db.commits["grouped"] == 0 and not db.pending_sync
    finally:
        await db.close()


async def test_only_steps_of_reads_are_grouped(lomo: LomoEnv) -> None:
    """READ step: decision and done grouped. WRITE step and the final reply: fsynced before they are acted on."""
    (lomo.workspace / "note.md").write_text("hello\n")
    lomo.replay(READ, WRITE, DONE)
    rt = Runtime(lomo.settings(sync_window=30.0), watch=False)
    try:
        await rt.open()
        task = await rt.ledger.create_task("group commit")
        await rt.send("go", task)
        assert await rt.run_until_quiescent(max_wait=60)
        assert not rt.errors
        assert rt.db.commits["grouped"] == 2, rt.db.commits  # step 1's decision and its read's done row
        assert rt.db.pending_sync is False  # step 2's durable decision carried them to the disk
    finally:
        await rt.close()
    with sqlite3.connect(lomo.db_path) as db:
        statuses = [r[0] for r in db.execute("SELECT status FROM tool_calls ORDER BY step")]
    assert statuses == ["done", "done"] and (lomo.workspace / "draft.md").read_text() == "v1\n"


def test_a_grouped_commit_survives_a_process_crash(lomo: LomoEnv) -> None:
    """SIGKILL right after a read's grouped `done` commit: the row is there, and the read is not run again."""
    (lomo.workspace / "note.md").write_text("hello\n")
    lomo.replay(READ, DONE)
    task = lomo.new_task()
    crashed = lomo.run("--run-once", "read", "--task", task, faults="after_tool_done:crash", LOMO_SYNC_WINDOW="30")
    assert crashed.returncode == -9
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    turn = turn_of(state, task)
    [call] = calls_of(state, turn["id"])
    assert (call["status"], call["executions"], call["epoch"]) == ("done", 1, 1)  # done at epoch 1, kept
    assert turn["status"] == "completed" and turn["steps"] == 2 and turn["model_calls"] == 2


async def test_postgres_groups_with_synchronous_commit_off(lomo: LomoEnv, postgres_server) -> None:
    db = Database(postgres_server(), sync_window=0.2)
    await migrate.upgrade(db)
    try:
        async with db.write(durable=False) as conn:
            grouped = (await conn.exec_driver_sql("SHOW synchronous_commit")).scalar()
        async with db.write() as conn:
            durable = (await conn.exec_driver_sql("SHOW synchronous_commit")).scalar()
        assert (grouped, durable) == ("off", "on")
    finally:
        await db.close()
