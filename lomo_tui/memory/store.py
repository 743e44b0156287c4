"""The memory layers in the database (F1, F3): evidence, memories and versions with their evidence links,
derivations, the search index, the creator profile and episodic summaries.

Every function here runs inside a caller's write transaction (`Database.write()`), so a change and what
depends on it (index rows, profile, derivations) commit together. Nothing here logs a memory's text.
"""
from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import delete, func, insert, or_, select, text, update

from ..language import keywords
from ..router.index import dialect_name
from ..base.ids import new_id
from ..store import schema as s
from .extract import Candidate, fingerprint
from .. import clock

PROFILE_ENTRIES = 8  # the profile stays small: the newest stated creator-wide memories
SUMMARY_ASKED = 3  # creator messages quoted in an episodic summary
CLIP = 160


def search_text(value: str) -> str:
    return " ".join(keywords(value))[:2000]


def clip(value: str, limit: int = CLIP) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[:limit - 1].rstrip() + "…"


# ---- evidence ------------------------------------------------------------------------------------------
async def record_evidence(conn: Any, message_id: str, task_id: str | None, message: str, *,
                          language: str = "en", at: float | None = None) -> bool:
    """Keep the creator's message MESSAGE_ID as evidence (once). Only creator messages are evidence."""
    if (await conn.execute(select(s.memory_evidence.c.id).where(s.memory_evidence.c.id == message_id))).first():
        return False
    await conn.execute(insert(s.memory_evidence).values(
        id=message_id, task_id=task_id, source="creator", text=message, language=language, eligible=True,
        extract_status="pending", attempts=0, created_at=at or clock.now()))
    return True


async def suppressed(conn: Any, candidate: Candidate, evidence_created: float) -> bool:
    """Whether a forget suppressed this statement for this evidence: the same evidence, or any evidence older
    than the forget (the model repeating it). A creator's new message after the forget may restate it."""
    rows = (await conn.execute(select(s.memory_suppressions.c.evidence_id, s.memory_suppressions.c.created_at).where(
        s.memory_suppressions.c.fingerprint == candidate.fingerprint))).all()
    ids = candidate.evidence_ids or [candidate.evidence_id]
    return any(r.evidence_id in ids or r.created_at >= evidence_created for r in rows)


# ---- memories and versions ---------------------------------------------------------------------------------
async def active_versions(conn: Any, *, topic: str | None = None, scope_ref: str | None = None) -> list[Any]:
    query = select(s.memory_versions, s.memories.c.kind, s.memories.c.scope, s.memories.c.scope_ref,
                   s.memories.c.stated, s.memories.c.topic).join(
        s.memories, s.memories.c.id == s.memory_versions.c.memory_id).where(s.memory_versions.c.status == "active")
    if topic is not None:
        query = query.where(s.memories.c.topic == topic)
    return list((await conn.execute(query.order_by(s.memory_versions.c.created_at.desc()))).all())


async def match_existing(conn: Any, candidate: Candidate, task_id: str | None) -> Any:
    """The active memory a refinement, change or confirmation speaks about: same topic, most shared words."""
    words = set(keywords(candidate.text))
    best, best_score = None, -1.0
    for row in await active_versions(conn, topic=candidate.topic or None):
        if not row.stated or (row.scope != "creator" and row.scope_ref != task_id):
            continue
        shared = len(words & set((row.search_text or "").split()))
        if row.topic != candidate.topic and not shared:
            continue
        score = shared + (1.5 if candidate.topic and row.topic == candidate.topic else 0)
        if score > best_score:
            best, best_score = row, score
    return best


async def index_version(conn: Any, version_id: str, value: str) -> None:
    if dialect_name(conn) == "sqlite":
        await conn.execute(text("INSERT INTO memory_fts(version_id, search_text) VALUES (:v, :t)"),
                           {"v": version_id, "t": value})


