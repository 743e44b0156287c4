"""Recall: what a step's context carries from memory, and what later contexts must leave out.

- `profile_snapshot(db)`: the creator profile (a small, versioned text) for the stable prefix;
- `recall_for_step(db, task_id, text)`: a handful of active memories for this step, by scope (the creator's,
  plus this task's or project's own) and relevance (FTS5 on SQLite, keyword containment elsewhere);
  skipped when it takes longer than RECALL_TIMEOUT (F5);
- `record_context_use(...)`: which memory versions a step's context carried;
- `excluded_message_ids(db, task_id)`: replies and tool results of steps that carried a since-forgotten
  memory, for the context builder to drop.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from sqlalchemy import insert, or_, select, text

from ..language import keywords
from ..router.index import dialect_name
from ..store import schema as s
from ..store.engine import fetch
from . import store

log = logging.getLogger("lomo.memory")

RECALL_LIMIT = 5
RECALL_TIMEOUT = 0.25  # seconds; a slower recall is skipped for this step
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
                          timeout: float = RECALL_TIMEOUT) -> list[Recalled]:
    """Up to LIMIT memories for TASK_ID's next step about QUERY; [] when recall fails or is too slow."""
    async def work() -> list[Recalled]:
        async with db.read() as conn:
            return await recall(conn, task_id, query, limit)

    try:
        return await asyncio.wait_for(work(), timeout)
    except asyncio.TimeoutError:
        log.info("memory recall for %s took over %.2f s; skipped for this step", task_id, timeout)
    except Exception as exc:  # noqa: BLE001 — the task goes on without memory (F5)
        log.warning("memory recall for %s failed (%s); skipped for this step", task_id, type(exc).__name__)
    return []


COLUMNS = ("v.id AS id, v.memory_id AS memory_id, v.version AS version, v.text AS text, v.search_text AS search_text, "
           "m.kind AS kind, m.scope AS scope, m.scope_ref AS scope_ref, m.stated AS stated")
OWN_SQL = (f"SELECT {COLUMNS} FROM memories m JOIN memory_versions v ON v.memory_id = m.id "
           "WHERE m.scope_ref = :task AND v.status = 'active' ORDER BY v.created_at DESC LIMIT :n")
COUNT_SQL = "SELECT count(*) AS n FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH :t LIMIT :cap) AS hits"
RANK_SQL = "SELECT version_id, rank FROM memory_fts WHERE memory_fts MATCH :q ORDER BY rank LIMIT :n"


async def recall(conn: Any, task_id: str | None, query: str, limit: int = RECALL_LIMIT) -> list[Recalled]:
    """The recall itself, inside a read transaction (plain SQL: it runs on every step)."""
    if limit <= 0:
        return []
    own = await fetch(conn, OWN_SQL, {"task": task_id, "n": limit}) if task_id else []
    out = {r.id: _recalled(r, 1.0) for r in own}
    words = keywords(query)[:QUERY_KEYWORDS]
    if words and len(out) < limit:
        for row, score in await _search(conn, task_id, words, CANDIDATES):
            if row.id not in out:
                out[row.id] = _recalled(row, score)
            if len(out) >= limit:
                break
    return list(out.values())[:limit]


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


async def _telling(conn: Any, words: list[str]) -> list[str]:
    """WORDS less those held by more than COMMON_DOCS memories (they tell none apart and make ranking slow);
    the rarest one stays when all are common."""
    counts = {}
    for word in dict.fromkeys(words):  # counting a term's doclist (capped) is cheap; ranking it is not
        n = (await fetch(conn, COUNT_SQL, {"t": _quoted(word), "cap": COMMON_DOCS + 1}))[0].n
        if n:
            counts[word] = n
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
        # the index holds active versions only: rank there first (FTS5 stops at the limit), then join the few
        hits = await fetch(conn, RANK_SQL, {"q": " OR ".join(_quoted(w) for w in telling), "n": limit})
        if not hits:
            return []
        rank = {h.version_id: h.rank for h in hits}
        marks = ", ".join(f":v{i}" for i in range(len(rank)))
        rows = await fetch(conn, f"SELECT {COLUMNS} FROM memory_versions v JOIN memories m ON m.id = v.memory_id "
                                 f"WHERE v.id IN ({marks})", {f"v{i}": v for i, v in enumerate(rank)})
        best = min(rank.values()) or -1.0
        scoped = [r for r in rows if r.scope == "creator" or (task_id and r.scope_ref == task_id)]
        return sorted(((r, rank[r.id] / best if best < 0 else 0.0) for r in scoped), key=lambda x: -x[1])
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


async def profile_snapshot(db: Any) -> str:
    """The current creator profile, for the stable prefix ("" when nothing is remembered). An old snapshot
    is never returned: a forget makes a new version."""
    text_, _ = await profile_with_versions(db)
    return text_


async def profile_with_versions(db: Any) -> tuple[str, list[str]]:
    """The profile text and the memory versions it was made from (for `record_context_use`)."""
    try:
        async with db.read() as conn:
            row = await store.current_profile(conn)
            if row is None:
                return "", []
            ids = (await conn.execute(select(s.memory_derivations.c.source_id).where(
                s.memory_derivations.c.target_kind == "profile", s.memory_derivations.c.target_id == row.id))).scalars()
            return row.text, list(ids)
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
    t = time.time()
    await conn.execute(insert(s.memory_context_uses), [
        {"task_id": task_id, "turn_id": turn_id, "step": step, "version_id": v, "excluded": False, "created_at": t}
        for v in ids])


async def excluded_message_ids(db: Any, task_id: str) -> set[int]:
    """Ids (messages table) of TASK_ID's replies and tool results made by steps whose context carried a memory
    that has since been forgotten: later contexts leave them out."""
    async with db.read() as conn:
        rows = (await conn.execute(select(s.messages.c.id).join(
            s.memory_context_uses, (s.memory_context_uses.c.turn_id == s.messages.c.turn_id)
            & (s.memory_context_uses.c.step == s.messages.c.step)).where(
            s.messages.c.task_id == task_id, s.messages.c.role.in_(("assistant", "tool")),
            s.memory_context_uses.c.excluded.is_(True)))).scalars().all()
    return set(rows)
