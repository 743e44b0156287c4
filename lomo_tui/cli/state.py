"""The state document of `lomo inspect --json` (CONTRACTS §4) and the run-once report."""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select

from ..context.usage import render_cache
from ..errors import Phrase, shown, worded
from ..store import schema as s
from ..store.engine import Database
from ..studio.words import error_saids, job_error


def iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="milliseconds")


async def state_document(db: Database, workspace_id: str | None = None) -> dict[str, Any]:
    """WORKSPACE_ID: list only that workspace's objects (every workspace's when None)."""
    async with db.read() as conn:
        async def rows(table: Any, order: Any) -> list[Any]:
            return list((await conn.execute(select(table).order_by(order))).all())

        tasks = await rows(s.tasks, s.tasks.c.created_at)
        turns = await rows(s.turns, s.turns.c.created_at)
        calls = await rows(s.tool_calls, s.tool_calls.c.started_at)
        gates = await rows(s.gates, s.gates.c.created_at)
        inbox = await rows(s.inbox, s.inbox.c.sent_at)
        objects = list((await conn.execute(select(s.objects).where(
            s.objects.c.workspace_id == workspace_id if workspace_id else s.objects.c.id.is_not(None)).order_by(
            s.objects.c.path))).all())
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
            jobs = (await conn.execute(select(s.jobs.c.id, s.jobs.c.kind, s.jobs.c.status, s.jobs.c.error).where(
                s.jobs.c.task_id == task.id, s.jobs.c.updated_at >= since).order_by(s.jobs.c.created_at))).all()
            saids = await error_saids(conn, [task.id]) if jobs else {}
            out_tasks.append({"id": task.id, "kind": task.kind, "title": task.title, "status": task.status,
                              "reason": task.status_reason, "replies": list(replies),
                              "artifacts": [{"path": a.path, "version": a.version} for a in artifacts],
                              "jobs": [{"id": j.id, "kind": j.kind, "status": j.status, "error": j.error,
                                        "error_text": job_error(j, saids, task.language or "en")}
                                       for j in jobs]})
        gates = (await conn.execute(select(s.gates).where(s.gates.c.status == "pending"))).all()
    return {"quiescent": quiescent, "errors": errors, "tasks": out_tasks,
            "gates": [{"id": g.id, "task_id": g.task_id, "kind": g.kind, "question": g.question,
                       "options": g.options} for g in gates]}


FAILED_JOB = {"failed": "failed", "expired": "expired", "unknown": "may or may not have been made",
              "cancelled": "was cancelled"}  # English; the catalogue's [cli] job_how_* word them


def _say(key: str, lang: str, **fields: Any) -> str:
    from ..language import message

    return message("cli." + key, lang, **fields)


def label(key: str, raw: str, lang: str) -> str:
    """The catalogue's label KEY ("tui_card.job_done") in LANG, or RAW for an id it does not word."""
    from ..language import template

    try:
        return template(key, lang)
    except KeyError:
        return raw


def padded(words: str, width: int) -> str:
    """WORDS and spaces to WIDTH terminal cells (a wide character takes two)."""
    from .wording import _width

    return words + " " * max(0, width - _width(words))


def task_head(task: dict[str, Any], lang: str) -> str:
    """"● Title [lightweight, idle] ID" with the kind and status in LANG (`[wording] kind_*`, `status_*`; an id
    the catalogue does not word stays as it is), and the main thread's title too."""
    from ..language import template

    def word(key: str, raw: str) -> str:
        try:
            return template(f"wording.{key}_{raw}", lang)
        except KeyError:
            return raw

    main = task["kind"] == "main" and task["title"] == "Main"
    title = template("wording.main_title", lang) if main else task["title"]
    return f"● {title} [{word('kind', task['kind'])}, {word('status', task['status'])}] {task['id']}"