async def unindex_versions(conn: Any, version_ids: Iterable[str]) -> None:
    """Remove the versions' index rows, FTS and vectors alike, in the caller's transaction (invariant 3)."""
    ids = list(version_ids)
    for n in range(0, len(ids), 500):
        await conn.execute(delete(s.memory_vectors).where(s.memory_vectors.c.version_id.in_(ids[n:n + 500])))
    if ids and dialect_name(conn) == "sqlite":
        for n in range(0, len(ids), 500):
            chunk = ids[n:n + 500]
            marks = ", ".join(f":v{i}" for i in range(len(chunk)))
            await conn.execute(text(f"DELETE FROM memory_fts WHERE version_id IN ({marks})"),
                               {f"v{i}": v for i, v in enumerate(chunk)})


async def add_version(conn: Any, memory_id: str, body: str, links: list[tuple[str, str]], *,
                      derived_from: Iterable[str] = (), at: float | None = None) -> str:
    """A new active version of MEMORY_ID standing on LINKS [(evidence id, role)], indexed."""
    t = at or clock.now()
    number = ((await conn.execute(select(func.max(s.memory_versions.c.version)).where(
        s.memory_versions.c.memory_id == memory_id))).scalar() or 0) + 1
    version_id = new_id("mv")
    keys = search_text(body)
    await conn.execute(insert(s.memory_versions).values(
        id=version_id, memory_id=memory_id, version=number, status="active", text=body, search_text=keys,
        fingerprint=fingerprint(body), valid_from=t, created_at=t))
    for evidence_id, role in dict.fromkeys(links):
        await link(conn, version_id, evidence_id, role, t)
        await derive(conn, "version", version_id, "evidence", evidence_id, t)
    for source in derived_from:
        await derive(conn, "version", version_id, "version", source, t)
    await index_version(conn, version_id, keys)
    await conn.execute(update(s.memories).where(s.memories.c.id == memory_id).values(updated_at=t))
    return version_id


async def link(conn: Any, version_id: str, evidence_id: str, role: str, at: float | None = None) -> None:
    exists = (await conn.execute(select(s.memory_evidence_links.c.role).where(
        s.memory_evidence_links.c.version_id == version_id, s.memory_evidence_links.c.evidence_id == evidence_id,
        s.memory_evidence_links.c.role == role))).first()
    if exists is None:
        await conn.execute(insert(s.memory_evidence_links).values(
            version_id=version_id, evidence_id=evidence_id, role=role, created_at=at or clock.now()))


async def derive(conn: Any, target_kind: str, target_id: str, source_kind: str, source_id: str,
                 at: float | None = None) -> None:
    await conn.execute(insert(s.memory_derivations).values(
        target_kind=target_kind, target_id=target_id, source_kind=source_kind, source_id=source_id,
        created_at=at or clock.now()))


async def supersede(conn: Any, version_id: str, at: float, *, ends_validity: bool = False) -> None:
    values: dict[str, Any] = {"status": "superseded"}
    if ends_validity:
        values["valid_to"] = at
    await conn.execute(update(s.memory_versions).where(s.memory_versions.c.id == version_id).values(**values))
    await unindex_versions(conn, [version_id])


async def apply(conn: Any, candidate: Candidate, *, task_id: str | None, evidence_created: float) -> str | None:
    """Put one candidate into memory (F3): a new memory (v1, ORIGIN), a refinement (v2, REFINE, v1 SUPERSEDED),
    a change (a new version; the old one stays true for its time), or a confirmation (CONFIRM evidence, no new
    version). Returns the version id touched, or None when nothing was kept."""
    if await suppressed(conn, candidate, evidence_created):
        return None
    t = clock.now()
    evidence_ids = candidate.evidence_ids or [candidate.evidence_id]
    same = await _same_statement(conn, candidate)
    if same is not None:  # said again: a confirmation
        for evidence_id in evidence_ids:
            await link(conn, same.id, evidence_id, "confirm", t)
        return same.id
    target = None if candidate.action == "new" or not candidate.stated else await match_existing(
        conn, candidate, task_id)
    if target is not None and candidate.action == "confirm":
        await link(conn, target.id, candidate.evidence_id, "confirm", t)
        return target.id
    if target is not None and candidate.action == "refine":
        await supersede(conn, target.id, t)
        links = [(r.evidence_id, r.role) for r in await links_of(conn, target.id) if r.role != "confirm"]
        joined = target.text.rstrip() + ("" if target.text.rstrip()[-1:] in ".。!！?？;；" else ";") + " " + candidate.text
        return await add_version(conn, target.memory_id, joined, links + [(candidate.evidence_id, "refine")],
                                 derived_from=[target.id], at=t)
    if target is not None and candidate.action == "change":
        await supersede(conn, target.id, t, ends_validity=True)
        return await add_version(conn, target.memory_id, candidate.text, [(candidate.evidence_id, "refine")], at=t)
    if not candidate.long_term and candidate.stated:
        return None  # a bare "… with cream" with nothing to refine is not a lasting statement
    memory_id = new_id("mem")
    scope_ref = task_id if candidate.scope != "creator" else None
    await conn.execute(insert(s.memories).values(
        id=memory_id, kind=candidate.kind, scope=candidate.scope, scope_ref=scope_ref, stated=candidate.stated,
        topic=candidate.topic, created_at=t, updated_at=t))
    return await add_version(conn, memory_id, candidate.text, [(e, "origin") for e in evidence_ids], at=t)


