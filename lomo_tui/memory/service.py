"""Where memory meets the runtime: a creator's message is kept as evidence and read for lasting statements;
"forget that …" opens an irreversible gate; the watchdog retries failed extraction, applies approved
forgets and summarises finished tasks (F2, F5).

Extraction never stops a task: a failure leaves the evidence `failed` and `maintain` tries again later.
With a remote extractor only a message the pre-filter flags (`extract.possibly_durable`) is read by the
model; any other is read deterministically on the spot, so an ordinary message costs no model call.
"""
from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from sqlalchemy import insert, select, update

from ..language import detect_language
from ..store import schema as s
from . import store
from .extract import Candidate, extract_local, forget_query, infer, possibly_durable, validate_candidates
from .. import clock
from .models import Extraction

log = logging.getLogger("lomo.memory")

MAX_ATTEMPTS = 5
INFER_WINDOW = 40  # recent plain requests an inference looks at
RemoteExtractor = Callable[[list[dict[str, str]]], Awaitable[Any]]  # evidence → the model's JSON answer


async def record_creator_message(db: Any, message_id: str, task_id: str | None, message: str, *,
                                 extractor: RemoteExtractor | None = None, defer: bool = False) -> dict[str, Any]:
    """The runtime calls this for each message the creator sends (never for tool output or replies).
    Returns {"evidence": id, "versions": [touched], "forget": forget id or None, "gate": gate id or None}.
    DEFER keeps the evidence pending for a background pass (a remote extractor: the message never waits on
    a model). Never raises: memory must not stop a message reaching its task (F5)."""
    try:
        return await _record(db, message_id, task_id, message, extractor, defer)
    except Exception as exc:  # noqa: BLE001
        log.warning("memory could not keep message %s (%s)", message_id, type(exc).__name__)
        return {"evidence": None, "versions": [], "forget": None, "gate": None}


async def _record(db: Any, message_id: str, task_id: str | None, message: str,
                  extractor: RemoteExtractor | None, defer: bool) -> dict[str, Any]:
    query = forget_query(message)
    async with db.write() as conn:
        await store.record_evidence(conn, message_id, task_id, message, language=detect_language(message))
        if query is not None:  # a request to forget is evidence of nothing
            await conn.execute(update(s.memory_evidence).where(s.memory_evidence.c.id == message_id).values(
                extract_status="skipped", eligible=False))
    out: dict[str, Any] = {"evidence": message_id, "versions": [], "forget": None, "gate": None}
    if query is not None:
        from .forget import open_forget_gate

        out["forget"], out["gate"] = await open_forget_gate(db, query, task_id=task_id, message_id=message_id)
        return out
    if not defer or not possibly_durable(message):  # an ordinary message is read here, at no cost
        out["versions"] = await extract_evidence(db, message_id, extractor=extractor)
    return out


class ExtractionFailed(Exception):
    """The remote extractor answered, but not usably; CALL (its cost) is recorded with the failure."""

    def __init__(self, reason: str, call: dict[str, Any] | None) -> None:
        super().__init__(reason)
        self.call = call


async def _record_call(conn: Any, call: dict[str, Any] | None, task_id: str | None) -> None:
    if call:
        await conn.execute(insert(s.model_calls).values(dict(
            {"cache_write_tokens": 0, **call}, task_id=task_id, purpose="memory", created_at=clock.now())))


async def extract_evidence(db: Any, evidence_id: str, *, extractor: RemoteExtractor | None = None) -> list[str]:
    """Read one evidence row for memories. A remote EXTRACTOR is asked (only when the pre-filter flags the
    text) outside any transaction; its call is recorded in the write transaction that applies the
    candidates, or in the one that marks the row failed (retried later); the task goes on either way. One
    reading per row at a time: a second pass meanwhile finds it in flight and leaves it."""
    key = (id(db), evidence_id)
    if key in _IN_FLIGHT:
        return []
    _IN_FLIGHT.add(key)
    call: dict[str, Any] | None = None
    task_id: str | None = None
    try:
        async with db.read() as conn:
            row = (await conn.execute(select(s.memory_evidence).where(s.memory_evidence.c.id == evidence_id))).first()
        if row is None or not row.eligible or row.extract_status in ("done", "skipped"):
            return []
        task_id = row.task_id
        if extractor is not None and not possibly_durable(row.text):
            extractor = None  # nothing lasting to look for: no model call
        try:
            candidates, call = await _candidates(row, extractor)
        except ExtractionFailed as exc:
            call = exc.call
            raise
        async with db.write() as conn:
            current = (await conn.execute(select(s.memory_evidence.c.eligible, s.memory_evidence.c.extract_status).where(
                s.memory_evidence.c.id == evidence_id))).first()
            await _record_call(conn, call, row.task_id)  # spent either way (token counts only, no text)
            if current is None or not current.eligible or current.extract_status in ("done", "skipped"):
                return []  # revoked or read by another pass meanwhile
            touched = []
            for candidate in candidates:
                version_id = await store.apply(conn, candidate, task_id=row.task_id, evidence_created=row.created_at)
                if version_id:
                    touched.append(version_id)
            if not candidates and extractor is None:
                touched += await _inferences(conn, row)
            await conn.execute(update(s.memory_evidence).where(s.memory_evidence.c.id == evidence_id).values(
                extract_status="done", attempts=row.attempts + 1))
            if touched:
                await store.refresh_profile(conn)
            return touched
    except Exception as exc:  # noqa: BLE001 — memory must never sink the task (F5)
        log.warning("memory extraction of %s failed (%s); it will be retried", evidence_id, type(exc).__name__)
        try:
            async with db.write() as conn:
                await _record_call(conn, call, task_id)
                evidence = s.memory_evidence.c
                await conn.execute(update(s.memory_evidence).where(  # another process's reading may have won
                    evidence.id == evidence_id, evidence.extract_status.in_(("pending", "failed"))).values(
                    extract_status="failed", attempts=evidence.attempts + 1))
        except Exception as again:  # noqa: BLE001 — the row stays pending; the next pass reads it
            log.warning("memory could not mark %s failed (%s)", evidence_id, type(again).__name__)
        return []
    finally:
        _IN_FLIGHT.discard(key)


