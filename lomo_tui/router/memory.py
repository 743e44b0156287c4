"""Route memory (A5): when the creator answers "which task did you mean?", the choice is remembered,
so the next similar message goes to the same task without asking again.

A memory is the keyword set of the routed message plus the chosen task. Recall compares keyword
sets (Jaccard) with the most recent memories only, so it stays cheap however long the product is used.
Messages with too few keywords ("make it bluer") are neither remembered nor recalled: what they mean
depends on the moment, not on their words.
"""
from __future__ import annotations

from typing import TYPE_CHECKING


from sqlalchemy import insert, select

from ..language import keywords
from ..store import schema as s
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

MIN_KEYWORDS = 2
SCAN = 500  # most recent memories compared
STRONG = 0.75  # a direct route, no model call (A4)
WEAK = 0.34  # a hint for the Router


def key_of(text: str) -> list[str]:
    return keywords(text)[:32]


async def remember(conn: AsyncConnection, text: str, task_id: str) -> bool:
    words = key_of(text)
    if len(words) < MIN_KEYWORDS:
        return False
    await conn.execute(insert(s.route_memory).values(keywords=" ".join(words), task_id=task_id,
                                                     created_at=clock.now()))
    return True


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


async def recall(conn: AsyncConnection, text: str, minimum: float = WEAK) -> list[tuple[str, float]]:
    """Tasks chosen before for messages like TEXT: [(task_id, similarity)], best first; the newest memory
    wins for a task chosen several times."""
    words = set(key_of(text))
    if len(words) < MIN_KEYWORDS:
        return []
    rows = (await conn.execute(select(s.route_memory.c.keywords, s.route_memory.c.task_id).order_by(
        s.route_memory.c.id.desc()).limit(SCAN))).all()
    best: dict[str, float] = {}
    for row in rows:
        score = jaccard(words, set(row.keywords.split()))
        if score >= minimum and score > best.get(row.task_id, 0.0):
            best[row.task_id] = round(score, 3)
    return sorted(best.items(), key=lambda kv: -kv[1])
