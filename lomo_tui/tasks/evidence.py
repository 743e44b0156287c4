"""Evidence for checklist steps (DESIGN J2) and the verified transition that moves a step (J4, G3).

A step moves to `done` only here, and only when its result was validated against the step (`tasks.verify`):
the sources that show it — a finished job, an object version this task made, the creator's answer, a read
of a file — are each a `step_evidence` row with its time, the object revision it applies to, the goal
revision the step was judged under, and an expiry where it has one. A claim that points at nothing, or at
something that is not what the step promised, moves nothing: the caller hears what is missing.

Evidence goes stale when what it points at changes outside the task's own work — the creator saves a new
version of the poster the step made, deletes it, or the evidence expires. `why_stale` says so for the
checklist and the card at once; `revalidate` (the runtime's READ phase, before a task acts) checks the step
again against what is there now: still good → new evidence on the new version, the step stays done;
not good → the step is re-opened, with the reason in its evidence line.

Each accepted completion writes its phases as events — `transition_executed`, `transition_validated` (or
`transition_rejected`), `transition_written`, `transition_accounted` — after the read/decide/claim events
`tasks.transition` records for the step that ordered the work.
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update

from .. import clock
from ..base.ids import new_id
from ..errors import Phrase, Said, worded
from ..language import LANGUAGES, message, template
from ..store import schema as s
from . import checklist, verify

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

SOURCES = ("job", "object_version", "creator_answer", "read")
MADE = ("job", "object_version")  # sources that point at a file


@dataclass
class Source:
    """One thing that shows a step is done."""

    kind: str  # job | object_version | creator_answer | read
    path: str | None = None
    object_id: str | None = None
    version: int | None = None
    job_id: str | None = None
    gate_id: str | None = None
    tool_call_id: str | None = None
    produced_at: float = 0.0
    expires_at: float | None = None
    order: dict[str, Any] = field(default_factory=dict)  # a job's params: what was ordered

    def describe(self, lang: str = "en") -> str:
        """What it is, in LANG ("poster.png v2", "read notes.md v3", "the creator's answer (gate id)")."""
        if self.kind in MADE:
            return f"{self.path} v{self.version}"
        if self.kind == "read":
            return message("step_check.source_read", lang, path=self.path, version=self.version)
        return message("step_check.source_answer", lang, gate=self.gate_id)


@dataclass
class Verdict:
    ok: bool
    sources: list[Source]
    checks: list[dict[str, Any]]
    problems: list[str]  # each a `Phrase`: English for the model and the record, worded for the creator
    promise: verify.Promise


# ---- the step as stored --------------------------------------------------------------------------------------
async def _step(conn: AsyncConnection, item_id: str) -> Any:
    return (await conn.execute(select(s.checklist).where(s.checklist.c.id == item_id))).one()


def _args(row: Any) -> dict[str, Any]:
    args = row.args
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = {}
    return args if isinstance(args, dict) else {}


def _result(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _opened_at(row: Any) -> float:
    """When the step last became open: when it was planned, or re-opened (its evidence line says so)."""
    return row.updated_at if (row.evidence or "").startswith(checklist.REOPENED) else row.created_at


# ---- gathering what a claim points at ------------------------------------------------------------------------
async def _object_source(conn: AsyncConnection, scope: Any, rel: str) -> Source | None:
    row = (await conn.execute(select(s.objects.c.id, s.objects.c.version, s.objects.c.path).where(
        scope, s.objects.c.path == rel))).first()
    if row is None:
        return None
    made = (await conn.execute(select(s.object_versions.c.created_at).where(
        s.object_versions.c.object_id == row.id, s.object_versions.c.version == row.version))).scalar()
    return Source("object_version", row.path, row.id, row.version, produced_at=made or clock.now())


async def job_sources(conn: AsyncConnection, task_id: str, item_id: str) -> list[Source]:
    """The finished jobs the task ordered for the step, with the object version each delivered."""
    out = []
    for job in (await conn.execute(select(s.jobs).where(s.jobs.c.task_id == task_id, s.jobs.c.status == "done")
                                   .order_by(s.jobs.c.finished_at))).all():
        params = job.params or {}
        if params.get("step") != item_id or not job.artifact_path:
            continue
        version = (await conn.execute(select(s.object_versions.c.object_id, s.object_versions.c.version).where(
            s.object_versions.c.idempotency_key == job.idempotency_key))).first()
        if version is None:
            continue
        out.append(Source("job", job.artifact_path, version.object_id, version.version, job_id=job.id,
                          produced_at=job.finished_at or job.updated_at, order={"kind": job.kind, **params}))
    return out


async def _read_source(conn: AsyncConnection, task_id: str, tool: str, since: float) -> Source | None:
    """The task's latest successful read with TOOL since SINCE (the version it read)."""
    row = (await conn.execute(select(s.tool_calls.c.id, s.tool_calls.c.result, s.tool_calls.c.finished_at).join(
        s.turns, s.turns.c.id == s.tool_calls.c.turn_id).where(
        s.turns.c.task_id == task_id, s.tool_calls.c.name == tool, s.tool_calls.c.status == "done",
        s.tool_calls.c.started_at >= since).order_by(s.tool_calls.c.finished_at.desc()).limit(1))).first()
    if row is None:
        return None
    result = _result(row.result)
    path, version = result.get("path"), result.get("version")
    obj = (await conn.execute(select(s.objects.c.id).where(s.objects.c.path == path,
                                                             s.objects.c.deleted.is_(False)))).scalar()
    if not path or obj is None:
        return None
    return Source("read", path, obj, int(version) if isinstance(version, int) else None, tool_call_id=row.id,
                  produced_at=row.finished_at or clock.now())