def render_report(report: dict[str, Any], lang: str = "en") -> str:
    """The human run-once report, its own words in LANG (the creator's)."""
    lines = []
    for task in report["tasks"]:
        lines.append(task_head(task, lang))
        for reply in task["replies"]:
            lines.extend(f"    {line}" for line in reply.splitlines())
        for artifact in task["artifacts"]:
            lines.append(f"    ↳ {artifact['path']} (v{artifact['version']})")
        for job in task.get("jobs", []):
            if job["status"] in FAILED_JOB:
                why = job.get("error_text") or job["error"] or _say("no_reason", lang)
                lines.append("    " + _say("job_failed", lang, kind=job["kind"], why=why,
                                            how=_say(f"job_how_{job['status']}", lang)))
        if task["reason"] and task["status"] in ("failed", "stopped", "paused"):
            lines.append("    " + _say("reason", lang, reason=task["reason"]))
    if report["gates"]:
        lines.append("")
        lines.append(_say("waiting_n", lang, n=len(report["gates"])))
        for gate in report["gates"]:
            options = " / ".join(f"{i}. {o['label']}" for i, o in enumerate(gate["options"], 1))
            lines.append(f"  ? {gate['question']}  [{options}]  → lomo approve {gate['id']} --option N")
    if not report["quiescent"]:
        lines.append(_say("out_of_time", lang))
    return "\n".join(lines) if lines else _say("nothing", lang)


# ---- one task (`lomo task show`, CONTRACTS §7) -----------------------------------------------------------


async def task_document(db: Database, task_id: str) -> dict[str, Any]:
    """One task: brief, checklist with evidence, replies, artifacts, gates, jobs, spend, conversation."""
    from ..context.usage import cache_usage
    from ..errors import UnknownId
    from ..tasks import evidence, goals
    from ..tasks.checklist import items as checklist_items

    async with db.read() as conn:
        task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).first()
        if task is None:
            raise UnknownId.said("cli_error.no_task", id=task_id)
        checklist = (await conn.execute(select(s.checklist).where(
            s.checklist.c.task_id == task_id, s.checklist.c.state != "removed").order_by(
            s.checklist.c.position))).all()
        said = (await conn.execute(select(s.messages.c.content, s.messages.c.created_at).where(
            s.messages.c.task_id == task_id, s.messages.c.role == "assistant",
            s.messages.c.content.is_not(None), s.messages.c.content != "").order_by(s.messages.c.id))).all()
        inbox = (await conn.execute(select(s.inbox).where(
            s.inbox.c.task_id == task_id, s.inbox.c.status != "withdrawn").order_by(s.inbox.c.sent_at))).all()
        artifacts = (await conn.execute(select(s.objects.c.path, s.objects.c.version, s.objects.c.kind,
                                               s.objects.c.deleted).join(
            s.task_objects, s.task_objects.c.object_id == s.objects.c.id).where(
            s.task_objects.c.task_id == task_id, s.task_objects.c.role == "output").order_by(
            s.task_objects.c.updated_at))).all()
        gates = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task_id).order_by(
            s.gates.c.created_at))).all()
        jobs = (await conn.execute(select(s.jobs).where(s.jobs.c.task_id == task_id).order_by(
            s.jobs.c.created_at))).all()
        charges = (await conn.execute(select(s.charges.c.amount, s.charges.c.currency, s.charges.c.status).where(
            s.charges.c.task_id == task_id))).all()
        goal_versions = await goals.versions(conn, task_id)
        proofs = await evidence.records(conn, task_id)
        # why a step is to be checked again, re-opened or planned for an older goal: as the card says it
        why = {item.id: item.why for item in await checklist_items(conn, task_id)}
        cache = await cache_usage(conn, task_id)
        saids = await error_saids(conn, [task_id]) if jobs else {}
    from ..production.report import graph_states

    production = await graph_states(db, task_id)
    conversation = sorted(
        [{"role": "creator" if m.source in ("creator", "router") else m.source, "text": m.text, "at": m.sent_at,
          "id": m.id, "source": m.source}
         for m in inbox] + [{"role": "lomo", "text": m.content, "at": m.created_at} for m in said],
        key=lambda entry: entry["at"])
    spent = sum(c.amount for c in charges if c.status == "charged")
    return {
        "id": task.id, "kind": task.kind, "status": task.status, "title": task.title, "brief": task.brief,
        "goal": task.goal, "language": task.language, "autonomy": task.autonomy, "archived": bool(task.archived),
        "status_reason": task.status_reason, "created_at": iso(task.created_at), "updated_at": iso(task.updated_at),
        "checklist": [{"id": c.id, "title": c.title, "status": c.state, "evidence": c.evidence,
                       "why": why.get(c.id) or None,
                       "evidence_records": [dict(e, produced_at=iso(e["produced_at"]),
                                                 expires_at=iso(e["expires_at"]) if e["expires_at"] else None)
                                            for e in proofs.get(c.id, [])]} for c in checklist],
        "replies": [m.content for m in said],
        "artifacts": [a.path for a in artifacts if not a.deleted],
        "artifact_versions": [{"path": a.path, "version": a.version, "kind": a.kind} for a in artifacts
                              if not a.deleted],
        "gates": [dict({"id": g.id, "kind": g.kind, "status": g.status, "question": g.question, "options": g.options,
                        "resolution": g.resolution}, **_expiry(g, task.language or "en")) for g in gates],
        "jobs": [{"id": j.id, "kind": j.kind, "status": j.status, "prompt": j.prompt, "cost": j.cost,
                  "artifact_path": j.artifact_path, "error": j.error,  # English; error_text: the task's language
                  "error_text": job_error(j, saids, task.language or "en")} for j in jobs],
        "spend": {"amount": round(spent, 4), "currency": charges[0].currency if charges else "credits",
                  "refunded": round(sum(c.amount for c in charges if c.status == "refunded"), 4)},
        "conversation": [dict(entry, at=iso(entry["at"])) for entry in conversation],
        # why: in the task's language; why_said: Lomo's reason as catalogue text (null: the creator's own words)
        "goal_versions": [dict(v, at=iso(v["at"]), why=worded(v["why"], task.language or "en"),
                               why_said=v["why"].said.stored() if isinstance(v["why"], Phrase) else None)
                          for v in goal_versions],
        "production": production,
        "cache": cache,  # prompt-cache tokens of the task's model calls (E1)
    }


