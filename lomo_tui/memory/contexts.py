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
from ..context.history import Entry, as_chat
from ..context.outputs import PAGE_CHARS
from ..context.tokens import MESSAGE_OVERHEAD, estimate, message_text
from ..store import schema as s
from .extract import clauses, fingerprint

GONE = "(Nothing in these messages may be used any more: the creator forgot what they held.)"


async def rebuild_context_summaries(conn: Any, forget_id: str, revoked: list[str], versions: list[str]) -> list[int]:
    """Rewrite every context summary segment that covers a message this forget touched: a creator message
    that is REVOKED evidence (left out whole) or that holds a statement the forget suppressed (that sentence
    left out), or a reply or tool result of a step whose context carried one of VERSIONS (left out).
    Returns the rewritten segments' ids."""
    drop_whole, drop_clauses = await _forgotten_texts(conn, forget_id, revoked)
    touched: dict[str, set[int]] = {}  # task id → message ids
    excluded: set[int] = set()
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
            excluded.add(row.id)
    rebuilt = []
    for task_id, ids in sorted(touched.items()):
        segments = (await conn.execute(select(s.context_summaries).where(
            s.context_summaries.c.task_id == task_id, s.context_summaries.c.from_message <= max(ids),
            s.context_summaries.c.to_message >= min(ids)))).all()
        for segment in segments:
            if not any(segment.from_message <= i <= segment.to_message for i in ids):
                continue
            text = await _rewrite(conn, segment, drop_whole, drop_clauses, excluded)
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


async def _rewrite(conn: Any, segment: Any, drop_whole: set[str], drop_clauses: dict[str, set[str]],
                   excluded: set[int]) -> str:
    rows = (await conn.execute(select(s.messages).where(
        s.messages.c.task_id == segment.task_id, s.messages.c.id >= segment.from_message,
        s.messages.c.id <= segment.to_message).order_by(s.messages.c.id))).all()
    entries = []
    for row in rows:
        if row.id in excluded or (row.role == "user" and row.content in drop_whole):
            continue
        chat = as_chat(row, PAGE_CHARS * 2)
        if row.role == "user" and row.content in drop_clauses:
            kept = [c for c in clauses(row.content) if fingerprint(c) not in drop_clauses[row.content]]
            if not kept:
                continue
            chat = dict(chat, content=" ".join(kept))
        text = message_text(chat)
        entries.append(Entry(row.id, row.role, chat, estimate(text) + MESSAGE_OVERHEAD, len(text), row.name))
    head = summaries.header(segment.from_message, segment.to_message, segment.messages)
    if not entries:
        return head + "\n" + GONE
    body = summaries.extractive(entries).split("\n", 1)
    return head + ("\n" + body[1] if len(body) > 1 else "")