async def _answer_source(conn: AsyncConnection, task_id: str, since: float) -> Source | None:
    """The creator's latest answer to one of the task's questions since SINCE."""
    row = (await conn.execute(select(s.gates).where(
        s.gates.c.task_id == task_id, s.gates.c.kind == "question", s.gates.c.status == "approved",
        s.gates.c.resolved_at >= since, s.gates.c.tool_call_id.is_not(None)).order_by(
        s.gates.c.resolved_at.desc()).limit(1))).first()
    if row is None or str(row.resolved_by or "").startswith("lomo"):
        return None
    return Source("creator_answer", gate_id=row.id, produced_at=row.resolved_at,
                  expires_at=answer_expiry(row.scope, row.resolved_at))


def answer_expiry(scope: Any, answered_at: float | None) -> float | None:
    """When a creator's answer stops holding (J2): a question asked with `valid_minutes` (a date, a price, an
    availability — true for a while) gives an answer that expires that long after it was given; others never."""
    minutes = (scope or {}).get("valid_minutes") if isinstance(scope, dict) else None
    if not isinstance(minutes, (int, float)) or minutes <= 0 or answered_at is None:
        return None
    return float(answered_at) + float(minutes) * 60


async def claimed_sources(conn: AsyncConnection, scope: Any, task_id: str, item_id: str,
                          artifacts: list[str]) -> tuple[list[Source], list[str]]:
    """What a completion claim points at: the files it names, else the step's finished jobs, its read or the
    creator's answer. Returns (sources, problems with the names given)."""
    row = await _step(conn, item_id)
    problems: list[str] = []
    sources: list[Source] = []
    for rel in dict.fromkeys(a for a in artifacts if a):
        found = await _object_source(conn, scope, rel)
        if found is None:
            problems.append(_said("not_in_workspace", path=rel))
        else:
            sources.append(found)
    if artifacts:
        return sources, problems
    sources = await job_sources(conn, task_id, item_id)
    promised = verify.PROMISED_KIND.get(row.tool or "")
    since = _opened_at(row)
    if not sources and promised == "read":
        found = await _read_source(conn, task_id, row.tool, since)
        sources = [found] if found else []
    if not sources and promised in ("answer", None):
        found = await _answer_source(conn, task_id, since)
        sources = [found] if found else []
    return sources, problems