def _expiry(gate: Any, lang: str) -> dict[str, Any]:
    """An expired gate's why and what happened instead, in the task's language ({} for any other gate)."""
    from ..governance.gates import expiry_text

    if gate.status != "expired":
        return {}
    why, instead = expiry_text(gate.resolution, lang)
    return {"expired_reason": why or None, "expired_instead": instead or None}


CHECK_MARKS = {"done": "✓", "active": "▸", "skipped": "–", "pending": "○"}


def render_task(doc: dict[str, Any], lang: str = "en") -> str:
    """`lomo task show` for a person, its own words in LANG (the creator's)."""
    from ..language import message

    lines = [task_head(doc, lang)]
    if doc["status_reason"] and doc["status"] in ("failed", "stopped", "paused", "blocked"):
        lines.append("  " + _say("reason", lang, reason=doc["status_reason"]))
    if doc["brief"]:
        lines += ["", _say("brief", lang)] + [f"  {line}" for line in doc["brief"].splitlines()]
    if len(doc.get("goal_versions", ())) > 1:  # the goal or brief changed: say when, by whom and why
        lines += ["", _say("versions", lang)] + ["  " + _say("version", lang, **dict(
            v, who=label("goal_who." + v["who"].partition(":")[0], v["who"], lang),
            why=shown(v["why"], v.get("why_said"), lang))) for v in doc["goal_versions"]]
    if doc["checklist"]:
        lines += ["", _say("checklist", lang)]
        for item in doc["checklist"]:
            evidence = f" — {item['evidence']}" if item["evidence"] else ""
            lines.append(f"  {CHECK_MARKS.get(item['status'], '?')} {item['title']}{evidence}")
            if item.get("why") and item["status"] == "done":  # marked for re-validation (J2)
                lines.append("      ! " + message("evidence.check_again", lang, why=item["why"]))
            elif item.get("why"):  # re-opened by the runtime, or planned for an older goal
                lines.append(f"      ! {item['why']}")
    if doc["replies"]:
        lines += ["", _say("replies", lang)]
        for reply in doc["replies"]:
            lines += [f"  {line}" for line in reply.splitlines()] + [""]
        lines.pop()
    if doc["artifacts"]:
        lines += ["", _say("results", lang)] + [f"  ↳ {a['path']} (v{a['version']})" for a in doc["artifact_versions"]]
    pending = [g for g in doc["gates"] if g["status"] == "pending"]
    if pending:
        lines += ["", _say("waiting", lang)] + [f"  ? {g['question']}  → lomo approve {g['id']}" for g in pending]
    if doc["jobs"]:
        lines += ["", _say("jobs", lang)] + [f"  {padded(label('tui_card.job_' + j['kind'], j['kind'], lang), 6)} "
                                             f"{padded(label('tui_card.job_' + j['status'], j['status'], lang), 10)} "
                                             f"{j['prompt'][:60]}"
                                             + (f" — {j.get('error_text') or j['error']}" if j["error"] else "")
                                             for j in doc["jobs"]]
    for graph in doc.get("production", ()):
        lines += ["", _say("graph", lang, path=graph["path"])] + [
            f"  {padded(label('tui_task.node_' + n['state'], n['state'], lang), 8)} {n['id']:<14} {n['type']:<16} "
            f"{n['result'] or ''}"
            + (f" — {worded(n['error'], lang)}" if n["error"] else "") for n in graph["nodes"]]
        if graph.get("error"):  # the graph cannot be read
            lines.append("  ✗ " + worded(graph["error"], lang))
    spend = doc["spend"]
    if spend["amount"] or spend["refunded"]:
        lines += ["", _say("spent", lang, amount=f"{spend['amount']:.2f}", currency=spend["currency"])
                  + (_say("refunded", lang, amount=f"{spend['refunded']:.2f}") if spend["refunded"] else "")]
    cache_line = render_cache(doc["cache"], lang) if doc.get("cache") else ""
    if cache_line:
        lines += ["", cache_line]
    return "\n".join(lines)


