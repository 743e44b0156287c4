"""Summary vectors of tasks (A6): with `[router] embedding_model` set, older tasks are also found by
meaning, not only by shared keywords. Without it this service does nothing and costs nothing.

The runtime keeps one unit-length vector per task (title, goal, summary) in `task_vectors`, refreshed
in the background when that text changes; a main-thread message is embedded once and compared by
cosine similarity. A failed or slow embedding call only means no vector hits for that step.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import math
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import delete, insert, select

from ..store import schema as s
from .. import clock

if TYPE_CHECKING:
    from ..config import Settings
    from ..store.engine import Database

log = logging.getLogger("lomo.router")
BATCH = 64
QUERY_TIMEOUT = 5.0
MIN_SIMILARITY = 0.3


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


def task_text(row: Any) -> str:
    return "\n".join(part for part in (row.title, row.goal, row.summary) if part)


class VectorsHost(Protocol):
    """What the task vectors use of the runtime that hosts them."""

    settings: Settings
    db: Database


class TaskVectors:
    def __init__(self, host: VectorsHost) -> None:
        self.host = host
        section = host.settings.section("router")
        self.model: str | None = section.get("embedding_model") or None
        provider = host.settings.section("providers").get((self.model or "").split("/", 1)[0], {})
        self.api_base = section.get("embedding_api_base") or provider.get("api_base")
        self.api_key = provider.get("api_key")
        self.vectors: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    @property
    def enabled(self) -> bool:
        return self.model is not None

    async def start(self) -> None:
        if not self.enabled:
            return
        async with self.host.db.read() as conn:
            rows = (await conn.execute(select(s.task_vectors.c.task_id, s.task_vectors.c.vector).where(
                s.task_vectors.c.model == self.model))).all()
        self.vectors = {r.task_id: list(r.vector) for r in rows}
        self._task = asyncio.create_task(self._loop(), name="lomo-task-vectors")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                await self.refresh()
            except Exception as exc:  # noqa: BLE001 — retrieval by meaning is a bonus, never a failure
                log.warning("task vectors not refreshed: %s", exc)
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=self.host.settings.watchdog_seconds)
            except asyncio.TimeoutError:
                pass

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        from ..models.remote import embed

        return await embed(texts, self.model or "", api_base=self.api_base, api_key=self.api_key,
                           max_attempts=2, backoff_base=0.2)

    async def refresh(self) -> int:
        """Embed the tasks whose text changed since their vector was made. Returns how many."""
        async with self.host.db.read() as conn:
            tasks = (await conn.execute(select(s.tasks.c.id, s.tasks.c.title, s.tasks.c.goal, s.tasks.c.summary)
                                        .where(s.tasks.c.kind != "main").order_by(s.tasks.c.created_at))).all()
            known = {r.task_id: r.digest for r in (await conn.execute(select(
                s.task_vectors.c.task_id, s.task_vectors.c.digest).where(s.task_vectors.c.model == self.model))).all()}
        stale = []
        for row in tasks:
            text = task_text(row)
            digest = hashlib.sha1(f"{self.model}\n{text}".encode()).hexdigest()
            if known.get(row.id) != digest:
                stale.append((row.id, text, digest))
        for start in range(0, len(stale), BATCH):
            batch = stale[start:start + BATCH]
            vectors = [unit(v) for v in await self._embed([text for _, text, _ in batch])]
            async with self.host.db.write() as conn:
                for (task_id, _, digest), vector in zip(batch, vectors):
                    await conn.execute(delete(s.task_vectors).where(s.task_vectors.c.task_id == task_id))
                    await conn.execute(insert(s.task_vectors).values(task_id=task_id, model=self.model,
                                                                     digest=digest, vector=vector,
                                                                     updated_at=clock.now()))
            for (task_id, _, _), vector in zip(batch, vectors):
                self.vectors[task_id] = vector
        return len(stale)

    async def similar(self, texts: list[str], limit: int) -> list[tuple[str, float]]:
        """Tasks closest in meaning to TEXTS (task id, cosine similarity), best first; [] when disabled,
        when nothing is close enough, or when the embedding call fails or is slow."""
        text = "\n".join(t for t in texts if t.strip())
        if not self.enabled or not self.vectors or not text:
            return []
        query = self._queries.get(text)
        if query is None:
            try:
                [raw] = await asyncio.wait_for(self._embed([text]), QUERY_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 — no vector hits this step, keywords still work
                log.info("message not embedded: %s", exc)
                return []
            query = self._queries[text] = unit(raw)
            if len(self._queries) > 256:
                self._queries.pop(next(iter(self._queries)))
        scored = [(task_id, math.fsum(a * b for a, b in zip(query, vector)))
                  for task_id, vector in self.vectors.items() if len(vector) == len(query)]
        scored.sort(key=lambda item: item[1], reverse=True)
        return [(task_id, score) for task_id, score in scored[:limit] if score >= MIN_SIMILARITY]
