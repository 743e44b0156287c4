"""The runtime in-process: wake-ups and the watchdog, concurrent writers, migrations, settings, boundaries."""
from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from sqlalchemy import func, select, update

from conftest import LomoEnv, async_wait_for, wait_for
from lomo_tui.config import load_settings
from lomo_tui.errors import LomoError
from lomo_tui.faults import Faults
from lomo_tui.ledger import Ledger
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import migrate
from lomo_tui.store import schema as s
from lomo_tui.store.engine import Database

DONE = {"content": "ok", "tool_calls": []}
READ = {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "note.md"}}]}


async def turn_status(rt: Runtime, turn_id: str) -> str:
    async with rt.db.read() as conn:
        return (await conn.execute(select(s.turns.c.status).where(s.turns.c.id == turn_id))).scalar()


async def test_lost_wakeup_is_recovered_by_the_watchdog_within_one_period(lomo: LomoEnv) -> None:
    lomo.replay(DONE)
    rt = Runtime(lomo.settings(faults="before_wakeup:drop", watchdog_seconds=0.3))
    await rt.start()
    try:
        task = await rt.ledger.create_task("t")
        _, turn = await rt.send("hi", task)
        assert not rt._pending and not rt._active  # the wake-up was dropped
        await async_wait_for(lambda: turn_status(rt, turn), timeout=5, what="the turn to run")
        await async_wait_for(lambda: _equals(turn_status(rt, turn), "completed"), timeout=3,
                             what="the watchdog to run the turn")
    finally:
        await rt.close()


async def _equals(coro, value) -> bool:  # noqa: ANN001
    return (await coro) == value


async def test_wakeup_and_watchdog_together_process_the_work_once(lomo: LomoEnv) -> None:
    (lomo.workspace / "note.md").write_text("x")
    lomo.replay(READ, DONE)
    rt = Runtime(lomo.settings(watchdog_seconds=0.05))
    await rt.start()
    try:
        task = await rt.ledger.create_task("t")
        _, turn = await rt.send("read", task)
        for _ in range(5):
            rt.wake(turn)  # duplicate wake-ups
            await rt.sweep()
        await async_wait_for(lambda: _equals(turn_status(rt, turn), "completed"), timeout=10)
        async with rt.db.read() as conn:
            calls = (await conn.execute(select(s.tool_calls))).all()
            model_calls = (await conn.execute(select(func.count()).select_from(s.model_calls))).scalar()
        assert [(c.status, c.executions) for c in calls] == [("done", 1)]
        assert model_calls == 2
    finally:
        await rt.close()


async def test_eight_writers_on_two_engines_lose_no_update(lomo: LomoEnv) -> None:
    engines = [Database(lomo.db_url), Database(lomo.db_url)]
    await migrate.upgrade(engines[0])
    ledgers = [Ledger(db) for db in engines]
    task = await ledgers[0].create_task("shared")
    errors: list[BaseException] = []

    async def writer(n: int) -> None:
        ledger = ledgers[n % 2]
        for i in range(25):
            try:
                async with ledger.db.write() as conn:  # read-then-write through the write door
                    value = (await conn.execute(select(s.tasks.c.revisions).where(s.tasks.c.id == task))).scalar()
                    await conn.execute(update(s.tasks).where(s.tasks.c.id == task).values(revisions=value + 1))
                await ledger.deliver(task, f"w{n}-{i}")  # inbox insert + at most one active turn
            except BaseException as exc:  # noqa: BLE001 — collected and asserted below
                errors.append(exc)

    await asyncio.gather(*(writer(n) for n in range(8)))
    async with engines[1].read() as conn:
        revisions = (await conn.execute(select(s.tasks.c.revisions).where(s.tasks.c.id == task))).scalar()
        inbox = (await conn.execute(select(func.count()).select_from(s.inbox))).scalar()
        active = (await conn.execute(select(func.count()).select_from(s.turns).where(
            s.turns.c.task_id == task, s.turns.c.status.in_(("queued", "running", "waiting"))))).scalar()
    for db in engines:
        await db.close()
    assert errors == []
    assert (revisions, inbox, active) == (200, 200, 1)


