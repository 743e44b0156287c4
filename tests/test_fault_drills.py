"""Fault drills at every ledger boundary: real subprocesses, real SIGKILL/SIGSTOP, the replay model."""
from __future__ import annotations

import os
import signal
import sqlite3

import pytest

from conftest import LomoEnv, process_state, wait_for

READ = {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "note.md"}}]}
APPEND = {"content": None, "tool_calls": [{"name": "append_file", "arguments": {"path": "log.md", "text": "one\n"}}]}
WRITE = {"content": None, "tool_calls": [{"name": "write_file",
                                          "arguments": {"path": "draft.md", "content": "v1\n", "base_version": None}}]}
DONE = {"content": "finished", "tool_calls": []}


def turn_of(state: dict, task_id: str) -> dict:
    turns = [t for t in state["turns"] if t["task_id"] == task_id]
    assert len(turns) == 1, turns
    return turns[0]


def calls_of(state: dict, turn_id: str) -> list[dict]:
    return [c for c in state["tool_calls"] if c["turn_id"] == turn_id]


def events(state: dict, kind: str) -> list[dict]:
    return [e for e in state["events"] if e["type"] == kind]


def model_messages(env: LomoEnv, task_id: str, role: str) -> list[str]:
    with sqlite3.connect(env.db_path) as db:
        return [r[0] for r in db.execute("SELECT content FROM messages WHERE task_id=? AND role=? ORDER BY id",
                                         (task_id, role))]


@pytest.fixture
def note(lomo: LomoEnv) -> LomoEnv:
    (lomo.workspace / "note.md").write_text("hello\n")
    return lomo


@pytest.mark.slow
def test_crash_after_decision_commit_resumes_without_reinference(note: LomoEnv) -> None:
    note.replay(READ, DONE)
    task = note.new_task()
    crashed = note.run("--run-once", "read the note", "--task", task, faults="after_decision_commit:crash")
    assert crashed.returncode == -signal.SIGKILL
    resumed = note.run("--run-once", "--json")
    assert resumed.returncode == 0, resumed.stderr
    state = note.inspect()
    turn = turn_of(state, task)
    assert turn["status"] == "completed" and turn["epoch"] == 2
    assert turn["model_calls"] == 2 and turn["steps"] == 2  # line 0 was not asked again
    [call] = calls_of(state, turn["id"])
    assert (call["status"], call["executions"], call["idempotency_key"]) == ("done", 1, f"{turn['id']}/1/0")
    assert len(events(state, "lease_taken_over")) == 1


@pytest.mark.slow
def test_crash_after_tool_started_non_idempotent_reaches_model_as_outcome_unknown(lomo: LomoEnv) -> None:
    lomo.replay(APPEND, DONE)
    task = lomo.new_task()
    assert lomo.run("--run-once", "log it", "--task", task, faults="after_tool_started:crash").returncode == -9
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    turn = turn_of(state, task)
    [call] = calls_of(state, turn["id"])
    assert call["status"] == "outcome_unknown" and call["executions"] <= 1
    assert not (lomo.workspace / "log.md").exists()  # it never ran, and was not blindly re-run
    tool_messages = model_messages(lomo, task, "tool")
    assert len(tool_messages) == 1 and "outcome unknown" in tool_messages[0]
    assert turn["model_calls"] == 2 and turn["status"] == "completed"


@pytest.mark.slow
def test_crash_after_tool_started_idempotent_reruns_with_same_key(note: LomoEnv) -> None:
    note.replay(READ, DONE)
    task = note.new_task()
    assert note.run("--run-once", "read", "--task", task, faults="after_tool_started:crash").returncode == -9
    before = note.inspect()
    key = calls_of(before, turn_of(before, task)["id"])[0]["idempotency_key"]
    assert note.run("--run-once").returncode == 0
    state = note.inspect()
    [call] = calls_of(state, turn_of(state, task)["id"])
    assert (call["status"], call["executions"], call["idempotency_key"]) == ("done", 1, key)
    assert call["epoch"] == 2


