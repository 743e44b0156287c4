"""The production graph's money and its results at the edges (#15): a run that would cost more than its approved
plan asks for the excess on its own card; an edit reverted to an old key gets the old render back (never the newer
one under the old key's name), a deleted result is stale and comes back without an order; an order for an old key
that finishes late never takes the output path from the newer key's order."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from conftest import LomoEnv, async_wait_for
from lomo_tui.production.report import graph_states
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.studio.providers import JobEvent
from lomo_tui.workspace.flows import Edge, Flow, Node, dump_flow

RUN = {"content": None, "tool_calls": [{"name": "run_production", "arguments": {"path": "g.flow.json"}}]}
DONE = {"content": "done", "tool_calls": []}


def _config(lomo: LomoEnv) -> None:
    for where in (lomo.root / "cfg", lomo.root / "cfg" / "lomo"):
        where.mkdir(parents=True, exist_ok=True)
        (where / "config.toml").write_text("[studio]\ndeadline_seconds = 300\n")


def _write(lomo: LomoEnv, *nodes: Node, edges: tuple[Edge, ...] = ()) -> None:
    (lomo.workspace / "g.flow.json").write_text(dump_flow(Flow(tuple(nodes), edges)))


async def _rows(rt: Runtime, table: Any, *where: Any) -> list[Any]:
    async with rt.db.read() as conn:
        return list((await conn.execute(select(table).where(*where))).all())


async def _pending(rt: Runtime) -> list[Any]:
    return await _rows(rt, s.gates, s.gates.c.status == "pending")


async def _run(rt: Runtime, task: str, text: str = "run the graph") -> list[Any]:
    """Deliver TEXT; approve every card it opens, one after the other; the cards, in order."""
    cards: list[Any] = []
    await rt.send(text, task)
    assert await rt.run_until_quiescent(60)
    while pending := await _pending(rt):
        for gate in pending:
            cards.append(gate)
            await rt.resolve_gate(gate.id, approve=True)
        assert await rt.run_until_quiescent(60)
    assert not rt.errors, rt.errors
    return cards


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- the spend beyond the plan -------------------------------------------------------------------------------------
FRAME = Node("frame", "key_frame", {"prompt": "a red fox in deep snow", "output": "b/frame.png"})
CUT = Node("cut", "assembly", {"output": "b/cut.mp4"})
EDGES = (Edge("frame.image", "clip.key_frame"), Edge("clip.clip", "cut.clip1"))


def _clip(seconds: int) -> Node:
    return Node("clip", "shot_clip", {"seconds": seconds, "prompt": "the fox trots", "output": "b/clip.mp4"})


@pytest.mark.parametrize("answer", ["approve", "decline"])
async def test_a_run_dearer_than_its_approved_plan_asks_for_the_excess_on_one_card(lomo: LomoEnv, answer: str) -> None:
    _config(lomo)
    _write(lomo, FRAME, _clip(1), CUT, edges=EDGES)
    lomo.replay(RUN, DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Beyond the plan")
        await rt.send("run my graph", task)
        assert await rt.run_until_quiescent(60)
        [plan] = await _pending(rt)
        assert plan.scope["role"] == "plan" and plan.scope["amount"] == pytest.approx(0.14)  # 0.04 + 1 s × 0.10
        _write(lomo, FRAME, _clip(3), CUT, edges=EDGES)  # the clip grows to 3 s while the card waits: 0.30 now
        await rt.resolve_gate(plan.id, approve=True)
        assert await rt.run_until_quiescent(60)
        [beyond] = await _pending(rt)
        assert beyond.kind == "spend" and beyond.scope["role"] == "beyond" and beyond.scope["plan"] == plan.id
        assert beyond.scope["amount"] == pytest.approx(0.20) and beyond.scope["nodes"] == ["clip"]
        assert "0.20 credits more than its approved plan (0.14 credits)" in beyond.question
        assert await _rows(rt, s.jobs) == []  # nothing is spent past the plan while the card waits
        await rt.resolve_gate(beyond.id, approve=answer == "approve")
        assert await rt.run_until_quiescent(60)
        assert not rt.errors, rt.errors
        assert await _pending(rt) == []
        cards = await _rows(rt, s.gates, s.gates.c.kind == "spend")
        assert sorted(g.scope["role"] for g in cards) == ["beyond", "plan"]  # exactly one card beyond the plan
        jobs = await _rows(rt, s.jobs)
        charges = await _rows(rt, s.charges, s.charges.c.status == "charged")
        [state] = await graph_states(rt.db, task)
        nodes = {n["id"]: n for n in state["nodes"]}
        if answer == "approve":
            assert sorted(j.kind for j in jobs) == ["image", "video"]  # the clip is made once
            assert sum(c.amount for c in charges) == pytest.approx(0.34)
            assert {n["state"] for n in nodes.values()} == {"done"} and nodes["clip"]["runs"] == 1
            assert (lomo.workspace / "b" / "cut.mp4").is_file()
        else:
            assert [j.kind for j in jobs] == ["image"]  # the clip is not made, and nothing is charged for it
            assert sum(c.amount for c in charges) == pytest.approx(0.04)
            assert nodes["frame"]["state"] == "done" and nodes["clip"]["runs"] == 0
            assert not (lomo.workspace / "b" / "clip.mp4").exists() and not (lomo.workspace / "b" / "cut.mp4").exists()
    finally:
        await rt.close()


async def test_a_node_added_while_the_plan_waits_is_asked_for_beyond_it(lomo: LomoEnv) -> None:
    _config(lomo)
    _write(lomo, FRAME)
    lomo.replay(RUN, DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Added node")
        await rt.send("run my graph", task)
        assert await rt.run_until_quiescent(60)
        [plan] = await _pending(rt)
        extra = Node("extra", "scene_reference", {"prompt": "the snowy forest", "output": "b/extra.png"})
        _write(lomo, FRAME, extra)
        await rt.resolve_gate(plan.id, approve=True)
        assert await rt.run_until_quiescent(60)
        [beyond] = await _pending(rt)
        assert beyond.scope["nodes"] == ["extra"] and beyond.scope["amount"] == pytest.approx(0.04)
        await rt.resolve_gate(beyond.id, approve=True)
        assert await rt.run_until_quiescent(60)
        assert sorted(j.idempotency_key.split("/")[2] for j in await _rows(rt, s.jobs)) == ["extra", "frame"]
    finally:
        await rt.close()


# ---- results made before ------------------------------------------------------------------------------------------
async def test_a_reverted_edit_gets_its_old_render_back_and_a_deleted_result_is_stale_then_restored(
        lomo: LomoEnv) -> None:
    _config(lomo)
    red = Node("frame", "key_frame", {"prompt": "a red fox in deep snow", "output": "r/frame.png"})
    blue = red.with_params({"prompt": "a blue fox on a frozen lake"})
    _write(lomo, red)
    lomo.replay(*[RUN, DONE] * 4)
    out = lomo.workspace / "r" / "frame.png"
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Revert")
        assert len(await _run(rt, task)) == 1
        first = _sha(out)
        _write(lomo, blue)
        assert len(await _run(rt, task)) == 1
        second = _sha(out)
        assert second != first and len(await _rows(rt, s.jobs)) == 2

        _write(lomo, red)  # back to the first key: its job is reused, and its own bytes come back
        assert await _run(rt, task) == []  # no card: nothing is ordered or charged
        assert _sha(out) == first
        [state] = await graph_states(rt.db, task)
        [node] = state["nodes"]
        assert (node["state"], node["result"], node["runs"]) == ("done", "r/frame.png", 2)
        assert len(await _rows(rt, s.jobs)) == 2 and len(await _rows(rt, s.charges)) == 2

        out.unlink()  # the creator deletes the result: stale (missing), not failed
        [state] = await graph_states(rt.db, task)
        [node] = state["nodes"]
        assert (node["state"], node["missing"], node["error"]) == ("stale", True, None)
        assert await _run(rt, task) == []  # made before: put back from the results store, unordered
        assert _sha(out) == first and len(await _rows(rt, s.jobs)) == 2
        [state] = await graph_states(rt.db, task)
        assert state["nodes"][0]["state"] == "done"
    finally:
        await rt.close()


async def test_a_deleted_result_kept_nowhere_is_made_again_under_a_new_key(lomo: LomoEnv) -> None:
    _config(lomo)
    _write(lomo, FRAME)
    lomo.replay(*[RUN, DONE] * 2)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Gone")
        await _run(rt, task)
        for kept in (lomo.workspace / ".lomo" / "results").iterdir():
            kept.unlink()
        (lomo.workspace / "b" / "frame.png").unlink()
        [card] = await _run(rt, task)  # a new generation, asked for and charged once
        assert card.scope["nodes"] == ["frame"]
        jobs = await _rows(rt, s.jobs)
        assert len(jobs) == 2 and len({j.idempotency_key for j in jobs}) == 2
        assert (lomo.workspace / "b" / "frame.png").is_file()
        [state] = await graph_states(rt.db, task)
        assert state["nodes"][0]["state"] == "done" and state["nodes"][0]["runs"] == 2
    finally:
        await rt.close()


# ---- a late order for an old key -----------------------------------------------------------------------------------
class HeldStudio:
    """A remote provider whose jobs finish when the test says so (with the bytes it gives)."""

    name = "held"
    local = False
    cancels = False

    def __init__(self) -> None:
        self.sinks: list[Any] = []
        self.orders: list[tuple[str, dict[str, Any]]] = []
        self.results: dict[str, bytes] = {}

    def subscribe(self, sink: Any) -> None:
        self.sinks.append(sink)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def submit(self, kind: str, params: dict[str, Any], key: str) -> str:
        job_id = "held-" + hashlib.sha1(key.encode()).hexdigest()[:12]
        self.orders.append((job_id, params))
        return job_id

    async def status(self, provider_job_id: str) -> JobEvent:
        return JobEvent(provider_job_id, 1, "queued")

    async def fetch(self, provider_job_id: str) -> tuple[bytes, str]:
        return self.results[provider_job_id], "png"

    async def cancel(self, provider_job_id: str) -> bool:
        return False

    async def finish(self, provider_job_id: str, data: bytes) -> None:
        self.results[provider_job_id] = data
        for sink in self.sinks:
            await sink(JobEvent(provider_job_id, 3999, "done", 1.0))


@pytest.mark.parametrize("first", ["old", "new"])
async def test_an_old_keys_late_result_never_takes_the_path_of_the_newer_keys_order(lomo: LomoEnv,
                                                                                    first: str) -> None:
    from lomo_tui.studio.service import Studio

    _config(lomo)
    node = Node("frame", "key_frame", {"prompt": "a red fox in deep snow", "output": "c/frame.png"})
    _write(lomo, node)
    lomo.replay(RUN, RUN, DONE, DONE)  # the first run waits on its order while the second one runs
    held = HeldStudio()
    rt = Runtime(lomo.settings())
    rt.studio = Studio(rt, provider=held)
    rt.services = [rt.studio if service.__class__ is Studio else service for service in rt.services]
    await rt.start()
    try:
        one = await rt.ledger.create_task("First run")
        await _run(rt, one)
        [(old, _)] = held.orders  # ordered, not back yet
        _write(lomo, node.with_params({"prompt": "a blue fox on a frozen lake"}))
        two = await rt.ledger.create_task("Second run")
        await _run(rt, two)
        [_, (new, _)] = held.orders
        results = {old: b"\x89PNG old key", new: b"\x89PNG new key"}
        for job_id in ((old, new) if first == "old" else (new, old)):
            await held.finish(job_id, results[job_id])

        async def settled() -> bool:
            return all(j.status == "done" for j in await _rows(rt, s.jobs))

        await async_wait_for(settled, timeout=10, what="both orders to settle")
        assert await rt.run_until_quiescent(60)
        assert (lomo.workspace / "c" / "frame.png").read_bytes() == results[new]
        jobs = {j.provider_job_id: j for j in await _rows(rt, s.jobs)}
        assert jobs[new].artifact_path == "c/frame.png" and jobs[old].artifact_path != "c/frame.png"
        assert (lomo.workspace / jobs[old].artifact_path).read_bytes() == results[old]  # kept, beside it
        [state] = await graph_states(rt.db, two)
        assert [(n["state"], n["result"]) for n in state["nodes"]] == [("done", "c/frame.png")]
    finally:
        await rt.close()


async def test_an_approved_card_beyond_the_plan_covers_only_its_amount(lomo: LomoEnv) -> None:
    _config(lomo)
    _write(lomo, FRAME, _clip(1), CUT, edges=EDGES)
    lomo.replay(RUN, DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Dearer twice")
        await rt.send("run my graph", task)
        assert await rt.run_until_quiescent(60)
        [plan] = await _pending(rt)
        _write(lomo, FRAME, _clip(3), CUT, edges=EDGES)
        await rt.resolve_gate(plan.id, approve=True)
        assert await rt.run_until_quiescent(60)
        [first] = await _pending(rt)
        _write(lomo, FRAME, _clip(5), CUT, edges=EDGES)  # dearer again while that card waits
        await rt.resolve_gate(first.id, approve=True)
        assert await rt.run_until_quiescent(60)
        [second] = await _pending(rt)  # the rest only: 0.04 + 0.50 against 0.14 + 0.20 approved
        assert second.scope["amount"] == pytest.approx(0.20) and second.id != first.id
        await rt.resolve_gate(second.id, approve=True)
        assert await rt.run_until_quiescent(60)
        assert not rt.errors, rt.errors
        jobs = await _rows(rt, s.jobs)
        assert sorted(j.kind for j in jobs) == ["image", "video"]
        assert [j.params["seconds"] for j in jobs if j.kind == "video"] == [5.0]
        charged = await _rows(rt, s.charges, s.charges.c.status == "charged")
        assert sum(c.amount for c in charged) == pytest.approx(0.54)
        assert len(await _rows(rt, s.gates, s.gates.c.kind == "spend")) == 3
    finally:
        await rt.close()