# ---- judging -------------------------------------------------------------------------------------------------
async def judge(conn: AsyncConnection, root: Path, task_id: str, item_id: str, sources: list[Source], *,
                revalidation: bool = False) -> Verdict:
    """Validate SOURCES against the step: each file exists and is what the step promised (kind, size, length,
    count), is a version this task made (not the creator's or another task's, unless re-validating), and does
    not already show another step; a document step's version is a real change."""
    row = await _step(conn, item_id)
    order = next((src.order for src in sources if src.kind == "job"), None)
    promise = verify.promise_of(row.tool, _args(row), order)
    problems: list[str] = []
    checks: list[dict[str, Any]] = []
    if not sources:
        problems.append(_missing(promise))
    made = 0
    for src in sources:
        if src.kind in MADE:
            found = await _check_made(conn, root, task_id, item_id, src, promise, revalidation)
            checks.append(found[0])
            problems += found[1]
            made += not found[1]
        elif src.kind == "read":
            checks.append({"read": src.path, "version": src.version})
            if promise.kind not in ("read", None):
                problems.append(_said("read_is_not", path=src.path, kind=verify.a_kind(promise.kind)))
        elif src.kind == "creator_answer":
            checks.append({"answer": src.gate_id})
            if promise.kind in verify.MEDIA or promise.kind in verify.CHANGES:
                problems.append(_said("answer_is_not", kind=verify.a_kind(promise.kind)))
    if sources and promise.count > 1 and made < promise.count:
        problems.append(_said("too_few", count=promise.count, made=made))
    return Verdict(not problems, sources, checks, problems, promise)


def _said(key: str, /, **fields: Any) -> Phrase:
    return Phrase(Said(f"step_check.{key}", fields))


def _missing(promise: verify.Promise) -> str:
    if promise.kind == "read":
        return _said("no_read")
    if promise.kind == "answer":
        return _said("no_answer")
    return _said("no_file", kind=verify.a_kind(promise.kind) if promise.kind else _said("a_result"))


async def _check_made(conn: AsyncConnection, root: Path, task_id: str, item_id: str, src: Source,
                      promise: verify.Promise, revalidation: bool) -> tuple[dict[str, Any], list[str]]:
    version = (await conn.execute(select(s.object_versions).where(
        s.object_versions.c.object_id == src.object_id, s.object_versions.c.version == src.version))).first()
    if version is None:
        return {"path": src.path}, [_said("not_recorded", path=src.path, version=src.version)]
    problems: list[str] = []
    if not revalidation and (version.author != "agent" or version.task_id != task_id):
        who = "by_creator" if version.author == "creator" else "by_other_task"
        problems.append(_said(f"made_{who}", path=src.path, version=src.version))
    if not revalidation:
        other = (await conn.execute(select(s.checklist.c.position).join(
            s.step_evidence, s.step_evidence.c.item_id == s.checklist.c.id).where(
            s.step_evidence.c.object_id == src.object_id, s.step_evidence.c.version == src.version,
            s.step_evidence.c.status == "valid", s.step_evidence.c.item_id != item_id,
            s.step_evidence.c.kind != "read",  # a step that read the file did not make that version
            s.checklist.c.state == "done", s.checklist.c.task_id == task_id).limit(1))).scalar()
        if other is not None:
            problems.append(_said("shows_other_step", path=src.path, version=src.version, step=other))
    if promise.kind in verify.CHANGES and src.version and src.version > 1:
        before = (await conn.execute(select(s.object_versions.c.hash).where(
            s.object_versions.c.object_id == src.object_id, s.object_versions.c.version == src.version - 1))).scalar()
        if before == version.hash:
            problems.append(_said("unchanged", path=src.path, version=src.version, before=src.version - 1))
    facts = await asyncio.to_thread(verify.inspect, root, src.path)
    problems += verify.problems(promise, facts)
    return dict(facts.to_dict(), version=src.version), problems


# ---- writing the transition ----------------------------------------------------------------------------------
async def _goal_version(conn: AsyncConnection, task_id: str) -> int | None:
    return (await conn.execute(select(func.max(s.task_goal_versions.c.version)).where(
        s.task_goal_versions.c.task_id == task_id))).scalar()


async def _event(conn: AsyncConnection, type_: str, task_id: str, turn_id: str | None, **data: Any) -> None:
    await conn.execute(insert(s.events).values(type=type_, at=clock.now(), task_id=task_id, turn_id=turn_id,
                                               data=data))


