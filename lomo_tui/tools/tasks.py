"""Main-thread tools: start a task, hand a message to one, or ask the creator which one (A5, A7, A8).

They carry the creator's own words (A10): whatever the model writes as a note or title, the task's
inbox gets the messages this step consumed, verbatim. Each ends the turn without another model call.

Choices go through `clarify` gates (kind "clarify"): the tool opens the card and the main turn ends —
the conversation goes on. When the creator answers (`lomo approve GATE --option N`, or the TUI), the
answer itself delivers the message as chosen (`runtime.reactions`) and the choice is remembered for the
next similar message (route memory). Routing never grants authority (A9): nothing here opens or resolves spend or
irreversible gates, and approving a clarify gate authorises nothing.
"""
from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select

from ..governance.gates import open_gate
from ..language import Parsed, classify, detect_language, message
from ..router import dedupe, deterministic, index
from ..router.phrases import say
from ..store import schema as s
from ..workspace.scope import belongs_here
from .registry import Registry, ToolContext, ToolError, obj, tool

STR = {"type": "string"}
MAIN = ("main",)
KINDS = ("lightweight", "persistent")
TITLE_CHARS = 60
MAX_CHOICES = 4


def _stable(prefix: str, key: str) -> str:
    """An id derived from the call's idempotency key, so a retried call finds what it made."""
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


async def consumed(ctx: ToolContext) -> list[Any]:
    """The creator's messages this step consumed (id, text), in order. Only the main thread routes."""
    async with ctx.services.db.read() as conn:
        kind = (await conn.execute(select(s.tasks.c.kind).where(s.tasks.c.id == ctx.task_id))).scalar()
        if kind != "main":
            raise ToolError.said("main_only")
        return list((await conn.execute(select(s.inbox.c.id, s.inbox.c.text).where(
            s.inbox.c.consumed_turn == ctx.claim.turn_id, s.inbox.c.consumed_step == ctx.step).order_by(
            s.inbox.c.sent_at))).all())


def parsed_message(ctx: ToolContext, rows: list[Any]) -> Parsed | None:
    """The consumed message as parsed on arrival (the main thread reads one message a step), or None."""
    return ctx.services.messages.get(rows[0].id, rows[0].text) if len(rows) == 1 else None


def _language(parsed: Parsed | None, words: str) -> str:
    return parsed.language if parsed is not None and parsed.text == words else detect_language(words)


async def consumed_words(ctx: ToolContext) -> str:
    """The creator's messages this step consumed, verbatim."""
    return "\n".join(r.text for r in await consumed(ctx))


async def _forward(ctx: ToolContext, conn: Any, task_id: str, text: str, parsed: Parsed | None = None) -> bool:
    """Deliver TEXT to TASK_ID once per call (a re-run finds the first delivery), carrying its parse (PARSED)
    along for the task's planner. True if delivered now."""
    message_id = _stable("msg", ctx.key + task_id)
    exists = (await conn.execute(select(s.inbox.c.id).where(s.inbox.c.id == message_id))).first()
    if exists is None:
        await ctx.services.ledger.deliver(task_id, text, source="router", origin=ctx.key, conn=conn,
                                         message_id=message_id)
    if parsed is not None and parsed.text == text:
        ctx.services.messages.keep(message_id, parsed)
    return exists is None


def _title_from(words: str) -> str:
    return index.clip(words.splitlines()[0] if words else "", TITLE_CHARS) or "Task"


async def _task(conn: Any, task_id: str) -> Any:
    return (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).first()


async def _task_here(conn: Any, task_id: str) -> Any:
    """The task, if it is one the main thread may route to here (not another workspace's: that one's files are
    in its own folder, and it runs there)."""
    row = await _task(conn, task_id)
    return row if row is not None and belongs_here(row.workspace_id) else None


async def _create(ctx: ToolContext, conn: Any, *, title: str, kind: str, goal: str, brief: str, language: str,
                  words: str, parsed: Parsed | None = None) -> tuple[str, bool]:
    """Create the call's task (once) and hand it the creator's words. Returns (task id, delivered now)."""
    task_id = _stable("task", ctx.key)
    if await _task(conn, task_id) is None:
        await ctx.services.ledger.create_task(title, kind=kind, goal=goal or words, brief=brief, language=language,
                                             conn=conn, task_id=task_id)
        await index.refresh_search_text(conn, task_id)  # the ledger sets source_inbox on the first delivery
    return task_id, await _forward(ctx, conn, task_id, words or goal or title, parsed)


def _status_word(row: Any, lang: str) -> str:
    if row.archived:
        return say("status_archived", lang)
    return say(f"status_{row.status}", lang) if row.status in ("stopped", "failed") else row.status


async def _missing_files(conn: Any, words: str | Parsed) -> list[str]:
    """Files the message names that are not (or no longer) in the workspace (A8)."""
    return await deterministic.missing_files(conn, words)


