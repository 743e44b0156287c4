"""`lomo worker`: the runtime without UI; messages from other processes arrive through the database."""
from __future__ import annotations

import pytest

import json
import signal

from conftest import LomoEnv, wait_for

READ = {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "note.md"}}]}
DONE = {"content": "done", "tool_calls": []}


def turns(env: LomoEnv) -> list[dict]:
    return env.inspect()["turns"]


def test_a_worker_picks_up_work_delivered_by_another_process_and_stops_gracefully(lomo: LomoEnv,
                                                                                 kill_on_exit) -> None:
    (lomo.workspace / "note.md").write_text("hi\n")
    lomo.replay(READ, DONE)
    task = lomo.new_task()
    worker = lomo.popen("worker", LOMO_WATCHDOG_SECONDS="0.2")
    kill_on_exit(worker)
    sent = lomo.run("send", "read the note", "--task", task, "--json")
    assert sent.returncode == 0, sent.stderr
    message = json.loads(sent.stdout)["id"]
    wait_for(lambda: [t for t in turns(lomo) if t["task_id"] == task and t["status"] == "completed"], timeout=30,
             what="the worker to run the turn")
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=30) == 0
    state = lomo.inspect()
    assert [m["consumed_step"] for m in state["inbox"] if m["id"] == message] == [1]
    assert [(c["name"], c["status"]) for c in state["tool_calls"]] == [("read_file", "done")]


@pytest.mark.slow
def test_sigterm_while_a_job_runs_leaves_nothing_held_and_the_job_finishes_later(lomo: LomoEnv,
                                                                                 kill_on_exit) -> None:
    lomo.replay({"content": None, "tool_calls": [{"name": "generate_video",
                                                   "arguments": {"prompt": "slow pan", "seconds": 0.5}}]}, DONE)
    task = lomo.new_task()
    lomo.run("send", "make it", "--task", task)
    worker = lomo.popen("worker", LOMO_WATCHDOG_SECONDS="0.2", LOMO_TIME_SCALE="1")
    kill_on_exit(worker)
    wait_for(lambda: [j for j in lomo.inspect()["jobs"] if j["status"] == "running"], timeout=30,
             what="the job to run")
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=30) == 0
    [turn] = [t for t in turns(lomo) if t["task_id"] == task]
    assert turn["lease_owner"] is None and turn["status"] == "waiting"  # no model request, no lease held
    done = lomo.run("--run-once", LOMO_TIME_SCALE="0.05")  # the studio resumes its accepted job
    assert done.returncode == 0, done.stderr
    state = lomo.inspect()
    assert [j["status"] for j in state["jobs"]] == ["done"] and len(state["charges"]) == 1
    assert [t["status"] for t in state["turns"] if t["task_id"] == task] == ["completed"]