def _effects(sources: list[Source]) -> list[dict[str, Any]]:
    out = []
    for src in sources:
        ref = {"kind": src.kind}
        for key in ("job_id", "gate_id", "tool_call_id", "path", "version"):
            if getattr(src, key) is not None:
                ref[key] = getattr(src, key)
        out.append(ref)
    return out


async def accept(conn: AsyncConnection, task_id: str, item_id: str, verdict: Verdict, *, evidence: str,
                 note: str = "", turn_id: str | None = None, origin: str = "step") -> str:
    """Write back a validated result: evidence rows, the step done with its linked artifacts, and the phase
    events (executed → validated → written → accounted). Returns the transition id."""
    t = clock.now()
    transition = new_id("trn")
    goal_version = await _goal_version(conn, task_id)
    if origin == "step":
        await _event(conn, "transition_executed", task_id, turn_id, item=item_id, effects=_effects(verdict.sources))
        await _event(conn, "transition_validated", task_id, turn_id, item=item_id,
                     promise=verdict.promise.describe(), checks=verdict.checks)
    rows = []
    for src in verdict.sources:
        row_id = new_id("ev")
        rows.append(row_id)
        await conn.execute(insert(s.step_evidence).values(
            id=row_id, task_id=task_id, item_id=item_id, transition=transition, origin=origin, kind=src.kind,
            job_id=src.job_id, gate_id=src.gate_id, tool_call_id=src.tool_call_id, object_id=src.object_id,
            version=src.version, goal_version=goal_version, checks=verdict.checks, note=note[:2000],
            status="valid", produced_at=src.produced_at or t, expires_at=src.expires_at))
    before = (await _step(conn, item_id)).state
    linked = [(src.object_id, src.version) for src in verdict.sources if src.kind in MADE and src.object_id]
    await checklist.complete(conn, item_id, evidence=evidence, objects=linked)
    if origin == "step":  # a re-validation is the runtime's check, not a step of work: evidence_revalidated
        await _event(conn, "transition_written", task_id, turn_id, item=item_id, transition=transition,
                     state_before=before, state_after="done", evidence=rows, goal_version=goal_version)
        await _account(conn, task_id, turn_id, item_id, transition, verdict.sources)
    return transition


async def _account(conn: AsyncConnection, task_id: str, turn_id: str | None, item_id: str, transition: str,
                   sources: list[Source]) -> None:
    """ACCOUNT: the model calls and studio charges since the task's previous accepted transition go to this one."""
    since = (await conn.execute(select(func.max(s.events.c.at)).where(
        s.events.c.task_id == task_id, s.events.c.type == "transition_accounted"))).scalar() or 0.0
    calls = (await conn.execute(select(s.model_calls.c.prompt_tokens, s.model_calls.c.completion_tokens,
                                       s.model_calls.c.cost).where(
        s.model_calls.c.task_id == task_id, s.model_calls.c.created_at > since))).all()
    jobs = [src.job_id for src in sources if src.job_id]
    spend = 0.0
    if jobs:
        spend = float((await conn.execute(select(func.coalesce(func.sum(s.charges.c.amount), 0.0)).where(
            s.charges.c.job_id.in_(jobs), s.charges.c.status == "charged"))).scalar() or 0.0)
    priced = [c.cost for c in calls if c.cost is not None]
    await _event(conn, "transition_accounted", task_id, turn_id, item=item_id, transition=transition,
                 model_calls=len(calls), tokens=sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls),
                 cost=round(sum(priced), 6) if priced else None, spend=round(spend, 4))


async def refuse(conn: AsyncConnection, task_id: str, item_id: str, verdict: Verdict, *,
                 turn_id: str | None = None, claimed_by: str = "agent") -> str:
    """Record a result that did not validate (the step does not move). Returns the reason in one line."""
    reason = "; ".join(verdict.problems)
    await _event(conn, "transition_executed", task_id, turn_id, item=item_id, effects=_effects(verdict.sources))
    await _event(conn, "transition_rejected", task_id, turn_id, item=item_id, promise=verdict.promise.describe(),
                 problems=verdict.problems, claimed_by=claimed_by, checks=verdict.checks)
    return reason


