"""A plan made for an older goal (DESIGN J1, J3): what changed, which steps it outdates, what the next turn hears.

The creator's goal change (`tasks.goals`, who `creator:…`) after the checklist was last written makes the plan
stale: every live step was planned for the old goal. Until the plan is revised (`update_plan` writes the
checklist: event `plan_updated`), `pending` returns the change, each step reads as outdated on the checklist and
the card, and the task's next turn is told to rebuild the plan for the new goal (`instruction`). `mark` records
that the runtime saw it: one `plan_outdated` event per goal version (the steps, the old and the new goal).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select

from .. import clock
from ..language import message
from ..store import schema as s
from . import checklist

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True)
class GoalChange:
    """The creator's goal change the plan has not caught up with."""

    old_version: int
    old_goal: str
    old_brief: str
    version: int
    goal: str
    brief: str
    who: str
    why: str
    at: float

    def note(self, lang: str = "en") -> str:
        """Why a step is outdated, in one line (the checklist, the card), in the task's language."""
        return message("evidence.outdated", lang, old=self.old_version, new=self.version)

    def to_dict(self) -> dict[str, Any]:
        return {"old": {"version": self.old_version, "goal": self.old_goal, "brief": self.old_brief},
                "new": {"version": self.version, "goal": self.goal, "brief": self.brief, "who": self.who,
                        "why": self.why}}


async def planned_at(conn: AsyncConnection, task_id: str) -> float | None:
    """When the task's checklist was last written (its latest `plan_updated` that wrote steps)."""
    rows = (await conn.execute(select(s.events.c.at, s.events.c.data).where(
        s.events.c.task_id == task_id, s.events.c.type == "plan_updated").order_by(s.events.c.id.desc()))).all()
    for row in rows:
        if (row.data or {}).get("steps"):
            return float(row.at)
    return None


async def pending(conn: AsyncConnection, task_id: str) -> GoalChange | None:
    """The creator's newest goal change after the checklist was last written (None: the plan is current)."""
    v = s.task_goal_versions
    new = (await conn.execute(select(v).where(v.c.task_id == task_id, v.c.who.like("creator%"))
                              .order_by(v.c.version.desc()).limit(1))).first()
    if new is None:  # most tasks: the creator never changed the goal (one primary-key read)
        return None
    planned = await planned_at(conn, task_id)
    if planned is None or new.at <= planned:
        return None
    old = (await conn.execute(select(v).where(v.c.task_id == task_id, v.c.at <= planned)
                              .order_by(v.c.version.desc()).limit(1))).first()
    old = old or new
    return GoalChange(old.version, old.goal, old.brief, new.version, new.goal, new.brief, new.who, new.why,
                      float(new.at))


async def outdated(conn: AsyncConnection, task_id: str) -> dict[str, str]:
    """Live steps planned for an older goal, and why (for the checklist and the card)."""
    change = await pending(conn, task_id)
    if change is None:
        return {}
    rows = (await conn.execute(select(s.checklist.c.id).where(
        s.checklist.c.task_id == task_id, s.checklist.c.state != "removed"))).scalars().all()
    lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
    return {item: change.note(lang) for item in rows}


async def mark(conn: AsyncConnection, task_id: str, turn_id: str | None, *, stage: str) -> GoalChange | None:
    """Record that the plan is outdated (`plan_outdated`: the steps, the old and the new goal), once per goal
    version. Returns the change (None: the plan is current)."""
    change = await pending(conn, task_id)
    if change is None:
        return None
    seen = (await conn.execute(select(s.events.c.data).where(
        s.events.c.task_id == task_id, s.events.c.type == "plan_outdated"))).scalars().all()
    if any((d or {}).get("goal_version") == change.version for d in seen):
        return change
    steps = await checklist.items(conn, task_id)
    await conn.execute(insert(s.events).values(
        type="plan_outdated", at=clock.now(), task_id=task_id, turn_id=turn_id,
        data={"goal_version": change.version, "from_version": change.old_version, "stage": stage,
              "items": [i.id for i in steps], "done": [i.id for i in steps if i.state == "done"],
              "old_goal": change.old_goal[:500], "new_goal": change.goal[:500], "why": change.why}))
    return change


def instruction(change: GoalChange) -> str:
    """The next turn's replan section of the context tail: the old and the new goal, and what to do."""
    lines = [f"Replan: the creator changed the goal (v{change.old_version} → v{change.version}"
             + (f", {change.why}" if change.why else "") + "). The checklist was planned for the old goal.",
             f"Old goal: {change.old_goal}"]
    if change.old_brief:
        lines.append(f"Old brief: {change.old_brief}")
    lines.append(f"New goal: {change.goal}")
    if change.brief and change.brief != change.old_brief:
        lines.append(f"New brief: {change.brief}")
    lines.append("First call update_plan once with the whole checklist for the new goal: keep a step's id only "
                 "where the step still serves the new goal (its done work stays done); leave out the rest. "
                 "Order no work before the plan is rebuilt.")
    return "\n".join(lines)
