"""Forgetting (F4, seed §7.3): the cascade that really takes a memory out of use.

1. revoke: the evidence loses its eligibility (a whole message) or, when one memory is forgotten, the
   facts it gave that memory are suppressed for it; suppression rows stop the same statement coming back
   from old evidence or the model — a creator's new message may restate it.
2. blank: every version standing on revoked evidence (ORIGIN or REFINE), every version of a forgotten
   memory and every version derived from those is deleted and blanked, its index rows removed;
   CONFIRM-only links to revoked evidence are dropped (the memory stands on its own).
3. rebuild: a memory left without an active version is re-extracted from the evidence that is still valid
   (the brand-colour case: forgetting "blue" leaves "cream, soft" only if a message of its own says so).
4. propagate: profiles and episodic summaries made from anything forgotten are blanked and made anew;
   step contexts that carried a forgotten version are marked, so later contexts exclude their replies
   and tool results; the search index is optimised so no segment keeps the old terms.

Each stage is one commit; the request row records how far it got, and `complete_pending` (at every start)
finishes an interrupted cascade. Forgetting twice equals forgetting once. Nothing here logs memory text.
"""
from __future__ import annotations

import logging
import os
from typing import Any, Iterable

from sqlalchemy import insert, select, text, update

from ..faults import Faults
from ..governance.gates import open_gate
from ..language import keywords
from ..router.index import dialect_name
from ..base.ids import new_id
from ..store import schema as s
from . import store
from .extract import clauses, cues, extract_local, fingerprint, normalise
from .. import clock

log = logging.getLogger("lomo.memory")

STAGES = ("revoke", "blank", "rebuild", "propagate")
FAULT_POINT = "after_forget_commit"
QUERY_MATCH = 0.5  # share of the query's words a memory must hold to be named by `forget --query`
_faults: Faults | None = None


def _fault() -> None:
    """CONTRACTS §3 fault point: after each commit of a forget cascade."""
    global _faults
    if _faults is None:
        _faults = Faults(os.environ.get("LOMO_FAULTS", ""))
    _faults.hit(FAULT_POINT)


# ---- choosing what to forget -------------------------------------------------------------------------------
def _cue_words() -> set[str]:
    words: set[str] = set()
    for lang in ("en", "zh", "ja", "ru"):
        for category in ("long_term", "forget", "confirm"):
            for phrase in cues()[lang].get(category, []):
                words.update(keywords(phrase))
    return words


async def match_query(conn: Any, query: str) -> list[Any]:
    """Active memories a "forget …" query names: most of the query's content words appear in them."""
    generic = _cue_words()
    wanted = [w for w in keywords(query) if w not in generic] or keywords(query)
    if not wanted:
        return []
    out = []
    for row in await store.active_versions(conn):
        have = set((row.search_text or "").split())
        if sum(1 for w in wanted if w in have) / len(wanted) >= QUERY_MATCH:
            out.append(row)
    return out


async def open_forget_gate(db: Any, query: str, *, task_id: str | None, message_id: str) -> tuple[str | None, str | None]:
    """From the stream: an irreversible gate listing what would go. (forget id, gate id), or (None, None)
    when nothing matches."""
    async with db.write() as conn:
        rows = await match_query(conn, query)
        if not rows:
            return None, None
        forget_id = new_id("fgt")
        memory_ids = list(dict.fromkeys(r.memory_id for r in rows))
        options = [{"label": "Forget " + ("it" if len(memory_ids) == 1 else f"these {len(memory_ids)}"),
                    "consequence": "cannot be undone: " + "; ".join(f"{r.memory_id}: {store.clip(r.text, 80)}"
                                                                    for r in rows[:6])},
                   {"label": "Keep them", "consequence": "nothing changes"}]
        gate = await open_gate(conn, task_id=task_id, kind="irreversible",
                               question=f"Forget {len(memory_ids)} memor{'y' if len(memory_ids) == 1 else 'ies'}? "
                                        "Later work will no longer use them (the conversation itself stays).",
                               options=options, dedupe_key=f"forget:{message_id}",
                               scope={"memory_forget": forget_id, "memories": memory_ids})
        t = clock.now()
        await conn.execute(insert(s.memory_forgets).values(
            id=forget_id, request={"memories": memory_ids, "evidence": []}, status="awaiting_gate", stage=0,
            gate_id=gate.id, created_at=t, updated_at=t))
        return forget_id, gate.id


