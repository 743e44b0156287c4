"""Context that lasts (E1–E4): a bounded, layered, cache-stable prompt on the offline models, stored
outputs paged back, tools by domain, the task's summary, and `lomo context`."""
from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.prompt_view import describe
from lomo_tui.context import budget as budgets
from lomo_tui.context.tokens import message_tokens, tools_tokens
from lomo_tui.errors import LomoError
from lomo_tui.governance.gates import open_gate
from lomo_tui.models.base import ModelReply, ModelRequest, ToolCall
from lomo_tui.models.replay import ReplayModel
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

FIRST = "Make a poster series for the café — always teal and cream, never any red."


class Recording:
    """The replay model, keeping every request it was asked (what the provider would have received)."""

    name = "lomo/replay"
    wants_recorded_count = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, on_token: Any = None) -> ModelReply:
        self.requests.append(request)
        return await self.inner.complete(request, on_token)


class Scripted:
    """A stand-in model answering each call with the next function of SCRIPT (it sees the request)."""

    name = "lomo/replay"

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, on_token: Any = None) -> ModelReply:
        self.requests.append(request)
        step = self.script.pop(0) if self.script else (lambda r: ModelReply("done"))
        return step(request)


def recording(lomo: LomoEnv) -> tuple[Runtime, Recording]:
    settings = lomo.settings()
    model = Recording(ReplayModel(lomo.replay_file, lambda: None))  # the runtime passes the recorded count
    return Runtime(settings, model=model, watch=False), model


def prompt_tokens(request: ModelRequest) -> int:
    return sum(message_tokens(m) for m in request.messages) + tools_tokens(request.tools)


def text_of(request: ModelRequest) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.messages)


@pytest.mark.slow
async def test_a_task_revised_300_times_stays_in_budget_keeps_its_first_constraint_and_a_stable_prefix(
        lomo: LomoEnv) -> None:
    revisions = 300
    lines = []
    for k in range(revisions + 1):
        body = f"Poster {k}: the morning light over the pastry counter, steam from the cups, hand lettering. " * 3
        lines.append({"content": None, "tool_calls": [{"name": "write_file", "arguments": {
            "path": f"drafts/poster-{k}.md", "content": body, "base_version": None}}]})
        lines.append({"content": f"Draft {k} written to drafts/poster-{k}.md.", "tool_calls": []})
    lomo.replay(*lines)
    rt, model = recording(lomo)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Café posters")
        await rt.send(FIRST, task)
        assert await rt.run_until_quiescent(60)
        for k in range(1, revisions + 1):
            await rt.send(f"Revision {k}: make poster {k} a little bolder and move the logo to the top left.", task)
            assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            segments = (await conn.execute(select(s.context_summaries).where(
                s.context_summaries.c.task_id == task).order_by(s.context_summaries.c.from_message))).all()
            kept = (await conn.execute(select(s.tasks.c.summary).where(s.tasks.c.id == task))).scalar()
    finally:
        await rt.close()
    assert rt.errors == []
    worker = [r for r in model.requests if r.task_id == task]
    assert len(worker) == 2 * (revisions + 1)
    budget = budgets.FIXED_WINDOWS["lomo/replay"] - budgets.FIXED_REPLY
    assert max(prompt_tokens(r) for r in worker) <= budget
    assert FIRST in text_of(worker[-1])  # the creator's first words, still in view after 300 revisions
    assert "Revision 300" in text_of(worker[-1])
    # the stable prefix (rules + core tools) is byte-identical on every step
    assert len({json.dumps(r.messages[0]) for r in worker}) == 1
    # summaries were appended, one per span, never overlapping; and they cover the early history
    assert len(segments) >= 3
    assert all(a.to_message < b.from_message for a, b in zip(segments, segments[1:]))
    assert "Revision 1:" in segments[0].text or FIRST[:40] in segments[0].text
    # between summary boundaries each step's prompt starts with the previous step's whole history
    kept_prefix = 0
    for before, after in zip(worker, worker[1:]):
        head = before.messages[:before.tail_start]
        kept_prefix += after.messages[:len(head)] == head
    assert kept_prefix / (len(worker) - 1) >= 0.9
    assert kept  # the router's index sees more than the goal


