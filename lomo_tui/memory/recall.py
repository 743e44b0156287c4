"""Recall: what a step's context carries from memory, and what later contexts must leave out.

- `profile_snapshot(db)`: the creator profile (a small, versioned text) for the stable prefix;
- `recall_for_step(db, task_id, text)`: a handful of active memories for this step, by scope (the creator's,
  plus this task's or project's own) and relevance (FTS5 on SQLite, keyword containment elsewhere);
  skipped when it takes longer than RECALL_TIMEOUT (F5: on SQLite the running statement is interrupted),
  joined by memories close in meaning when an embedding model is configured (`vectors`);
- `record_context_use(...)`: which memory versions a step's context carried;
- `excluded_message_ids(db, task_id)`: replies and tool results of steps that carried a since-forgotten
  memory, for the context builder to drop.
"""
from __future__ import annotations

import asyncio
import logging
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from sqlalchemy import insert, or_, select

from ..language import keywords
from ..router.index import dialect_name
from ..store import schema as s
from ..store.engine import fetch
from . import store
from .. import clock

if TYPE_CHECKING:
    from .vectors import MemoryVectors

log = logging.getLogger("lomo.memory")

RECALL_LIMIT = 5
RECALL_TIMEOUT = 0.25  # seconds; a slower recall is skipped for this step
PROGRESS_OPS = 10000  # SQLite virtual-machine steps between deadline checks
QUERY_KEYWORDS = 16
CANDIDATES = 40
COMMON_DOCS = 100  # a word in more memories than this does not help choose among them


@dataclass(frozen=True)
class Recalled:
    """One memory as a step's context carries it."""

    id: str  # the memory
    version_id: str
    version: int
    kind: str
    scope: str
    stated: bool
    text: str
    score: float

    def render(self) -> str:
        if self.stated:
            return f'- [{self.kind}, {self.scope}] the creator said: "{store.clip(self.text, 240)}"'
        return f"- [{self.kind}, {self.scope}] your own inference, never confirmed by the creator: " \
               f"{store.clip(self.text, 240)}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def render_recall(items: Iterable[Recalled]) -> str:
    lines = [r.render() for r in items]
    return "Remembered for this step (memory ids in `lomo memory list`):\n" + "\n".join(lines) if lines else ""


async def recall_for_step(db: Any, task_id: str, query: str, limit: int = RECALL_LIMIT, *,
                          timeout: float = RECALL_TIMEOUT, vectors: "MemoryVectors | None" = None) -> list[Recalled]:
    """Up to LIMIT memories for TASK_ID's next step about QUERY; [] when recall fails or takes longer than
    TIMEOUT seconds (F5). With VECTORS (an embedding model configured) memories close in meaning join the
    keyword hits; their query's embedding is waited for at most `vectors.timeout`, else the step goes on
    with keywords only."""
    if limit <= 0:
        return []
    embedding = asyncio.ensure_future(vectors.query(query)) if vectors is not None else None
    deadline = time.monotonic() + timeout
    try:
        if timeout <= 0:
            raise asyncio.TimeoutError
        async with db.read() as conn:
            with interrupt_after(conn, deadline):
                if getattr(db, "is_sqlite", True):  # statements run on this thread: SQLite interrupts them
                    found = await recall(conn, task_id, query, limit, deadline=deadline)
                else:  # a server's query awaits: cancelled at the deadline
                    found = await asyncio.wait_for(recall(conn, task_id, query, limit), timeout)
        if embedding is not None:
            found = await _with_vectors(db, vectors, embedding, task_id, found, limit)
        return found
    except asyncio.TimeoutError:
        log.info("memory recall for %s took over %.2f s; skipped for this step", task_id, timeout)
    except Exception as exc:  # noqa: BLE001 — the task goes on without memory (F5)
        if "interrupted" in str(exc):
            log.info("memory recall for %s took over %.2f s; skipped for this step", task_id, timeout)
        else:
            log.warning("memory recall for %s failed (%s); skipped for this step", task_id, type(exc).__name__)
    if embedding is not None and not embedding.done():
        embedding.cancel()
    return []


@contextmanager
def interrupt_after(conn: Any, deadline: float) -> Iterator[None]:
    """On SQLite, abort any statement still running at DEADLINE (monotonic): its progress handler answers
    "stop" (sqlite3 raises "interrupted"). Elsewhere nothing: the caller's timeout cancels the await."""
    raw = getattr(getattr(getattr(conn, "sync", None), "connection", None), "driver_connection", None)
    if raw is None or not hasattr(raw, "set_progress_handler"):
        yield
        return
    raw.set_progress_handler(lambda: time.monotonic() > deadline, PROGRESS_OPS)
    try:
        yield
    finally:
        raw.set_progress_handler(None, 0)