async def settle_gates(db: Any) -> int:
    """Forgets waiting on a gate: approved → the cascade runs; rejected or expired → nothing is forgotten."""
    async with db.read() as conn:
        rows = (await conn.execute(select(s.memory_forgets.c.id, s.gates.c.status, s.gates.c.resolution).join(
            s.gates, s.gates.c.id == s.memory_forgets.c.gate_id).where(
            s.memory_forgets.c.status == "awaiting_gate", s.gates.c.status != "pending"))).all()
    for row in rows:
        approved = row.status == "approved" and (row.resolution or {}).get("option", 1) == 1
        async with db.write() as conn:
            await conn.execute(update(s.memory_forgets).where(
                s.memory_forgets.c.id == row.id, s.memory_forgets.c.status == "awaiting_gate").values(
                status="pending" if approved else "cancelled", updated_at=clock.now()))
        if approved:
            await run(db, row.id)
    return len(rows)


# ---- the cascade ---------------------------------------------------------------------------------------------
async def forget(db: Any, *, memory_ids: Iterable[str] = (), evidence_ids: Iterable[str] = ()) -> dict[str, Any]:
    """Forget MEMORY_IDS (all they stand on, for them) and EVIDENCE_IDS (whole messages), at once: the
    creator's explicit action (CLI --yes, an approved gate) is the caller's to check."""
    request = {"memories": list(dict.fromkeys(memory_ids)), "evidence": list(dict.fromkeys(evidence_ids))}
    forget_id = new_id("fgt")
    t = clock.now()
    async with db.write() as conn:
        await conn.execute(insert(s.memory_forgets).values(id=forget_id, request=request, status="pending", stage=0,
                                                           created_at=t, updated_at=t))
    return await run(db, forget_id)


async def complete_pending(db: Any) -> list[str]:
    """Finish every forget cascade an earlier process left half done (called at start)."""
    async with db.read() as conn:
        ids = (await conn.execute(select(s.memory_forgets.c.id).where(s.memory_forgets.c.status == "pending").order_by(
            s.memory_forgets.c.created_at))).scalars().all()
    for forget_id in ids:
        await run(db, forget_id)
    return list(ids)


async def run(db: Any, forget_id: str) -> dict[str, Any]:
    """Run FORGET_ID's remaining stages, one commit each. Returns {"forgotten": [memory ids], "rebuilt": [...],
    "versions": [version ids blanked]}."""
    for number, name in enumerate(STAGES, 1):
        async with db.write() as conn:
            row = (await conn.execute(select(s.memory_forgets).where(s.memory_forgets.c.id == forget_id))).one()
            if row.status != "pending" or row.stage >= number:
                continue
            result = dict(row.result or {})
            await STEPS[name](conn, row.request, result, forget_id)
            await conn.execute(update(s.memory_forgets).where(s.memory_forgets.c.id == forget_id).values(
                stage=number, result=result, updated_at=clock.now(),
                status="done" if number == len(STAGES) else "pending"))
        _fault()
    async with db.read() as conn:
        row = (await conn.execute(select(s.memory_forgets).where(s.memory_forgets.c.id == forget_id))).one()
    _checkpoint(db)
    result = row.result or {}
    return {"forgotten": result.get("memories", []), "rebuilt": result.get("rebuilt", []),
            "versions": result.get("versions", [])}


async def _revoke(conn: Any, request: dict[str, Any], result: dict[str, Any], forget_id: str) -> None:
    t = clock.now()
    marks: set[tuple[str | None, str]] = set()
    for evidence_id in request["evidence"]:
        row = (await conn.execute(select(s.memory_evidence).where(s.memory_evidence.c.id == evidence_id))).first()
        if row is None:
            continue
        await conn.execute(update(s.memory_evidence).where(s.memory_evidence.c.id == evidence_id).values(
            eligible=False, revoked_at=row.revoked_at or t))
        marks.update((evidence_id, fingerprint(c)) for c in clauses(row.text))
        for version in await _versions_on(conn, [evidence_id], roles=("origin", "refine")):
            marks.add((evidence_id, fingerprint(version.text)))
    for memory_id in request["memories"]:
        for version in await _versions_of(conn, memory_id):
            for link in await store.links_of(conn, version.id):
                marks.add((link.evidence_id, f"memory:{memory_id}"))  # this evidence may no longer feed it
                if version.text:
                    marks.add((link.evidence_id, fingerprint(version.text)))
                    evidence = (await conn.execute(select(s.memory_evidence.c.text).where(
                        s.memory_evidence.c.id == link.evidence_id))).scalar() or ""
                    marks.update((link.evidence_id, fingerprint(c)) for c in clauses(evidence)
                                 if normalise(c) in normalise(version.text))
    for evidence_id, mark in marks:
        await conn.execute(insert(s.memory_suppressions).values(evidence_id=evidence_id, fingerprint=mark,
                                                                forget_id=forget_id, created_at=t))


