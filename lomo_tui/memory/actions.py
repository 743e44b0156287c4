"""What the creator does with a memory from the memory view (F3, issue #14 §6): see it with its sources,
edit it in their own words, confirm it, and see what a forget would take.

- An edit is the creator's own refinement: their words become evidence (kept, never rewritten), and a new
  version stands on it (REFINE) and on what the old version stood on; the old version is SUPERSEDED. So
  forgetting the message a memory came from still takes the edited version with it (nothing it held is kept
  by an edit). An edited inference becomes stated: the words are now the creator's.
- A confirmation adds CONFIRM evidence to the active version, without a new version. The evidence row says
  only that it was confirmed in the view (it copies no memory text).
- Forgetting itself is `forget.forget` after the creator's explicit yes; `forget_preview` lists what goes.

Every change runs in one write transaction with its index rows and the profile. Nothing here logs memory text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, update

from .. import clock
from ..errors import LomoError, UnknownId
from ..base.ids import new_id
from ..store import schema as s
from . import store
from .listing import memory_rows

EDIT_SOURCE = "creator"  # an edit is the creator's own words, as much as a message is
CONFIRMED_TEXT = "(confirmed in the memory view)"
MAX_EDIT = 2000
VIEW_PREFIX = "mev"  # the id prefix of evidence made in the view


@dataclass(frozen=True)
class Source:
    """One piece of evidence a version stands on: the creator's words, where and when they were said."""
    message_id: str
    role: str  # origin | refine | confirm
    text: str
    task_id: str | None
    task_title: str | None  # None: said in the main thread (whoever shows it names it in the reader's language)
    at: float
    eligible: bool
    in_view: bool = False  # an edit or a confirmation made in the memory view (not a message)

    @property
    def main(self) -> bool:
        """Whether it was said in the main thread."""
        return self.task_title is None


@dataclass(frozen=True)
class MemoryEntry:
    """A memory as the view shows it: its active version, every version, and the sources of each."""
    id: str
    kind: str
    scope: str
    scope_ref: str | None
    scope_title: str | None  # the task's title; None for the creator's scope and for the main thread (worded by
    # whoever shows it, in the reader's language)
    stated: bool
    version: int
    version_id: str
    text: str
    updated_at: float
    versions: list[dict[str, Any]] = field(default_factory=list)  # memory_rows shape, oldest first
    sources: dict[str, list[Source]] = field(default_factory=dict)  # version id -> its sources


async def memory_entries(conn: Any) -> list[MemoryEntry]:
    """Every memory that has an active version, newest change first, with all its versions and their sources."""
    every = await memory_rows(conn, every_version=True)
    by_memory: dict[str, list[dict[str, Any]]] = {}
    for row in every:
        by_memory.setdefault(row["id"], []).append(row)
    evidence_ids = sorted({e["message_id"] for r in every for e in r["evidence"]})
    evidence: dict[str, Any] = {}
    for n in range(0, len(evidence_ids), 500):
        for e in (await conn.execute(select(s.memory_evidence).where(
                s.memory_evidence.c.id.in_(evidence_ids[n:n + 500])))).all():
            evidence[e.id] = e
    task_ids = sorted({e.task_id for e in evidence.values() if e.task_id}
                      | {r["scope_ref"] for r in every if r["scope_ref"]})
    titles: dict[str, str] = {}  # tasks by title; the main thread has none here (its name is the reader's word)
    mains: set[str] = set()
    if task_ids:
        for t in (await conn.execute(select(s.tasks.c.id, s.tasks.c.title, s.tasks.c.kind).where(
                s.tasks.c.id.in_(task_ids)))).all():
            if t.kind == "main":
                mains.add(t.id)
            else:
                titles[t.id] = t.title
    updated = dict((await conn.execute(select(s.memories.c.id, s.memories.c.updated_at))).all())
    out = []
    for memory_id, versions in by_memory.items():
        active = [v for v in versions if v["status"] == "active"]
        if not active:
            continue
        current = active[-1]
        sources = {}
        for v in versions:
            sources[v["version_id"]] = [
                Source(e["message_id"], e["role"], evidence[e["message_id"]].text if e["message_id"] in evidence else "",
                       getattr(evidence.get(e["message_id"]), "task_id", None),
                       titles.get(getattr(evidence.get(e["message_id"]), "task_id", None) or ""),
                       float(getattr(evidence.get(e["message_id"]), "created_at", 0) or 0),
                       bool(getattr(evidence.get(e["message_id"]), "eligible", False)),
                       e["message_id"].startswith(VIEW_PREFIX + "-"))
                for e in v["evidence"]]
        scope_ref = current["scope_ref"]
        out.append(MemoryEntry(
            id=memory_id, kind=current["kind"], scope=current["scope"], scope_ref=scope_ref,
            scope_title=None if current["scope"] == "creator" or scope_ref in mains
            else titles.get(scope_ref or "", scope_ref or ""),
            stated=current["stated"], version=current["version"], version_id=current["version_id"],
            text=current["text"], updated_at=float(updated.get(memory_id) or 0), versions=versions,
            sources=sources))
    out.sort(key=lambda m: (-m.updated_at, m.id))
    return out


