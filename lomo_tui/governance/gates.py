"""Gates: first-class, persisted questions that only an explicit creator action resolves (G4, G6).

A gate blocks its scope only. Creating a gate twice with one dedupe key returns the first. Resolving is
recorded with who did it and how; resolving again (or after the other answer) changes nothing.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update

from ..errors import LomoError, UnknownId
from ..runtime.ids import new_id
from ..store import schema as s
from ..store.engine import Database
from .budget import grant

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

KINDS = ("clarify", "plan", "spend", "irreversible", "question")


def normalise_options(options: list[Any]) -> list[dict[str, str]]:
    """Options as [{"label", "consequence"}] whatever shape the caller used."""
    out = []
    for option in options:
        if isinstance(option, dict):
            out.append({"label": str(option.get("label", "")), "consequence": str(option.get("consequence", ""))})
        else:
            out.append({"label": str(option), "consequence": ""})
    return out


async def open_gate(conn: AsyncConnection, *, task_id: str | None, kind: str, question: str,
                    options: list[Any], dedupe_key: str, turn_id: str | None = None,
                    tool_call_id: str | None = None, scope: Any = None, continues: str = "") -> Any:
    """Create a gate (or return the one with this dedupe key)."""
    if kind not in KINDS:
        raise LomoError(f"unknown gate kind {kind!r}")
    row = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == dedupe_key))).first()
    if row is not None:
        return row
    gate_id = new_id("gate")
    await conn.execute(insert(s.gates).values(
        id=gate_id, task_id=task_id, turn_id=turn_id, tool_call_id=tool_call_id, kind=kind, status="pending",
        question=question, options=normalise_options(options), scope=scope, continues=continues,
        dedupe_key=dedupe_key, created_at=time.time()))
    await conn.execute(insert(s.events).values(type="gate_opened", at=time.time(), task_id=task_id,
                                               turn_id=turn_id, data={"gate_id": gate_id, "kind": kind}))
    return (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()


async def resolve_gate(db: Database, gate_id: str, *, approve: bool, option: int | None = None,
                       by: str = "creator:cli") -> Any:
    """Approve (optionally choosing OPTION, 1-based) or reject a pending gate. Raises if unknown or resolved."""
    async with db.write() as conn:
        row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).first()
        if row is None:
            raise UnknownId(f"no gate with id {gate_id!r}; `lomo gates` lists the pending ones")
        if row.status != "pending":
            raise LomoError(f"gate {gate_id} is already {row.status}; nothing changed")
        options = row.options or []
        if option is not None and not 1 <= option <= max(len(options), 1):
            raise LomoError(f"gate {gate_id} has {len(options)} option(s); choose 1–{len(options)}")
        chosen = (option or 1) if approve else None
        label = options[chosen - 1]["label"] if approve and options else None
        resolution = {"approved": approve, "option": chosen, "label": label}
        await conn.execute(update(s.gates).where(s.gates.c.id == gate_id, s.gates.c.status == "pending").values(
            status="approved" if approve else "rejected", resolved_at=time.time(), resolution=resolution,
            resolved_by=by))
        if approve:
            await grant(conn, gate=row, by=by)
        resolved = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()
        from ..router import choice
        from ..runtime.ledger import ensure_turn
        from ..tasks.stopcheck import on_checkpoint_resolved

        if resolved.kind == "clarify":
            await choice.apply(conn, resolved, approve, by)
        continue_task = await on_checkpoint_resolved(conn, resolved, approve)
        if continue_task is not None:
            await ensure_turn(conn, continue_task)
            await conn.execute(update(s.tasks).where(s.tasks.c.id == continue_task).values(
                status="active", status_reason="", updated_at=time.time()))
        await conn.execute(insert(s.events).values(type="gate_resolved", at=time.time(), task_id=row.task_id,
                                                   turn_id=row.turn_id,
                                                   data={"gate_id": gate_id, "approved": approve, "by": by}))
        return (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()


async def pending_gates(db: Database) -> list[Any]:
    async with db.read() as conn:
        return list((await conn.execute(select(s.gates).where(s.gates.c.status == "pending").order_by(
            s.gates.c.created_at))).all())