# ---- the reply to one message (`lomo send --wait`) --------------------------------------------------------

SETTLED_TURN = ("completed", "failed", "stopped")


async def reply_to(db: Database, message_id: str, since: float) -> dict[str, Any]:
    """What became of MESSAGE_ID so far: the turns that read it (or a copy routed on), their replies, gates."""
    async with db.read() as conn:
        rows: dict[str, Any] = {}
        frontier = [message_id]
        turns: dict[str, Any] = {}
        while frontier:
            found = (await conn.execute(select(s.inbox).where(s.inbox.c.id.in_(frontier)))).all()
            frontier = []
            for row in found:
                rows[row.id] = row
                if row.consumed_turn and row.consumed_turn not in turns:
                    turn = (await conn.execute(select(s.turns).where(s.turns.c.id == row.consumed_turn))).first()
                    if turn is None:
                        continue
                    turns[turn.id] = turn
                    calls = select(s.tool_calls.c.id).where(s.tool_calls.c.turn_id == turn.id)
                    routed = (await conn.execute(select(s.inbox.c.id).where(
                        s.inbox.c.origin.in_(calls) | (s.inbox.c.origin == row.id)))).scalars().all()
                    frontier += [r for r in routed if r not in rows]
        replies = (await conn.execute(select(s.messages.c.content).where(
            s.messages.c.turn_id.in_(list(turns)), s.messages.c.role == "assistant",
            s.messages.c.content.is_not(None), s.messages.c.content != "", s.messages.c.created_at >= since).order_by(
            s.messages.c.id))).scalars().all() if turns else []
        task_ids = sorted({r.task_id for r in rows.values()})
        tasks = (await conn.execute(select(s.tasks).where(s.tasks.c.id.in_(task_ids)))).all()
        gates = (await conn.execute(select(s.gates).where(
            s.gates.c.task_id.in_(task_ids), s.gates.c.status == "pending"))).all()
    pending = any(r.status == "pending" for r in rows.values())
    busy = any(t.status not in SETTLED_TURN and not (t.status == "waiting" and t.wait_kind != "job")
               for t in turns.values())
    failed = [t for t in turns.values() if t.status == "failed"]
    return {"id": message_id, "settled": bool(rows) and not pending and not busy, "failed": bool(failed),
            "replies": list(replies),
            "tasks": [{"id": t.id, "kind": t.kind, "title": t.title, "status": t.status,
                       "reason": t.status_reason} for t in tasks],
            "gates": [{"id": g.id, "task_id": g.task_id, "kind": g.kind, "question": g.question,
                       "options": g.options} for g in gates],
            "reasons": [t.reason for t in failed if t.reason]}


async def wait_for_reply(db: Database, message_id: str, since: float, timeout: float,
                         interval: float = 0.2) -> dict[str, Any]:
    """Poll until what MESSAGE_ID started has settled (or TIMEOUT seconds passed)."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while True:
        reply = await reply_to(db, message_id, since)
        if reply["settled"] or time.monotonic() >= deadline:
            return reply
        await asyncio.sleep(interval)


def render_reply(reply: dict[str, Any], lang: str = "en") -> str:
    lines = [line for text in reply["replies"] for line in text.splitlines()]
    for reason in reply["reasons"]:
        lines.append(_say("reply_failed", lang, reason=reason))
    for gate in reply["gates"]:
        options = " / ".join(f"{i}. {o['label']}" for i, o in enumerate(gate["options"] or [], 1))
        lines.append(f"? {gate['question']}  [{options}]  → lomo approve {gate['id']} --option N")
    return "\n".join(lines) if lines else _say("no_reply", lang)
