"""Budget and authorisation for paid generation (G6–G8): the one door that says whether money may move.

Three separate dimensions: the task's autonomy level (ask | plan | auto), the budget (free amount per
call, a daily free cap, approved plan budgets) and authorisation records, which only a creator's
explicit action creates (resolving a gate). A model's arguments or words never create one.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update

from ..errors import LomoError, UnknownId
from ..base.ids import new_id
from ..language import message
from ..store import schema as s
from ..store.engine import fetch
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

AUTONOMY = ("ask", "plan", "auto")


@dataclass(frozen=True)
class Budget:
    free_per_call: float = 0.10
    daily_free_cap: float = 1.00
    auto_daily_cap: float = 0.0  # spending allowed without asking for tasks on autonomy "auto"
    currency: str = "credits"

    @classmethod
    def from_config(cls, section: dict[str, Any]) -> "Budget":
        return cls(free_per_call=float(section.get("free_per_call", cls.free_per_call)),
                   daily_free_cap=float(section.get("daily_free_cap", cls.daily_free_cap)),
                   auto_daily_cap=float(section.get("auto_daily_cap", cls.auto_daily_cap)),
                   currency=str(section.get("currency", cls.currency)))


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str  # why it may go ahead, or why it must ask


def start_of_today() -> float:
    return clock.today().timestamp()


async def spent_today(conn: AsyncConnection) -> float:
    total = (await conn.execute(select(func.coalesce(func.sum(s.charges.c.amount), 0.0)).where(
        s.charges.c.status == "charged", s.charges.c.created_at >= start_of_today()))).scalar()
    return round(float(total or 0.0), 4)


async def task_spend(conn: AsyncConnection, task_id: str) -> float:
    total = (await conn.execute(select(func.coalesce(func.sum(s.charges.c.amount), 0.0)).where(
        s.charges.c.status == "charged", s.charges.c.task_id == task_id))).scalar()
    return round(float(total or 0.0), 4)


async def plan_allowance(conn: AsyncConnection, task_id: str) -> float:
    granted = (await conn.execute(select(func.coalesce(func.sum(s.authorisations.c.amount), 0.0)).where(
        s.authorisations.c.task_id == task_id, s.authorisations.c.scope == "plan",
        s.authorisations.c.revoked_at.is_(None)))).scalar()
    return round(float(granted or 0.0), 4)


SNAPSHOT = (  # three indexed lookups (ix_charges_task, ix_charges_created, ix_authorisations_task), no scan
    "SELECT (SELECT coalesce(sum(amount), 0) FROM charges WHERE task_id = :task_id AND status = 'charged') "
    "AS task_spend, (SELECT coalesce(sum(amount), 0) FROM charges WHERE created_at >= :today "
    "AND status = 'charged') AS today, (SELECT coalesce(sum(amount), 0) FROM authorisations "
    "WHERE task_id = :task_id AND scope = 'plan' AND revoked_at IS NULL) AS allowance")


async def snapshot(conn: AsyncConnection, task_id: str) -> tuple[float, float, float]:
    """(this task's spend, today's spend, the task's approved plan budget) in one query."""
    [row] = await fetch(conn, SNAPSHOT, {"task_id": task_id, "today": start_of_today()})
    return round(float(row.task_spend), 4), round(float(row.today), 4), round(float(row.allowance), 4)


SPEND_LOCK = 0x6C6F6D6F  # PostgreSQL advisory lock key ("lomo") that serialises spend decisions


async def hold_spending(conn: AsyncConnection) -> None:
    """Serialise spend decisions across processes until this write transaction ends.

    SQLite's write transaction (BEGIN IMMEDIATE) already excludes every other writer; PostgreSQL takes a
    transaction-scoped advisory lock. Check and charge then happen under one lock, so several processes
    can never each see room under a cap that only one of them fits in."""
    dialect = getattr(getattr(conn, "dialect", None), "name", "sqlite")
    if dialect == "postgresql":
        await conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SPEND_LOCK})")


