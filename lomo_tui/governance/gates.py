"""Gates: first-class, persisted questions that only an explicit creator action resolves (G4, G6).

A gate blocks its scope only. Creating a gate twice with one dedupe key returns the first. Resolving is
recorded with who did it and how; resolving again (or after the other answer) changes nothing. A gate
expires — when its task is stopped or archived, or at its deadline — saying why and what happened instead.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update

from ..errors import LomoError, UnknownId
from ..base.ids import new_id
from ..store import schema as s
from ..store.engine import Database
from .budget import grant
from .. import clock

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
                    tool_call_id: str | None = None, scope: Any = None, continues: str = "",
                    deadline: float | None = None) -> Any:
    """Create a gate (or return the one with this dedupe key). DEADLINE (epoch seconds): when it expires by
    itself; `scope["on_expiry"]` says what happens instead."""
    if kind not in KINDS:
        raise LomoError(f"unknown gate kind {kind!r}")
    row = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == dedupe_key))).first()
    if row is not None:
        return row
    gate_id = new_id("gate")
    await conn.execute(insert(s.gates).values(
        id=gate_id, task_id=task_id, turn_id=turn_id, tool_call_id=tool_call_id, kind=kind, status="pending",
        question=question, options=normalise_options(options), scope=scope, continues=continues,
        dedupe_key=dedupe_key, created_at=clock.now(), deadline=deadline))
    await conn.execute(insert(s.events).values(type="gate_opened", at=clock.now(), task_id=task_id,
                                               turn_id=turn_id, data={"gate_id": gate_id, "kind": kind}))
    return (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()


def _unavailable(gate_id: str, row: Any) -> LomoError:
    if row.status == "expired":
        why = (row.resolution or {}).get("reason") or "it expired"
        instead = (row.resolution or {}).get("instead")
        return LomoError(f"gate {gate_id} expired ({why}){'; ' + instead if instead else ''}; nothing changed")
    return LomoError(f"gate {gate_id} is already {row.status}; nothing changed")


async def answer_gate(conn: AsyncConnection, gate_id: str, *, approve: bool, option: int | None = None,
                      by: str = "creator:cli") -> Any:
    """Record the creator's answer to a pending gate: approve (optionally choosing OPTION, 1-based) or reject.
    Raises if unknown, resolved or expired. The resolution is a conditional update from `pending`: of several
    concurrent answers one changes the row, and only that one grants. Returns the resolved gate; what it sets
    going is the runtime's (runtime/reactions.py `resolve_gate`)."""
    row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).first()
    if row is None:
        raise UnknownId(f"no gate with id {gate_id!r}; `lomo gates` lists the pending ones")
    if row.status == "pending" and row.deadline is not None and row.deadline <= clock.now():
        await expire_gate(conn, row, "its deadline passed", row.scope and row.scope.get("on_expiry") or "")
        row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()
    if row.status != "pending":
        raise _unavailable(gate_id, row)
    options = row.options or []
    if option is not None and not 1 <= option <= max(len(options), 1):
        raise LomoError(f"gate {gate_id} has {len(options)} option(s); choose 1–{len(options)}")
    chosen = (option or 1) if approve else None
    label = options[chosen - 1]["label"] if approve and options else None
    resolution = {"approved": approve, "option": chosen, "label": label}
    changed = await conn.execute(update(s.gates).where(s.gates.c.id == gate_id, s.gates.c.status == "pending")
                                 .values(status="approved" if approve else "rejected", resolved_at=clock.now(),
                                         resolution=resolution, resolved_by=by))
    if changed.rowcount != 1:  # another answer (or a stop) got there first
        latest = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()
        raise _unavailable(gate_id, latest)
    if approve:
        await grant(conn, gate=row, by=by)
    return (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()


async def record_resolved(conn: AsyncConnection, gate: Any, approve: bool, by: str) -> None:
    """The `gate_resolved` event (after what the answer set going, so the log reads cause then effect)."""
    await conn.execute(insert(s.events).values(type="gate_resolved", at=clock.now(), task_id=gate.task_id,
                                               turn_id=gate.turn_id,
                                               data={"gate_id": gate.id, "approved": approve, "by": by}))


async def expire_gate(conn: AsyncConnection, gate: Any, reason: str, instead: str) -> bool:
    """A pending gate becomes `expired` (conditional on still pending), saying why and what happened instead."""
    t = clock.now()
    changed = await conn.execute(update(s.gates).where(s.gates.c.id == gate.id, s.gates.c.status == "pending").values(
        status="expired", resolved_at=t, resolved_by="lomo",
        resolution={"approved": False, "option": None, "label": None, "expired": True, "reason": reason,
                    "instead": instead}))
    if changed.rowcount:
        await conn.execute(insert(s.events).values(type="gate_expired", at=t, task_id=gate.task_id,
                                                   turn_id=gate.turn_id,
                                                   data={"gate_id": gate.id, "reason": reason, "instead": instead}))
    return bool(changed.rowcount)


async def expire_task_gates(conn: AsyncConnection, task_id: str, reason: str) -> list[str]:
    """A stopped or archived task's pending gates expire (they leave the inbox; answering one is refused)."""
    rows = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task_id,
                                                     s.gates.c.status == "pending"))).all()
    return [row.id for row in rows if await expire_gate(conn, row, reason, "nothing it would have allowed was done")]


async def expire_overdue(db: Database) -> list[Any]:
    """Expire pending gates whose deadline passed, each as if the creator had declined it (what the gate's
    `on_expiry` says happens instead). Returns the expired gates."""
    t = clock.now()
    async with db.read() as conn:
        due = (await conn.execute(select(s.gates).where(s.gates.c.status == "pending", s.gates.c.deadline.is_not(None),
                                                        s.gates.c.deadline <= t))).all()
    expired = []
    for gate in due:
        async with db.write() as conn:
            instead = (gate.scope or {}).get("on_expiry") or "treated as declined: nothing it would have allowed was done"
            if await expire_gate(conn, gate, "its deadline passed", instead):
                expired.append(gate)
    return expired


async def pending_gates(db: Database) -> list[Any]:
    """The gates waiting for the creator (overdue ones expire first and leave the list)."""
    await expire_overdue(db)
    async with db.read() as conn:
        return list((await conn.execute(select(s.gates).where(s.gates.c.status == "pending").order_by(
            s.gates.c.created_at))).all())