@pytest.mark.slow
def test_crash_after_tool_effect_non_idempotent_is_not_repeated(lomo: LomoEnv) -> None:
    lomo.replay(APPEND, DONE)
    task = lomo.new_task()
    assert lomo.run("--run-once", "log it", "--task", task, faults="after_tool_effect:crash").returncode == -9
    assert (lomo.workspace / "log.md").read_text() == "one\n"
    assert lomo.run("--run-once").returncode == 0
    assert (lomo.workspace / "log.md").read_text() == "one\n"  # not appended twice
    state = lomo.inspect()
    [call] = calls_of(state, turn_of(state, task)["id"])
    assert call["status"] == "outcome_unknown"


@pytest.mark.slow
def test_crash_after_tool_effect_idempotent_write_keeps_one_version(lomo: LomoEnv) -> None:
    lomo.replay(WRITE, DONE)
    task = lomo.new_task()
    assert lomo.run("--run-once", "draft", "--task", task, faults="after_tool_effect:crash").returncode == -9
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    [call] = calls_of(state, turn_of(state, task)["id"])
    assert call["status"] == "done" and call["executions"] == 1 and call["result"]["version"] == 1
    assert [o for o in state["objects"] if o["path"] == "draft.md"] == [
        {"path": "draft.md", "version": 1, "kind": "document", "size": 3, "deleted": False, "last_author": "agent"}]


@pytest.mark.slow
def test_reference_takeover_fences_the_frozen_worker(note: LomoEnv, kill_on_exit) -> None:
    """DESIGN M1: A freezes after `started`; B takes over at epoch 2; A wakes and is fenced."""
    note.replay(READ, DONE)
    task = note.new_task()
    a = note.popen("--run-once", "read the note", "--task", task, faults="after_tool_started:stop",
                   LOMO_LEASE_SECONDS="1.5")
    kill_on_exit(a)
    wait_for(lambda: process_state(a.pid) == "T", what="worker A to freeze")
    b = note.run("--run-once", "--json", LOMO_LEASE_SECONDS="1.5")
    assert b.returncode == 0, b.stderr
    os.kill(a.pid, signal.SIGCONT)
    a.wait(timeout=60)
    assert a.returncode == 0, a.stderr
    state = note.inspect()
    turn = turn_of(state, task)
    assert (turn["status"], turn["epoch"], turn["model_calls"], turn["steps"]) == ("completed", 2, 2, 2)
    [call] = calls_of(state, turn["id"])
    assert (call["status"], call["executions"]) == ("done", 1)
    rejected = events(state, "stale_write_rejected")
    assert rejected and all(e["epoch"] == 1 for e in rejected)
    assert len(events(state, "lease_taken_over")) == 1


@pytest.mark.slow
def test_two_processes_race_for_one_expired_lease(note: LomoEnv, kill_on_exit) -> None:
    note.replay(READ, DONE)
    task = note.new_task()
    a = note.popen("--run-once", "read the note", "--task", task, faults="after_tool_started:stop")
    kill_on_exit(a)
    wait_for(lambda: process_state(a.pid) == "T", what="worker A to freeze")
    a.kill()  # SIGKILL while stopped: the lease is left behind, its owner dead
    a.wait(timeout=10)
    racers = [note.popen("--run-once") for _ in range(2)]
    for proc in racers:
        kill_on_exit(proc)
    for proc in racers:
        proc.wait(timeout=90)
        assert proc.returncode == 0, proc.stderr.read()
    state = note.inspect()
    turn = turn_of(state, task)
    assert turn["epoch"] == 2 and turn["status"] == "completed"
    assert len(events(state, "lease_taken_over")) == 1
    assert calls_of(state, turn["id"])[0]["executions"] == 1


