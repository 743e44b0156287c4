"""The state document of `lomo inspect --json` (CONTRACTS §4) and the run-once report."""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select

from ..store import schema as s
from ..store.engine import Database


def iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="milliseconds")


async def state_document(db: Database) -> dict[str, Any]:
    async with db.read() as conn:
        async def rows(table: Any, order: Any) -> list[Any]:
            return list((await conn.execute(select(table).order_by(order))).all())

        tasks = await rows(s.tasks, s.tasks.c.created_at)
        turns = await rows(s.turns, s.turns.c.created_at)
        calls = await rows(s.tool_calls, s.tool_calls.c.started_at)
        gates = await rows(s.gates, s.gates.c.created_at)
        inbox = await rows(s.inbox, s.inbox.c.sent_at)
        objects = await rows(s.objects, s.objects.c.path)
        events = await rows(s.events, s.events.c.id)
        extra = await _optional(conn)
        from ..memory.listing import inspect_section

        memories = await inspect_section(conn)
    doc: dict[str, Any] = {
        "tasks": [{"id": t.id, "kind": t.kind, "status": t.status, "title": t.title, "epoch": t.epoch,
                   "goal": t.goal, "language": t.language, "archived": bool(t.archived),
                   "status_reason": t.status_reason, "created_at": iso(t.created_at),
                   "updated_at": iso(t.updated_at)} for t in tasks],
        "turns": [{"id": t.id, "task_id": t.task_id, "status": t.status, "epoch": t.epoch, "steps": t.steps,
                   "model_calls": t.model_calls, "checkpoint": t.checkpoint, "lease_owner": t.lease_owner,
                   "lease_expires": iso(t.lease_expires), "crash_count": t.crash_count, "reason": t.reason,
                   "wait_kind": t.wait_kind, "wait_ref": t.wait_ref, "wait_refs": t.wait_refs} for t in turns],
        "tool_calls": [{"id": c.id, "turn_id": c.turn_id, "step": c.step, "seq": c.seq, "name": c.name,
                        "status": c.status, "idempotency_key": c.idempotency_key, "executions": c.executions,
                        "epoch": c.epoch, "side_effect": c.side_effect, "arguments": c.arguments,
                        "result": c.result} for c in calls],
        "jobs": extra.get("jobs", []),
        "charges": extra.get("charges", []),
        "gates": [{"id": g.id, "task_id": g.task_id, "kind": g.kind, "status": g.status, "question": g.question,
                   "options": g.options, "scope": g.scope, "continues": g.continues,
                   "created_at": iso(g.created_at), "resolution": g.resolution, "resolved_by": g.resolved_by}
                  for g in gates],
        "inbox": [{"id": m.id, "task_id": m.task_id, "text": m.text, "status": m.status, "source": m.source,
                   "consumed_turn": m.consumed_turn, "consumed_step": m.consumed_step, "sent_at": iso(m.sent_at)}
                  for m in inbox],
        "objects": [{"path": o.path, "version": o.version, "kind": o.kind, "size": o.size, "deleted": bool(o.deleted),
                     "last_author": o.last_author} for o in objects],
        "memories": memories,
        "events": [dict({"type": e.type, "at": iso(e.at), "task_id": e.task_id, "turn_id": e.turn_id},
                        **(e.data or {})) for e in events],
    }
    return doc


async def _optional(conn: Any) -> dict[str, list[dict[str, Any]]]:
    """Sections whose tables belong to later subsystems (studio); empty until those exist."""
    out: dict[str, list[dict[str, Any]]] = {}
    jobs = getattr(s, "jobs", None)
    if jobs is not None:
        out["jobs"] = [{"id": j.id, "task_id": j.task_id, "kind": j.kind, "status": j.status,
                        "idempotency_key": j.idempotency_key, "provider_job_id": j.provider_job_id,
                        "artifact_path": j.artifact_path, "progress": j.progress, "cost": j.cost}
                       for j in (await conn.execute(select(jobs).order_by(jobs.c.created_at))).all()]
    charges = getattr(s, "charges", None)
    if charges is not None:
        out["charges"] = [{"id": c.id, "job_id": c.job_id, "amount": c.amount, "idempotency_key": c.idempotency_key,
                           "status": c.status}
                          for c in (await conn.execute(select(charges).order_by(charges.c.created_at))).all()]
    return out


async def run_report(db: Database, since: float, errors: list[str], quiescent: bool) -> dict[str, Any]:
    """What happened in this run: each task touched, its latest reply, pending gates."""
    async with db.read() as conn:
        tasks = (await conn.execute(select(s.tasks).where(s.tasks.c.updated_at >= since).order_by(
            s.tasks.c.created_at))).all()
        out_tasks = []
        for task in tasks:
            replies = (await conn.execute(select(s.messages.c.content).where(
                s.messages.c.task_id == task.id, s.messages.c.role == "assistant", s.messages.c.created_at >= since,
                s.messages.c.content.is_not(None)).order_by(s.messages.c.id))).scalars().all()
            artifacts = (await conn.execute(select(s.objects.c.path, s.objects.c.version).join(
                s.task_objects, s.task_objects.c.object_id == s.objects.c.id).where(
                s.task_objects.c.task_id == task.id, s.task_objects.c.role == "output"))).all()
            out_tasks.append({"id": task.id, "kind": task.kind, "title": task.title, "status": task.status,
                              "reason": task.status_reason, "replies": list(replies),
                              "artifacts": [{"path": a.path, "version": a.version} for a in artifacts]})
        gates = (await conn.execute(select(s.gates).where(s.gates.c.status == "pending"))).all()
    return {"quiescent": quiescent, "errors": errors, "tasks": out_tasks,
            "gates": [{"id": g.id, "task_id": g.task_id, "kind": g.kind, "question": g.question,
                       "options": g.options} for g in gates]}


def render_report(report: dict[str, Any]) -> str:
    """The human run-once report."""
    lines = []
    for task in report["tasks"]:
        head = f"● {task['title']} [{task['kind']}, {task['status']}] {task['id']}"
        lines.append(head)
        for reply in task["replies"]:
            lines.extend(f"    {line}" for line in reply.splitlines())
        for artifact in task["artifacts"]:
            lines.append(f"    ↳ {artifact['path']} (v{artifact['version']})")
        if task["reason"] and task["status"] in ("failed", "stopped", "paused"):
            lines.append(f"    reason: {task['reason']}")
    if report["gates"]:
        lines.append("")
        lines.append(f"Waiting for you ({len(report['gates'])}):")
        for gate in report["gates"]:
            options = " / ".join(f"{i}. {o['label']}" for i, o in enumerate(gate["options"], 1))
            lines.append(f"  ? {gate['question']}  [{options}]  → lomo approve {gate['id']} --option N")
    if not report["quiescent"]:
        lines.append("Still working when --max-wait ran out; run again to continue.")
    return "\n".join(lines) if lines else "Nothing to do."
