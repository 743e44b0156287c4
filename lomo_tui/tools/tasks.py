"""Main-thread tools: start a task, hand a message to one. They carry the creator's own words (A10)."""
from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select

from ..store import schema as s
from .registry import Registry, ToolContext, ToolError, obj, tool

STR = {"type": "string"}
MAIN = ("main",)


def _stable(prefix: str, key: str) -> str:
    """An id derived from the call's idempotency key, so a retried call finds what it made."""
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


async def consumed_words(ctx: ToolContext) -> str:
    """The creator's messages this step consumed, verbatim."""
    async with ctx.runtime.db.read() as conn:
        rows = (await conn.execute(select(s.inbox.c.text).where(
            s.inbox.c.consumed_turn == ctx.claim.turn_id, s.inbox.c.consumed_step == ctx.step).order_by(
            s.inbox.c.sent_at))).scalars().all()
    return "\n".join(rows)


async def _forward(ctx: ToolContext, conn: Any, task_id: str, text: str) -> str:
    message_id = _stable("msg", ctx.key + task_id)
    exists = (await conn.execute(select(s.inbox.c.id).where(s.inbox.c.id == message_id))).first()
    if exists is None:
        await ctx.runtime.ledger.deliver(task_id, text, source="router", origin=ctx.key, conn=conn,
                                         message_id=message_id)
    return message_id


def register(reg: Registry) -> None:
    @tool(reg, "create_task", "Start a task for the creator's message. kind: lightweight (one-shot) or "
          "persistent (a goal with a brief and checklist).",
          obj({"title": STR, "kind": {"type": "string", "enum": ["lightweight", "persistent"]}, "goal": STR,
               "brief": STR, "language": STR}, ["title", "kind"]),
          side_effect="control", idempotent=True, kinds=MAIN, ends_turn=True)
    async def create_task(ctx: ToolContext, title: str, kind: str, goal: str = "", brief: str = "",
                          language: str = "en") -> dict[str, Any]:
        if kind not in ("lightweight", "persistent"):
            raise ToolError("kind must be lightweight or persistent")
        words = await consumed_words(ctx)
        task_id = _stable("task", ctx.key)
        async with ctx.runtime.ledger.fenced(ctx.claim) as conn:
            if (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.id == task_id))).first() is None:
                await ctx.runtime.ledger.create_task(title, kind=kind, goal=goal or words, brief=brief,
                                                     language=language, conn=conn, task_id=task_id)
            await _forward(ctx, conn, task_id, words or goal or title)
        ctx.runtime.after_commit_wake(task_id)
        return {"task_id": task_id, "title": title, "kind": kind}

    @tool(reg, "send_to_task", "Hand the creator's message to an existing task (a follow-up).",
          obj({"task_id": STR, "note": STR}, ["task_id"]),
          side_effect="control", idempotent=True, kinds=MAIN, ends_turn=True)
    async def send_to_task(ctx: ToolContext, task_id: str, note: str = "") -> dict[str, Any]:
        words = await consumed_words(ctx)
        async with ctx.runtime.ledger.fenced(ctx.claim) as conn:
            task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).first()
            if task is None:
                raise ToolError(f"no task {task_id}")
            await _forward(ctx, conn, task_id, words or note)
        ctx.runtime.after_commit_wake(task_id)
        return {"task_id": task_id, "title": task.title}

