"""Schema upgrades when several processes start at once on one database, and when one is killed mid-upgrade."""
from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import LomoEnv, wait_for
from lomo_tui.store import migrate
from lomo_tui.store.engine import Database

pytestmark = pytest.mark.fresh_db  # every test here starts from an empty file

STARTS = 6


# `python -m lomo_tui ARGS`, except that the process waits (imports done) until the file BARRIER exists: the
# starts then reach the database within a millisecond of each other, as on a fast idle machine.
AT_THE_BARRIER = ("import os, sys, time\n"
                  "from lomo_tui.cli.main import main\n"
                  "open(f'{sys.argv[1]}.{os.getpid()}', 'w').close()\n"
                  "while not os.path.exists(sys.argv[1]): time.sleep(0.001)\n"
                  "main(sys.argv[2:])\n")


def _start_together(lomo: LomoEnv) -> list[subprocess.CompletedProcess[str]]:
    barrier = lomo.root / "go"
    ready = [sys.executable, "-c", AT_THE_BARRIER, str(barrier), *lomo.argv("inspect", "--json")[3:]]
    procs = [subprocess.Popen(ready, env=lomo.environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(STARTS)]
    wait_for(lambda: len(list(lomo.root.glob("go.*"))) == STARTS, timeout=60, what="every start to wait at the barrier")
    barrier.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def _revision(url: str) -> str | None:
    async def read() -> str | None:
        db = Database(url)
        try:
            return await migrate.current_revision(db)
        finally:
            await db.close()
    return asyncio.run(read())


def _tables(path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.mark.slow
def test_six_processes_starting_together_on_a_fresh_sqlite_file_all_succeed_at_head(lomo: LomoEnv) -> None:
    for proc in _start_together(lomo):
        assert proc.returncode == 0, proc.stderr
    assert _revision(lomo.db_url) == migrate.HEAD
    assert {"tasks", "objects", "jobs", "meta"} <= _tables(lomo.db_path)
    assert lomo.run("inspect", "--json").returncode == 0


@pytest.mark.slow
def test_six_processes_starting_together_on_postgres_all_succeed_at_head(pg_lomo: LomoEnv) -> None:
    for proc in _start_together(pg_lomo):
        assert proc.returncode == 0, proc.stderr
    assert _revision(pg_lomo.db_url) == migrate.HEAD
    assert pg_lomo.run("inspect", "--json").returncode == 0


def test_a_start_killed_inside_a_revision_leaves_the_previous_one_intact_and_the_next_start_finishes(
        lomo: LomoEnv) -> None:
    async def prepare() -> None:
        db = Database(lomo.db_url)
        try:
            await migrate.upgrade(db, "0007")
        finally:
            await db.close()
    asyncio.run(prepare())
    now = time.time()
    with sqlite3.connect(lomo.db_path) as conn:
        conn.execute("INSERT INTO tasks (id, kind, status, title, created_at, updated_at) "
                     "VALUES ('task-kept', 'persistent', 'idle', 'Kept through the upgrade', ?, ?)", (now, now))
    killed = lomo.run("inspect", "--json", faults="during_migration:crash@1")  # inside 0008, before its commit
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _revision(lomo.db_url) == "0007"
    assert "meta" not in _tables(lomo.db_path)
    state = lomo.inspect()
    assert _revision(lomo.db_url) == migrate.HEAD and "meta" in _tables(lomo.db_path)
    assert "Kept through the upgrade" in [t["title"] for t in state["tasks"]]


def test_a_first_start_killed_mid_upgrade_is_finished_by_the_next_start(lomo: LomoEnv) -> None:
    killed = lomo.run("inspect", "--json", faults="during_migration:crash@3")  # inside 0003
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _revision(lomo.db_url) == "0002"
    assert "jobs" not in _tables(lomo.db_path) and "objects" in _tables(lomo.db_path)
    assert lomo.run("inspect", "--json").returncode == 0
    assert _revision(lomo.db_url) == migrate.HEAD


def test_a_first_start_on_postgres_killed_mid_upgrade_is_finished_by_the_next_start(pg_lomo: LomoEnv) -> None:
    killed = pg_lomo.run("inspect", "--json", faults="during_migration:crash@4")  # inside 0004
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _revision(pg_lomo.db_url) == "0003"
    assert pg_lomo.run("inspect", "--json").returncode == 0
    assert _revision(pg_lomo.db_url) == migrate.HEAD
