"""Running a production graph through the ledger (DESIGN I1).

`advance` is re-entrant: the `run_production` tool calls it, and calls it again each time the turn wakes (a job
settled, the card was answered, a restart). Each call reads the flow and the files as they are, works out every
node's state (`state.evaluate`) and moves the graph on:

- the paid nodes still to make that no approval covers are put on **one card** with their quoted cost; nothing
  is ordered until the creator approves it (an `auto` task within its budget needs no card);
- ready paid nodes are ordered up to the concurrency limit, each in one fenced transaction that writes the job,
  its charge and the node's record together, with the idempotency key ``prod/<graph>/<node>/<key>``: a node whose
  key was ordered before is never ordered or charged again, after a crash or on a re-run;
- local nodes (the cut, a review) run here; the cut is written once per key through the workspace;
- it returns the jobs in flight (the turn waits, holding nothing, until any of them settles), a card to wait
  on, or the finished graph.
"""
from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

from .. import clock
from ..governance.budget import check_spend, hold_spending
from ..governance.gates import open_gate
from ..store import schema as s
from ..studio.prices import quote, simulated_latency
from ..workspace.flows import parse_flow
from .graph import ASSEMBLY, CLIP, KEY_FRAME, REVIEW, SOUND, STUDIO_KIND, Graph, as_graph
from .state import TO_RUN, NodeState, evaluate, shot_of

DEFAULT_LIMIT = 4
SETTLED_BAD = ("failed", "unknown", "expired", "cancelled")
SIZES = {"square": (768, 768), "wide": (1024, 576), "portrait": (576, 1024)}
CLIP_SIZE = (480, 270)
REFERENCES = {  # what each studio does with a key frame's reference images (shown on the card)
    "embedded": "the key frames are composed from the character sheet and the scene reference",
    "litellm": "the character sheet and scene reference go to the image model as reference images (image edit); "
               "a clip's video model gets only its key frame, not the references",
}


@dataclass
class Progress:
    graph: Graph
    states: dict[str, NodeState]
    jobs: list[str] = field(default_factory=list)  # in flight: wait for any
    gate: str | None = None  # the card to wait on
    declined: bool = False
    done: bool = False
    ran: list[str] = field(default_factory=list)  # nodes ordered or made by this call
    failed: list[str] = field(default_factory=list)


@lru_cache(maxsize=16)
def graph_of(text: str) -> Graph:
    """The graph a flow file's text holds (parsed once per text: each wake of a long run reads the same file)."""
    return as_graph(parse_flow(text))


def job_key(graph_path: str, node_id: str, key: str) -> str:
    return f"prod/{hashlib.sha1(graph_path.encode()).hexdigest()[:12]}/{node_id[:60]}/{key[:24]}"


async def load_records(db: Any, workspace: str, graph_path: str) -> dict[str, Any]:
    async with db.read() as conn:
        rows = (await conn.execute(select(s.production_nodes).where(
            s.production_nodes.c.workspace == workspace, s.production_nodes.c.graph == graph_path))).all()
    return {r.node_id: r for r in rows}


async def _upsert(conn: Any, workspace: str, graph_path: str, node_id: str, type_: str, **values: Any) -> None:
    values["updated_at"] = clock.now()
    moved = await conn.execute(update(s.production_nodes).where(
        s.production_nodes.c.workspace == workspace, s.production_nodes.c.graph == graph_path,
        s.production_nodes.c.node_id == node_id).values(**values))
    if not moved.rowcount:
        values.setdefault("status", "planned")
        await conn.execute(insert(s.production_nodes).values(workspace=workspace, graph=graph_path, node_id=node_id,
                                                             type=type_, **values))


