"""Forget reaches the context summaries (F4, E3): a history summary segment is derived from the messages it
covers, so one that covers a forgotten statement, or a reply or tool result of a step that carried a
forgotten memory, is rewritten from what may still be used. The raw messages themselves stay (forgetting
concerns memory use, not the conversation); the segment keeps its span, its id and its place.

Called from the forget cascade's last stage, inside its transaction; nothing here logs text.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import and_, select, update

from ..context import summaries
from ..context.history import Entry, as_chat, entry_role
from ..context.outputs import PAGE_CHARS
from ..context.tokens import MESSAGE_OVERHEAD, estimate, message_text
from ..store import schema as s
from .extract import clauses, fingerprint
from .recall import excluded_message_ids

GONE = "(Nothing in these messages may be used any more: the creator forgot what they held.)"


async def rebuild_context_summaries(conn: Any, forget_id: str, revoked: list[str], versions: list[str]) -> list[int]:
    """Rewrite every context summary segment that covers a message this forget touched: a creator message
    that is REVOKED evidence or that holds a statement the forget suppressed, or a reply or tool result of a
    step whose context carried one of VERSIONS (those steps are already marked excluded). Returns the
    rewritten segments' ids."""
    drop_whole, drop_clauses = await _forgotten_texts(conn, forget_id, revoked)
    touched: dict[str, set[int]] = {}  # task id → message ids
    if drop_whole or drop_clauses:
        texts = sorted(drop_whole | set(drop_clauses))
        for n in range(0, len(texts), 200):
            rows = (await conn.execute(select(s.messages.c.id, s.messages.c.task_id).where(
                s.messages.c.role == "user", s.messages.c.content.in_(texts[n:n + 200])))).all()
            for row in rows:
                touched.setdefault(row.task_id, set()).add(row.id)
    for n in range(0, len(versions), 500):
        rows = (await conn.execute(select(s.messages.c.id, s.messages.c.task_id).join(
            s.memory_context_uses, and_(s.memory_context_uses.c.turn_id == s.messages.c.turn_id,
                                        s.memory_context_uses.c.step == s.messages.c.step,
                                        s.memory_context_uses.c.task_id == s.messages.c.task_id)).where(
            s.messages.c.role.in_(("assistant", "tool")),
            s.memory_context_uses.c.version_id.in_(versions[n:n + 500])))).all()
        for row in rows:
            touched.setdefault(row.task_id, set()).add(row.id)
    rebuilt = []
    for task_id, ids in sorted(touched.items()):
        segments = (await conn.execute(select(s.context_summaries).where(
            s.context_summaries.c.task_id == task_id, s.context_summaries.c.from_message <= max(ids),
            s.context_summaries.c.to_message >= min(ids)))).all()
        for segment in segments:
            if not any(segment.from_message <= i <= segment.to_message for i in ids):
                continue
            text = await _rewrite(conn, segment)
            await conn.execute(update(s.context_summaries).where(s.context_summaries.c.id == segment.id).values(
                text=text, method="rebuilt", model=None))
            rebuilt.append(segment.id)
        if segments:  # the router's one-paragraph summary may quote the newest segment: made again next step
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(summary=""))
            from ..router.index import refresh_search_text

            await refresh_search_text(conn, task_id)
    return rebuilt


async def _forgotten_texts(conn: Any, forget_id: str, revoked: list[str]) -> tuple[set[str], dict[str, set[str]]]:
    """(texts of revoked messages, {text of a message: fingerprints of its suppressed sentences})."""
    whole: set[str] = set()
    if revoked:
        whole = set((await conn.execute(select(s.memory_evidence.c.text).where(
            s.memory_evidence.c.id.in_(revoked)))).scalars())
    marks = (await conn.execute(select(s.memory_suppressions.c.evidence_id, s.memory_suppressions.c.fingerprint).where(
        s.memory_suppressions.c.forget_id == forget_id))).all()
    by_evidence: dict[str, set[str]] = {}
    for mark in marks:
        if not mark.fingerprint.startswith("memory:"):
            by_evidence.setdefault(mark.evidence_id, set()).add(mark.fingerprint)
    partial: dict[str, set[str]] = {}
    if by_evidence:
        rows = (await conn.execute(select(s.memory_evidence.c.id, s.memory_evidence.c.text).where(
            s.memory_evidence.c.id.in_(sorted(by_evidence))))).all()
        for row in rows:
            if row.text not in whole and any(fingerprint(c) in by_evidence[row.id] for c in clauses(row.text)):
                partial.setdefault(row.text, set()).update(by_evidence[row.id])
    return whole, partial


async def _rewrite(conn: Any, segment: Any) -> str:
    """SEGMENT's text made again from its messages less everything any forget so far took out of use (a
    later forget must not bring back an earlier one's)."""
    rows = (await conn.execute(select(s.messages).where(
        s.messages.c.task_id == segment.task_id, s.messages.c.id >= segment.from_message,
        s.messages.c.id <= segment.to_message).order_by(s.messages.c.id))).all()
    entries = []
    for row in rows:
        chat = as_chat(row, PAGE_CHARS * 2)
        text = message_text(chat)
        entries.append(Entry(row.id, entry_role(row), chat, estimate(text) + MESSAGE_OVERHEAD, len(text), row.name))
    kept = await usable(conn, segment.task_id, entries)
    head = summaries.header(segment.from_message, segment.to_message, segment.messages)
    if not kept:
        return head + "\n" + GONE
    body = summaries.extractive(kept).split("\n", 1)
    return head + ("\n" + body[1] if len(body) > 1 else "")


async def usable(conn: Any, task_id: str, entries: list[Entry]) -> list[Entry]:
    """ENTRIES (a span of TASK_ID's history) less what a forget took out of use, for a summary to be made
    from: a creator message that is revoked evidence, a sentence suppressed for it, and the replies and tool
    results of steps that carried a forgotten memory. The raw messages themselves are not touched."""
    said = sorted({e.chat.get("content") for e in entries if e.role == "user" and e.chat.get("content")})
    revoked: set[str] = set()
    suppressed: dict[str, set[str]] = {}
    for n in range(0, len(said), 200):
        evidence = (await conn.execute(select(s.memory_evidence.c.id, s.memory_evidence.c.text,
                                              s.memory_evidence.c.eligible).where(
            s.memory_evidence.c.text.in_(said[n:n + 200])))).all()
        revoked.update(e.text for e in evidence if not e.eligible)
        text_of = {e.id: e.text for e in evidence}
        if text_of:
            marks = (await conn.execute(select(s.memory_suppressions.c.evidence_id,
                                               s.memory_suppressions.c.fingerprint).where(
                s.memory_suppressions.c.evidence_id.in_(sorted(text_of))))).all()
            for mark in marks:
                if not mark.fingerprint.startswith("memory:"):
                    suppressed.setdefault(text_of[mark.evidence_id], set()).add(mark.fingerprint)
    excluded = await excluded_message_ids(None, task_id, conn=conn) if any(
        e.role in ("assistant", "tool") for e in entries) else set()
    if not (revoked or suppressed or excluded):
        return entries
    out = []
    for entry in entries:
        content = entry.chat.get("content")
        if entry.id in excluded or (entry.role == "user" and content in revoked):
            continue
        if entry.role == "user" and content in suppressed:
            kept = [c for c in clauses(content) if fingerprint(c) not in suppressed[content]]
            if not kept:
                continue
            chat = dict(entry.chat, content=" ".join(kept))
            text = message_text(chat)
            entry = Entry(entry.id, entry.role, chat, estimate(text) + MESSAGE_OVERHEAD, len(text), entry.name)
        out.append(entry)
    return out
