"""A model can drive it: a whole persistent task through litellm against loopback servers speaking the
OpenAI and the Anthropic protocols (cache breakpoints, cache tokens), and a 'context too long' answer."""
from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from sqlalchemy import select

from anthropic_stub import AnthropicStub, memory_text, strip, text, tools
from conftest import LomoEnv, async_wait_for
from lomo_tui.context.usage import cache_usage
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from openai_stub import (DEFAULT_USAGE, OpenAIStub, Scripted, _chunk, error, is_memory_reading, memory_answer,
                         memory_reading, reply, stream)

pytestmark = [pytest.mark.usefixtures("loopback_only"), pytest.mark.slow]

PLAN = {"brief": "Two café posters. Always teal and cream; never red.",
        "steps": [{"title": "Poster 1", "tool": "generate_image", "args": {"prompt": "café poster 1, teal and cream"}},
                  {"title": "Poster 2", "tool": "generate_image", "args": {"prompt": "café poster 2, teal and cream"}},
                  {"title": "Review with the creator", "tool": "ask_user"}]}
SCRIPT: list[tuple[tuple[str, dict[str, Any]], ...] | str] = [
    (("update_plan", PLAN),),
    (("generate_image", {"prompt": "café poster 1, teal and cream", "step": "1"}),
     ("generate_image", {"prompt": "café poster 2, teal and cream", "step": "2"})),
    (("ask_user", {"question": "Happy with both posters?", "options": ["Yes", "Make poster 2 warmer"]}),),
    (("generate_image", {"prompt": "café poster 2, teal and cream, warmer light"}),),
    (("complete_step", {"step": "3", "evidence": "the creator reviewed both; poster 2 made warmer"}),),
    "Both posters are ready; poster 2 is warmer now.",
]


def openai_answer(item: Any) -> Scripted:
    if isinstance(item, str):
        return stream([item])
    chunks = [_chunk({"role": "assistant", "content": ""})]
    for index, (name, arguments) in enumerate(item):
        chunks.append(_chunk({"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                                              "function": {"name": name, "arguments": json.dumps(arguments)}}]}))
    chunks.append(_chunk({}, "tool_calls"))
    return Scripted(chunks=chunks, usage=DEFAULT_USAGE)


def anthropic_answer(item: Any) -> Any:
    return text(item) if isinstance(item, str) else tools(*item)


@pytest.fixture(scope="module")
def litellm(loopback_only: None) -> Any:
    from lomo_tui.models import remote

    return remote.preload()


@pytest.fixture(scope="module")
def openai_server(litellm: Any) -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


@pytest.fixture(scope="module")
def anthropic_server(litellm: Any) -> Iterator[AnthropicStub]:
    with AnthropicStub() as server:
        yield server


def settings_for(lomo: LomoEnv, model: str, provider: str, base_url: str, **context: int) -> Any:
    settings = lomo.settings(model=model)
    settings.file = {"providers": {provider: {"api_base": base_url, "api_key": "sk-test-key", "timeout": 10}},
                     "context": dict(context)}
    return settings


async def drive_the_task(rt: Runtime) -> str:
    """plan → two generations in parallel → the creator's review → a revision → done."""
    task = await rt.ledger.create_task("Café posters")
    await rt.send("Two café posters, always teal and cream, never red.", task)
    assert await rt.run_until_quiescent(60)
    async with rt.db.read() as conn:
        gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task,
                                                         s.gates.c.status == "pending"))).one()
    assert gate.kind == "question"
    await rt.resolve_gate(gate.id, approve=True, option=2)
    assert await rt.run_until_quiescent(60)
    return task


async def read_by_memory(rt: Runtime) -> None:
    """Wait for memory's background reading of the creator's messages (a remote model reads the ones that
    may say something lasting: "always teal and cream" does; the model says it holds for these posters)."""
    async def done() -> bool:
        async with rt.db.read() as conn:
            return not (await conn.execute(select(s.memory_evidence.c.id).where(
                s.memory_evidence.c.extract_status == "pending"))).first()
    await async_wait_for(done, 30, what="memory's reading")


async def finished(rt: Runtime, task: str) -> tuple[Any, list[Any], list[Any]]:
    async with rt.db.read() as conn:
        row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
        jobs = (await conn.execute(select(s.jobs).where(s.jobs.c.task_id == task))).all()
        calls = (await conn.execute(select(s.model_calls).where(s.model_calls.c.task_id == task)
                                    .order_by(s.model_calls.c.id))).all()
    return row, jobs, calls


async def test_a_whole_persistent_task_runs_through_litellm_against_an_openai_compatible_server(
        lomo: LomoEnv, openai_server: OpenAIStub) -> None:
    openai_server.reset()
    openai_server.enqueue(*[openai_answer(item) for item in SCRIPT])
    openai_server.enqueue_memory(memory_answer())  # "always teal and cream" holds for these two posters only
    rt = Runtime(settings_for(lomo, "openai/stub-model", "openai", openai_server.base_url), watch=False)
    await rt.start()
    try:
        task = await drive_the_task(rt)
        await read_by_memory(rt)
        row, jobs, calls = await finished(rt, task)
        async with rt.db.read() as conn:
            remembered = (await conn.execute(select(s.memory_versions))).all()
    finally:
        await rt.close()
    assert rt.errors == [] and openai_server.pending == 0
    assert row.status == "done" and sorted(j.status for j in jobs) == ["done"] * 3
    assert sorted(c.purpose for c in calls) == ["memory"] + ["worker"] * len(SCRIPT)  # the reading is recorded
    [reading] = openai_server.memory_requests
    assert [m["text"] for m in memory_reading(reading.body)] == ["Two café posters, always teal and cream, never red."]
    assert remembered == []
    bodies = [r.body for r in openai_server.requests if not is_memory_reading(r.body)]
    assert all(b["messages"][0] == bodies[0]["messages"][0] for b in bodies)  # the stable prefix
    assert all("description" in p for b in bodies for t in b["tools"]
                             for p in t["function"]["parameters"]["properties"].values())
    last = bodies[-1]["messages"]
    tail = next(m["content"] for m in last if m["role"] == "system" and str(m["content"]).startswith("Task:"))
    assert "Always teal and cream" in tail and "Checklist (3/3 done)" in tail and "renders/image/" in tail
    assert "generate_image" in {t["function"]["name"] for t in bodies[1]["tools"]}


