"""A full disk under a long-running worker: said once, nothing half-written, work resumes when space returns.

The database lives on a small tmpfs mounted for the test (the suite runs as root, as in CI), filled to the last
block with a real file: SQLite meets a real ENOSPC (SQLITE_FULL)."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import LomoEnv, wait_for

BIG = "x" * 1_500_000  # a reply that cannot fit in the write-ahead log's spare pages
LONG = "y" * 120_000  # a message that cannot either (and still fits in one command-line argument)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m,mode=0755", "lomo-test-disk", str(mountpoint)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.fail(f"this test mounts a small tmpfs and needs root for it: {mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == 28, exc  # ENOSPC: not a block left
    finally:
        os.close(fd)
    return filler


@pytest.mark.slow
def test_a_worker_says_disk_full_once_and_goes_on_by_itself_when_space_returns(
        lomo: LomoEnv, small_disk: Path, kill_on_exit) -> None:
    lomo.db_path = small_disk / "lomo.db"
    lomo.db_url = f"sqlite:///{lomo.db_path}"
    lomo.replay({"content": BIG, "tool_calls": []})
    assert lomo.run("inspect", "--json").returncode == 0
    stderr = lomo.root / "worker.err"
    with open(stderr, "w") as err:
        worker = subprocess.Popen(lomo.argv("worker"), env=lomo.environ(LOMO_WATCHDOG_SECONDS="0.3"),
                                  stdout=subprocess.DEVNULL, stderr=err, text=True)
    kill_on_exit(worker)
    wait_for(lambda: "lomo worker" in stderr.read_text(), timeout=60, what="the worker to start")
    os.kill(worker.pid, signal.SIGSTOP)
    assert lomo.run("send", "say a lot").returncode == 0
    filler = _fill(small_disk)
    refused = lomo.run("send", LONG)  # the creator's own write meets the full disk too: one line, nothing delivered
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()] and "disk full" in refused.stderr
    os.kill(worker.pid, signal.SIGCONT)

    wait_for(lambda: "disk full" in stderr.read_text(), timeout=60, what="the worker to say the disk is full")
    time.sleep(1.5)  # the disk stays full a while: the worker retries (0.1 s, 0.2 s, 0.4 s … apart) meanwhile
    filler.unlink()

    def finished() -> dict | None:
        state = lomo.inspect()
        return state if [t["status"] for t in state["turns"]] == ["completed"] else None
    state = wait_for(finished, timeout=60, what="the turn to finish once space returned")
    assert [(m["text"], m["status"]) for m in state["inbox"]] == [("say a lot", "consumed")]
    assert [e["type"] for e in state["events"]].count("disk_full") == 1
    said = [line for line in stderr.read_text().splitlines() if "disk full" in line]
    assert len(said) == 1 and said[0].startswith("lomo: disk full"), said
    log = (lomo.root / "state" / "lomo" / "log" / "lomo.log").read_text()
    assert sum("disk full" in line for line in log.splitlines()) == 1
    assert "crashed the worker" not in log and "Traceback" not in log and "PendingRollbackError" not in log
    os.kill(worker.pid, signal.SIGTERM)
    assert worker.wait(timeout=60) == 0
    with sqlite3.connect(lomo.db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert len(conn.execute("SELECT content FROM messages WHERE role = 'assistant'").fetchone()[0]) == len(BIG)
