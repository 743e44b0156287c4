"""Semantic retrieval (A6): with an embedding model configured, an old task is found by meaning."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from openai_stub import OpenAIStub, embeddings, error


pytestmark = pytest.mark.usefixtures("loopback_only")  # litellm talks to the stub only


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


async def routed_index(rt: Runtime, text: str) -> list[dict]:
    main = await rt.ledger.main_task_id()
    await rt.ledger.deliver(main, text)  # delivered, not yet read: what the Router would see now
    async with rt.db.read() as conn:
        task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == main))).one()
        _, hints = await rt.context_extras(conn, task)
    return hints["task_index"]


async def runtime_with_tasks(lomo: LomoEnv, stub: OpenAIStub) -> tuple[Runtime, str]:
    settings = lomo.settings(model="lomo/replay")
    settings.file = {"router": {"embedding_model": "openai/stub-embed"},
                     "providers": {"openai": {"api_base": stub.base_url, "api_key": "sk-test"}}}
    rt = Runtime(settings)
    await rt.open()
    target = await rt.ledger.create_task("Lighthouse 3D print", goal="a printable lighthouse for the shop window")
    for n in range(30):  # newer, unrelated work pushes it out of the recent list
        await rt.ledger.create_task(f"Invoice batch {n}", goal=f"monthly invoices {n}")
    stub.enqueue(embeddings([[1.0, 0.0, 0.0]] + [[0.0, 1.0, 0.0]] * 30))
    assert await rt.vectors.refresh() == 31  # what the service's background pass does
    return rt, target


@pytest.mark.slow
async def test_an_old_task_is_found_by_meaning_when_no_keyword_matches(lomo: LomoEnv, stub: OpenAIStub) -> None:
    stub.reset()
    rt, target = await runtime_with_tasks(lomo, stub)
    try:
        stub.enqueue(embeddings([[0.95, 0.05, 0.0]]))
        index = await routed_index(rt, "the beacon by the sea, make it taller")
        found = [e for e in index if e["id"] == target]
        assert found and found[0]["retrieved"] and found[0]["score"] > 0.9
        async with rt.db.read() as conn:
            stored = (await conn.execute(select(s.task_vectors))).all()
        assert len(stored) == 31 and all(abs(sum(v * v for v in r.vector) - 1) < 1e-9 for r in stored)
        assert await rt.vectors.refresh() == 0  # unchanged tasks are not embedded again
    finally:
        await rt.close()


async def test_a_failing_embedding_call_only_means_no_vector_hits(lomo: LomoEnv, stub: OpenAIStub) -> None:
    stub.reset()
    rt, target = await runtime_with_tasks(lomo, stub)
    try:
        stub.enqueue(error(500, "down"), error(500, "down"))
        index = await routed_index(rt, "the beacon by the sea")
        assert target not in [e["id"] for e in index] and len(index) > 0
    finally:
        await rt.close()


async def test_the_runtime_keeps_vectors_current_in_the_background(lomo: LomoEnv, stub: OpenAIStub) -> None:
    from conftest import async_wait_for

    stub.reset()
    settings = lomo.settings(model="lomo/replay", watchdog_seconds=0.1)
    settings.file = {"router": {"embedding_model": "openai/stub-embed"},
                     "providers": {"openai": {"api_base": stub.base_url, "api_key": "sk-test"}}}
    rt = Runtime(settings)
    await rt.open()
    await rt.ledger.create_task("Lighthouse 3D print")
    stub.enqueue(embeddings([[0.0, 3.0, 4.0]]))
    await rt.start()
    try:
        await async_wait_for(lambda: len(rt.vectors.vectors) == 1, timeout=10, what="the background refresh")
        assert list(rt.vectors.vectors.values()) == [[0.0, 0.6, 0.8]]
    finally:
        await rt.close()
