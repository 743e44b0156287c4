"""Execution checklists (G1): persisted steps with state, linked artifacts and completion evidence.

Revising a plan keeps each surviving step's id (and so its artifact links); dropped steps are marked
`removed`, never deleted, so an artifact always knows which step made it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update

from ..base.ids import new_id
from ..errors import Said
from ..language import message
from ..store import schema as s
from ..store.engine import fetch
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

OPEN = ("pending", "active")
REOPENED = "re-opened:"  # a step's evidence marker: the runtime re-opened it, and why (tasks.evidence)
CLOSED = ("done", "skipped")


class PlanError(ValueError):
    """A plan that cannot be kept as asked: the English for the model, `said_as` for the creator."""

    def __init__(self, said: Said) -> None:
        super().__init__(said.text("en"))
        self.said_as = said


@dataclass(frozen=True)
class Item:
    id: str
    position: int
    title: str
    state: str
    needs_confirmation: bool
    tool: str | None
    args: dict[str, Any] | None
    evidence: str
    artifacts: tuple[str, ...]
    why: str = ""  # a done step marked for re-validation, or a re-opened one: the reason (J2)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "n": self.position, "title": self.title, "state": self.state,
                "needs_confirmation": self.needs_confirmation, "tool": self.tool, "args": self.args,
                "evidence": self.evidence, "artifacts": list(self.artifacts), "why": self.why}


ITEMS = "SELECT * FROM checklist WHERE task_id = :task_id ORDER BY position"


async def items(conn: AsyncConnection, task_id: str, *, include_removed: bool = False) -> list[Item]:
    rows = [r for r in await fetch(conn, ITEMS, {"task_id": task_id}) if include_removed or r.state != "removed"]
    links: dict[str, list[str]] = {}
    if rows:
        for link in (await conn.execute(select(s.checklist_links.c.item_id, s.objects.c.path).join(
                s.objects, s.objects.c.id == s.checklist_links.c.object_id).where(
                s.checklist_links.c.item_id.in_([r.id for r in rows]),
                s.objects.c.deleted.is_(False)))).all():  # a deleted result stays linked, not listed
            links.setdefault(link.item_id, []).append(link.path)
    from . import evidence, replan  # both build on this module

    why = await evidence.why_stale(conn, task_id) if rows else {}
    outdated = await replan.outdated(conn, task_id) if rows else {}
    reopened = {r.id: r.evidence.removeprefix(REOPENED).strip() for r in rows
                if r.state in OPEN and r.evidence.startswith(REOPENED)}
    if reopened:  # the marker stays in the ledger; the creator reads it in the task's language
        lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
        reopened = {k: message("evidence.reopened", lang, why=v) for k, v in reopened.items()}
    return [Item(r.id, r.position, r.title, r.state, bool(r.needs_confirmation), r.tool,
                 json.loads(r.args) if isinstance(r.args, str) else r.args, r.evidence, tuple(links.get(r.id, ())),
                 why.get(r.id) or reopened.get(r.id, "") or outdated.get(r.id, ""))
            for r in rows]


async def revise(conn: AsyncConnection, task_id: str, steps: list[dict[str, Any]]) -> list[Item]:
    """Replace the plan with STEPS; a step that names an existing id keeps it (and its links)."""
    existing = {i.id: i for i in await items(conn, task_id, include_removed=True)}
    t = clock.now()
    kept: set[str] = set()
    for position, step in enumerate(steps, 1):
        title = str(step.get("title") or "").strip()
        if not title:
            raise PlanError(Said("step_check.no_title", {"n": position}))
        values = dict(position=position, title=title, needs_confirmation=bool(step.get("needs_confirmation")),
                      tool=step.get("tool"), args=step.get("args"), updated_at=t)
        item_id = step.get("id")
        if item_id in existing:
            kept.add(item_id)
            state = existing[item_id].state
            await conn.execute(update(s.checklist).where(s.checklist.c.id == item_id).values(
                state="pending" if state == "removed" else state, **values))
        else:
            await conn.execute(insert(s.checklist).values(id=new_id("step"), task_id=task_id, state="pending",
                                                          created_at=t, **values))
    for item_id in existing.keys() - kept:
        await conn.execute(update(s.checklist).where(s.checklist.c.id == item_id).values(state="removed",
                                                                                           updated_at=t))
    return await items(conn, task_id)


async def find(conn: AsyncConnection, task_id: str, ref: Any) -> Item | None:
    """A step by id, by 1-based position, or by exact title."""
    for item in await items(conn, task_id):
        if ref in (item.id, item.title) or (str(ref).isdigit() and int(ref) == item.position):
            return item
    return None


async def complete(conn: AsyncConnection, item_id: str, *, evidence: str, objects: list[tuple[str, int]] = ()
                   ) -> None:
    """Mark a step done with its evidence, linking the artifacts (object id, version) that show it."""
    t = clock.now()
    await conn.execute(update(s.checklist).where(s.checklist.c.id == item_id).values(
        state="done", evidence=evidence, done_at=t, updated_at=t))
    for object_id, version in objects:
        exists = (await conn.execute(select(s.checklist_links.c.item_id).where(
            s.checklist_links.c.item_id == item_id, s.checklist_links.c.object_id == object_id))).first()
        if exists is None:
            await conn.execute(insert(s.checklist_links).values(item_id=item_id, object_id=object_id,
                                                                version=version, created_at=t))


async def progress(conn: AsyncConnection, task_id: str) -> tuple[int, int]:
    """(done, total) over the live steps."""
    rows = (await conn.execute(select(s.checklist.c.state, func.count()).where(
        s.checklist.c.task_id == task_id, s.checklist.c.state != "removed").group_by(s.checklist.c.state))).all()
    counts = dict(rows)
    return sum(counts.get(state, 0) for state in CLOSED), sum(counts.values())


def render(steps: list[Item]) -> str:
    """The checklist as the model sees it in the dynamic tail (E4)."""
    done = sum(1 for i in steps if i.state in CLOSED)
    lines = [f"Checklist ({done}/{len(steps)} done):"]
    for item in steps:
        mark = {"done": "x", "skipped": "-", "active": ">"}.get(item.state, " ")
        extra = " (needs the creator's confirmation)" if item.needs_confirmation and item.state in OPEN else ""
        made = f" → {', '.join(item.artifacts)}" if item.artifacts else ""
        if item.why and item.state == "done":
            extra += f" (to check again: {item.why})"
        elif item.why:
            extra += f" ({item.why})"
        lines.append(f"[{mark}] {item.position}. {item.title} (id {item.id}){extra}{made}")
    return "\n".join(lines)
