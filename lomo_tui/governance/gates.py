"""Gates: first-class, persisted questions that only an explicit creator action resolves (G4, G6).

A gate blocks its scope only. Creating a gate twice with one dedupe key returns the first. Resolving is
recorded with who did it and how; resolving again (or after the other answer) changes nothing. A gate
expires — when its task is stopped or archived, or at its deadline — saying why and what happened instead.
Those two are stored as catalogue texts (`Said`: key and fields, next to their English wording for old
readers), so each reader sees them in their own language (`expiry_text`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update

from ..errors import LomoError, Said, UnknownId, shown
from ..base.ids import new_id
from ..store import schema as s
from ..store.engine import Database
from .budget import grant
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

KINDS = ("clarify", "plan", "spend", "irreversible", "question")
DEADLINE = Said("gate_expiry.deadline")
DECLINED = Said("gate_expiry.declined")  # what happens instead when a gate's deadline passes, unless it says
CALLED_OFF = {"stopped": Said("gate_expiry.stopped"), "archived": Said("gate_expiry.archived")}


def expiry_text(resolution: Any, lang: str) -> tuple[str, str]:
    """(why it expired, what happened instead) of an expired gate's RESOLUTION, in LANG; an old row's free
    text as it was stored."""
    res = resolution if isinstance(resolution, dict) else {}
    return (shown(res.get("reason"), res.get("reason_said"), lang),
            shown(res.get("instead"), res.get("instead_said"), lang))


def on_expiry(scope: Any) -> Said | str:
    """What the gate's scope says happens when its deadline passes (a `Said`, or an old row's free text)."""
    scope = scope if isinstance(scope, dict) else {}
    return Said.load(scope.get("on_expiry_said")) or scope.get("on_expiry") or DECLINED


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
        res = row.resolution or {}
        why = Said.load(res.get("reason_said")) or res.get("reason") or Said("gate_expiry.expired")
        instead = Said.load(res.get("instead_said")) or res.get("instead")
        if instead:
            return LomoError.said("cli_error.gate_expired_instead", id=gate_id, why=why, instead=instead)
        return LomoError.said("cli_error.gate_expired", id=gate_id, why=why)
    return LomoError.said("cli_error.gate_resolved", id=gate_id, status=Said(f"cli_error.status_{row.status}"))


async def answer_gate(conn: AsyncConnection, gate_id: str, *, approve: bool, option: int | None = None,
                      by: str = "creator:cli") -> Any:
    """Record the creator's answer to a pending gate: approve (optionally choosing OPTION, 1-based) or reject.
    Raises if unknown, resolved or expired. The resolution is a conditional update from `pending`: of several
    concurrent answers one changes the row, and only that one grants. Returns the resolved gate; what it sets
    going is the runtime's (runtime/reactions.py `resolve_gate`)."""
    row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).first()
    if row is None:
        raise UnknownId.said("cli_error.no_gate", id=gate_id)
    if row.status == "pending" and row.deadline is not None and row.deadline <= clock.now():
        await expire_gate(conn, row, DEADLINE, on_expiry(row.scope))
        row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()
    if row.status != "pending":
        raise _unavailable(gate_id, row)
    options = row.options or []
    if option is not None and not 1 <= option <= max(len(options), 1):
        raise LomoError.said("cli_error.gate_option", id=gate_id, n=len(options))
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


async def expire_gate(conn: AsyncConnection, gate: Any, reason: Said | str, instead: Said | str) -> bool:
    """A pending gate becomes `expired` (conditional on still pending), saying why and what happened instead:
    `reason`/`instead` in English, and `reason_said`/`instead_said` (catalogue key and fields) to word them
    in the reader's language."""
    t = clock.now()
    said = {name: value.stored() for name, value in (("reason_said", reason), ("instead_said", instead))
            if isinstance(value, Said)}
    words = {name: value.text("en") if isinstance(value, Said) else value
             for name, value in (("reason", reason), ("instead", instead))}
    changed = await conn.execute(update(s.gates).where(s.gates.c.id == gate.id, s.gates.c.status == "pending").values(
        status="expired", resolved_at=t, resolved_by="lomo",
        resolution={"approved": False, "option": None, "label": None, "expired": True, **words, **said}))
    if changed.rowcount:
        await conn.execute(insert(s.events).values(type="gate_expired", at=t, task_id=gate.task_id,
                                                   turn_id=gate.turn_id,
                                                   data={"gate_id": gate.id, **words, **said}))
    return bool(changed.rowcount)


async def expire_task_gates(conn: AsyncConnection, task_id: str, reason: Said | str) -> list[str]:
    """A stopped or archived task's pending gates expire (they leave the inbox; answering one is refused).
    REASON: `CALLED_OFF["stopped"]`, `CALLED_OFF["archived"]`, or free text."""
    rows = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task_id,
                                                     s.gates.c.status == "pending"))).all()
    nothing = Said("gate_expiry.nothing_done")
    return [row.id for row in rows if await expire_gate(conn, row, reason, nothing)]


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
            if await expire_gate(conn, gate, DEADLINE, on_expiry(gate.scope)):
                expired.append(gate)
    return expired


async def pending_gates(db: Database) -> list[Any]:
    """The gates waiting for the creator (overdue ones expire first and leave the list)."""
    await expire_overdue(db)
    async with db.read() as conn:
        return list((await conn.execute(select(s.gates).where(s.gates.c.status == "pending").order_by(
            s.gates.c.created_at))).all())