async def _active(conn: Any, memory_id: str) -> Any:
    memory = (await conn.execute(select(s.memories).where(s.memories.c.id == memory_id))).first()
    if memory is None:
        raise UnknownId.said("cli_error.memory_unknown", id=memory_id)
    version = (await conn.execute(select(s.memory_versions).where(
        s.memory_versions.c.memory_id == memory_id, s.memory_versions.c.status == "active").order_by(
        s.memory_versions.c.version.desc()))).first()
    if version is None:
        raise LomoError.said("cli_error.memory_forgotten")
    return memory, version


async def _evidence(conn: Any, body: str, *, task_id: str | None, at: float) -> str:
    """A creator evidence row for a view action (not read for new memories: extraction is skipped)."""
    evidence_id = new_id(VIEW_PREFIX)
    await store.record_evidence(conn, evidence_id, task_id, body, at=at)
    await conn.execute(update(s.memory_evidence).where(s.memory_evidence.c.id == evidence_id).values(
        source=EDIT_SOURCE, extract_status="skipped"))
    return evidence_id


async def edit_memory(db: Any, memory_id: str, new_text: str) -> dict[str, Any]:
    """The creator rewrote MEMORY_ID as NEW_TEXT: a new version (REFINE evidence: their words), the old one
    SUPERSEDED. Returns {"id", "version", "version_id", "evidence"}; unchanged text changes nothing
    ({"unchanged": True, ...})."""
    body = " ".join(new_text.split())
    if not body:
        raise LomoError.said("cli_error.memory_empty")
    if len(body) > MAX_EDIT:
        raise LomoError.said("cli_error.memory_long", n=MAX_EDIT)
    async with db.write() as conn:
        memory, current = await _active(conn, memory_id)
        if body == current.text:
            return {"id": memory_id, "version": current.version, "version_id": current.id, "evidence": None,
                    "unchanged": True}
        t = clock.now()
        evidence_id = await _evidence(conn, body, task_id=memory.scope_ref, at=t)
        await store.supersede(conn, current.id, t)
        kept = [(r.evidence_id, r.role) for r in await store.links_of(conn, current.id) if r.role != "confirm"]
        version_id = await store.add_version(conn, memory_id, body, kept + [(evidence_id, "refine")],
                                             derived_from=[current.id], at=t)
        if not memory.stated:
            await conn.execute(update(s.memories).where(s.memories.c.id == memory_id).values(stated=True))
        await store.refresh_profile(conn)
        number = (await conn.execute(select(func.max(s.memory_versions.c.version)).where(
            s.memory_versions.c.memory_id == memory_id))).scalar()
    return {"id": memory_id, "version": int(number or 0), "version_id": version_id, "evidence": evidence_id,
            "unchanged": False}


async def confirm_memory(db: Any, memory_id: str) -> dict[str, Any]:
    """The creator confirmed MEMORY_ID: CONFIRM evidence on its active version, no new version.
    Returns {"id", "version", "version_id", "evidence"}."""
    async with db.write() as conn:
        memory, current = await _active(conn, memory_id)
        t = clock.now()
        evidence_id = await _evidence(conn, CONFIRMED_TEXT, task_id=memory.scope_ref, at=t)
        await store.link(conn, current.id, evidence_id, "confirm", t)
        await conn.execute(update(s.memories).where(s.memories.c.id == memory_id).values(updated_at=t))
    return {"id": memory_id, "version": current.version, "version_id": current.id, "evidence": evidence_id}


async def forget_preview(conn: Any, memory_id: str) -> dict[str, Any]:
    """What forgetting MEMORY_ID takes: {"versions": [(number, status, text)], "profile": in the current profile,
    "summaries": episodic summaries rebuilt, "contexts": earlier steps whose replies leave later contexts}."""
    versions = [v for v in await memory_rows(conn, every_version=True, memory_id=memory_id)
                if v["status"] != "forgotten"]
    if not versions:
        raise UnknownId.said("cli_error.memory_gone", id=memory_id)
    ids = [v["version_id"] for v in versions]
    profile = await store.current_profile(conn)
    in_profile = bool(profile is not None and (await conn.execute(select(s.memory_derivations.c.source_id).where(
        s.memory_derivations.c.target_kind == "profile", s.memory_derivations.c.target_id == profile.id,
        s.memory_derivations.c.source_id.in_(ids)))).first())
    summaries = (await conn.execute(select(func.count(func.distinct(s.memory_derivations.c.target_id))).join(
        s.memory_summaries, s.memory_summaries.c.id == s.memory_derivations.c.target_id).where(
        s.memory_derivations.c.target_kind == "summary", s.memory_derivations.c.source_kind == "version",
        s.memory_derivations.c.source_id.in_(ids), s.memory_summaries.c.status == "active"))).scalar() or 0
    contexts = (await conn.execute(select(func.count()).select_from(s.memory_context_uses).where(
        s.memory_context_uses.c.version_id.in_(ids), s.memory_context_uses.c.excluded.is_(False)))).scalar() or 0
    return {"versions": [(v["version"], v["status"], v["text"]) for v in versions], "profile": in_profile,
            "summaries": int(summaries), "contexts": int(contexts)}