async def test_a_2mb_file_read_never_enters_the_history_whole_and_read_output_pages_it_back(lomo: LomoEnv) -> None:
    big = "".join(f"line {i:07d} of the long log\n" for i in range(68_000))  # about 2 MB (the read limit)
    assert 1_900_000 < len(big) < 2_000_000
    (lomo.workspace / "big.log").write_text(big)
    for i in range(450):
        (lomo.workspace / "many").mkdir(exist_ok=True)
        (lomo.workspace / "many" / f"f{i:03d}.txt").write_text("x")
    seen: dict[str, Any] = {}

    def stored_id(request: ModelRequest) -> str:
        last = json.loads(request.messages[request.tail_start - 1]["content"])
        seen["stand_in"] = last
        return last["output_id"]

    model = Scripted(
        lambda r: ModelReply(None, [ToolCall("read_file", {"path": "big.log"})]),
        lambda r: ModelReply(None, [ToolCall("read_file", {"path": "big.log", "limit": 3_000_000})]),
        lambda r: ModelReply(None, [ToolCall("read_output", {"id": stored_id(r), "offset": 1_000_000,
                                                            "limit": 5000})]),
        lambda r: ModelReply(None, [ToolCall("list_files", {"pattern": "many/*"})]),
        lambda r: ModelReply("read it all"))
    rt = Runtime(lomo.settings(), model=model, watch=False)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Logs")
        await rt.send("read big.log", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            contents = [r.content or "" for r in (await conn.execute(select(s.messages.c.content).where(
                s.messages.c.task_id == task))).all()]
            ledger = (await conn.execute(select(s.tool_calls.c.name, s.tool_calls.c.result))).all()
    finally:
        await rt.close()
    assert rt.errors == []
    assert max(len(c) for c in contents) < 10_000  # the history holds no whole copy
    assert all(max(len(str(m.get("content") or "")) for m in r.messages) < 10_000 for r in model.requests)
    first = json.loads(model.requests[1].messages[model.requests[1].tail_start - 1]["content"])
    assert first["truncated"] is True and first["next_offset"] == 6000 and first["total_chars"] == len(big)
    assert seen["stand_in"]["total_chars"] == len(big) and seen["stand_in"]["version"] == 1
    paged = json.loads(model.requests[3].messages[model.requests[3].tail_start - 1]["content"])
    assert paged["text"] == big[1_000_000:1_005_000] and paged["next_offset"] == 1_005_000
    listed = json.loads(model.requests[4].messages[model.requests[4].tail_start - 1]["content"])
    assert len(listed["files"]) == 100 and listed["truncated"] is True and listed["total"] == 450
    assert any(name == "read_file" and len(json.dumps(result)) > 1_900_000 for name, result in ledger)


async def test_domain_tools_load_on_request_are_refused_until_visible_and_drop_at_a_summary(lomo: LomoEnv) -> None:
    names = lambda r: {t["function"]["name"] for t in r.tools}  # noqa: E731
    filler = "The creator wants the storyboard to breathe: long pauses, slow pans, soft light. " * 30
    plan = {"steps": [{"title": "Write the storyboard notes", "tool": "write_file"}]}
    model = Scripted(
        lambda r: ModelReply(None, [ToolCall("update_plan", plan)]),
        lambda r: ModelReply(None, [ToolCall("generate_video", {"prompt": "a teal cup"})]),
        lambda r: ModelReply(None, [ToolCall("load_tools", {"domains": ["video"]})]),
        lambda r: ModelReply("loaded"),
        *[lambda r: ModelReply(None, [ToolCall("write_file", {"path": f"notes/{len(model.requests)}.md",
                                                              "content": filler, "base_version": None})])
          for _ in range(12)],
        lambda r: ModelReply("done"))
    settings = lomo.settings()
    settings.file = {"context": {"budget_tokens": 6000}}
    rt = Runtime(settings, model=model, watch=False)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Storyboard")
        await rt.send("plan the storyboard", task)
        assert await rt.run_until_quiescent(60)
        await rt.send("now write the notes", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            calls = (await conn.execute(select(s.tool_calls.c.name, s.tool_calls.c.status, s.tool_calls.c.result)
                                        .order_by(s.tool_calls.c.started_at))).all()
            segments = (await conn.execute(select(s.context_summaries))).all()
    finally:
        await rt.close()
    assert "generate_video" in names(model.requests[0])  # before a plan every domain is shown
    planned = model.requests[1]
    assert "generate_video" not in names(planned) and {"load_tools", "read_output", "read_file"} <= names(planned)
    refused = json.loads(model.requests[2].messages[model.requests[2].tail_start - 1]["content"])
    assert "generate_video is not available" in refused["error"]
    assert "generate_video" not in [c.name for c in calls]  # it never started
    assert "generate_video" in names(model.requests[3])  # loaded for the steps after load_tools
    assert segments  # the notes overflowed the budget: the load_tools span was summarised ...
    assert "generate_video" not in names(model.requests[-1])  # ... and the video domain dropped out
    assert "generate_image" not in names(model.requests[-1])


async def test_the_tail_shows_the_original_words_language_waits_and_the_task_summary_is_kept(
        lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"), watch=False)
    model_requests: list[ModelRequest] = []
    inner = rt.model

    class Spy:
        name = "lomo/local"

        async def complete(self, request: ModelRequest, on_token: Any = None) -> ModelReply:
            model_requests.append(request)
            return await inner.complete(request, on_token)

    rt.model = Spy()
    await rt.start()
    try:
        task_id = await rt.ledger.create_task("咖啡店海報", language="zh")
        await rt.send("做一組咖啡店海報，三張，永遠用青色和奶油色", task_id)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).one()
        async with rt.db.write() as conn:  # the creator has an open question on this task
            gate = await open_gate(conn, task_id=task_id, kind="question", question="哪一種字體？",
                                   options=["襯線", "無襯線"], dedupe_key="test:font")
        view = await describe(rt, task_id)  # what the next step would see
    finally:
        await rt.close()
    worker = [r for r in model_requests if r.task_id == task.id]
    tail = worker[-1].messages[worker[-1].tail_start]["content"]
    assert "永遠用青色和奶油色" in tail and "language: Chinese" in tail and "Checklist" in tail
    next_tail = next(m["content"] for m in view["messages"] if m["content"].startswith("Task: 咖啡店海報"))
    assert "Waiting on:" in next_tail and gate.id in next_tail
    assert "steps done" in task.summary and task.search_text  # A6: the index sees progress


def test_budget_comes_from_config_or_the_fixed_window_and_a_bad_value_is_one_line() -> None:
    import asyncio

    class Local:
        name = "lomo/local"

    fixed = asyncio.run(budgets.resolve(Local(), {}))
    assert fixed.tokens <= 16_000 and fixed.reply > 0 and fixed.source == "fixed"
    tuned = asyncio.run(budgets.resolve(Local(), {"reply_tokens": 2000, "models": {"lomo/local": {
        "budget_tokens": 9000}}}))
    assert (tuned.tokens, tuned.reply, tuned.source) == (9000, 2000, "config")
    with pytest.raises(LomoError, match="budget_tokens = 'lots' must be a positive whole number"):
        asyncio.run(budgets.resolve(Local(), {"budget_tokens": "lots"}))


@pytest.mark.slow
def test_lomo_context_prints_the_contract_shape_and_an_unknown_task_exits_1(lomo: LomoEnv) -> None:
    task = lomo.new_task("Posters")
    lomo.replay({"content": "noted", "tool_calls": []})
    assert lomo.run("--run-once", "always teal and cream", "--task", task).returncode == 0
    proc = lomo.run("context", task, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"task_id", "model", "budget_tokens", "total_tokens", "layers", "messages", "tools"} <= set(doc)
    assert doc["task_id"] == task and doc["model"] == "lomo/replay" and doc["budget_tokens"] <= 16_000
    assert [layer["name"] for layer in doc["layers"]][:3] == ["system", "tools", "summaries"]
    assert all(set(layer) >= {"name", "chars", "tokens"} for layer in doc["layers"])
    assert doc["total_tokens"] == sum(layer["tokens"] for layer in doc["layers"])
    assert all(set(m) == {"role", "content"} and isinstance(m["content"], str) for m in doc["messages"])
    assert any("always teal and cream" in m["content"] for m in doc["messages"])
    assert "read_file" in doc["tools"] and "load_tools" in doc["tools"]
    main = json.loads(lomo.run("context", "--json").stdout)
    assert main["task_id"] == "main" and "create_task" in main["tools"]
    human = lomo.run("context", task)
    assert human.returncode == 0 and "layer" in human.stdout and "tokens" in human.stdout
    missing = lomo.run("context", "task-nope")
    assert missing.returncode == 1 and missing.stderr.strip().count("\n") == 0 and "task-nope" in missing.stderr


def _drill_setup(lomo: LomoEnv) -> str:
    (lomo.root / "cfg" / "lomo").mkdir(parents=True, exist_ok=True)
    (lomo.root / "cfg" / "lomo" / "config.toml").write_text("[context]\nbudget_tokens = 5000\n")
    body = "Teal and cream, hand lettering, the pastry counter in the morning light. " * 16
    lomo.replay(*[{"content": None, "tool_calls": [{"name": "write_file", "arguments": {
        "path": f"drafts/{k}.md", "content": body, "base_version": None}}]} for k in range(12)],
        {"content": "All drafts written.", "tool_calls": []})
    return lomo.new_task("Drill")


def _drill_state(lomo: LomoEnv) -> tuple[list[Any], list[Any], list[Any]]:
    import sqlite3

    with sqlite3.connect(lomo.db_path) as db:
        segments = db.execute("SELECT id, from_message, to_message, text FROM context_summaries "
                              "ORDER BY from_message").fetchall()
        messages = db.execute("SELECT id, role FROM messages WHERE task_id != 'main' ORDER BY id").fetchall()
        writes = db.execute("SELECT id, executions FROM tool_calls WHERE name = 'write_file'").fetchall()
    return segments, messages, writes


@pytest.mark.slow
@pytest.mark.parametrize("point", ["before_summary_commit", "after_summary_commit"])
def test_a_crash_while_summarising_loses_nothing_and_never_leaves_two_summaries_for_one_span(
        lomo: LomoEnv, point: str) -> None:
    task = _drill_setup(lomo)
    crashed = lomo.run("--run-once", "write the twelve drafts", "--task", task, faults=f"{point}:crash")
    assert crashed.returncode == -9, crashed.stderr
    before, _, _ = _drill_state(lomo)
    assert len(before) == (0 if point == "before_summary_commit" else 1)
    resumed = lomo.run("--run-once", "--json")
    assert resumed.returncode == 0, resumed.stderr
    segments, messages, writes = _drill_state(lomo)
    assert segments and segments[:len(before)] == before  # a committed segment is kept as it was
    assert all(a[2] < b[1] for a, b in zip(segments, segments[1:]))  # spans never overlap
    assert len({s[1] for s in segments}) == len(segments)
    assert [r for _, r in messages].count("user") == 1 and [r for _, r in messages].count("tool") == 12
    assert len(writes) == 12 and all(n == 1 for _, n in writes)
    assert sorted(p.name for p in (lomo.workspace / "drafts").iterdir()) == sorted(f"{k}.md" for k in range(12))
    turns = [t for t in lomo.inspect()["turns"] if t["task_id"] == task]
    assert [t["status"] for t in turns] == ["completed"] and turns[0]["epoch"] == 2  # taken over once


def test_every_tool_parameter_is_described_for_a_real_model() -> None:
    """E2/#13 §8: a remote model reads each tool's JSON Schema; a parameter without a description is a guess."""
    from lomo_tui.tools import default_registry

    reg = default_registry()
    tools = reg.tools.values() if hasattr(reg, "tools") else reg._tools.values()
    undescribed = [f"{t.name}.{name}" for t in tools for name, p in t.parameters.get("properties", {}).items()
                   if not p.get("description")]
    assert undescribed == []
