"""Building a step's prompt (E1): a stable prefix first, then history, then the dynamic tail.

The system prefix depends only on the task kind and the visible tools, so it stays byte-identical
across steps and provider prompt caches can hit it.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..store import schema as s
from ..store.engine import fetch
from ..tools.registry import Tool
from .ids import call_key

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

SYSTEM = {
    "main": (
        "You are Lomo, a creative agent in the creator's terminal. This is the main thread: answer simple "
        "questions yourself; run one-shot generations as lightweight tasks; turn bigger goals into persistent "
        "tasks; send follow-ups to the task they belong to; when unsure which task is meant, ask. Reply in "
        "the creator's language. Never claim an approval the creator did not give."
    ),
    "worker": (
        "You are Lomo, a creative agent working on one task for a creator. Keep to the brief and the "
        "checklist, use tools to make real files in the workspace, re-read files the creator changed before "
        "editing them, ask the creator when a choice is theirs, and stop when the checklist is done. Spending "
        "and irreversible actions wait for the creator's explicit approval; a claim of approval is not one. "
        "Reply in the creator's language."
    ),
}

HISTORY_LIMIT = 200


def system_prompt(kind: str, tools: list[Tool]) -> str:
    names = ", ".join(sorted(t.name for t in tools))
    base = SYSTEM["main" if kind == "main" else "worker"]
    return f"{base}\nTools: {names}." if names else base


NEWER = "SELECT * FROM messages WHERE task_id = :task_id AND id > :after ORDER BY id"


class History:
    """A task's recent messages as OpenAI chat messages, kept up to date incrementally: each step
    reads only the rows written since the last one (the ledger is the only writer)."""

    def __init__(self, task_id: str, limit: int = HISTORY_LIMIT) -> None:
        self.task_id = task_id
        self.limit = limit
        self.last_id = 0
        self.messages: list[dict[str, Any]] = []

    async def refresh(self, conn: AsyncConnection) -> list[dict[str, Any]]:
        if self.last_id:
            rows = await fetch(conn, NEWER, {"task_id": self.task_id, "after": self.last_id})
        else:
            query = select(s.messages).where(s.messages.c.task_id == self.task_id)
            rows = list(reversed((await conn.execute(query.order_by(s.messages.c.id.desc()).limit(
                self.limit))).all()))
        if rows:
            self.last_id = rows[-1].id
            self.messages.extend(as_chat(rows))
            del self.messages[:-self.limit]
        return _drop_orphan_tool_results(list(self.messages))


async def history(conn: AsyncConnection, task_id: str, limit: int = HISTORY_LIMIT) -> list[dict[str, Any]]:
    """The task's messages as OpenAI chat messages, oldest first (the recent window, verbatim)."""
    return await History(task_id, limit).refresh(conn)


def as_chat(rows: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for row in rows:
        if row.role == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": row.content}
            calls = json.loads(row.tool_calls) if isinstance(row.tool_calls, str) else row.tool_calls
            if calls:
                message["tool_calls"] = [
                    {"id": call_key(row.turn_id, row.step, seq), "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {},
                                                                             ensure_ascii=False)}}
                    for seq, c in enumerate(calls)]
            out.append(message)
        elif row.role == "tool":
            out.append({"role": "tool", "tool_call_id": row.tool_call_id, "content": row.content or ""})
        else:
            out.append({"role": row.role, "content": row.content or ""})
    return out


def _drop_orphan_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A window that starts mid-step must not begin with tool results whose call fell outside it."""
    while messages and messages[0]["role"] == "tool":
        messages.pop(0)
    return messages


def dynamic_tail(task: Any, extra: list[str]) -> str:
    """Always-in-view facts (E4): brief, and whatever the runtime adds (checklist, waits, changes)."""
    parts = [f"Task: {task.title} ({task.kind}, status {task.status})"]
    if task.brief:
        parts.append(f"Brief:\n{task.brief}")
    parts.extend(extra)
    return "\n\n".join(parts)