_IN_FLIGHT: set[tuple[int, str]] = set()  # evidence being read by this process (a pass and a message at once)


async def _candidates(row: Any, extractor: RemoteExtractor | None) -> tuple[list[Candidate], dict[str, Any] | None]:
    if extractor is None:
        return extract_local(row.text, row.id), None
    answer = await extractor([{"evidence_id": row.id, "text": row.text}])
    call = None
    if isinstance(answer, Extraction):
        if answer.error:
            raise ExtractionFailed(answer.error, answer.call)
        answer, call = answer.answer, answer.call
    valid, dropped = validate_candidates(answer, {row.id})
    if dropped:
        log.info("memory extraction of %s dropped %d malformed candidate(s)", row.id, len(dropped))
    return valid, call


async def _inferences(conn: Any, row: Any) -> list[str]:
    """A plain request may complete a pattern: the same style asked for again and again (stated=False)."""
    recent = (await conn.execute(select(s.memory_evidence.c.id, s.memory_evidence.c.text).where(
        s.memory_evidence.c.eligible.is_(True)).order_by(s.memory_evidence.c.created_at.desc()).limit(
        INFER_WINDOW))).all()
    touched = []
    for candidate in infer((r.id, r.text) for r in reversed(recent)):
        if row.id not in candidate.evidence_ids:
            continue
        existing = [v for v in await store.active_versions(conn, topic="style")
                    if not v.stated and v.text.split(" (")[0] == candidate.text.split(" (")[0]]
        if existing:
            await store.link(conn, existing[0].id, row.id, "confirm")
            continue
        version_id = await store.apply(conn, candidate, task_id=None, evidence_created=row.created_at)
        if version_id:
            touched.append(version_id)
    return touched


async def maintain(db: Any, *, extraction: bool = True) -> None:
    """Watchdog work: finish forgets (approved gates, interrupted cascades), retry failed extraction (unless
    EXTRACTION is False: a remote extractor's own pass does it, `models.MemoryModels`), summarise finished
    tasks. Each part on its own: one failing leaves the others to run."""
    from .forget import complete_pending, settle_gates

    parts = (settle_gates, complete_pending, forget_withdrawn) + ((retry_extraction,) if extraction else ()) + (
        summarise_finished,)
    for part in parts:
        try:
            await part(db)
        except Exception as exc:  # noqa: BLE001 — the watchdog must outlive a bad pass
            log.warning("memory upkeep (%s) failed: %s", part.__name__, type(exc).__name__)


async def forget_withdrawn(db: Any) -> int:
    """A message the creator withdrew before its task read it is taken back from memory too."""
    from .forget import forget

    async with db.read() as conn:
        ids = (await conn.execute(select(s.memory_evidence.c.id).join(
            s.inbox, s.inbox.c.id == s.memory_evidence.c.id).where(
            s.inbox.c.status == "withdrawn", s.memory_evidence.c.eligible.is_(True)).limit(20))).scalars().all()
    if ids:
        await forget(db, evidence_ids=list(ids))
    async with db.read() as conn:  # a replacement the creator wrote in its place is their message too
        replacements = (await conn.execute(select(s.inbox.c.id, s.inbox.c.task_id, s.inbox.c.text).join(
            s.memory_evidence, s.memory_evidence.c.id == s.inbox.c.replaces).where(
            s.inbox.c.source == "creator", s.inbox.c.id.not_in(select(s.memory_evidence.c.id))).limit(20))).all()
    for row in replacements:
        await record_creator_message(db, row.id, row.task_id, row.text)
    return len(ids) + len(replacements)


async def retry_extraction(db: Any, *, extractor: RemoteExtractor | None = None, min_age: float = 1.0) -> int:
    """Read evidence still pending or failed (fewer than MAX_ATTEMPTS tries, at least MIN_AGE seconds old)."""
    async with db.read() as conn:
        ids = (await conn.execute(select(s.memory_evidence.c.id).where(
            s.memory_evidence.c.extract_status.in_(("pending", "failed")), s.memory_evidence.c.eligible.is_(True),
            s.memory_evidence.c.attempts < MAX_ATTEMPTS, s.memory_evidence.c.created_at <= clock.now() - min_age
        ).order_by(s.memory_evidence.c.created_at).limit(20))).scalars().all()
    for evidence_id in ids:
        await extract_evidence(db, evidence_id, extractor=extractor)
    return len(ids)


async def summarise_finished(db: Any) -> int:
    async with db.read() as conn:
        ids = await store.unsummarised_tasks(conn)
    made = 0
    for task_id in ids:
        async with db.write() as conn:
            made += bool(await store.summarise_task(conn, task_id))
    return made