async def complete_verified(conn: AsyncConnection, root: Path, task_id: str, item_id: str, sources: list[Source],
                            *, evidence: str, note: str = "", turn_id: str | None = None,
                            claimed_by: str = "agent") -> Verdict:
    """VALIDATE, then WRITE BACK and ACCOUNT — or refuse. The one way a step becomes done."""
    verdict = await judge(conn, root, task_id, item_id, sources)
    if verdict.ok:
        await accept(conn, task_id, item_id, verdict, evidence=evidence, note=note, turn_id=turn_id)
    else:
        await refuse(conn, task_id, item_id, verdict, turn_id=turn_id, claimed_by=claimed_by)
    return verdict


async def claim(conn: AsyncConnection, workspace: Any, task_id: str, item_id: str, artifacts: list[str], *,
                note: str = "", turn_id: str | None = None) -> Verdict:
    """The model says a step is done (`complete_step`): find what it points at, validate, write back or refuse."""
    sources, problems = await claimed_sources(conn, workspace.scope, task_id, item_id, artifacts)
    if problems:
        row = await _step(conn, item_id)
        verdict = Verdict(False, sources, [], problems, verify.promise_of(row.tool, _args(row)))
        await refuse(conn, task_id, item_id, verdict, turn_id=turn_id)
        return verdict
    lang = await _language(conn, task_id)  # the step's evidence line is the creator's to read
    shown = ", ".join(src.describe(lang) for src in sources)
    text = f"{note.strip()} ({shown})" if note.strip() and shown else note.strip() or shown
    return await complete_verified(conn, workspace.root, task_id, item_id, sources, evidence=text, note=note,
                                   turn_id=turn_id)


async def complete_by_job(conn: AsyncConnection, root: Path, job: Any, item_id: str, path: str, object_id: str,
                          version: int) -> Verdict:
    """A job ordered for a step delivered PATH vVERSION: validate it against the step, then write back."""
    src = Source("job", path, object_id, version, job_id=job.id, produced_at=clock.now(),
                 order={"kind": job.kind, **(job.params or {})})
    row = (await conn.execute(select(s.checklist.c.state).where(s.checklist.c.id == item_id))).first()
    if row is None or row.state not in checklist.OPEN:  # done already, or removed from the plan
        return Verdict(row is not None and row.state == "done", [src], [], [], verify.Promise(None))
    made = message("evidence.made", await _language(conn, job.task_id), path=path)
    return await complete_verified(conn, root, job.task_id, item_id, [src], evidence=made,
                                   turn_id=job.turn_id, claimed_by="studio")


