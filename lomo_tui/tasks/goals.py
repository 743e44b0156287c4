"""Goal versions (DESIGN J1): a task's goal and brief change slowly and on the record.

Every write of `tasks.goal` or `tasks.brief` goes through `record` (a task's first version) or `revise` (each
later change): the row is updated and a `task_goal_versions` row says what the goal and brief became, who
changed them, why, and from which of the creator's messages — in the caller's transaction, so a change and
its record commit together or not at all. A write that changes nothing records nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update

from ..store import schema as s
from ..errors import Said, column_text, column_value
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


async def record(conn: AsyncConnection, task_id: str, *, goal: str, brief: str, who: str, why: str | Said,
                 message_id: str | None = None, at: float | None = None) -> int:
    """Append a version with GOAL and BRIEF (the task row already holds them); returns its number. WHY is the
    creator's own words as they wrote them, or Lomo's reason as catalogue text (worded for whoever reads it)."""
    version = int((await conn.execute(select(func.coalesce(func.max(s.task_goal_versions.c.version), 0)).where(
        s.task_goal_versions.c.task_id == task_id))).scalar() or 0) + 1
    await conn.execute(insert(s.task_goal_versions).values(
        task_id=task_id, version=version, goal=goal, brief=brief, who=who, why=column_text(why) or "",
        message_id=message_id,
        at=at if at is not None else clock.now()))
    return version


async def revise(conn: AsyncConnection, task_id: str, *, goal: str | None = None, brief: str | None = None,
                 who: str, why: str | Said, message_id: str | None = None) -> int | None:
    """Set the task's GOAL and/or BRIEF (None: keep it) and record the version; None when nothing changed."""
    row = (await conn.execute(select(s.tasks.c.goal, s.tasks.c.brief).where(s.tasks.c.id == task_id))).one()
    new_goal = row.goal if goal is None else goal
    new_brief = row.brief if brief is None else brief
    if (new_goal, new_brief) == (row.goal, row.brief):
        return None
    t = clock.now()
    await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(goal=new_goal, brief=new_brief,
                                                                           updated_at=t))
    return await record(conn, task_id, goal=new_goal, brief=new_brief, who=who, why=why, message_id=message_id,
                        at=t)


async def attribute_first(conn: AsyncConnection, task_id: str, message_id: str) -> None:
    """The task's first message is where its first goal came from (the task exists before it is delivered)."""
    await conn.execute(update(s.task_goal_versions).where(
        s.task_goal_versions.c.task_id == task_id, s.task_goal_versions.c.version == 1,
        s.task_goal_versions.c.message_id.is_(None)).values(message_id=message_id))


async def prompting_message(conn: AsyncConnection, task_id: str, turn_id: str, step: int) -> str | None:
    """The creator's message a change made at STEP of TURN_ID answers: the latest the turn had read by then,
    else (an automatic turn reads none) the latest the task had read before."""
    read = s.inbox.c.status == "consumed"
    found = (await conn.execute(select(s.inbox.c.id).where(
        read, s.inbox.c.consumed_turn == turn_id, s.inbox.c.consumed_step <= step).order_by(
        s.inbox.c.consumed_step.desc(), s.inbox.c.sent_at.desc()).limit(1))).scalar()
    if found is None:
        found = (await conn.execute(select(s.inbox.c.id).where(read, s.inbox.c.task_id == task_id).order_by(
            s.inbox.c.consumed_at.desc(), s.inbox.c.sent_at.desc()).limit(1))).scalar()
    return found


async def versions(conn: AsyncConnection, task_id: str) -> list[dict[str, Any]]:
    """Every version of the task's goal and brief, oldest first (`why` a `Phrase` where Lomo gave the reason)."""
    rows = (await conn.execute(select(s.task_goal_versions).where(
        s.task_goal_versions.c.task_id == task_id).order_by(s.task_goal_versions.c.version))).all()
    return [{"version": r.version, "goal": r.goal, "brief": r.brief, "who": r.who, "why": column_value(r.why),
             "message_id": r.message_id, "at": r.at} for r in rows]