async def _blank(conn: Any, request: dict[str, Any], result: dict[str, Any], forget_id: str) -> None:
    dependent: dict[str, Any] = {}
    for version in await _versions_on(conn, request["evidence"], roles=("origin", "refine")):
        dependent[version.id] = version
    for memory_id in request["memories"]:
        for version in await _versions_of(conn, memory_id):
            dependent[version.id] = version
    frontier = list(dependent)
    while frontier:  # versions derived from dependent ones depend on them too
        rows = (await conn.execute(select(s.memory_versions).join(
            s.memory_derivations, s.memory_derivations.c.target_id == s.memory_versions.c.id).where(
            s.memory_derivations.c.target_kind == "version", s.memory_derivations.c.source_kind == "version",
            s.memory_derivations.c.source_id.in_(frontier)))).all()
        frontier = [r.id for r in rows if r.id not in dependent]
        dependent.update({r.id: r for r in rows})
    for version in await _versions_on(conn, request["evidence"], roles=("confirm",)):
        if version.id not in dependent:  # a confirmation only: the memory stands without it
            for evidence_id in request["evidence"]:
                await store.drop_links(conn, version.id, evidence_id, "confirm")
    live = [v for v in dependent.values() if v.status != "forgotten"]
    await store.blank_versions(conn, [v.id for v in live], clock.now())
    result["versions"] = sorted(set(result.get("versions", [])) | {v.id for v in live})
    result["memories"] = sorted({v.memory_id for v in dependent.values()} | set(request["memories"]))


async def _rebuild(conn: Any, request: dict[str, Any], result: dict[str, Any], forget_id: str) -> None:
    rebuilt = []
    blanked = set(result.get("versions", []))
    for memory_id in result.get("memories", []):
        if memory_id in request["memories"]:
            continue
        if (await conn.execute(select(s.memory_versions.c.id).where(
                s.memory_versions.c.memory_id == memory_id, s.memory_versions.c.status == "active"))).first():
            continue  # still stands on a version of its own (a later change, say)
        memory = (await conn.execute(select(s.memories).where(s.memories.c.id == memory_id))).one()
        evidence = await _remaining_evidence(conn, memory_id, blanked)
        pieces: list[tuple[str, str]] = []
        for row in evidence:
            for candidate in extract_local(row.text, row.id, standalone=True):
                if memory.topic and candidate.topic != memory.topic:
                    continue
                if await store.suppressed(conn, candidate, row.created_at):
                    continue
                pieces.append((row.id, candidate.text))
        if not pieces:
            continue
        body = " ".join(p for _, p in pieces)
        links = [(evidence_id, "origin" if n == 0 else "refine") for n, (evidence_id, _) in enumerate(pieces)]
        await store.add_version(conn, memory_id, body, links)
        rebuilt.append(memory_id)
    result["rebuilt"] = rebuilt


async def _propagate(conn: Any, request: dict[str, Any], result: dict[str, Any], forget_id: str) -> None:
    t = clock.now()
    versions = result.get("versions", [])
    touched_evidence = list(request["evidence"]) + list((await conn.execute(select(
        s.memory_suppressions.c.evidence_id).where(s.memory_suppressions.c.forget_id == forget_id))).scalars())
    # profiles: any version of it built from a forgotten memory is blanked; a new one is made
    stale_profiles = await _targets(conn, "profile", versions, [])
    if stale_profiles:
        await conn.execute(update(s.memory_profiles).where(s.memory_profiles.c.id.in_(stale_profiles)).values(
            status="forgotten", text=""))
    await store.refresh_profile(conn, force=bool(stale_profiles))
    # episodic summaries made from forgotten versions or revoked evidence: blanked, rebuilt
    stale_summaries = await _targets(conn, "summary", versions, touched_evidence)
    tasks = set()
    if stale_summaries:
        rows = (await conn.execute(select(s.memory_summaries).where(s.memory_summaries.c.id.in_(stale_summaries)))).all()
        tasks = {r.task_id for r in rows if r.status == "active"}
        await conn.execute(update(s.memory_summaries).where(s.memory_summaries.c.id.in_(stale_summaries)).values(
            status="forgotten", text=""))
    for task_id in sorted(tasks):
        await store.summarise_task(conn, task_id, rebuild=True)
    # step contexts that carried a forgotten version: their replies and tool results leave later contexts
    if versions:
        await conn.execute(update(s.memory_context_uses).where(s.memory_context_uses.c.version_id.in_(versions)).values(
            excluded=True))
    # history summary segments (E3) covering a forgotten statement or what a forgotten memory produced
    from .contexts import rebuild_context_summaries

    result["context_summaries"] = await rebuild_context_summaries(conn, forget_id, list(request["evidence"]), versions)
    await _redact_gate(conn, forget_id, result.get("memories", []))
    if dialect_name(conn) == "sqlite":  # merge the index so no old segment still holds the forgotten terms
        await conn.execute(text("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')"))
    await conn.execute(insert(s.events).values(type="memory_forgotten", at=t, data={
        "forget_id": forget_id, "memories": result.get("memories", []), "rebuilt": result.get("rebuilt", []),
        "versions": len(versions)}))