async def _same_statement(conn: Any, candidate: Candidate) -> Any:
    return (await conn.execute(select(s.memory_versions).join(
        s.memories, s.memories.c.id == s.memory_versions.c.memory_id).where(
        s.memory_versions.c.fingerprint == candidate.fingerprint, s.memory_versions.c.status == "active",
        s.memories.c.stated.is_(candidate.stated)))).first()


async def links_of(conn: Any, version_id: str) -> list[Any]:
    return list((await conn.execute(select(s.memory_evidence_links).where(
        s.memory_evidence_links.c.version_id == version_id).order_by(s.memory_evidence_links.c.created_at))).all())


# ---- the creator profile -------------------------------------------------------------------------------
async def current_profile(conn: Any) -> Any:
    return (await conn.execute(select(s.memory_profiles).where(s.memory_profiles.c.status == "current"))).first()


def render_profile(entries: list[Any]) -> str:
    if not entries:
        return ""
    lines = ["What the creator has told you about themselves (their own words; prefer the newest):"]
    lines += [f"- [{e.kind}] {clip(e.text, 240)}" for e in entries]
    return "\n".join(lines)


async def refresh_profile(conn: Any, *, force: bool = False) -> int | None:
    """A new profile version when the stated creator-wide memories it shows changed (or FORCE). Returns the new
    version number, or None when the current one still holds."""
    entries = (await conn.execute(select(s.memory_versions.c.id, s.memory_versions.c.text, s.memories.c.kind).join(
        s.memories, s.memories.c.id == s.memory_versions.c.memory_id).where(
        s.memory_versions.c.status == "active", s.memories.c.stated.is_(True), s.memories.c.scope == "creator").order_by(
        s.memory_versions.c.created_at.desc()).limit(PROFILE_ENTRIES))).all()
    current = await current_profile(conn)
    ids = sorted(e.id for e in entries)
    if current is not None and not force:
        used = sorted((await conn.execute(select(s.memory_derivations.c.source_id).where(
            s.memory_derivations.c.target_kind == "profile", s.memory_derivations.c.target_id == current.id))).scalars())
        if used == ids:
            return None
    if current is None and not entries and not force:
        return None
    t = clock.now()
    if current is not None:
        await conn.execute(update(s.memory_profiles).where(s.memory_profiles.c.id == current.id).values(
            status="replaced"))
    number = ((await conn.execute(select(func.max(s.memory_profiles.c.version)))).scalar() or 0) + 1
    profile_id = new_id("prof")
    await conn.execute(insert(s.memory_profiles).values(id=profile_id, version=number, status="current",
                                                        text=render_profile(entries), created_at=t))
    for e in entries:
        await derive(conn, "profile", profile_id, "version", e.id, t)
    return number


# ---- episodic summaries -------------------------------------------------------------------------------
FINISHED = ("done", "failed", "stopped")


async def clean_evidence_of_task(conn: Any, task_id: str) -> list[Any]:
    """The creator's messages that reached TASK_ID (directly or routed from the main thread) and may still be
    used: eligible, and no forgotten fact suppressed in them."""
    inbox = (await conn.execute(select(s.inbox.c.id, s.inbox.c.origin).where(s.inbox.c.task_id == task_id))).all()
    ids = list(dict.fromkeys([i for r in inbox for i in (r.origin, r.id) if i]))
    if not ids:
        return []
    rows = (await conn.execute(select(s.memory_evidence).where(
        s.memory_evidence.c.id.in_(ids), s.memory_evidence.c.eligible.is_(True)).order_by(
        s.memory_evidence.c.created_at))).all()
    marked = set((await conn.execute(select(s.memory_suppressions.c.evidence_id).where(
        s.memory_suppressions.c.evidence_id.in_(ids)))).scalars())
    return [r for r in rows if r.id not in marked]