async def check_spend(conn: AsyncConnection, budget: Budget, *, task_id: str, autonomy: str, key: str,
                      amount: float, lang: str = "en") -> Verdict:
    """May this paid call (idempotency KEY, costing AMOUNT) go ahead without asking?

    Callers hold `hold_spending` and write the charge in the same transaction (G8: one step)."""
    granted = (await conn.execute(select(s.authorisations.c.id).where(
        s.authorisations.c.idempotency_key == key, s.authorisations.c.scope == "call",
        s.authorisations.c.revoked_at.is_(None)))).first()
    if granted is not None:
        return Verdict(True, "approved by the creator")
    today = await spent_today(conn)
    if autonomy != "ask" and amount <= budget.free_per_call and today + amount <= budget.daily_free_cap:
        return Verdict(True, "within the free allowance")
    if autonomy in ("plan", "auto"):
        allowance = await plan_allowance(conn, task_id)
        if allowance and await task_spend(conn, task_id) + amount <= allowance:
            return Verdict(True, "within the approved plan budget")
    if autonomy == "auto" and today + amount <= budget.auto_daily_cap:
        return Verdict(True, "within the autonomous daily budget")
    return Verdict(False, _why(budget, autonomy, amount, today, lang))


def _why(budget: Budget, autonomy: str, amount: float, today: float, lang: str = "en") -> str:
    """Why this call needs the creator's approval, in LANG (the task's language)."""
    c = budget.currency
    if autonomy == "ask":
        return message("budget.ask_always", lang)
    if amount > budget.free_per_call:
        return message("budget.over_per_call", lang, amount=f"{amount:.2f}", currency=c,
                       limit=f"{budget.free_per_call:.2f}")
    return message("budget.over_daily", lang, total=f"{today + amount:.2f}", currency=c,
                   limit=f"{budget.daily_free_cap:.2f}")


async def plan_why(conn: AsyncConnection, budget: Budget, *, autonomy: str, amount: float, lang: str = "en") -> str:
    """Why a production plan costing AMOUNT (one card for a graph's paid nodes) is put to the creator, in one
    short line in LANG: the limit `check_spend` finds it over (today's free allowance, the auto-approve limit of
    an `auto` task, the free amount per call); within them all, the task's autonomy (`ask`, or `plan`: each
    plan is approved first)."""
    if autonomy == "ask":
        return message("production.why_ask", lang)
    today, c = await spent_today(conn), budget.currency
    money = {"total": f"{amount:.2f}", "currency": c}
    if autonomy == "auto" and budget.auto_daily_cap > budget.daily_free_cap and today + amount > budget.auto_daily_cap:
        return message("production.why_over_auto", lang, left=f"{max(budget.auto_daily_cap - today, 0):.2f}", **money)
    if today + amount > budget.daily_free_cap:
        return message("production.why_over_free", lang, left=f"{max(budget.daily_free_cap - today, 0):.2f}", **money)
    if amount > budget.free_per_call:
        return message("production.why_over_call", lang, limit=f"{budget.free_per_call:.2f}", **money)
    return message("production.why_plan", lang)


async def set_autonomy(conn: AsyncConnection, task_id: str, level: str, by: str) -> None:
    """The creator sets how much a task may do without asking (G6). Only a creator action calls this."""
    if level not in AUTONOMY:
        raise LomoError.said("cli_error.autonomy_choice", choices=", ".join(AUTONOMY))
    kind = (await conn.execute(select(s.tasks.c.kind).where(s.tasks.c.id == task_id))).scalar()
    if kind == "main":
        raise LomoError.said("cli_error.main_autonomy")
    result = await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(autonomy=level,
                                                                                     updated_at=clock.now()))
    if not result.rowcount:
        raise UnknownId.said("cli_error.no_task", id=task_id)
    await conn.execute(insert(s.events).values(type="autonomy_set", at=clock.now(), task_id=task_id,
                                               data={"level": level, "by": by}))


async def grant(conn: AsyncConnection, *, gate: Any, by: str) -> None:
    """Record the authorisation an approved gate stands for (called only from gate resolution)."""
    scope = gate.scope or {}
    if gate.kind == "spend":  # one authorisation per paid call the card stood for
        items = scope.get("items") or [{"key": scope.get("key"), "amount": scope.get("amount", 0)}]
        for item in items:
            await conn.execute(insert(s.authorisations).values(
                id=new_id("auth"), task_id=gate.task_id, scope="call", idempotency_key=item["key"],
                amount=float(item["amount"]), gate_id=gate.id, granted_by=by, created_at=clock.now()))
    elif gate.kind == "plan" and scope.get("budget"):
        await conn.execute(insert(s.authorisations).values(
            id=new_id("auth"), task_id=gate.task_id, scope="plan", amount=float(scope["budget"]),
            gate_id=gate.id, granted_by=by, created_at=clock.now()))