# ---- helpers ----------------------------------------------------------------------------------------------------
async def _redact_gate(conn: Any, forget_id: str, memory_ids: list[str]) -> None:
    """The gate that asked listed what would go: once it is gone, the card names ids only."""
    gate_id = (await conn.execute(select(s.memory_forgets.c.gate_id).where(
        s.memory_forgets.c.id == forget_id))).scalar()
    if not gate_id:
        return
    options = (await conn.execute(select(s.gates.c.options).where(s.gates.c.id == gate_id))).scalar() or []
    redacted = [dict(o, consequence=f"forgotten: {', '.join(memory_ids)}") if n == 0 else dict(o)
                for n, o in enumerate(options)]
    await conn.execute(update(s.gates).where(s.gates.c.id == gate_id).values(options=redacted))



async def _versions_on(conn: Any, evidence_ids: list[str], roles: tuple[str, ...]) -> list[Any]:
    if not evidence_ids:
        return []
    return list((await conn.execute(select(s.memory_versions).join(
        s.memory_evidence_links, s.memory_evidence_links.c.version_id == s.memory_versions.c.id).where(
        s.memory_evidence_links.c.evidence_id.in_(evidence_ids), s.memory_evidence_links.c.role.in_(roles)))).all())


async def _versions_of(conn: Any, memory_id: str) -> list[Any]:
    return list((await conn.execute(select(s.memory_versions).where(s.memory_versions.c.memory_id == memory_id))).all())


async def _remaining_evidence(conn: Any, memory_id: str, blanked: set[str]) -> list[Any]:
    """Still-valid evidence the memory's deleted versions stood on (any role), oldest first."""
    ids = [v.id for v in await _versions_of(conn, memory_id) if v.id in blanked]
    if not ids:
        return []
    evidence_ids = set((await conn.execute(select(s.memory_evidence_links.c.evidence_id).where(
        s.memory_evidence_links.c.version_id.in_(ids)))).scalars())
    barred = set((await conn.execute(select(s.memory_suppressions.c.evidence_id).where(
        s.memory_suppressions.c.fingerprint == f"memory:{memory_id}"))).scalars())
    return list((await conn.execute(select(s.memory_evidence).where(
        s.memory_evidence.c.id.in_(sorted(evidence_ids - barred)), s.memory_evidence.c.eligible.is_(True)).order_by(
        s.memory_evidence.c.created_at))).all())


async def _targets(conn: Any, kind: str, version_ids: list[str], evidence_ids: list[str]) -> list[str]:
    out: set[str] = set()
    for source_kind, ids in (("version", version_ids), ("evidence", evidence_ids)):
        for n in range(0, len(ids), 500):
            out.update((await conn.execute(select(s.memory_derivations.c.target_id).where(
                s.memory_derivations.c.target_kind == kind, s.memory_derivations.c.source_kind == source_kind,
                s.memory_derivations.c.source_id.in_(ids[n:n + 500])))).scalars())
    return sorted(out)


def _checkpoint(db: Any) -> None:
    """Move the log into the database file and truncate it, so the old pages are gone from disk too
    (secure_delete zeroes them there). Best effort: a reader holding a snapshot may delay it."""
    if not getattr(db, "is_sqlite", False) or db.sqlite_path is None:
        return
    try:
        raw = db.sync_engine.raw_connection()
        try:
            raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            raw.close()
    except Exception as exc:  # noqa: BLE001
        log.info("could not checkpoint after a forget: %s", type(exc).__name__)


STEPS = {"revoke": _revoke, "blank": _blank, "rebuild": _rebuild, "propagate": _propagate}
