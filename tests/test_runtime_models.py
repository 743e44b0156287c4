"""The runtime with a real provider path (litellm against a loopback OpenAI server), and inbox control."""
from __future__ import annotations

import os
import signal

import pytest
from sqlalchemy import select

from conftest import LomoEnv, process_state, wait_for
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from openai_stub import OpenAIStub, stream

DONE = {"content": "done", "tool_calls": []}


pytestmark = pytest.mark.usefixtures("loopback_only")  # litellm talks to the stub only


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


def remote_settings(lomo: LomoEnv, stub: OpenAIStub):
    settings = lomo.settings(model="openai/stub-model")
    settings.file = {"providers": {"openai": {"api_base": stub.base_url, "api_key": "sk-test", "timeout": 10}}}
    return settings


async def test_a_litellm_model_drives_a_turn_and_every_call_is_recorded(lomo: LomoEnv, stub: OpenAIStub) -> None:
    stub.reset()
    (lomo.workspace / "note.md").write_text("hello\n")
    # the runtime streams every call (tokens reach the TUI as they come)
    stub.enqueue(stream([], tool=("read_file", {"path": "note.md"})), stream(["It ", "says ", "hello."]))
    rt = Runtime(remote_settings(lomo, stub))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Remote")
        await rt.send("read the note", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            calls = (await conn.execute(select(s.model_calls))).all()
            tools = (await conn.execute(select(s.tool_calls))).all()
    finally:
        await rt.close()
    assert all(c.model.endswith("stub-model") and c.prompt_tokens > 0 and c.latency_ms > 0 for c in calls)
    assert rt.errors == []
    assert len(calls) == 2 and [(t.name, t.status) for t in tools] == [("read_file", "done")]
    first = stub.requests[0].body
    assert first["messages"][0]["role"] == "system" and any(t["function"]["name"] == "read_file"
                                                             for t in first["tools"])
    stored = []
    async with Runtime(remote_settings(lomo, stub)).db.read() as conn:
        for table in (s.model_calls, s.messages, s.events):
            stored.extend(str(r) for r in (await conn.execute(select(table))).all())
    assert stored and "sk-test" not in " ".join(stored)  # keys never reach the database


async def test_malformed_tool_call_json_fails_the_turn_clearly_and_keeps_the_message(lomo: LomoEnv,
                                                                                   stub: OpenAIStub) -> None:
    stub.reset()
    stub.enqueue(stream([], tool=("read_file", '{"path": "note.md"')))  # truncated JSON
    rt = Runtime(remote_settings(lomo, stub))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Remote")
        message, _ = await rt.send("read the note", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            task_row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
            inbox = (await conn.execute(select(s.inbox).where(s.inbox.c.id == message))).one()
    finally:
        await rt.close()
    assert task_row.status == "failed" and "malformed tool-call arguments for read_file" in task_row.status_reason
    assert inbox.status == "pending"  # nothing lost: the next attempt reads it again
    assert any("malformed" in e for e in rt.errors)


@pytest.mark.slow
def test_withdraw_and_replace_before_the_task_reads_it(lomo: LomoEnv) -> None:
    lomo.replay(DONE)
    task = lomo.new_task()
    first = lomo.run("send", "make it red", "--task", task).stdout.strip()
    replaced = lomo.run("withdraw", first, "--replace", "make it blue", "--json")
    assert replaced.returncode == 0, replaced.stderr
    assert lomo.run("--run-once").returncode == 0
    inbox = {m["text"]: m for m in lomo.inspect()["inbox"]}
    assert inbox["make it red"]["status"] == "withdrawn" and inbox["make it red"]["consumed_turn"] is None
    assert inbox["make it blue"]["consumed_step"] == 1
    again = lomo.run("withdraw", inbox["make it blue"]["id"])
    assert again.returncode == 1 and "already consumed" in again.stderr


@pytest.mark.slow
def test_stopping_a_task_fences_its_running_worker_and_it_never_restarts(lomo: LomoEnv, kill_on_exit) -> None:
    (lomo.workspace / "note.md").write_text("x")
    lomo.replay({"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "note.md"}}]}, DONE)
    task = lomo.new_task()
    a = lomo.popen("--run-once", "read", "--task", task, faults="after_tool_started:stop")
    kill_on_exit(a)
    wait_for(lambda: process_state(a.pid) == "T", what="the worker to freeze mid-call")
    assert lomo.run("task", "stop", task).returncode == 0
    os.kill(a.pid, signal.SIGCONT)
    assert a.wait(timeout=60) == 0
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    assert [t["status"] for t in state["tasks"] if t["id"] == task] == ["stopped"]
    assert [t["status"] for t in state["turns"] if t["task_id"] == task] == ["stopped"]
    assert [c["executions"] for c in state["tool_calls"]] == [0]  # the fenced result was not counted
    assert any(e["type"] == "stale_write_rejected" for e in state["events"])
    refused = lomo.run("--run-once", "go on", "--task", task)
    assert refused.returncode == 1 and "stopped" in refused.stderr