# ---- choices ------------------------------------------------------------------------------------
async def _ask(ctx: ToolContext, *, reason: str, question: str, actions: list[dict[str, Any]], lang: str,
               words: str) -> Any:
    """Open (or find again) this call's clarify gate. ACTIONS carry label/consequence plus what to do."""
    options = [{"label": a["label"], "consequence": a.get("consequence", "")} for a in actions]
    plan = [{k: v for k, v in a.items() if k not in ("label", "consequence")} for a in actions]
    async with ctx.services.ledger.fenced(ctx.claim) as conn:
        return await open_gate(conn, task_id=ctx.task_id, kind="clarify", question=question, options=options,
                               dedupe_key=f"{ctx.key}/route", turn_id=ctx.claim.turn_id, tool_call_id=ctx.key,
                               scope={"description": message("gate.your_message", lang, words=index.clip(words, 60)),
                                      "turn": ctx.claim.turn_id,
                                      "route": reason, "actions": plan, "words": words,
                                      "message": index.clip(words, 300), "language": lang},
                               continues=message("gate.message_waits", lang))


async def _settle(ctx: ToolContext, gate: Any) -> Any:
    """The main thread does not wait on a card: answering it delivers the message (runtime.reactions)."""
    if gate.status == "pending":
        return {"routed": "asked", "gate_id": gate.id, "question": gate.question}
    return {"routed": "answered", "gate_id": gate.id, "status": gate.status}


def _send_action(row: Any, lang: str, label_key: str = "opt_task") -> dict[str, Any]:
    label = say(label_key, lang, title=index.clip(row.title, TITLE_CHARS))
    if not deterministic.usable(row):
        label += f" ({_status_word(row, lang)})"
        return {"do": "resume", "task_id": row.id, "label": label, "consequence": say("resumes", lang)}
    return {"do": "send", "task_id": row.id, "label": label, "consequence": say("goes_to", lang)}


def _new_action(lang: str, *, title: str, kind: str, goal: str = "", brief: str = "") -> dict[str, Any]:
    return {"do": "new", "kind": kind, "title": title, "goal": goal, "brief": brief,
            "label": say("opt_new", lang), "consequence": say("starts_new", lang, title=title)}


def _cancel_action(lang: str) -> dict[str, Any]:
    return {"do": "cancel", "label": say("opt_cancel", lang), "consequence": say("nothing", lang)}


