"""Near-duplicate check before a persistent task is created (A7).

The new goal (the creator's words, and the title/goal the model wrote) is compared with the 50 most
recently active tasks; a likely duplicate makes `create_task` ask the creator "add to it or start a
new task?" unless the model already settled that (force=True after the creator chose).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..language import other_thing, scorer, similarity
from ..store import schema as s
from ..workspace.scope import tasks_here

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

RECENT_ACTIVE = 50
THRESHOLD = 0.45  # the hand-set cut, where the fitted one is not used (duplicate_cut())


def duplicate_cut() -> float:
    """The similarity at or above which a new goal probably repeats an existing task: the cut fitted on the
    labelled routing turns (language/router_weights.json "duplicate", bench/fit_router.py) where the weights say to
    use it, else the hand-set THRESHOLD — the same cut the offline router uses."""
    return scorer.cut("duplicate", "similarity") if scorer.used("duplicate") else THRESHOLD
MAX_CANDIDATES = 3


async def recent_active(conn: AsyncConnection, limit: int = RECENT_ACTIVE) -> list[Any]:
    return list((await conn.execute(select(
        s.tasks.c.id, s.tasks.c.title, s.tasks.c.goal, s.tasks.c.status, s.tasks.c.kind, s.tasks.c.language,
        s.tasks.c.archived).where(
        s.tasks.c.kind != "main", s.tasks.c.archived.is_(False), tasks_here(),
        s.tasks.c.status.notin_(("stopped", "failed"))).order_by(s.tasks.c.updated_at.desc()).limit(limit))).all())


def score(texts: list[str], row: Any) -> float:
    target = f"{row.title}\n{row.goal}" if row.goal and row.goal != row.title else row.title
    return max((similarity(t, target) for t in texts if t and t.strip()), default=0.0)


async def near_duplicates(conn: AsyncConnection, *texts: str, threshold: float | None = None,
                          exclude: tuple[str, ...] = (), subject: str = "") -> list[tuple[Any, float]]:
    """Recent active tasks that TEXTS (the creator's words, the proposed title and goal) probably repeat,
    best first: [(row, similarity)]. A task the request's SUBJECT is not about is none ("a rusty lantern prop"
    beside the "wooden loot crate prop")."""
    cut = duplicate_cut() if threshold is None else threshold
    found = []
    for row in await recent_active(conn):
        if row.id in exclude or other_thing(subject, f"{row.title}\n{row.goal or ''}"):
            continue
        value = score(list(texts), row)
        if value >= cut:
            found.append((row, round(value, 3)))
    found.sort(key=lambda x: -x[1])
    return found[:MAX_CANDIDATES]