async def _with_vectors(db: Any, vectors: "MemoryVectors", embedding: "asyncio.Future[list[float] | None]",
                        task_id: str | None, found: list[Recalled], limit: int) -> list[Recalled]:
    """FOUND (keyword and own-scope hits) joined by the memories nearest in meaning."""
    try:
        vector = await asyncio.wait_for(embedding, vectors.timeout)
    except asyncio.TimeoutError:
        log.info("memory recall by meaning for %s skipped for this step (slow embedding)", task_id)
        return found
    if vector is None:
        return found
    async with db.read() as conn:
        near = await vectors.nearest(conn, vector, CANDIDATES)
        if not near:
            return found
        score = dict(near)
        rows = (await conn.execute(_columns().where(
            s.memory_versions.c.id.in_(list(score)), s.memory_versions.c.status == "active",
            _in_scope(task_id)))).all()
    out = {r.version_id: r for r in found}
    own = [r for r in found if r.score >= 1.0]
    for row in sorted(rows, key=lambda r: -score[r.id]):
        if row.id not in out or out[row.id].score < score[row.id]:
            out[row.id] = _recalled(row, score[row.id])
    rest = sorted((r for r in out.values() if r not in own), key=lambda r: -r.score)
    return (own + rest)[:limit]


COLUMNS = ("v.id AS id, v.memory_id AS memory_id, v.version AS version, v.text AS text, v.search_text AS search_text, "
           "m.kind AS kind, m.scope AS scope, m.scope_ref AS scope_ref, m.stated AS stated")
OWN_SQL = (f"SELECT {COLUMNS} FROM memories m JOIN memory_versions v ON v.memory_id = m.id "
           "WHERE m.scope_ref = :task AND v.status = 'active' ORDER BY v.created_at DESC LIMIT :n")
SEARCH_SQL = (f"SELECT {COLUMNS}, memory_fts.rank AS rank FROM memory_fts "
              "JOIN memory_versions v ON v.id = memory_fts.version_id JOIN memories m ON m.id = v.memory_id "
              "WHERE memory_fts MATCH :q AND (m.scope = 'creator' OR m.scope_ref = :task) "
              "ORDER BY memory_fts.rank LIMIT :n")  # the index holds active versions only (invariant 3)
NEWEST_SQL = SEARCH_SQL.replace("ORDER BY memory_fts.rank", "ORDER BY memory_fts.rowid DESC")  # one word: no bm25


async def recall(conn: Any, task_id: str | None, query: str, limit: int = RECALL_LIMIT, *,
                 deadline: float | None = None) -> list[Recalled]:
    """The recall itself, inside a read transaction (plain SQL: it runs on every step). Past DEADLINE
    (monotonic) it stops with asyncio.TimeoutError."""
    if limit <= 0:
        return []
    own = await fetch(conn, OWN_SQL, {"task": task_id, "n": limit}) if task_id else []
    out = {r.id: _recalled(r, 1.0) for r in own}
    words = keywords(query)[:QUERY_KEYWORDS]
    if deadline is not None and time.monotonic() > deadline:
        raise asyncio.TimeoutError
    if words and len(out) < limit:
        for row, score in await _search(conn, task_id, words, limit + len(out)):
            if row.id not in out:
                out[row.id] = _recalled(row, score)
            if len(out) >= limit:
                break
    return list(out.values())[:limit]


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


@cache
def _count_sql(n: int) -> str:
    """One statement counting N terms' doclists, each capped at :cap (a capped count is cheap; ranking is not)."""
    return "SELECT " + ", ".join(f"(SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH :t{i} "
                                 f"LIMIT :cap)) AS n{i}" for i in range(n))


async def _telling(conn: Any, words: list[str]) -> list[str]:
    """WORDS less those held by more than COMMON_DOCS memories (they tell none apart and make ranking slow);
    the rarest one stays when all are common."""
    unique = list(dict.fromkeys(words))
    params: dict[str, Any] = {f"t{i}": _quoted(w) for i, w in enumerate(unique)}
    params["cap"] = COMMON_DOCS + 1
    row = (await fetch(conn, _count_sql(len(unique)), params))[0]
    counts = {w: row[f"n{i}"] for i, w in enumerate(unique) if row[f"n{i}"]}
    if not counts:
        return []
    kept = [w for w, n in counts.items() if n <= COMMON_DOCS]
    return kept or [min(counts, key=counts.__getitem__)]


def _columns() -> Any:
    return select(s.memory_versions.c.id, s.memory_versions.c.memory_id, s.memory_versions.c.version,
                  s.memory_versions.c.text, s.memory_versions.c.search_text, s.memories.c.kind, s.memories.c.scope,
                  s.memories.c.scope_ref, s.memories.c.stated).join(
        s.memories, s.memories.c.id == s.memory_versions.c.memory_id)


def _recalled(row: Any, score: float) -> Recalled:
    return Recalled(id=row.memory_id, version_id=row.id, version=row.version, kind=row.kind, scope=row.scope,
                    stated=bool(row.stated), text=row.text, score=round(score, 3))


