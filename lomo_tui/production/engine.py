"""Running a production graph through the ledger (DESIGN I1).

`advance` is re-entrant: the `run_production` tool calls it, and calls it again each time the turn wakes (a job
settled, the card was answered, a restart). Each call reads the flow and the files as they are, works out every
node's state (`state.evaluate`) and moves the graph on:

- the paid nodes still to make that no approval covers are put on **one card** (the plan) with their quoted cost;
  nothing is ordered until the creator approves it (an `auto` task within its budget needs no card);
- while that plan is open (approvals unspent or its jobs in flight), what would take the run past the approved
  amount — a node added or made again, a node whose price went up — opens a **spend card for the excess only**
  ("beyond the plan"): approved, those nodes run once; declined, they are not made and nothing more is charged;
- a node whose key was made before (an edit reverted, a result the creator deleted) gets those bytes back from
  the results store (`studio/results.py`), with no order and no charge;
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
import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import insert, or_, select, update

from .. import clock
from ..errors import Said, column_text
from ..governance.budget import check_spend, hold_spending, plan_why
from ..governance.gates import open_gate
from ..language import message
from ..store import schema as s
from ..studio.prices import quote, simulated_latency
from ..studio.results import keep as keep_result, kept
from ..studio.words import error_saids, job_said
from ..workspace.errors import WorkspaceError
from ..workspace.flows import parse_flow
from .graph import ASSEMBLY, CLIP, KEY_FRAME, REVIEW, SOUND, STUDIO_KIND, Graph, as_graph
from .keys import graph_prefix, job_key, remake_key
from .state import TO_RUN, NodeState, describe, evaluate, shot_of

DEFAULT_LIMIT = 4
SETTLED_BAD = ("failed", "unknown", "expired", "cancelled")
LIVE_JOB = ("submitting", "queued", "running", "unknown")
SIZES = {"square": (768, 768), "wide": (1024, 576), "portrait": (576, 1024)}
CLIP_SIZE = (480, 270)
PLAN, BEYOND = "prod:", "prod+:"  # dedupe prefixes of the graph's plan card and of its spend-beyond-the-plan cards
CENT = 0.005


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
    held: list[str] = field(default_factory=list)  # nodes a declined card beyond the plan leaves unmade


@lru_cache(maxsize=16)
def graph_of(text: str) -> Graph:
    """The graph a flow file's text holds (parsed once per text: each wake of a long run reads the same file)."""
    return as_graph(parse_flow(text))


@lru_cache(maxsize=256)
def _price(kind: str, seconds: float | None, size: tuple[int, int] | None) -> float:
    params: dict[str, Any] = {}
    if seconds is not None:
        params["seconds"] = seconds
    if size is not None:
        params["size_px"] = list(size)
    return quote(kind, params)


_ANSWERED: dict[str, Any] = {}  # answered cards by id, for every wake of every graph (an answer never changes)
_FLOWS: dict[tuple[str, str], tuple[tuple[int, int], str, str]] = {}  # (task, path) → (stat, path, text) last read


def references_note(provider: Any, lang: str) -> str:
    """What the studio does with a key frame's character sheet and scene reference (said on the card)."""
    if getattr(provider, "local", False) and provider.name == "embedded":
        return message("production.refs_embedded", lang)
    takes = getattr(provider, "image_references", None)
    model = (getattr(provider, "models", None) or {}).get("image") or provider.name
    if takes is None:
        return message("production.refs_unknown", lang)
    return message("production.refs_edit" if takes else "production.refs_none", lang, model=model)


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


