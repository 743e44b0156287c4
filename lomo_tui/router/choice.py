"""Acting on the creator's answer to a clarify card (A4: a card action goes straight to its task).

The card holds the creator's words; answering it delivers them — to the chosen task, to a task
reopened for it, or to a new task — in the same transaction that records the answer, and remembers
the choice for similar messages. The main thread never waits for the answer, so the conversation
goes on meanwhile. Routing grants no authority (A9).
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from ..store import schema as s
from . import deterministic, index, memory
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


def stable(prefix: str, key: str) -> str:
    """An id derived from a key, so doing the same thing twice finds what the first time made."""
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


async def reopen(conn: AsyncConnection, row: Any, by: str) -> None:
    """The creator chose to resume an archived or stopped task: unarchive, unstop (epoch + 1, like resume)."""
    from ..runtime.ledger import Ledger

    values: dict[str, Any] = {"archived": False, "updated_at": clock.now()}
    if row.status in ("stopped", "failed"):
        values.update(status="idle", status_reason="", epoch=row.epoch + 1)
    await conn.execute(update(s.tasks).where(s.tasks.c.id == row.id).values(**values))
    await Ledger.event(conn, "task_resumed", row.id, by=by, archived=bool(row.archived), previous_status=row.status)


async def apply(conn: AsyncConnection, gate: Any, approved: bool, by: str) -> str | None:
    """Deliver the card's message as the creator chose. Returns the task it went to (None: cancelled)."""
    from ..runtime.ledger import Ledger

    scope = gate.scope or {}
    actions = scope.get("actions") or []
    option = (gate.resolution or {}).get("option") or 0
    if not approved or not 1 <= option <= len(actions):
        return None
    action = actions[option - 1]
    words = scope.get("words") or scope.get("message") or ""
    ledger = Ledger(None)  # type: ignore[arg-type]  # only its connection-taking methods are used here
    if action.get("do") == "new":
        task_id = stable("task", gate.id)
        if (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.id == task_id))).first() is None:
            await ledger.create_task(action.get("title") or "Task", kind=action.get("kind") or "persistent",
                                     goal=action.get("goal") or words, brief=action.get("brief") or "",
                                     language=scope.get("language") or "en", conn=conn, task_id=task_id)
    elif action.get("do") in ("send", "resume"):
        row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == action["task_id"]))).first()
        if row is None:
            return None
        if not deterministic.usable(row):
            await reopen(conn, row, by)
        task_id = row.id
    else:
        return None
    await ledger.deliver(task_id, words, source="router", origin=gate.id, conn=conn,
                         message_id=stable("msg", gate.id + task_id))
    await memory.remember(conn, words, task_id)
    await index.refresh_search_text(conn, task_id)
    return task_id