def test_integrity_ok_after_sigkill_mid_transaction(lomo: LomoEnv) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys
        from lomo_tui.store.engine import Database
        from lomo_tui.store import migrate
        from lomo_tui.ledger import Ledger
        async def main():
            db = Database({lomo.db_url!r}); await migrate.upgrade(db); ledger = Ledger(db)
            task = await ledger.create_task("t")
            print("ready", flush=True)
            i = 0
            while True:
                await ledger.deliver(task, "x" * 2000 + str(i)); i += 1
        asyncio.run(main())
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    wait_for(lambda: _count(lomo, "inbox") > 200, what="writes to pile up")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    with sqlite3.connect(lomo.db_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        delivered = db.execute("SELECT count(*) FROM events WHERE type='message_delivered'").fetchone()[0]
        inbox = db.execute("SELECT count(*) FROM inbox").fetchone()[0]
    assert delivered == inbox  # each transaction landed whole or not at all


def _count(env: LomoEnv, table: str) -> int:
    try:
        with sqlite3.connect(env.db_path, timeout=5) as db:
            return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.fresh_db
async def test_older_database_is_upgraded_without_losing_rows(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url)
    await migrate.upgrade(db, "0001")
    task = "task-0ld"
    async with db.write() as conn:  # rows as release 0001 wrote them
        await conn.exec_driver_sql(
            "INSERT INTO tasks (id, kind, status, title, brief, created_at, updated_at) "
            f"VALUES ('{task}', 'persistent', 'idle', 'old work', 'from release one', 1, 1)")
        await conn.exec_driver_sql(
            f"INSERT INTO inbox (id, task_id, text, sent_at) VALUES ('msg-0ld', '{task}', 'still here', 1)")
    assert await migrate.current_revision(db) == "0001"
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.HEAD
    async with db.read() as conn:
        row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
        texts = (await conn.execute(select(s.inbox.c.text))).scalars().all()
        objects = (await conn.execute(select(func.count()).select_from(s.objects))).scalar()
    await db.close()
    assert (row.title, row.brief, list(texts), objects) == ("old work", "from release one", ["still here"], 0)
    assert row.autonomy == "plan"  # a column added later got its default


async def test_sqlite_connections_carry_the_ledger_pragmas(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url)
    async with db.read() as conn:
        pragmas = {name: (await conn.exec_driver_sql(f"PRAGMA {name}")).scalar()
                   for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")}
    await db.close()
    # readers may wait briefly in SQLite; writers wait cooperatively (their connections have busy_timeout 0)
    assert pragmas == {"journal_mode": "wal", "synchronous": 2, "foreign_keys": 1, "busy_timeout": 5000}


def test_settings_precedence_flag_env_file_default(tmp_path) -> None:  # noqa: ANN001
    config = tmp_path / "config.toml"
    config.write_text('model = "from-file"\ndb = "sqlite:///file.db"\nworkspace = "/tmp/ws-file"\n')
    base = load_settings(env={}, config_path=config)
    assert (base.model, base.db_url, str(base.workspace)) == ("from-file", "sqlite:///file.db", "/tmp/ws-file")
    env = load_settings(env={"LOMO_MODEL": "from-env"}, config_path=config)
    assert env.model == "from-env"
    flag = load_settings(model="from-flag", env={"LOMO_MODEL": "from-env"}, config_path=config)
    assert flag.model == "from-flag"
    default = load_settings(env={}, config_path=tmp_path / "missing.toml")
    assert default.model == "lomo/local" and default.lease_seconds == 30 and default.watchdog_seconds == 10


def test_broken_config_file_names_the_file(tmp_path) -> None:  # noqa: ANN001
    config = tmp_path / "config.toml"
    config.write_text("model = \n")
    with pytest.raises(LomoError, match="config.toml"):
        load_settings(env={}, config_path=config)


def test_fault_specs_are_validated() -> None:
    assert Faults("").rules == {}
    assert Faults("after_tool_done:crash@3,before_wakeup:drop").rules == {
        "after_tool_done": ("crash", 3), "before_wakeup": ("drop", 1)}
    for bad in ("nowhere:crash", "after_tool_done:explode", "after_tool_done:drop", "after_tool_done:crash@x"):
        with pytest.raises(LomoError):
            Faults(bad)
    faults = Faults("before_wakeup:drop@2")
    assert [faults.hit("before_wakeup") for _ in range(3)] == [False, True, False]


def test_headless_hello_imports_nothing_it_does_not_need(lomo: LomoEnv) -> None:
    probe = textwrap.dedent(f"""
        import sys, asyncio
        from lomo_tui.cli.main import main
        try:
            main(["--workspace", {str(lomo.workspace)!r}, "--db", {lomo.db_url!r}, "--model", "lomo/local",
                  "--run-once", "hello", "--json"])
        except SystemExit as exc:
            code = exc.code
        heavy = {{m.split('.')[0] for m in sys.modules}} & {{"textual", "litellm", "PIL", "av", "alembic", "watchfiles"}}
        heavy |= {{m for m in sys.modules if m == "sqlalchemy.dialects.postgresql"}}
        print("MODULES", sorted(heavy), code)
    """)
    proc = subprocess.run([sys.executable, "-c", probe], env=lomo.environ(), capture_output=True, text=True,
                          timeout=60)
    line = [x for x in proc.stdout.splitlines() if x.startswith("MODULES")][0]
    # on an up-to-date SQLite database a "hello" needs no image library, no video, no migrations, no PostgreSQL,
    # no file watcher
    assert line == "MODULES [] 0", proc.stderr


def test_runtime_packages_never_import_textual() -> None:
    probe = ("import sys, lomo_tui.runtime.scheduler, lomo_tui.cli.main, lomo_tui.workspace.objects;"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual','litellm'))))")
    proc = subprocess.run([sys.executable, "-c", "import json;" + probe], capture_output=True, text=True, timeout=60)
    assert json.loads(proc.stdout) == [], proc.stderr


async def test_live_views_hear_of_changes_made_by_another_process(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(watchdog_seconds=0.1))
    await rt.start()
    notices = rt.bus.subscribe()
    try:
        task = await rt.ledger.create_task("t")
        await async_wait_for(lambda: rt._event_marker is not None, timeout=10, what="the watchdog's first look")
        proc = await asyncio.create_subprocess_exec(*lomo.argv("send", "from elsewhere", "--task", task),
                                                    env=lomo.environ())
        assert await proc.wait() == 0

        async def heard() -> bool:
            while not notices.empty():
                if notices.get_nowait().type == "db_changed":
                    return True
            return False

        await async_wait_for(heard, timeout=10, what="a db_changed notice")
    finally:
        await rt.close()