def register(reg: Registry) -> None:
    @tool(reg, "create_task", "Start a task for the creator's message. kind: lightweight (one-shot) or "
          "persistent (a goal with a brief and checklist). title/goal in the creator's language. A persistent "
          "task that looks like an existing one makes the creator choose, unless force is true (use it only "
          "when the creator already said they want a new task).",
          obj({"title": {"type": "string", "description": "a short name for the task, in the creator's language"},
               "kind": {"type": "string", "enum": list(KINDS),
                        "description": "lightweight: a one-shot; persistent: a goal with a brief and checklist"},
               "goal": {"type": "string", "description": "what the creator wants in the end, in their words"},
               "brief": {"type": "string", "description": "constraints and direction so far (optional)"},
               "language": {"type": "string", "description": "the creator's language code, e.g. en, zh, ja"},
               "force": {"type": "boolean", "description": "create even if a similar task exists (only when "
                         "the creator said they want a new one)"}}, ["title", "kind"]),
          side_effect="control", idempotent=True, kinds=MAIN, ends_turn=True)
    async def create_task(ctx: ToolContext, title: str, kind: str, goal: str = "", brief: str = "",
                          language: str = "", force: bool = False) -> Any:
        if kind not in KINDS:
            raise ToolError.said("task_kind")
        rows = await consumed(ctx)
        words = "\n".join(r.text for r in rows)
        parsed = parsed_message(ctx, rows)
        lang = language or _language(parsed, words or title)
        title = index.clip(title, 120) or _title_from(words)
        if kind == "persistent" and not force:
            async with ctx.services.db.read() as conn:
                made = await _task(conn, _stable("task", ctx.key))
                subject = (parsed.intent() if parsed is not None and parsed.text == words else classify(words)).subject
                dups = [] if made is not None else await dedupe.near_duplicates(conn, words, f"{title}\n{goal}",
                                                                                 subject=subject or "")
            gate_key = f"{ctx.key}/route"
            async with ctx.services.db.read() as conn:
                gate = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == gate_key))).first()
            if gate is None and dups:
                best = dups[0][0]
                actions = [_send_action(row, lang, "opt_add") for row, _ in dups]
                actions.append(_new_action(lang, title=title, kind=kind, goal=goal, brief=brief))
                gate = await _ask(ctx, reason="duplicate", lang=lang, words=words, actions=actions,
                                  question=say("duplicate", lang, title=index.clip(best.title, TITLE_CHARS)))
            if gate is not None:
                return await _settle(ctx, gate)
        async with ctx.services.ledger.fenced(ctx.claim) as conn:
            task_id, _ = await _create(ctx, conn, title=title, kind=kind, goal=goal, brief=brief, language=lang,
                                       words=words, parsed=parsed)
        ctx.services.after_commit_wake(task_id)
        return {"task_id": task_id, "title": title, "kind": kind, "routed": "created"}

    @tool(reg, "send_to_task", "Hand the creator's message to an existing task (a follow-up). An archived, "
          "stopped or unknown task makes the creator choose: resume it, start a new task, or cancel.",
          obj({"task_id": {"type": "string", "description": "the id of the task the message belongs to"},
               "note": {"type": "string", "description": "why it goes there (optional, shown to the creator)"}},
              ["task_id"]),
          side_effect="control", idempotent=True, kinds=MAIN, ends_turn=True)
    async def send_to_task(ctx: ToolContext, task_id: str, note: str = "") -> Any:
        rows = await consumed(ctx)
        words = "\n".join(r.text for r in rows) or note
        parsed = parsed_message(ctx, rows)
        lang = _language(parsed, words)
        async with ctx.services.db.read() as conn:
            task = await _task_here(conn, task_id)
            gate = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == f"{ctx.key}/route"))).first()
        if task is not None and task.kind == "main":
            raise ToolError.said("is_main")
        if gate is None and (task is None or not deterministic.usable(task)):
            if task is None:
                actions = [_new_action(lang, title=_title_from(words), kind="persistent"), _cancel_action(lang)]
                question = say("missing", lang)
                reason = "missing"
            else:
                actions = [{"do": "resume", "task_id": task.id, "consequence": say("resumes", lang),
                            "label": say("opt_resume", lang, title=index.clip(task.title, TITLE_CHARS))},
                           _new_action(lang, title=task.title, kind=task.kind, goal=task.goal),
                           _cancel_action(lang)]
                question = say("unavailable", lang, title=index.clip(task.title, TITLE_CHARS),
                               status=_status_word(task, lang))
                reason = "unavailable"
            gate = await _ask(ctx, reason=reason, question=question, actions=actions, lang=lang, words=words)
        if gate is not None:
            return await _settle(ctx, gate)
        async with ctx.services.ledger.fenced(ctx.claim) as conn:
            await _forward(ctx, conn, task_id, words, parsed)
            missing = await _missing_files(conn, parsed if parsed is not None and parsed.text == words else words)
        ctx.services.after_commit_wake(task_id)
        result: dict[str, Any] = {"task_id": task_id, "title": task.title, "routed": "followup"}
        if task.status == "paused":
            result["note"] = "the task is paused; it reads the message when it resumes"
        if missing:
            result["missing_files"] = missing
        return result

    @tool(reg, "clarify", "Ask the creator which task a message is for, when more than one fits (or none "
          "clearly does). Lists the candidate tasks and “a new task”; the message is delivered as they choose "
          "and the choice is remembered for similar messages. missing_files: workspace files the message refers "
          "to that do not exist (A8) — the card then says so and offers to cancel.",
          obj({"task_ids": {"type": "array", "items": STR, "description": "the candidate tasks' ids"},
               "question": {"type": "string", "description": "the question to show (optional)"},
               "new_title": {"type": "string", "description": "the title a new task would get"},
               "new_kind": {"type": "string", "enum": list(KINDS), "description": "the kind a new task would be"},
               "missing_files": {"type": "array", "items": STR,
                                 "description": "files the message names that do not exist"}}, ["task_ids"]),
          side_effect="gate", idempotent=True, kinds=MAIN, ends_turn=True)
    async def clarify(ctx: ToolContext, task_ids: list[str], question: str = "", new_title: str = "",
                      new_kind: str = "persistent", missing_files: list[str] | None = None) -> Any:
        rows = await consumed(ctx)
        words = "\n".join(r.text for r in rows)
        parsed = parsed_message(ctx, rows)
        lang = _language(parsed, words)
        async with ctx.services.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == f"{ctx.key}/route"))).first()
            candidates = []
            for task_id in dict.fromkeys(task_ids or []):
                row = await _task_here(conn, str(task_id))
                if row is not None and row.kind != "main":
                    candidates.append(row)
            # only names the message holds and the workspace lacks (the model's word is not enough)
            claimed = {str(f).strip("./") for f in missing_files or []}
            absent = deterministic.readings(await _missing_files(
                conn, parsed if parsed is not None and parsed.text == words else words))
            missing = [name for name, variants in absent.items() if claimed & {name, *variants}]
        if gate is None:
            actions = [_send_action(row, lang) for row in candidates[:MAX_CHOICES]]
            actions.append(_new_action(lang, title=index.clip(new_title, 120) or _title_from(words),
                                       kind=new_kind if new_kind in KINDS else "persistent"))
            if missing:
                actions.append(_cancel_action(lang))
                gate = await _ask(ctx, reason="missing", lang=lang, words=words, actions=actions,
                                  question=say("missing_file", lang, files=", ".join(missing[:MAX_CHOICES])))
            else:
                gate = await _ask(ctx, reason="ambiguous", question=question or say("which_task", lang),
                                  actions=actions, lang=lang, words=words)
        return await _settle(ctx, gate)