def _job_error(job: Any, saids: dict[str, Said]) -> Said | str:
    """Why the node of a job that ended badly failed: the studio's own words as catalogue text, a provider's words
    as they are, or the job's end (`production_error.job_<status>`) where it said nothing."""
    return job_said(job, saids) or job.error or Said(f"production_error.job_{job.status}")


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
        self._order_keys: dict[str, str] = {}  # node → the job key to order under, where it is not the plain one
        self._unordered: set[str] = set()  # job keys found never ordered (this call orders them, or nobody)
        self._lang: str | None = None

    async def records(self) -> dict[str, Any]:
        return await load_records(self.rt.db, self.ws, self.path)

    async def _read_flow(self) -> str:
        """The flow's text, read as the task (recorded: the version it ran); a wake that finds the file as this task
        last read it takes that read again instead of recording it once more."""
        memo = (self.ctx.task_id, self.path)
        try:
            stat = os.stat(self.root / self.path)
            seen = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            seen = None
        last = _FLOWS.get(memo)
        if seen is not None and last is not None and last[0] == seen:
            self.path = last[1]
            return last[2]
        read = await self.rt.workspace.read(self.path, self.ctx.task_id)
        self.path = read["path"]
        if seen is not None:
            if len(_FLOWS) >= 256:
                _FLOWS.clear()
            _FLOWS[memo] = (seen, self.path, read["content"])
        return str(read["content"])

    async def advance(self) -> Progress:
        graph = graph_of(await self._read_flow())
        ran: list[str] = []
        held: set[str] = set()  # declined beyond the plan (`_beyond` finds those cards again on each wake)
        records = await self.records()
        for _ in range(4 * len(graph.order) + 8):  # every pass settles, approves, orders or makes something
            records = await self._settle(records)  # finished jobs first: one evaluation per pass sees them
            states = evaluate(graph, records, self.root, self.path)
            if held:
                await self._hold(states, held)
            if await self._reuse(graph, states):  # results made before under these keys: back, unordered
                records = await self.records()
                continue
            card = await self._authorise(graph, states)
            if isinstance(card, Progress):
                if card.held:  # declined beyond the plan: those nodes stay unmade, the rest goes on
                    held |= set(card.held)
                    continue
                return card
            if card:  # approvals recorded: read them back
                records = await self.records()
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
                records = await self.records()
                continue
            running = [st.record.job_id for st in states.values() if st.state == "running" and st.record is not None]
            failed = [st.id for st in states.values() if st.state == "failed" or (st.state != "done" and st.error)]
            if running:
                return Progress(graph, states, jobs=running, ran=ran)
            done = all(st.state in ("done", "skipped") for st in states.values())
            if done:
                await self._clear_leftover_approvals()
            else:
                failed = failed or [st.id for st in states.values() if st.state not in ("done", "skipped")]
            return Progress(graph, states, done=done, ran=ran, failed=failed)
        raise RuntimeError("the production graph did not settle")  # a defect: each pass must move something

    async def language(self) -> str:
        if self._lang is None:
            async with self.rt.db.read() as conn:
                lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == self.ctx.task_id))).scalar()
            self._lang = lang or "en"
        return self._lang

    # ---- jobs in flight -------------------------------------------------------------------------------------
    async def _settle(self, records: dict[str, Any]) -> dict[str, Any]:
        """Record the jobs that finished (one read for all of them, one write); resend a job a crash left unsent
        (the embedded studio died with the process that placed it, so nothing of it exists). The records as they
        are after."""
        running = {r.job_id: r for r in records.values() if r.status == "running" and r.job_id}
        if not running:
            return records
        studio = self.rt.studio
        async with self.rt.db.read() as conn:
            jobs = (await conn.execute(select(s.jobs).where(s.jobs.c.id.in_(list(running))))).all()
        changes: list[tuple[Any, dict[str, Any]]] = []
        saids: dict[str, Said] | None = None
        for job in jobs:
            record = running[job.id]
            if job.status == "submitting" and job.provider_job_id is None and studio.provider.local:
                job = await studio.send(job.id)
            if job.status == "done":
                changes.append((record, dict(status="done", artifact=job.artifact_path, error=None)))
            elif job.status in SETTLED_BAD:
                if saids is None:  # the catalogue form of the studio's own words, read once for all of them
                    async with self.rt.db.read() as conn:
                        saids = await error_saids(conn, {j.task_id for j in jobs})
                changes.append((record, dict(status="failed", error=column_text(_job_error(job, saids)))))
        if not changes:
            return records
        async with self.rt.db.write(durable=False) as conn:  # derived from the job rows: redone after a crash
            for record, values in changes:
                await _upsert(conn, self.ws, self.path, record.node_id, record.type, **values)
        out = dict(records)  # what was written, without reading it all back
        for record, values in changes:
            out[record.node_id] = SimpleNamespace(**{**record._asdict(), **values})
        return out

    # ---- results made before --------------------------------------------------------------------------------
    async def _reuse(self, graph: Graph, states: dict[str, NodeState]) -> bool:
        """A node to make whose key was ordered before gets that job back instead of a new order: still in flight,
        it is waited for; done, its bytes are put back at its output from the results store (the output may hold
        a newer render by now, or nothing: the creator deleted it). A result that cannot be put back is made
        again under a fresh job key. True when a record changed."""
        wanted = {st.id: job_key(self.path, st.id, st.key) for st in states.values()
                  if st.type in STUDIO_KIND and st.key and st.state in TO_RUN and not st.error
                  and st.record is not None and st.record.key}  # never ordered: no key recorded (they commit together)
        wanted = {i: k for i, k in wanted.items() if k not in self._unordered}
        if not wanted:
            return False
        keys = list(wanted.values())
        async with self.rt.db.read() as conn:
            rows = (await conn.execute(select(s.jobs).where(s.jobs.c.workspace == self.ws, or_(
                s.jobs.c.idempotency_key.in_(keys), *[s.jobs.c.idempotency_key.like(f"{k}/m%") for k in keys]))
                .order_by(s.jobs.c.created_at))).all()
            family: dict[str, list[Any]] = {}  # the plain job key → its jobs, remakes after it (oldest first)
            for row in rows:
                base = row.idempotency_key if row.idempotency_key in wanted.values() \
                    else row.idempotency_key.rsplit("/m", 1)[0]
                family.setdefault(base, []).append(row)
            versions = {}
            done_keys = [r.idempotency_key for r in rows if r.status == "done"]
            if done_keys:
                versions = {v.idempotency_key: v for v in (await conn.execute(select(
                    s.object_versions.c.idempotency_key, s.object_versions.c.hash, s.object_versions.c.path).where(
                    s.object_versions.c.idempotency_key.in_(done_keys)))).all()}
        changed = False
        for node_id, key in wanted.items():
            jobs = family.get(key)
            if not jobs:
                self._unordered.add(key)  # looked up once per wake: only this call orders it from here
                continue
            st, job = states[node_id], jobs[-1]
            if job.status in LIVE_JOB:  # ordered under this key and still coming: wait for it, order nothing
                values: dict[str, Any] = dict(status="running", job_id=job.id, error=None)
            elif job.status == "done" and job.idempotency_key in versions:
                version = versions[job.idempotency_key]
                output = str(graph.node(node_id).params.get("output") or version.path)
                at, _ = await self._restore(output, version.hash, version.path.rsplit(".", 1)[-1],
                                            f"{job.idempotency_key}/back")
                if at is None:  # its bytes are nowhere now: made again, a new generation with its own charge
                    self._order_keys[node_id] = remake_key(key, len(jobs))
                    continue
                values = dict(status="done", job_id=job.id, artifact=at, error=None)
            else:
                continue  # a failed order under this key: `_order` finds it and the node shows it
            async with self.rt.db.write(durable=False) as conn:  # derived from the job row: redone after a crash
                await _upsert(conn, self.ws, self.path, node_id, st.type, key=st.key, approved=None,
                              task_id=self.ctx.task_id, **values)
            changed = True
        return changed

    async def _restore(self, rel: str, digest: str, ext: str, key: str) -> tuple[str | None, bool]:
        """Put the result DIGEST at REL (its node's output): (the workspace path that holds those bytes after, or
        None when they are kept nowhere; whether it was written now). What REL holds is replaced only when it is a
        result kept in the store too (a newer render of the graph); a creator's own file stays, the bytes go
        beside it."""
        path = self.root / rel
        try:
            current = hashlib.sha256(await asyncio.to_thread(path.read_bytes)).hexdigest() if path.is_file() else None
        except OSError:
            current = None
        if current == digest:
            return rel, False
        data = await asyncio.to_thread(kept, self.root, digest, ext)
        if data is None:
            return None, False
        target = rel
        if current is not None and await asyncio.to_thread(kept, self.root, current, ext) is None:
            stem = rel.rsplit(".", 1)[0]
            target = f"{stem}.{digest[:8]}.{ext}"  # not a render this graph kept: the creator's; never replaced
        base = await self._version(target)
        try:
            written = await self.rt.workspace.write_bytes(target, data, base, self.ctx.task_id, f"{key}/{base or 0}")
        except WorkspaceError:  # the creator saved over it just now: theirs stays, these bytes go beside it
            target = f"{rel.rsplit('.', 1)[0]}.{digest[:8]}.{ext}"
            base = await self._version(target)
            written = await self.rt.workspace.write_bytes(target, data, base, self.ctx.task_id, f"{key}/{base or 0}")
        return str(written["path"]), True

    # ---- the cards ------------------------------------------------------------------------------------------
    def _job_params(self, graph: Graph, st: NodeState, ordering: bool = True) -> tuple[str, dict[str, Any]]:
        """What the studio is asked for: (prompt, params). Inputs are known only once they are made; a node still
        waiting is quoted from its params alone (the price never depends on an input). ORDERING adds what only an
        order needs (the hash of the output it replaces)."""
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
        if output and ordering:
            target = self.root / output
            params["output"] = output
            params["output_base"] = hashlib.sha256(target.read_bytes()).hexdigest() if target.is_file() else None
            params["keep"] = True  # the result's bytes go to the results store too
        return prompt, params

    def _quote(self, graph: Graph, st: NodeState) -> float:
        """The node's price now: from what prices it only (size, seconds), as `_job_params` would ask for it."""
        p = graph.node(st.id).params
        if st.type == CLIP:
            shot = shot_of(st)
            return _price("video", float(p.get("seconds") or (shot.seconds if shot else None) or 3), CLIP_SIZE)
        if st.type == SOUND:
            durations = st.inputs.get("durations")
            total = sum(d or 0 for d in durations.payload) if durations and durations.payload else 0
            return _price("audio", float(p.get("seconds") or total or 5), None)
        return _price("image", None, SIZES.get(str(p.get("size")), SIZES["wide"]))

    def _to_make(self, states: dict[str, NodeState]) -> list[NodeState]:
        return [st for st in states.values() if st.type in STUDIO_KIND and not st.error
                and (st.state in TO_RUN or (st.state == "waiting"))]

    async def _gate(self, gate_id: str | None) -> Any:
        """An answered card by id (cached: an answer never changes), or None."""
        if not gate_id or gate_id == "auto":
            return None
        if gate_id not in _ANSWERED:
            async with self.rt.db.read() as conn:
                row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).first()
            if row is None or row.status == "pending":
                return row
            if len(_ANSWERED) >= 4096:
                _ANSWERED.clear()
            _ANSWERED[gate_id] = row
        return _ANSWERED[gate_id]

    async def _plan_of(self, approved: str | None) -> str | None:
        """The plan card an approval belongs to (a card beyond the plan names its plan), or "auto"."""
        if approved == "auto":
            return "auto"
        gate = await self._gate(approved)
        if gate is None:
            return None
        return str((gate.scope or {}).get("plan") or gate.id)

    async def _approved_amount(self, st: NodeState) -> float:
        gate = await self._gate(st.record.approved if st.record is not None else None)
        if gate is None:
            return float("inf")  # an `auto` approval: the budget check covered it
        items = {i.get("node"): i.get("amount", 0.0) for i in (gate.scope or {}).get("items", [])}
        return float(items.get(st.id) or 0.0)

    async def _authorise(self, graph: Graph, states: dict[str, NodeState]) -> Progress | bool:
        """The plan card for every paid node still to make that no approval covers, or — while a plan is open —
        a card for what would take the run past it: its Progress while it waits; True when approvals were just
        recorded, False when every node was covered already."""
        to_make = self._to_make(states)
        uncovered = [st for st in to_make if st.record is None or not st.record.approved]
        pending = [st for st in to_make if st.record is not None and st.record.approved]
        if not uncovered and not pending:
            return False
        quotes = {st.id: self._quote(graph, st) for st in uncovered + pending}
        if not uncovered:
            amounts = {st.id: await self._approved_amount(st) for st in pending}
            if all(quotes[i] <= amounts[i] + CENT for i in amounts):
                return False  # each node within what was approved for it: the run stays within the plan
        plan = await self._open_plan(states, pending)
        if plan is None:
            return await self._plan_card(graph, states, uncovered, quotes) if uncovered else False
        return await self._beyond(graph, states, plan, uncovered, pending, quotes)

    async def _open_plan(self, states: dict[str, NodeState], pending: list[NodeState]) -> Any:
        """This task's approved plan card of the run under way (approvals of it unspent, or its jobs in flight)."""
        ids = {await self._plan_of(st.record.approved) for st in pending}
        if not ids - {"auto", None}:
            live = [st.record.job_id for st in states.values()
                    if st.record is not None and st.record.status == "running" and st.record.job_id]
            if live:
                async with self.rt.db.read() as conn:
                    rows = (await conn.execute(select(s.jobs.c.params).where(s.jobs.c.id.in_(live)))).all()
                ids |= {(r.params or {}).get("plan") for r in rows}
        plans = [await self._gate(i) for i in ids - {"auto", None}]
        plans = [g for g in plans if g is not None and g.status == "approved" and g.task_id == self.ctx.task_id]
        return max(plans, key=lambda g: g.resolved_at or 0.0) if plans else None

    async def _unapplied_plan(self) -> Any:
        """This call's approved plan card whose approvals were never recorded (the graph changed since it was
        asked, so its question is not asked again): it still covers the nodes it named."""
        async with self.rt.db.read() as conn:
            gates = (await conn.execute(select(s.gates).where(
                s.gates.c.task_id == self.ctx.task_id, s.gates.c.tool_call_id == self.ctx.key,
                s.gates.c.dedupe_key.like(f"{PLAN}%"), s.gates.c.status == "approved")
                .order_by(s.gates.c.resolved_at.desc()))).all()
            for gate in gates:
                if (gate.scope or {}).get("graph") != self.path:
                    continue
                used = (await conn.execute(select(s.production_nodes.c.node_id).where(
                    s.production_nodes.c.approved == gate.id))).first() or (await conn.execute(
                    select(s.jobs.c.id).where(s.jobs.c.task_id == self.ctx.task_id,
                                              s.jobs.c.params["plan"].as_string() == gate.id))).first()
                if used is None:
                    return gate
        return None

    async def _plan_card(self, graph: Graph, states: dict[str, NodeState], uncovered: list[NodeState],
                         quotes: dict[str, float]) -> Progress | bool:
        answered = await self._unapplied_plan()
        named = set((answered.scope or {}).get("nodes", [])) if answered is not None else set()
        if named & {st.id for st in uncovered}:
            async with self.rt.db.write(durable=False) as conn:  # derived from the answered card: redone after a crash
                for st in uncovered:
                    if st.id in named:
                        await _upsert(conn, self.ws, self.path, st.id, st.type, approved=answered.id,
                                      task_id=self.ctx.task_id)
            return True
        items = []
        for st in uncovered:
            prompt, _ = self._job_params(graph, st, ordering=False)
            items.append((st, STUDIO_KIND[st.type], quotes[st.id], prompt))
        total = round(sum(i[2] for i in items), 2)
        signature = "|".join(  # a node made again under a fresh job key is asked for again
            f"{st.id}={st.key or (st.record.key if st.record else '')}{self._order_keys.get(st.id, '')}"
            for st, *_ in items)
        dedupe = f"{PLAN}{self.ctx.task_id}:{hashlib.sha1((self.path + signature).encode()).hexdigest()[:24]}"
        currency = self.rt.budget.currency
        lang = await self.language()
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
                n, money = len(items), {"total": f"{total:.2f}", "currency": currency}
                what = message("production.plan_what_one" if n == 1 else "production.plan_what", lang, n=n)
                redo = message("production.plan_redo", lang, n=len(stale), nodes=", ".join(stale[:6])) if stale else ""
                refs = references_note(self.rt.studio.provider, lang)
                question = message("production.plan_question", lang, what=what, graph=self.path, redo=redo,
                                   refs=refs, **money)
                why = await plan_why(conn, self.rt.budget, autonomy=task.autonomy, amount=total, lang=lang)
                question = f"{question}\n{why}"  # why it asks, on a line of its own (what governance found)
                scope = {"graph": self.path, "role": "plan", "nodes": [st.id for st, *_ in items], "amount": total,
                         "keys": [f"{dedupe}/{st.id}" for st, *_ in items],
                         "items": [{"key": f"{dedupe}/{st.id}", "node": st.id, "kind": kind, "amount": amount,
                                    "prompt": prompt[:120]} for st, kind, amount, prompt in items],
                         "description": message("production.plan_description", lang, what=what, **money),
                         "references": refs, "why": why}
                options = [{"label": message("production.plan_approve", lang, **money),
                            "consequence": message("production.plan_approve_then", lang, **money)},
                           {"label": message("production.plan_decline", lang),
                            "consequence": message("production.plan_decline_then", lang)}]
                gate = await open_gate(conn, task_id=task.id, kind="spend", dedupe_key=dedupe,
                                       turn_id=self.ctx.claim.turn_id, tool_call_id=self.ctx.key, question=question,
                                       options=options, scope=scope,
                                       continues=message("production.plan_continues", lang))
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

    async def _beyond(self, graph: Graph, states: dict[str, NodeState], plan: Any, uncovered: list[NodeState],
                      pending: list[NodeState], quotes: dict[str, float]) -> Progress | bool:
        """The run under PLAN would spend what was charged under it so far plus the quotes of what is still to
        make: beyond the approved amount (the plan's and its cards' beyond it), one card asks for the excess only,
        naming the nodes that cause it. Within it, nodes added or made again are covered by the plan."""
        budget, spent = await self._plan_money(plan)
        excess = round(spent + sum(quotes.values()) - budget, 2)
        if excess < CENT:
            if not uncovered:
                return False
            async with self.rt.db.write(durable=False) as conn:  # within the approved amount: the plan covers them
                for st in uncovered:
                    await _upsert(conn, self.ws, self.path, st.id, st.type, approved=plan.id, task_id=self.ctx.task_id)
            return True
        dearer = [st for st in pending if quotes[st.id] > await self._approved_amount(st) + CENT]
        cause = sorted({st.id for st in uncovered + dearer}) or sorted(st.id for st in pending)
        call = hashlib.sha1(f"{self.path}\x00{self.ctx.key}".encode()).hexdigest()[:12]
        signature = hashlib.sha1(",".join(cause).encode()).hexdigest()[:16]
        base = f"{BEYOND}{self.ctx.task_id}:{call}:{signature}"
        async with self.rt.db.read() as conn:
            asked = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key.like(f"{base}:%"))
                                        .order_by(s.gates.c.created_at))).all()
        if asked and asked[-1].status not in ("pending", "approved"):  # declined: those nodes stay unmade
            return Progress(graph, states, gate=asked[-1].id, declined=True, held=list(cause))
        # an approved card that still leaves an excess was for less than is needed now: a new card for the rest
        dedupe = f"{base}:{len(asked) - 1 if asked and asked[-1].status == 'pending' else len(asked)}"
        lang, currency = await self.language(), self.rt.budget.currency
        nodes = describe(states, cause, lang)
        money = {"amount": f"{excess:.2f}", "currency": currency, "plan": f"{budget:.2f}", "nodes": nodes,
                 "graph": self.path}
        question = message("production.beyond_question", lang, **money)
        options = [{"label": message("production.beyond_approve", lang, **money),
                    "consequence": message("production.beyond_approve_then", lang, **money)},
                   {"label": message("production.beyond_decline", lang),
                    "consequence": message("production.beyond_decline_then", lang, **money)}]
        scope = {"graph": self.path, "role": "beyond", "plan": plan.id, "nodes": cause, "amount": excess,
                 "planned": budget, "spent": round(spent, 2), "keys": [f"{dedupe}/{i}" for i in cause],
                 "items": [{"key": f"{dedupe}/{i}", "node": i, "kind": STUDIO_KIND[states[i].type],
                            "amount": quotes[i]} for i in cause],
                 "description": message("production.beyond_scope", lang, **money)}
        async with self.rt.ledger.fenced(self.ctx.claim) as conn:
            gate = await open_gate(conn, task_id=self.ctx.task_id, kind="spend", dedupe_key=dedupe,
                                   turn_id=self.ctx.claim.turn_id, tool_call_id=self.ctx.key, question=question,
                                   options=options, scope=scope, continues=message("production.beyond_continues", lang))
            if gate.status == "pending" and (gate.scope or {}).get("amount") != excess:  # the excess moved: one card
                await conn.execute(update(s.gates).where(s.gates.c.id == gate.id, s.gates.c.status == "pending")
                                   .values(question=question, options=options, scope=scope))
                gate = (await conn.execute(select(s.gates).where(s.gates.c.id == gate.id))).one()
        if gate.status == "pending":
            return Progress(graph, states, gate=gate.id)
        if gate.status != "approved":
            return Progress(graph, states, gate=gate.id, declined=True, held=list(cause))
        return True  # approved at once (answered elsewhere meanwhile): its amount now counts in the plan's money

    async def _plan_money(self, plan: Any) -> tuple[float, float]:
        """(approved: the plan's amount and its approved cards beyond it; charged so far by orders under it)."""
        async with self.rt.db.read() as conn:
            beyond = (await conn.execute(select(s.gates.c.scope).where(
                s.gates.c.task_id == self.ctx.task_id, s.gates.c.dedupe_key.like(f"{BEYOND}%"),
                s.gates.c.status == "approved"))).all()
            charged = (await conn.execute(select(s.charges.c.amount, s.jobs.c.params).select_from(
                s.charges.join(s.jobs, s.charges.c.job_id == s.jobs.c.id)).where(
                s.jobs.c.workspace == self.ws, s.jobs.c.idempotency_key.like(f"{graph_prefix(self.path)}%"),
                s.charges.c.status == "charged"))).all()
        budget = float((plan.scope or {}).get("amount") or 0.0)
        budget += sum(float((r.scope or {}).get("amount") or 0.0) for r in beyond
                      if (r.scope or {}).get("plan") == plan.id)
        spent = sum(float(r.amount) for r in charged if (r.params or {}).get("plan") == plan.id)
        return round(budget, 2), round(spent, 2)

    async def _hold(self, states: dict[str, NodeState], held: set[str]) -> None:
        why = Said("production.declined_node").phrase()
        for node_id in held & states.keys():
            if states[node_id].state in TO_RUN or states[node_id].state == "waiting":
                states[node_id].error = why

    async def _clear_leftover_approvals(self) -> None:
        """An approval a finished graph did not spend (its node came out unchanged) covers nothing later."""
        async with self.rt.db.write() as conn:
            await conn.execute(update(s.production_nodes).where(
                s.production_nodes.c.workspace == self.ws, s.production_nodes.c.graph == self.path,
                s.production_nodes.c.approved.is_not(None)).values(approved=None))

    # ---- ordering -------------------------------------------------------------------------------------------
    async def _order(self, graph: Graph, states: dict[str, NodeState]) -> list[str]:
        """Order ready, approved paid nodes, up to the concurrency limit, in one fenced transaction (each job with
        its charge and the node's record); send them once it commits."""
        slots = self.limit - sum(1 for st in states.values() if st.state == "running")
        chosen: list[NodeState] = []
        for st in states.values():
            if len(chosen) >= slots:
                break
            if st.type in STUDIO_KIND and st.state in TO_RUN and st.key is not None and st.record \
                    and st.record.approved and not st.error:
                chosen.append(st)
        if not chosen:
            self._placed = []
            return []
        orders = []
        for st in chosen:
            prompt, params = self._job_params(graph, st)
            params["plan"] = await self._plan_of(st.record.approved)
            orders.append((st, prompt, params, self._order_keys.get(st.id) or job_key(self.path, st.id, st.key)))
        placed: list[tuple[str, str]] = []
        async with self.rt.ledger.fenced(self.ctx.claim) as conn:
            await hold_spending(conn)
            for st, prompt, params, key in orders:
                kind = STUDIO_KIND[st.type]
                found = (await conn.execute(select(s.jobs.c.id).where(
                    s.jobs.c.workspace == self.ws, s.jobs.c.idempotency_key == key))).scalar()
                runs = st.record.runs
                if found is None:
                    found = await self.rt.studio.place(conn, replace(self.ctx, key=key), kind, prompt, params,
                                                       quote(kind, params), simulated_latency(kind, params, 0))
                    runs += 1
                await _upsert(conn, self.ws, self.path, st.id, st.type, key=st.key, status="running", job_id=found,
                              runs=runs, approved=None, error=None, task_id=self.ctx.task_id)
                placed.append((st.id, found))
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
        """The cut, written once per key; a cut of this key made before is put back (from the results store) rather
        than made again, unless its bytes are kept nowhere."""
        from ..studio.assembly import assemble  # PyAV: only when a cut is made

        clips = sorted(((int(p[4:]) if p[4:].isdigit() else 0, p), v) for p, v in st.inputs.items()
                       if p.startswith("clip") and isinstance(v.payload, str))
        sound = st.inputs.get("audio")
        output = str(graph.node(st.id).params.get("output") or f"{Path(self.path).stem}.mp4")
        key = job_key(self.path, st.id, st.key or "")
        async with self.rt.db.read() as conn:
            made = (await conn.execute(select(s.object_versions.c.path, s.object_versions.c.hash,
                                              s.object_versions.c.idempotency_key).where(or_(
                s.object_versions.c.idempotency_key == key, s.object_versions.c.idempotency_key.like(f"{key}/m%")))
                .order_by(s.object_versions.c.created_at))).all()
        made = [v for v in made if v.idempotency_key == key or v.idempotency_key[len(key) + 2:].isdigit()]
        already, restored = None, False
        if made:
            last = made[-1]
            already, restored = await self._restore(last.path, last.hash, last.path.rsplit(".", 1)[-1], f"{key}/back")
        wrote = already is None
        if wrote:
            sources = [self.root / v.payload for _, v in clips]
            audio = self.root / sound.payload if sound is not None and isinstance(sound.payload, str) else None
            wanted = output.rsplit(".", 1)[-1].lower()
            film = await asyncio.to_thread(assemble, sources, audio, fmt=wanted if wanted in ("mp4", "webp") else None)
            await asyncio.to_thread(keep_result, self.root, film.data, film.format)
            target = output if output.lower().endswith(f".{film.format}") else f"{output.rsplit('.', 1)[0]}.{film.format}"
            base = await self._version(target)
            written = await self.rt.workspace.write_bytes(target, film.data, base, self.ctx.task_id,
                                                          remake_key(key, len(made)) if made else key)
            already = written["path"]
        # a cut made now, or one a crash left unrecorded, counts; one put back (an edit reverted) does not
        counted = wrote or (not restored and (st.record is None or st.record.key != st.key))
        runs = (st.record.runs if st.record else 0) + (1 if counted else 0)
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
        lang = await self.language()
        question = str(node.params.get("question")
                       or message("production.review_question", lang, node=node.label or st.id))
        async with self.rt.ledger.fenced(self.ctx.claim) as conn:
            gate = await open_gate(conn, task_id=self.ctx.task_id, kind="question", dedupe_key=dedupe,
                                   turn_id=self.ctx.claim.turn_id, tool_call_id=self.ctx.key, question=question,
                                   options=[{"label": message("production.review_continue", lang)},
                                            {"label": message("production.review_stop", lang)}],
                                   scope={"graph": self.path, "node": st.id})
            if gate.status == "pending":
                return Progress(graph, states, gate=gate.id)
            status = "done" if gate.status == "approved" else "declined"
            await _upsert(conn, self.ws, self.path, st.id, st.type, key=st.key, status=status, task_id=self.ctx.task_id,
                          error=None if status == "done" else column_text(Said("production_error.review_stopped")))
        return st.id
