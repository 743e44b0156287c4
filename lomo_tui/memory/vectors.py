"""Memory vectors: with `memory.embedding_model` set, recall also finds memories by meaning (issue #14 §4).

Each active memory version gets one unit-length embedding in `memory_vectors`, made in the background
(`refresh`) through litellm's embeddings (only then is litellm imported); a row is deleted in the same
transaction that supersedes or forgets its version (`store.unindex_versions`), so the index rows equal the
active memories once a refresh has run, and never hold a forgotten one. A query is embedded once per text
and compared by cosine similarity against vectors cached in this process; every hit is checked against the
database (still active?) before it is recalled. A failed or slow embedding only means no vector hits for
that step (F5). Nothing here logs a memory's text.
"""
from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

from sqlalchemy import delete, func, insert, select

from .. import clock
from ..router.vectors import unit
from ..store import schema as s

log = logging.getLogger("lomo.memory")

BATCH = 64
MIN_SIMILARITY = 0.3
QUERY_CACHE = 256


class MemoryVectors:
    """The vector side of memory recall for one database and one embedding model."""

    def __init__(self, db: Any, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 timeout: float = 2.0) -> None:
        self.db = db
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout  # a query's embedding waited for at most this long
        self._cache: dict[str, list[float]] = {}  # version id → vector, for rows up to _last
        self._last = 0
        self._queries: dict[str, list[float]] = {}

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        from ..models.remote import embed

        return await embed(texts, self.model, api_base=self.api_base, api_key=self.api_key, timeout=30,
                           max_attempts=2, backoff_base=0.2)

    async def refresh(self) -> int:
        """Embed the active versions that have no vector yet; drop rows of other models or of versions no
        longer active. Returns how many were embedded."""
        async with self.db.write() as conn:  # rows of another model or of a version gone: out
            await conn.execute(delete(s.memory_vectors).where(s.memory_vectors.c.model != self.model))
            await conn.execute(delete(s.memory_vectors).where(s.memory_vectors.c.version_id.not_in(
                select(s.memory_versions.c.id).where(s.memory_versions.c.status == "active"))))
        async with self.db.read() as conn:
            todo = (await conn.execute(select(s.memory_versions.c.id, s.memory_versions.c.text).where(
                s.memory_versions.c.status == "active",
                s.memory_versions.c.id.not_in(select(s.memory_vectors.c.version_id))).order_by(
                s.memory_versions.c.created_at))).all()
        made = 0
        for start in range(0, len(todo), BATCH):
            batch = todo[start:start + BATCH]
            vectors = [unit([float(x) for x in v]) for v in await self._embed([r.text for r in batch])]
            async with self.db.write() as conn:
                # only versions still active now: one forgotten while its text was embedded gets no row
                active = set((await conn.execute(select(s.memory_versions.c.id).where(
                    s.memory_versions.c.id.in_([r.id for r in batch]), s.memory_versions.c.status == "active",
                    s.memory_versions.c.id.not_in(select(s.memory_vectors.c.version_id))))).scalars())
                rows = [{"version_id": r.id, "model": self.model, "vector": v, "created_at": clock.now()}
                        for r, v in zip(batch, vectors) if r.id in active]
                if rows:
                    await conn.execute(insert(s.memory_vectors), rows)
                made += len(rows)
        return made

    async def query(self, text: str) -> list[float] | None:
        """TEXT's unit vector (cached), or None when the embedding failed or took longer than `timeout`."""
        text = text.strip()
        if not text:
            return None
        found = self._queries.get(text)
        if found is not None:
            return found
        try:
            [raw] = await asyncio.wait_for(self._embed([text]), self.timeout)
        except Exception as exc:  # noqa: BLE001 — no vector hits this step; keywords still work (F5)
            log.info("memory recall by meaning skipped for this step (%s)", type(exc).__name__)
            return None
        vector = self._queries[text] = unit([float(x) for x in raw])
        if len(self._queries) > QUERY_CACHE:
            self._queries.pop(next(iter(self._queries)))
        return vector

    async def nearest(self, conn: Any, vector: list[float], limit: int) -> list[tuple[str, float]]:
        """Version ids closest to VECTOR (id, cosine), best first, above MIN_SIMILARITY. Candidates only:
        the caller reads them back and keeps the active ones."""
        await self._sync(conn)
        scored = [(version_id, math.fsum(a * b for a, b in zip(vector, other)))
                  for version_id, other in self._cache.items() if len(other) == len(vector)]
        scored.sort(key=lambda item: -item[1])
        return [(v, score) for v, score in scored[:limit] if score >= MIN_SIMILARITY]

    async def _sync(self, conn: Any) -> None:
        """Load rows added since the last look; when rows went away, keep only those still there."""
        new = (await conn.execute(select(s.memory_vectors.c.id, s.memory_vectors.c.version_id,
                                         s.memory_vectors.c.vector).where(
            s.memory_vectors.c.id > self._last, s.memory_vectors.c.model == self.model))).all()
        for row in new:
            self._cache[row.version_id] = list(row.vector)
            self._last = max(self._last, row.id)
        count = (await conn.execute(select(func.count()).select_from(s.memory_vectors).where(
            s.memory_vectors.c.model == self.model))).scalar() or 0
        if count != len(self._cache):
            kept = set((await conn.execute(select(s.memory_vectors.c.version_id).where(
                s.memory_vectors.c.model == self.model))).scalars())
            self._cache = {v: vec for v, vec in self._cache.items() if v in kept}
