"""Memories as the creator sees them: `lomo memory list/show` (CONTRACTS §7) and `inspect --json` (§4)."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ..store import schema as s


async def memory_rows(conn: Any, *, every_version: bool = False, memory_id: str | None = None) -> list[dict[str, Any]]:
    """[{"id", "version", "status", "kind", "scope", "text", "stated", "evidence": [{"message_id", "role"}],
    "valid_from", "valid_to", "version_id"}] — active versions, or every version (a forgotten one's text is "")."""
    query = select(s.memory_versions, s.memories.c.kind, s.memories.c.scope, s.memories.c.scope_ref,
                   s.memories.c.stated).join(s.memories, s.memories.c.id == s.memory_versions.c.memory_id)
    if not every_version:
        query = query.where(s.memory_versions.c.status == "active")
    if memory_id is not None:
        query = query.where(s.memory_versions.c.memory_id == memory_id)
    rows = (await conn.execute(query.order_by(s.memory_versions.c.created_at, s.memory_versions.c.version))).all()
    links: dict[str, list[dict[str, str]]] = {}
    rank = {"origin": 0, "refine": 1, "confirm": 2}
    ids = [r.id for r in rows]
    for n in range(0, len(ids), 500):
        found = (await conn.execute(select(s.memory_evidence_links).where(
            s.memory_evidence_links.c.version_id.in_(ids[n:n + 500])))).all()
        for link in sorted(found, key=lambda r: (r.created_at, rank.get(r.role, 3), r.evidence_id)):
            links.setdefault(link.version_id, []).append({"message_id": link.evidence_id, "role": link.role})
    return [{"id": r.memory_id, "version": r.version, "status": r.status, "kind": r.kind, "scope": r.scope,
             "scope_ref": r.scope_ref, "text": r.text if r.status != "forgotten" else "", "stated": bool(r.stated),
             "evidence": links.get(r.id, []), "valid_from": r.valid_from, "valid_to": r.valid_to,
             "version_id": r.id} for r in rows]


async def inspect_section(conn: Any) -> list[dict[str, Any]]:
    """The "memories" list of `lomo inspect --json`: every version, newest state of each."""
    try:
        return await memory_rows(conn, every_version=True)
    except Exception:  # noqa: BLE001 — a database made before the memory tables: nothing remembered yet
        return []