def _in_scope(task_id: str | None) -> Any:
    return or_(s.memories.c.scope == "creator", s.memories.c.scope_ref == task_id) if task_id else \
        s.memories.c.scope == "creator"


async def _search(conn: Any, task_id: str | None, words: list[str], limit: int) -> list[tuple[Any, float]]:
    if dialect_name(conn) == "sqlite":
        telling = await _telling(conn, words)
        if not telling:
            return []
        # one statement: FTS5 ranks the few documents of the telling words, joined and scoped, LIMIT rows back;
        # with a single telling word its documents match alike: the newest first, without ranking them (bm25
        # reads every document's size)
        params = {"q": " OR ".join(_quoted(w) for w in telling), "task": task_id, "n": limit}
        if len(telling) == 1:
            return [(r, 1.0) for r in await fetch(conn, NEWEST_SQL, params)]
        rows = await fetch(conn, SEARCH_SQL, params)
        best = rows[0].rank if rows else 0.0
        return [(r, r.rank / best if best < 0 else 0.0) for r in rows]
    terms = [w for w in words if len(w) > 1][:8] or words[:8]
    escaped = [w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for w in terms]
    rows = (await conn.execute(_columns().where(
        s.memory_versions.c.status == "active", _in_scope(task_id),
        or_(*[s.memory_versions.c.search_text.ilike(f"%{w}%", escape="\\") for w in escaped])).order_by(
        s.memory_versions.c.created_at.desc()).limit(limit))).all()
    scored = []
    for row in rows:
        have = set((row.search_text or "").split())
        hits = sum(1 for w in terms if w in have)
        if hits:
            scored.append((row, hits / len(terms)))
    scored.sort(key=lambda x: -x[1])
    top = scored[0][1] if scored else 1.0
    return [(row, score / top) for row, score in scored]


PROFILE_SQL = ("SELECT p.text AS text, d.source_id AS source_id FROM memory_profiles p LEFT JOIN memory_derivations d "
               "ON d.target_kind = 'profile' AND d.target_id = p.id WHERE p.status = 'current' ORDER BY d.id")


async def profile_snapshot(db: Any) -> str:
    """The current creator profile, for the stable prefix ("" when nothing is remembered). An old snapshot
    is never returned: a forget makes a new version."""
    text_, _ = await profile_with_versions(db)
    return text_


async def profile_with_versions(db: Any) -> tuple[str, list[str]]:
    """The profile text and the memory versions it was made from (for `record_context_use`)."""
    try:
        async with db.read() as conn:
            rows = await fetch(conn, PROFILE_SQL, {})  # every step reads it: one plain statement
        if not rows:
            return "", []
        return rows[0].text, [r.source_id for r in rows if r.source_id is not None]
    except Exception as exc:  # noqa: BLE001 — no profile rather than no step
        log.warning("memory profile unavailable (%s)", type(exc).__name__)
        return "", []


async def record_context_use(db: Any, task_id: str, turn_id: str | None, step: int | None,
                             version_ids: Iterable[str], *, conn: Any = None) -> None:
    """Record that the context of TURN_ID's STEP carried VERSION_IDS (recall and profile alike), so a later
    forget can exclude what that step produced."""
    ids = list(dict.fromkeys(version_ids))
    if not ids:
        return
    if conn is None:
        async with db.write(durable=False) as conn:
            return await record_context_use(db, task_id, turn_id, step, ids, conn=conn)
    t = clock.now()
    await conn.execute(insert(s.memory_context_uses), [
        {"task_id": task_id, "turn_id": turn_id, "step": step, "version_id": v, "excluded": False, "created_at": t}
        for v in ids])


FORGETS_DONE = "SELECT count(*) AS n FROM memory_forgets WHERE status = 'done'"


async def forgets_done(conn: Any) -> int:
    """How many forgets have completed: a holder of summary texts re-reads them when this moves."""
    return (await fetch(conn, FORGETS_DONE, {}))[0].n


async def excluded_message_ids(db: Any, task_id: str, *, conn: Any = None) -> set[int]:
    """Ids (messages table) of TASK_ID's replies and tool results made by steps whose context carried a memory
    that has since been forgotten: later contexts leave them out."""
    if conn is None:
        async with db.read() as conn:
            return await excluded_message_ids(db, task_id, conn=conn)
    rows = (await conn.execute(select(s.messages.c.id).join(
        s.memory_context_uses, (s.memory_context_uses.c.turn_id == s.messages.c.turn_id)
        & (s.memory_context_uses.c.step == s.messages.c.step)).where(
        s.messages.c.task_id == task_id, s.messages.c.role.in_(("assistant", "tool")),
        s.memory_context_uses.c.excluded.is_(True)))).scalars().all()
    return set(rows)