class Engine:
    """One `run_production` call's view of one graph."""

    def __init__(self, ctx: Any, graph_path: str, limit: int | None = None) -> None:
        self.ctx = ctx
        self.rt = ctx.services  # what a tool may use (tools/services.py)
        self.path = graph_path
        self.root: Path = self.rt.settings.workspace
        self.ws = self.rt.studio.workspace_key
        configured = self.rt.settings.value("production.concurrency")
        self.limit = max(1, int(limit or configured or DEFAULT_LIMIT))
        self._placed: list[str] = []

    async def records(self) -> dict[str, Any]:
        return await load_records(self.rt.db, self.ws, self.path)

    async def advance(self) -> Progress:
        read = await self.rt.workspace.read(self.path, self.ctx.task_id)
        self.path = read["path"]
        graph = graph_of(read["content"])
        ran: list[str] = []
        for _ in range(4 * len(graph.order) + 8):  # every pass settles, approves, orders or makes something
            records = await self.records()
            if await self._settle(records):  # finished jobs first: one evaluation per pass sees them
                records = await self.records()
            states = evaluate(graph, records, self.root, self.path)
            card = await self._authorise(graph, states)
            if isinstance(card, Progress):
                return card
            if card:  # approvals recorded: read them back
                continue
            placed = await self._order(graph, states)
            ran += placed
            made = await self._make_local(graph, states)
            if made is None and placed:  # what was ordered is in flight now: no need to read it all back
                running = [st.record.job_id for st in states.values() if st.state == "running" and st.record]
                return Progress(graph, states, jobs=running + self._placed, ran=ran)
            if made is not None:
                if isinstance(made, Progress):
                    made.ran = ran
                    return made
                ran.append(made)
                continue
            running = [st.record.job_id for st in states.values() if st.state == "running" and st.record is not None]
            failed = [st.id for st in states.values() if st.state == "failed"
                      or (st.state == "waiting" and st.error)]
            if running:
                return Progress(graph, states, jobs=running, ran=ran)
            done = all(st.state in ("done", "skipped") for st in states.values())
            if done:
                await self._clear_leftover_approvals()
            else:
                failed = failed or [st.id for st in states.values() if st.state not in ("done", "skipped")]
            return Progress(graph, states, done=done, ran=ran, failed=failed)
        raise RuntimeError("the production graph did not settle")  # a defect: each pass must move something

    # ---- jobs in flight -------------------------------------------------------------------------------------
    async def _settle(self, records: dict[str, Any]) -> bool:
        """Record the jobs that finished; resend a job a crash left unsent (the embedded studio died with the
        process that placed it, so nothing of it exists). True when a record changed."""
        changed = False
        studio = self.rt.studio
        for record in records.values():
            if record.status != "running" or not record.job_id:
                continue
            job = await studio.job(record.job_id)
            if job.status == "submitting" and job.provider_job_id is None and studio.provider.local:
                job = await studio.send(job.id)
            if job.status == "done":
                values: dict[str, Any] = dict(status="done", artifact=job.artifact_path, error=None)
            elif job.status in SETTLED_BAD:
                values = dict(status="failed", error=job.error or f"the job {job.status}")
            else:
                continue
            async with self.rt.db.write(durable=False) as conn:  # derived from the job row: redone after a crash
                await _upsert(conn, self.ws, self.path, record.node_id, record.type, **values)
            changed = True
        return changed

    # ---- the card -------------------------------------------------------------------------------------------
    def _job_params(self, graph: Graph, st: NodeState) -> tuple[str, dict[str, Any]]:
        """What the studio is asked for: (prompt, params). Inputs are known only once they are made; a node still
        waiting is quoted from its params alone (the price never depends on an input)."""
        node = graph.node(st.id)
        p = node.params
        shot = shot_of(st)
        params: dict[str, Any] = {"input_files": [], "inputs": []}
        if st.type == CLIP:
            seconds = float(p.get("seconds") or (shot.seconds if shot else None) or 3)
            params.update(seconds=seconds, size_px=list(CLIP_SIZE))
            refs = [st.inputs["key_frame"].payload] if "key_frame" in st.inputs else []
            prompt = str(p.get("prompt") or (shot.prompt() if shot else "") or node.label or st.id)
        elif st.type == SOUND:
            durations = st.inputs.get("durations")
            total = sum(d or 0 for d in durations.payload) if durations and durations.payload else 0
            params.update(seconds=float(p.get("seconds") or total or 5))
            refs, prompt = [], str(p.get("prompt") or "score")
        else:
            params.update(size_px=list(SIZES.get(str(p.get("size")), SIZES["wide"])))
            refs = [st.inputs[port].payload for port in ("scene", "character", "reference") if port in st.inputs]
            prompt = str(p.get("direction") or p.get("prompt") or (shot.prompt() if shot else "") or st.id)
            if st.type == KEY_FRAME and shot and p.get("direction"):
                prompt = f"{p['direction']}; {shot.prompt()}"
            elif p.get("direction") and p.get("prompt"):  # a change to a sheet or a scene: on top of what it shows
                prompt = f"{p['prompt']}; {p['direction']}"
        refs = [r for r in refs if isinstance(r, str)]
        params.update(input_files=[str(self.root / r) for r in refs], inputs=refs, prompt=prompt)
        if p.get("take"):
            params["take"] = p["take"]
        if p.get("seed") is not None:
            params["seed"] = int(p["seed"])
        output = str(p.get("output") or "")
        if output:
            target = self.root / output
            params["output"] = output
            params["output_base"] = hashlib.sha256(target.read_bytes()).hexdigest() if target.is_file() else None
        return prompt, params

    def _to_make(self, states: dict[str, NodeState]) -> list[NodeState]:
        return [st for st in states.values() if st.type in STUDIO_KIND and not st.error
                and (st.state in TO_RUN or (st.state == "waiting"))]

    async def _authorise(self, graph: Graph, states: dict[str, NodeState]) -> Progress | bool:
        """One card for every paid node still to make that no approval covers: its Progress while it waits;
        True when approvals were just recorded, False when every node was covered already."""
        uncovered = [st for st in self._to_make(states) if st.record is None or not st.record.approved]
        if not uncovered:
            return False
        items = []
        for st in uncovered:
            prompt, params = self._job_params(graph, st)
            items.append((st, STUDIO_KIND[st.type], quote(STUDIO_KIND[st.type], params), prompt))
        total = round(sum(i[2] for i in items), 2)
        signature = "|".join(f"{st.id}={st.key or (st.record.key if st.record else '')}" for st, *_ in items)
        dedupe = f"prod:{self.ctx.task_id}:{hashlib.sha1((self.path + signature).encode()).hexdigest()[:24]}"
        currency = self.rt.budget.currency
        async with self.rt.ledger.fenced(self.ctx.claim) as conn:
            task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == self.ctx.task_id))).one()
            gate = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == dedupe))).first()
            if gate is None and task.autonomy == "auto":
                await hold_spending(conn)
                verdict = await check_spend(conn, self.rt.budget, task_id=task.id, autonomy=task.autonomy,
                                            key=dedupe, amount=total)
                if verdict.allowed:
                    for st, *_ in items:
                        await _upsert(conn, self.ws, self.path, st.id, st.type, approved="auto", task_id=task.id)
                    return True
            if gate is None:
                stale = [st.id for st, *_ in items if st.state == "stale" or (st.record and st.record.key)]
                what = f"{len(items)} {'generation' if len(items) == 1 else 'generations'}"
                redo = f"; {len(stale)} of them redo stale results ({', '.join(stale[:6])})" if stale else ""
                refs = REFERENCES.get(self.rt.studio.provider.name, "this studio is not known to take reference "
                                      "images: key frames are made from their text only")
                question = (f"Make {what} of the production graph {self.path} for {total:.2f} {currency}"
                            f"{redo}? ({refs})")
                scope = {"graph": self.path, "nodes": [st.id for st, *_ in items], "amount": total,
                         "keys": [f"{dedupe}/{st.id}" for st, *_ in items],
                         "items": [{"key": f"{dedupe}/{st.id}", "node": st.id, "kind": kind, "amount": amount,
                                    "prompt": prompt[:120]} for st, kind, amount, prompt in items],
                         "description": f"{what} ({total:.2f} {currency})", "references": refs}
                options = [{"label": f"Approve {total:.2f} {currency}",
                            "consequence": f"only these nodes are made; {total:.2f} {currency} charged, once"},
                           {"label": "Decline", "consequence": "nothing is made or charged"}]
                gate = await open_gate(conn, task_id=task.id, kind="spend", dedupe_key=dedupe,
                                       turn_id=self.ctx.claim.turn_id, tool_call_id=self.ctx.key, question=question,
                                       options=options, scope=scope, continues="other tasks")
        if gate.status == "pending":
            return Progress(graph, states, gate=gate.id)
        if gate.status != "approved":
            return Progress(graph, states, gate=gate.id, declined=True)
        async with self.rt.db.write(durable=False) as conn:  # derived from the answered card: redone after a crash
            for node_id in (gate.scope or {}).get("nodes", []):
                if node_id in states:
                    await _upsert(conn, self.ws, self.path, node_id, states[node_id].type, approved=gate.id,
                                  task_id=self.ctx.task_id)
        return True

    async def _clear_leftover_approvals(self) -> None:
        """An approval a finished graph did not spend (its node came out unchanged) covers nothing later."""
        async with self.rt.db.write() as conn:
            await conn.execute(update(s.production_nodes).where(
                s.production_nodes.c.workspace == self.ws, s.production_nodes.c.graph == self.path,
                s.production_nodes.c.approved.is_not(None)).values(approved=None))

    # ---- ordering -------------------------------------------------------------------------------------------
    async def _order(self, graph: Graph, states: dict[str, NodeState]) -> list[str]:
        """Order ready, approved paid nodes, up to the concurrency limit; send them once their rows commit."""
        slots = self.limit - sum(1 for st in states.values() if st.state == "running")
        placed: list[tuple[str, str]] = []
        for st in states.values():
            if slots <= 0:
                break
            if st.type not in STUDIO_KIND or st.state not in TO_RUN or st.key is None or not st.record \
                    or not st.record.approved:
                continue
            kind = STUDIO_KIND[st.type]
            prompt, params = self._job_params(graph, st)
            key = job_key(self.path, st.id, st.key)
            async with self.rt.ledger.fenced(self.ctx.claim) as conn:
                found = (await conn.execute(select(s.jobs.c.id).where(
                    s.jobs.c.workspace == self.ws, s.jobs.c.idempotency_key == key))).scalar()
                if found is None:
                    await hold_spending(conn)
                    found = await self.rt.studio.place(conn, replace(self.ctx, key=key), kind, prompt, params,
                                                       quote(kind, params), simulated_latency(kind, params, 0))
                    runs = st.record.runs + 1
                else:
                    runs = st.record.runs
                await _upsert(conn, self.ws, self.path, st.id, st.type, key=st.key, status="running", job_id=found,
                              runs=runs, approved=None, error=None, task_id=self.ctx.task_id)
            placed.append((st.id, found))
            slots -= 1
        for _, job_id in placed:
            self.rt.faults.hit("after_node_ordered")
            await self.rt.studio.send(job_id)
        self._placed = [job_id for _, job_id in placed]
        return [node_id for node_id, _ in placed]

    # ---- local nodes --------------------------------------------------------------------------------------------
    async def _make_local(self, graph: Graph, states: dict[str, NodeState]) -> str | Progress | None:
        for st in states.values():
            if st.state not in TO_RUN or st.key is None:
                continue
            if st.type == ASSEMBLY:
                await self._assemble(graph, st)
                return st.id
            if st.type == REVIEW:
                return await self._review(graph, states, st)
        return None

    async def _assemble(self, graph: Graph, st: NodeState) -> None:
        from ..studio.assembly import assemble  # PyAV: only when a cut is made

        clips = sorted(((int(p[4:]) if p[4:].isdigit() else 0, p), v) for p, v in st.inputs.items()
                       if p.startswith("clip") and isinstance(v.payload, str))
        sound = st.inputs.get("audio")
        output = str(graph.node(st.id).params.get("output") or f"{Path(self.path).stem}.mp4")
        key = job_key(self.path, st.id, st.key or "")
        async with self.rt.db.read() as conn:
            already = (await conn.execute(select(s.object_versions.c.path).where(
                s.object_versions.c.idempotency_key == key))).scalar()
        if already is None:
            sources = [self.root / v.payload for _, v in clips]
            audio = self.root / sound.payload if sound is not None and isinstance(sound.payload, str) else None
            wanted = output.rsplit(".", 1)[-1].lower()
            film = await asyncio.to_thread(assemble, sources, audio, fmt=wanted if wanted in ("mp4", "webp") else None)
            target = output if output.lower().endswith(f".{film.format}") else f"{output.rsplit('.', 1)[0]}.{film.format}"
            base = await self._version(target)
            written = await self.rt.workspace.write_bytes(target, film.data, base, self.ctx.task_id, key)
            already = written["path"]
        runs = (st.record.runs if st.record else 0) + (0 if st.record and st.record.key == st.key else 1)
        self.rt.faults.hit("after_node_made")
        async with self.rt.ledger.fenced(self.ctx.claim) as conn:
            await _upsert(conn, self.ws, self.path, st.id, st.type, key=st.key, status="done", artifact=already,
                          runs=runs, error=None, task_id=self.ctx.task_id)

    async def _version(self, rel: str) -> int | None:
        async with self.rt.db.read() as conn:
            return (await conn.execute(select(s.objects.c.version).where(
                s.objects.c.path == rel, s.objects.c.deleted.is_(False)))).scalar()

    async def _review(self, graph: Graph, states: dict[str, NodeState], st: NodeState) -> Progress | str:
        node = graph.node(st.id)
        dedupe = f"review:{self.ctx.task_id}:{(st.key or '')[:32]}"
        question = str(node.params.get("question") or f"Review {node.label or st.id} before the graph goes on?")
        async with self.rt.ledger.fenced(self.ctx.claim) as conn:
            gate = await open_gate(conn, task_id=self.ctx.task_id, kind="question", dedupe_key=dedupe,
                                   turn_id=self.ctx.claim.turn_id, tool_call_id=self.ctx.key, question=question,
                                   options=[{"label": "Continue"}, {"label": "Stop here"}],
                                   scope={"graph": self.path, "node": st.id})
            if gate.status == "pending":
                return Progress(graph, states, gate=gate.id)
            status = "done" if gate.status == "approved" else "declined"
            await _upsert(conn, self.ws, self.path, st.id, st.type, key=st.key, status=status, task_id=self.ctx.task_id,
                          error=None if status == "done" else "the creator stopped the graph at this review")
        return st.id