async def summarise_task(conn: Any, task_id: str, *, rebuild: bool = False) -> str | None:
    """The episodic summary of a finished task: what was asked, what was decided, what was put off.
    Built only from evidence still eligible; REBUILD replaces the active one."""
    task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).first()
    if task is None or task.kind == "main" or (task.status not in FINISHED and not task.archived):
        return None
    active = (await conn.execute(select(s.memory_summaries).where(
        s.memory_summaries.c.task_id == task_id, s.memory_summaries.c.status == "active"))).first()
    if active is not None and not rebuild:
        return None
    evidence = await clean_evidence_of_task(conn, task_id)
    decided = (await conn.execute(select(s.gates.c.question, s.gates.c.resolution).where(
        s.gates.c.task_id == task_id, s.gates.c.status == "approved"))).all()
    put_off = (await conn.execute(select(s.checklist.c.title).where(
        s.checklist.c.task_id == task_id, s.checklist.c.state.in_(("pending", "skipped"))))).scalars().all()
    parts = [f"{clip(task.title, 80)} — {task.status}."]
    if evidence:
        parts.append("Asked: " + " / ".join(clip(e.text, 120) for e in evidence[:SUMMARY_ASKED]) + ".")
    chosen = [f"{clip(g.question, 60)} → {(g.resolution or {}).get('label') or 'yes'}" for g in decided]
    if chosen:
        parts.append("Decided: " + "; ".join(chosen[:3]) + ".")
    if put_off:
        parts.append("Put off: " + "; ".join(clip(p, 60) for p in put_off[:3]) + ".")
    t = clock.now()
    if active is not None:
        await conn.execute(update(s.memory_summaries).where(s.memory_summaries.c.id == active.id).values(
            status="replaced"))
    number = ((await conn.execute(select(func.max(s.memory_summaries.c.version)).where(
        s.memory_summaries.c.task_id == task_id))).scalar() or 0) + 1
    summary_id = new_id("sum")
    await conn.execute(insert(s.memory_summaries).values(id=summary_id, task_id=task_id, version=number,
                                                         status="active", text=" ".join(parts), created_at=t))
    for e in evidence[:SUMMARY_ASKED]:
        await derive(conn, "summary", summary_id, "evidence", e.id, t)
    used = (await conn.execute(select(s.memory_context_uses.c.version_id).where(
        s.memory_context_uses.c.task_id == task_id, s.memory_context_uses.c.excluded.is_(False)))).scalars().all()
    for version_id in dict.fromkeys(used):
        await derive(conn, "summary", summary_id, "version", version_id, t)
    return summary_id


async def unsummarised_tasks(conn: Any, limit: int = 20) -> list[str]:
    done = select(s.memory_summaries.c.task_id).where(s.memory_summaries.c.status == "active")
    return list((await conn.execute(select(s.tasks.c.id).where(
        s.tasks.c.kind != "main", or_(s.tasks.c.status.in_(FINISHED), s.tasks.c.archived.is_(True)),
        s.tasks.c.id.not_in(done)).order_by(s.tasks.c.updated_at.desc()).limit(limit))).scalars())


async def blank_versions(conn: Any, ids: Iterable[str], at: float) -> None:
    ids = list(ids)
    if not ids:
        return
    await conn.execute(update(s.memory_versions).where(s.memory_versions.c.id.in_(ids)).values(
        status="forgotten", text="", search_text="", fingerprint="", forgotten_at=at))
    await unindex_versions(conn, ids)


async def drop_links(conn: Any, version_id: str, evidence_id: str, role: str) -> None:
    await conn.execute(delete(s.memory_evidence_links).where(
        s.memory_evidence_links.c.version_id == version_id, s.memory_evidence_links.c.evidence_id == evidence_id,
        s.memory_evidence_links.c.role == role))