@pytest.mark.slow
def test_inbox_consumed_once_across_crash_before_step_commit(note: LomoEnv) -> None:
    note.replay(DONE)
    task = note.new_task()
    # The message is committed to the inbox, then the process dies before any step.
    assert note.run("--run-once", "hello task", "--task", task, faults="before_wakeup:crash").returncode == -9
    pending = [m for m in note.inspect()["inbox"] if m["task_id"] == task]
    assert len(pending) == 1 and pending[0]["consumed_turn"] is None
    assert note.run("--run-once").returncode == 0
    [message] = [m for m in note.inspect()["inbox"] if m["task_id"] == task]
    assert message["consumed_step"] == 1 and message["consumed_turn"]
    assert model_messages(note, task, "user") == ["hello task"]


@pytest.mark.slow
def test_inbox_consumed_once_across_crash_after_step_commit(note: LomoEnv) -> None:
    note.replay(READ, DONE)
    task = note.new_task()
    assert note.run("--run-once", "read it", "--task", task, faults="after_decision_commit:crash").returncode == -9
    assert note.run("--run-once").returncode == 0
    [message] = [m for m in note.inspect()["inbox"] if m["task_id"] == task]
    assert message["consumed_step"] == 1
    assert model_messages(note, task, "user") == ["read it"]


@pytest.mark.slow
def test_poison_turn_fails_after_k_crashes(note: LomoEnv) -> None:
    note.replay(READ, DONE)
    task = note.new_task()
    assert note.run("--run-once", "read", "--task", task, faults="after_tool_started:crash").returncode == -9
    for _ in range(2):
        assert note.run("--run-once", faults="after_tool_started:crash").returncode == -9
    final = note.run("--run-once", faults="after_tool_started:crash")
    assert final.returncode == 1 and "crash" in final.stderr
    state = note.inspect()
    turn = turn_of(state, task)
    assert turn["status"] == "failed" and "crashed 3 times" in turn["reason"]
    assert [t for t in state["tasks"] if t["id"] == task][0]["status"] == "failed"


def test_unknown_task_is_a_clear_error(lomo: LomoEnv) -> None:
    proc = lomo.run("--run-once", "hi", "--task", "task-nope")
    assert proc.returncode == 1 and "task-nope" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_corrupt_replay_line_fails_the_turn_and_keeps_the_message(lomo: LomoEnv) -> None:
    lomo.replay_file.write_text("{not json\n")
    task = lomo.new_task()
    proc = lomo.run("--run-once", "keep me", "--task", task)
    assert proc.returncode == 1 and "line 1" in proc.stderr and "Traceback" not in proc.stderr
    state = lomo.inspect()
    [message] = [m for m in state["inbox"] if m["task_id"] == task]
    assert message["text"] == "keep me" and message["consumed_turn"] is None
    assert turn_of(state, task)["status"] == "failed"
    lomo.replay(DONE)  # fixed: a resume picks the message up
    assert lomo.run("task", "resume", task).returncode == 0
    assert lomo.run("--run-once").returncode == 0
    [message] = [m for m in lomo.inspect()["inbox"] if m["task_id"] == task]
    assert message["consumed_turn"] is not None


def test_read_only_database_is_a_clear_error_and_writes_nothing(lomo: LomoEnv) -> None:
    lomo.new_task("before")
    counts = _counts(lomo)
    ro_url = f"sqlite+aiosqlite:///file:{lomo.db_path}?mode=ro&uri=true"
    proc = lomo.run("--db", ro_url, "task", "new", "after")
    assert proc.returncode == 1 and "read-only" in proc.stderr and "Traceback" not in proc.stderr
    assert _counts(lomo) == counts


def test_database_folder_that_cannot_exist_is_a_clear_error(lomo: LomoEnv) -> None:
    (lomo.root / "afile").write_text("x")
    proc = lomo.run("--db", f"sqlite+aiosqlite:///{lomo.root}/afile/lomo.db", "inspect", "--json")
    assert proc.returncode == 1 and "database" in proc.stderr and "Traceback" not in proc.stderr


def _counts(env: LomoEnv) -> dict[str, int]:
    with sqlite3.connect(env.db_path) as db:
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("tasks", "inbox", "events")}