async def _language(conn: AsyncConnection, task_id: str) -> str:
    return (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"


async def complete_by_answer(conn: AsyncConnection, gate: Any, item_id: str) -> bool:
    """A checkpoint the creator approved: their answer is the step's evidence."""
    answered = gate.resolved_at or clock.now()
    src = Source("creator_answer", gate_id=gate.id, produced_at=answered, expires_at=answer_expiry(gate.scope, answered))
    verdict = Verdict(True, [src], [{"answer": gate.id, "by": gate.resolved_by}], [],
                      verify.Promise("answer"))
    lang = await _language(conn, gate.task_id)
    by = gate.resolved_by or "creator"
    said = message("evidence.approved_you", lang) if by.startswith("creator") else \
        message("evidence.approved", lang, who=by)
    await accept(conn, gate.task_id, item_id, verdict, evidence=said, turn_id=gate.turn_id)
    return True


# ---- staleness and re-validation ------------------------------------------------------------------------------
async def stale(conn: AsyncConnection, task_id: str | None = None, now: float | None = None
                ) -> dict[str, tuple[str, list[Any]]]:
    """Done steps whose valid evidence no longer holds: item id → (why, the evidence rows concerned). Stale
    means the file it points at was deleted, the creator saved a newer version, or the evidence expired."""
    t = now if now is not None else clock.now()
    ev = s.step_evidence
    query = select(ev, s.objects.c.path.label("cur_path"), s.objects.c.version.label("cur_version"),
                   s.objects.c.deleted.label("gone"), s.tasks.c.language.label("lang")).join(
        s.checklist, s.checklist.c.id == ev.c.item_id).join(s.tasks, s.tasks.c.id == ev.c.task_id).outerjoin(
        s.objects, s.objects.c.id == ev.c.object_id).where(ev.c.status == "valid", s.checklist.c.state == "done")
    if task_id is not None:
        query = query.where(ev.c.task_id == task_id)
    found: dict[str, tuple[str, list[Any]]] = {}
    for row in (await conn.execute(query)).all():
        why, lang = "", row.lang or "en"
        if row.expires_at is not None and row.expires_at <= t:
            what = "answer" if row.kind == "creator_answer" else "evidence"
            why = message(f"evidence.expired_{what}", lang, at=_when(row.expires_at))
        elif row.object_id is not None and row.gone:
            why = message("evidence.deleted", lang, path=row.cur_path)
        elif row.object_id is not None and row.version is not None and (row.cur_version or 0) > row.version:
            creator = (await conn.execute(select(func.max(s.object_versions.c.version)).where(
                s.object_versions.c.object_id == row.object_id, s.object_versions.c.version > row.version,
                s.object_versions.c.author == "creator"))).scalar()
            if creator is not None and row.kind == "read" and await _built_on(conn, row, creator):
                creator = None  # the task has since written a version on top of the creator's: it saw their change
            if creator is not None:
                why = message("evidence.changed", lang, path=row.cur_path, old=row.version, new=row.cur_version)
        if why:
            reason, rows = found.get(row.item_id, (why, []))
            rows.append(row)
            found[row.item_id] = (reason, rows)
    return found


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


async def _built_on(conn: AsyncConnection, row: Any, creator_version: int) -> bool:
    """Whether the task that read ROW's file has since saved a version of it after the creator's newest one (an
    edit is refused unless it is based on the latest version, so that save took their change in: the flow drill
    read v1, the creator saved v2, the agent's node edit applied on v2 as v3 — reading again would redo work)."""
    mine = (await conn.execute(select(func.max(s.object_versions.c.version)).where(
        s.object_versions.c.object_id == row.object_id, s.object_versions.c.author == "agent",
        s.object_versions.c.task_id == row.task_id))).scalar()
    return mine is not None and mine > creator_version


async def why_stale(conn: AsyncConnection, task_id: str) -> dict[str, str]:
    """Done steps marked for re-validation, and why (for the checklist and the card)."""
    return {item: why for item, (why, _) in (await stale(conn, task_id)).items()}


async def reopened(conn: AsyncConnection, task_id: str) -> dict[str, str]:
    """Open steps that were re-opened, and why (their evidence line holds the reason)."""
    rows = (await conn.execute(select(s.checklist.c.id, s.checklist.c.evidence).where(
        s.checklist.c.task_id == task_id, s.checklist.c.state.in_(checklist.OPEN),
        s.checklist.c.evidence.like(f"{checklist.REOPENED}%")))).all()
    return {r.id: r.evidence for r in rows}


async def revalidate(db: Any, root: Path | None, task_id: str) -> list[dict[str, Any]]:
    """READ phase: check again every done step of TASK_ID whose evidence went stale (see `recheck`), in a write
    transaction of its own (nothing is written when nothing is stale)."""
    async with db.read() as conn:
        found = await stale(conn, task_id)
    if not found:
        return []
    async with db.write() as conn:
        return await recheck(conn, root, task_id)


async def recheck(conn: AsyncConnection, root: Path | None, task_id: str, *, by: str = "read"
                  ) -> list[dict[str, Any]]:
    """Check again, in the caller's transaction, every done step of TASK_ID whose evidence went stale. A step
    whose file still is what it promised (now the creator's version) stays done on new evidence; any other —
    its file deleted, broken, of the wrong kind, or evidence that expired — is re-opened, with the reason in its
    evidence line (`step_reopened`, data: item, why, by). ROOT: the workspace folder (None: the one the files
    are in). BY: who decided it (the READ phase, or a `run_decided` repair). Returns one entry per step
    ({"item", "outcome": "revalidated" | "reopened", "why"})."""
    out = []
    for item_id, (why, rows) in (await stale(conn, task_id)).items():
        t, task_lang = clock.now(), (rows[0].lang if rows else None) or "en"
        for row in rows:
            await conn.execute(update(s.step_evidence).where(s.step_evidence.c.id == row.id).values(
                status="stale", reason=why))
        live = [Source("object_version", r.cur_path, r.object_id, r.cur_version, produced_at=t)
                for r in rows if r.object_id is not None and not r.gone and r.kind in MADE]
        folder = root if root is not None or not live else await _root_of(conn, live[0].object_id)
        verdict = await judge(conn, folder, task_id, item_id, live, revalidation=True) if live and \
            folder is not None and len(live) == len(rows) else None
        step = await _step(conn, item_id)
        if verdict is not None and verdict.ok:
            where = ", ".join(f"{src.path} v{src.version}" for src in live)
            again = message("step_check.checked_again", task_lang, where=where)
            await accept(conn, task_id, item_id, verdict, origin="revalidation",
                         evidence=f"{_before_checked_again(step.evidence)}{again}")
            await _event(conn, "evidence_revalidated", task_id, None, item=item_id, why=why, on=where, by=by)
            out.append({"item": item_id, "outcome": "revalidated", "why": why})
            continue
        reason = why if verdict is None else worded([why, *verdict.problems], task_lang)  # the card's, the task's
        await conn.execute(update(s.checklist).where(s.checklist.c.id == item_id).values(
            state="pending", done_at=None, updated_at=t, evidence=f"{checklist.REOPENED} {reason}"))
        await _event(conn, "step_reopened", task_id, None, item=item_id, why=reason, by=by,
                     paths=sorted({r.cur_path for r in rows if r.cur_path}))
        task = (await conn.execute(select(s.tasks.c.status).where(s.tasks.c.id == task_id))).scalar()
        if task == "done":
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                status="idle", status_reason=message("evidence.step_reopened", task_lang, n=step.position, why=reason),
                updated_at=t))
        out.append({"item": item_id, "outcome": "reopened", "why": reason})
    return out


