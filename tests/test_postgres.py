"""The scale-out path on a real PostgreSQL server: migrations, the ledger, takeover, studio, gates."""
from __future__ import annotations

import pytest

import os
import signal

from conftest import LomoEnv, process_state, wait_for

READ = {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "note.md"}}]}
DONE = {"content": "done", "tool_calls": []}


def test_a_run_once_on_postgres_reads_a_file_through_the_ledger(pg_lomo: LomoEnv) -> None:
    (pg_lomo.workspace / "note.md").write_text("hello\n")
    pg_lomo.replay(READ, DONE)
    task = pg_lomo.new_task()
    proc = pg_lomo.run("--run-once", "read the note", "--task", task, "--json")
    assert proc.returncode == 0, proc.stderr
    state = pg_lomo.inspect()
    [turn] = [t for t in state["turns"] if t["task_id"] == task]
    assert (turn["status"], turn["epoch"], turn["model_calls"], turn["steps"]) == ("completed", 1, 2, 2)
    [call] = state["tool_calls"]
    assert (call["status"], call["executions"], call["result"]["version"]) == ("done", 1, 1)
    assert [m["consumed_step"] for m in state["inbox"] if m["task_id"] == task] == [1]


@pytest.mark.slow
def test_takeover_on_postgres_fences_the_frozen_worker(pg_lomo: LomoEnv, kill_on_exit) -> None:
    (pg_lomo.workspace / "note.md").write_text("hello\n")
    pg_lomo.replay(READ, DONE)
    task = pg_lomo.new_task()
    a = pg_lomo.popen("--run-once", "read", "--task", task, faults="after_tool_started:stop", LOMO_LEASE_SECONDS="1.5")
    kill_on_exit(a)
    wait_for(lambda: process_state(a.pid) == "T", what="worker A to freeze")
    b = pg_lomo.run("--run-once", LOMO_LEASE_SECONDS="1.5")
    assert b.returncode == 0, b.stderr
    os.kill(a.pid, signal.SIGCONT)
    a.wait(timeout=60)
    state = pg_lomo.inspect()
    [turn] = [t for t in state["turns"] if t["task_id"] == task]
    assert (turn["status"], turn["epoch"], turn["model_calls"]) == ("completed", 2, 2)
    assert [(c["status"], c["executions"]) for c in state["tool_calls"]] == [("done", 1)]
    assert any(e["type"] == "stale_write_rejected" for e in state["events"])


@pytest.mark.slow
def test_paid_generation_and_gates_on_postgres(pg_lomo: LomoEnv) -> None:
    pg_lomo.replay({"content": None, "tool_calls": [
        {"name": "generate_image", "arguments": {"prompt": "a warm cat"}},
        {"name": "generate_video", "arguments": {"prompt": "a cat clip", "seconds": 2}}]}, DONE)
    task = pg_lomo.new_task()
    assert pg_lomo.run("--run-once", "go", "--task", task).returncode == 0
    state = pg_lomo.inspect()
    [gate] = state["gates"]
    assert gate["kind"] == "spend" and [j["kind"] for j in state["jobs"]] == ["image"]
    assert pg_lomo.run("approve", gate["id"]).returncode == 0
    assert pg_lomo.run("--run-once").returncode == 0
    state = pg_lomo.inspect()
    assert sorted(j["status"] for j in state["jobs"]) == ["done", "done"] and len(state["charges"]) == 2
    assert all((pg_lomo.workspace / j["artifact_path"]).is_file() for j in state["jobs"])
