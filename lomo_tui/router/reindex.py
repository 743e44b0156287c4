"""Keeping tasks' search keywords in step with the language layer.

A task's `search_text` is written by `index.search_text` (word stems, CJK bigrams) when the task
changes. When the language layer learns to stem or segment differently, tasks saved before keep
keywords that new queries no longer produce, and old tasks stop being found. So the database
records which keyword scheme its search_text was written with (table `meta`), and on start the
runtime re-keys every task once, in the background, in small transactions.

The scheme is a fingerprint of what the language layer makes of a probe text in four languages:
a change to stemming or segmentation that shows on the probe changes it without anyone having to
remember a version number. `MANUAL` is for the rare change the probe does not show.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from ..store import schema as s
from ..store.engine import DiskFull
from .index import search_text

if TYPE_CHECKING:
    from ..store.engine import Database

log = logging.getLogger("lomo.router")

MANUAL = "4"  # 2: hiragana names, nouns in -ие keyed twice; 3: CJK folded to simplified, position counters out;
# 4: lone CJK characters that say how (好, 次, 秒 …) out
KEY = "search_text_scheme"
BATCH = 200  # tasks per write transaction: short transactions, so turns never wait long for the lock
PROBE = (
    "Spring posters for the running club, three movies and a string quartet; posters/rain_2.png",
    "春季海报系列，给读书会做一套宣传图；上次那套再暖一点",
    "桜のポスターを5枚、もっと明るくして",
    "Пять постеров для кофейни, серия открыток, ролик покороче",
)


@cache
def scheme() -> str:
    """The current keyword scheme: MANUAL plus a digest of the probe's keywords."""
    words = search_text(PROBE[0], "\n".join(PROBE[1:]))
    return f"{MANUAL}:{hashlib.sha1(words.encode('utf-8')).hexdigest()[:12]}"


async def stored_scheme(conn: Any) -> str | None:
    return (await conn.execute(select(s.meta.c.value).where(s.meta.c.key == KEY))).scalar()


async def rekey(db: "Database", batch: int = BATCH) -> int:
    """Rewrite every task's search_text if it was written with another scheme. Returns how many
    tasks were re-keyed (0 when the database is current). Safe to run in several processes at once."""
    current = scheme()
    async with db.read() as conn:
        if await stored_scheme(conn) == current:
            return 0
    done, after = 0, ""
    while True:
        async with db.write() as conn:
            rows = (await conn.execute(select(s.tasks.c.id, s.tasks.c.title, s.tasks.c.goal, s.tasks.c.summary,
                                              s.tasks.c.search_text).where(s.tasks.c.id > after).order_by(
                s.tasks.c.id).limit(batch))).all()
            if not rows:
                await _set_scheme(conn, current)
                return done
            for row in rows:
                value = search_text(row.title, row.goal or "", row.summary or "")
                if value != row.search_text:
                    await conn.execute(update(s.tasks).where(s.tasks.c.id == row.id).values(search_text=value))
                    done += 1
            after = rows[-1].id
        await asyncio.sleep(0)  # let turns in between


async def _set_scheme(conn: Any, value: str) -> None:
    updated = await conn.execute(update(s.meta).where(s.meta.c.key == KEY).values(value=value))
    if not updated.rowcount:
        await conn.execute(s.meta.insert().values(key=KEY, value=value))


class SearchRekey:
    """A runtime service: re-keys the tasks once after an upgrade of the language layer."""

    def __init__(self, db: "Database") -> None:
        self.db = db
        self._task: asyncio.Task[int] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="lomo-search-rekey")

    async def _run(self) -> int:
        try:
            count = await rekey(self.db)
        except DiskFull:
            return 0  # the runtime says the disk is full (runtime/space.py); try next start
        except Exception:  # noqa: BLE001 — stale keywords only make old tasks harder to find; try next start
            log.exception("re-keying the task search index failed")
            return 0
        if count:
            log.info("re-keyed the search keywords of %d tasks for the current language layer", count)
        return count

    async def wait(self) -> int:
        """The number of tasks re-keyed by this start (for tests and tools)."""
        return await self._task if self._task is not None else 0

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