def _before_checked_again(evidence: str) -> str:
    """A revalidated step's evidence line without its earlier "· checked again on …" (in any language)."""
    for lang in LANGUAGES:
        marker = template("step_check.checked_again", lang).split("{where}")[0]
        evidence = evidence.split(marker)[0]
    return evidence


async def _root_of(conn: AsyncConnection, object_id: str | None) -> Path | None:
    """The workspace folder an object is in (for a caller that has no workspace of its own)."""
    found = (await conn.execute(select(s.workspaces.c.root).join(
        s.objects, s.objects.c.workspace_id == s.workspaces.c.id).where(s.objects.c.id == object_id))).scalar()
    return Path(found) if found else None


async def verified_since(conn: AsyncConnection, task_id: str, since: float) -> int:
    """Steps this task moved to done on verified evidence since SINCE (the stop check's progress, G3)."""
    return int((await conn.execute(select(func.count()).select_from(s.events).where(
        s.events.c.task_id == task_id, s.events.c.type == "transition_written", s.events.c.at >= since))).scalar()
        or 0)


async def records(conn: AsyncConnection, task_id: str) -> dict[str, list[dict[str, Any]]]:
    """Every evidence row of the task, per step, oldest first (for `lomo task show`)."""
    rows = (await conn.execute(select(s.step_evidence, s.objects.c.path).outerjoin(
        s.objects, s.objects.c.id == s.step_evidence.c.object_id).where(
        s.step_evidence.c.task_id == task_id).order_by(s.step_evidence.c.produced_at))).all()
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r.item_id, []).append({
            "source": r.kind, "origin": r.origin, "status": r.status, "reason": r.reason or None,
            "path": r.path, "version": r.version, "job_id": r.job_id, "gate_id": r.gate_id,
            "tool_call_id": r.tool_call_id, "goal_version": r.goal_version, "produced_at": r.produced_at,
            "expires_at": r.expires_at, "checks": r.checks})
    return out