async def test_against_an_anthropic_style_server_cache_breakpoints_land_on_the_stable_layers_and_reads_are_recorded(
        lomo: LomoEnv, anthropic_server: AnthropicStub) -> None:
    revisions = [f"Revision {k}: keep the teal and cream, add steam over the cups, the morning queue, "
                 f"hand-lettered prices, and the pastry counter in soft light. " * 10 for k in range(8)]
    anthropic_server.enqueue(*[anthropic_answer(item) for item in SCRIPT],
                             *[text(f"Noted revision {k}.") for k in range(len(revisions))])
    anthropic_server.enqueue_memory(memory_text())  # the first message only: the revisions say nothing lasting
    rt = Runtime(settings_for(lomo, "anthropic/claude-sonnet-4-5", "anthropic", anthropic_server.base_url,
                              budget_tokens=5200), watch=False)
    await rt.start()
    try:
        task = await drive_the_task(rt)
        for words in revisions:
            await rt.send(words, task)
            assert await rt.run_until_quiescent(60)
        await read_by_memory(rt)
        row, jobs, calls = await finished(rt, task)
        async with rt.db.read() as conn:
            usage = await cache_usage(conn, task)
            segments = (await conn.execute(select(s.context_summaries))).all()
    finally:
        await rt.close()
    assert rt.errors == [] and anthropic_server.pending == 0
    assert sorted(j.status for j in jobs) == ["done"] * 3
    worker = [b for b in anthropic_server.requests if not b["system"][0]["text"].startswith("You summarise")
              and not anthropic_server.is_memory_reading(b)]
    assert len([b for b in anthropic_server.requests if anthropic_server.is_memory_reading(b)]) == 1
    assert [c.purpose for c in calls].count("memory") == 1
    summary_calls = [c for c in calls if c.purpose == "summary"]
    assert segments and len(summary_calls) == len(segments)  # each remote summary is a recorded model call
    assert all(seg.method == "model" for seg in segments)
    for body in worker:
        system = body["system"]
        assert "cache_control" in system[0]  # the stable prefix (tools + rules) is a cache breakpoint
        assert all("Task:" not in block["text"] for block in system)  # the changing tail never joins it
        assert "[Lomo runtime" in json.dumps(body["messages"][-1])  # it rides at the end, as user text
    summarised = [b for b in worker if any("Earlier in this task" in block["text"] for block in b["system"])]
    assert summarised and all("cache_control" in b["system"][-1] and "Earlier in this task" in b["system"][-1]["text"]
                              for b in summarised)  # the last summary boundary is a breakpoint too
    marks = [[block for m in b["messages"] for block in (m["content"] if isinstance(m["content"], list) else [])
              if strip(block)[1]] for b in worker]
    assert all(len(found) == 1 for found in marks[1:])  # the end of the verbatim history, on every later step
    assert not any("[Lomo runtime" in json.dumps(block) for found in marks for block in found)
    worker_calls = [c for c in calls if c.purpose == "worker"]
    assert sum(c.cached_tokens > 0 for c in worker_calls) >= len(worker_calls) - 3
    assert any(c.cache_write_tokens > 0 for c in worker_calls)
    assert usage["cache_read_tokens"] > 0 and usage["cache_read_share"] > 0.5


async def test_a_context_too_long_answer_summarises_and_retries_once(lomo: LomoEnv,
                                                                   openai_server: OpenAIStub) -> None:
    openai_server.reset()
    too_long = error(400, "This model's maximum context length is 8192 tokens. However, your messages resulted "
                          "in 9120 tokens. Please reduce the length of the messages.")
    openai_server.enqueue(stream(["Noted: teal and cream."]), too_long, reply("Summary: teal and cream only."),
                          stream(["Second answer."]))
    openai_server.enqueue_memory(memory_answer())  # "Always teal and cream." is read; nothing lasting in it
    rt = Runtime(settings_for(lomo, "openai/stub-model", "openai", openai_server.base_url), watch=False)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Long")
        await rt.send("Always teal and cream.", task)
        assert await rt.run_until_quiescent(60)
        await rt.send("And now a second request.", task)
        assert await rt.run_until_quiescent(60)
        await read_by_memory(rt)
        async with rt.db.read() as conn:
            segments = (await conn.execute(select(s.context_summaries))).all()
            turns = (await conn.execute(select(s.turns.c.status).where(s.turns.c.task_id == task))).all()
    finally:
        await rt.close()
    assert rt.errors == [] and openai_server.pending == 0
    assert [t.status for t in turns] == ["completed", "completed"]
    assert len(segments) == 1 and "teal and cream" in segments[0].text
    assert len(openai_server.memory_requests) == 1  # the second request says nothing lasting: no reading
    retried = [r for r in openai_server.requests if not is_memory_reading(r.body)][-1].body["messages"]
    assert any("Earlier in this task" in str(m["content"]) for m in retried)
