"""Collaboration metrics from the ledgers (DESIGN J5): a read model over what the runtime recorded.

Nothing here is estimated or asked of a model: every figure is a count over the tables (checklist and its
links, jobs, charges, gates, model calls, turns, events, tasks), so the same database gives the same figures.
A ratio whose denominator is zero is None ("nothing measured yet"), never 0.

Definitions (each counts rows in scope: one task with TASK_ID, and rows from SINCE on):

- a *verified transition* is a checklist step the runtime moved to done after validating its result against
  the step (`tasks.evidence`: event `transition_written`, with `step_evidence` rows naming the job, object
  version, read or creator's answer that shows it); a *claimed transition* is any attempt to move a step: the
  verified ones, the results the runtime refused (`transition_rejected`: a claim nothing showed, a file of the
  wrong kind, size or length), and steps done before evidence was recorded (older databases).
  `verified_transition_ratio` = verified / claimed.
- `tokens_per_verified_transition`: prompt + completion tokens of every model call / verified transitions;
  `cost_per_verified_transition`: the model calls' priced cost / verified (None while no call was priced);
  `spend_per_verified_transition`: studio charges (not refunded) / verified.
- `duplicate_work_rate`: jobs that repeat an earlier job of the same task (same kind, prompt, input files
  and seed) / all jobs. Jobs that failed, expired or were cancelled are no work done and repeat nothing: a
  retry after a failure is a repair, not a duplicate; so is remaking a result the creator deleted.
- `interruptions_per_milestone`: gates the creator had to answer (answered by the creator, or still
  waiting for them; not those Lomo expired) / claimed transitions.
- `needless_confirmations`: approved money gates that bought nothing — a spend card none of whose calls
  was then charged, or an approved plan budget after which the task was never charged. (Whether a card
  was needed in the first place is a judgement the ledgers cannot make; this counts the measurable part.)
- `unsafe_actions_prevented`: spend and irreversible (delete, forget) gates that stopped their action:
  rejected, expired, or answered with an option other than going ahead ("Keep it").
- `recovery_success_rate`: turns another worker took over after a lease expiry or a crash (event
  `lease_taken_over`) that then completed / all such turns.
- `model_calls_per_finished_task`: model calls of the tasks now `done` / those tasks.
"""
from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from .errors import UsageError
from .production.keys import work_of as production_work
from .store import schema as s
from . import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

CONTRACT_KEYS = ("verified_transition_ratio", "tokens_per_verified_transition", "duplicate_work_rate",
                 "interruptions_per_milestone", "unsafe_actions_prevented", "recovery_success_rate")
NO_WORK = ("failed", "expired", "cancelled")  # job statuses that produced nothing
PREVENTING = ("spend", "irreversible")
RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: float | None = None) -> float:
    """`--since`: a span back from now (30m, 24h, 7d, 2w) or an ISO date/time (local time unless it says)."""
    value = text.strip()
    found = RELATIVE.match(value.lower())
    if found:
        return (now if now is not None else clock.now()) - float(found.group(1)) * UNIT_SECONDS[found.group(2)]
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise UsageError.said("cli_error.bad_since", text=text) from None
    return (when if when.tzinfo else when.astimezone()).timestamp()


def _ratio(part: float, whole: float, digits: int = 4) -> float | None:
    return round(part / whole, digits) if whole else None


def _after(column: Any, since: float | None) -> list[Any]:
    return [] if since is None else [column >= since]


def _in_task(column: Any, task_id: str | None) -> list[Any]:
    return [] if task_id is None else [column == task_id]


async def compute(conn: AsyncConnection, *, task_id: str | None = None, since: float | None = None
                  ) -> dict[str, Any]:
    """The J5 metrics over the ledgers (CONTRACTS §7 `lomo stats`), with the counts they are made of."""
    verified, rejected, legacy, rechecked = await _transitions(conn, task_id, since)
    claimed = verified + rejected + legacy

    calls = (await conn.execute(select(s.model_calls.c.prompt_tokens, s.model_calls.c.completion_tokens,
                                       s.model_calls.c.cost).where(
        *_in_task(s.model_calls.c.task_id, task_id), *_after(s.model_calls.c.created_at, since)))).all()
    tokens = sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls)
    priced = [c.cost for c in calls if c.cost is not None]
    charges = (await conn.execute(select(s.charges.c.amount, s.charges.c.currency).where(
        s.charges.c.status == "charged", *_in_task(s.charges.c.task_id, task_id),
        *_after(s.charges.c.created_at, since)))).all()
    spend = round(sum(c.amount for c in charges), 4)

    jobs = (await conn.execute(select(s.jobs.c.task_id, s.jobs.c.kind, s.jobs.c.prompt, s.jobs.c.params,
                                      s.jobs.c.idempotency_key, s.jobs.c.status, s.jobs.c.artifact_path, s.jobs.c.finished_at).where(
        *_in_task(s.jobs.c.task_id, task_id), *_after(s.jobs.c.created_at, since)))).all()
    deleted = await _deleted_since(conn, min((j.finished_at for j in jobs if j.finished_at), default=None))
    work = Counter(_work_key(j) for j in jobs if j.status not in NO_WORK
                   and not any(at >= (j.finished_at or 0) for at in deleted.get(j.artifact_path, ())))
    duplicates = sum(n - 1 for n in work.values())

    gates = (await conn.execute(select(s.gates).where(
        *_in_task(s.gates.c.task_id, task_id), *_after(s.gates.c.created_at, since)))).all()
    interruptions = sum(1 for g in gates if g.status == "pending"
                        or (g.status in ("approved", "rejected") and g.resolved_by != "lomo"))
    prevented = sum(1 for g in gates if g.kind in PREVENTING and _stopped(g))
    needless = await _needless(conn, gates)

    takeovers = {e.turn_id for e in (await conn.execute(select(s.events.c.turn_id).where(
        s.events.c.type == "lease_taken_over", s.events.c.turn_id.is_not(None),
        *_in_task(s.events.c.task_id, task_id), *_after(s.events.c.at, since)))).all()}
    recovered = 0
    if takeovers:
        recovered = len((await conn.execute(select(s.turns.c.id).where(
            s.turns.c.id.in_(takeovers), s.turns.c.status == "completed"))).all())

    finished = (await conn.execute(select(s.tasks.c.id).where(
        s.tasks.c.status == "done", *_in_task(s.tasks.c.id, task_id),
        *_after(s.tasks.c.updated_at, since)))).scalars().all()
    finished_calls = 0
    if finished:
        finished_calls = len((await conn.execute(select(s.model_calls.c.id).where(
            s.model_calls.c.task_id.in_(finished)))).all())

    n_verified = verified
    return {
        "verified_transition_ratio": _ratio(n_verified, claimed),
        "tokens_per_verified_transition": _ratio(tokens, n_verified, 1),
        "duplicate_work_rate": _ratio(duplicates, len(jobs)),
        "interruptions_per_milestone": _ratio(interruptions, claimed),
        "unsafe_actions_prevented": prevented,
        "recovery_success_rate": _ratio(recovered, len(takeovers)),
        "cost_per_verified_transition": _ratio(sum(priced), n_verified, 6) if priced else None,
        "spend_per_verified_transition": _ratio(spend, n_verified),
        "needless_confirmations": needless,
        "model_calls_per_finished_task": _ratio(finished_calls, len(finished), 2),
        "counts": {
            "claimed_transitions": claimed, "verified_transitions": n_verified, "rejected_claims": rejected,
            "stale_evidence_rechecked": rechecked["revalidated"], "steps_reopened": rechecked["reopened"],
            "model_calls": len(calls), "tokens": tokens, "model_cost": round(sum(priced), 6) if priced else None,
            "spend": spend, "currency": charges[0].currency if charges else "credits",
            "jobs": len(jobs), "duplicate_jobs": duplicates, "gates": len(gates),
            "creator_interruptions": interruptions, "takeovers": len(takeovers), "recovered": recovered,
            "finished_tasks": len(finished),
        },
        "scope": {"task_id": task_id, "since": since},
    }


async def _transitions(conn: AsyncConnection, task_id: str | None, since: float | None
                       ) -> tuple[int, int, int, dict[str, int]]:
    """(verified, rejected, legacy, rechecked): completions the runtime validated and wrote back
    (`transition_written`), results it refused (`transition_rejected`), steps done before evidence was recorded
    (no evidence row), and steps whose evidence went stale: checked again and kept, or re-opened."""
    counts = dict((await conn.execute(select(s.events.c.type, func.count()).where(
        s.events.c.type.in_(("transition_written", "transition_rejected", "evidence_revalidated", "step_reopened")),
        *_in_task(s.events.c.task_id, task_id),
        *_after(s.events.c.at, since)).group_by(s.events.c.type))).all())
    legacy = (await conn.execute(select(func.count()).select_from(s.checklist).where(
        s.checklist.c.state == "done", *_in_task(s.checklist.c.task_id, task_id),
        *_after(s.checklist.c.done_at, since),
        s.checklist.c.id.notin_(select(s.step_evidence.c.item_id))))).scalar() or 0
    return (counts.get("transition_written", 0), counts.get("transition_rejected", 0), legacy,
            {"revalidated": counts.get("evidence_revalidated", 0), "reopened": counts.get("step_reopened", 0)})


async def _verified(conn: AsyncConnection, done: set[str]) -> set[str]:
    """The done steps among DONE whose completion the runtime validated (a valid `step_evidence` row)."""
    if not done:
        return set()
    return set((await conn.execute(select(s.step_evidence.c.item_id).where(
        s.step_evidence.c.item_id.in_(list(done)), s.step_evidence.c.status == "valid"))).scalars().all())


async def _deleted_since(conn: AsyncConnection, since: float | None) -> dict[str, list[float]]:
    """When each workspace path was deleted (`object_deleted`) since SINCE: a result deleted after its job is no
    work left, so making it again is a repair, not duplicate work."""
    if since is None:
        return {}
    out: dict[str, list[float]] = {}
    for row in (await conn.execute(select(s.events.c.at, s.events.c.data).where(
            s.events.c.type == "object_deleted", s.events.c.at >= since))).all():
        out.setdefault(str((row.data or {}).get("path")), []).append(row.at)
    return out


def _work_key(job: Any) -> tuple[Any, ...]:
    """What makes two jobs the same work. A production-graph node is keyed by its idempotency key (the node
    and a hash of its inputs' content and parameters): a key frame remade after its character sheet changed
    has the same prompt and input paths but is new work."""
    if (work := production_work(job.idempotency_key)) is not None:
        return job.task_id, job.kind, work
    params = job.params or {}
    inputs = tuple(sorted(str(i) for i in params.get("inputs") or ()))
    return job.task_id, job.kind, (job.prompt or "").strip(), inputs, params.get("seed")


def _stopped(gate: Any) -> bool:
    """A spend or irreversible gate that kept its action from happening."""
    if gate.status in ("rejected", "expired"):
        return True
    option = (gate.resolution or {}).get("option")
    return gate.status == "approved" and gate.kind == "irreversible" and option not in (None, 1)


async def _needless(conn: AsyncConnection, gates: list[Any]) -> int:
    """Approved money gates after which nothing was charged under them."""
    count = 0
    for gate in gates:
        if gate.status != "approved" or gate.kind not in ("spend", "plan"):
            continue
        scope = gate.scope or {}
        if gate.kind == "spend" and not scope.get("graph"):
            keys = list(scope.get("keys") or ([scope["key"]] if scope.get("key") else []))
            used = keys and (await conn.execute(select(s.charges.c.id).where(
                s.charges.c.idempotency_key.in_(keys)))).first() is not None
        else:  # a plan, or a production graph's card: its nodes are charged under their own job keys
            used = (await conn.execute(select(s.charges.c.id).where(
                s.charges.c.task_id == gate.task_id, s.charges.c.created_at >= (gate.resolved_at or 0)))
                    ).first() is not None
        count += 0 if used else 1
    return count


def rows(doc: dict[str, Any], lang: str = "en") -> list[tuple[str, str]]:
    """(name, value) per metric, with what it is made of, and '—' where nothing was measured (`render`, the TUI),
    worded in LANG (the catalogue's [metrics])."""
    from .language import message

    c = doc["counts"]

    def show(value: Any, fmt: str = "{:.2f}") -> str:
        return "—" if value is None else fmt.format(value)

    def say(key: str, **fields: Any) -> str:
        return message("metrics." + key, lang, **fields)

    def n(count: int, key: str) -> str:
        return say(f"{key}_one" if count == 1 else f"{key}_many", n=count)

    return [
        (say("verified"), say("verified_value", ratio=show(doc["verified_transition_ratio"], "{:.0%}"),
                              verified=c["verified_transitions"], claimed=c["claimed_transitions"])),
        (say("tokens"), say("tokens_value", value=show(doc["tokens_per_verified_transition"], "{:,.0f}"),
                            tokens=f"{c['tokens']:,}", calls=n(c["model_calls"], "model_call"))),
        (say("cost"), say("cost_value", model=show(doc["cost_per_verified_transition"], "{:.4f}"),
                          studio=show(doc["spend_per_verified_transition"]), currency=c["currency"])),
        (say("duplicate"), say("duplicate_value", rate=show(doc["duplicate_work_rate"], "{:.0%}"),
                               duplicates=c["duplicate_jobs"], jobs=c["jobs"])),
        (say("interruptions"), say("interruptions_value", value=show(doc["interruptions_per_milestone"]),
                                   questions=n(c["creator_interruptions"], "question"))),
        (say("needless"), str(doc["needless_confirmations"])),
        (say("unsafe"), str(doc["unsafe_actions_prevented"])),
        (say("recovery"), say("recovery_value", rate=show(doc["recovery_success_rate"], "{:.0%}"),
                              recovered=c["recovered"], takeovers=n(c["takeovers"], "takeover"))),
        (say("calls_finished"), say("calls_finished_value",
                                    value=show(doc["model_calls_per_finished_task"], "{:.1f}"),
                                    finished=n(c["finished_tasks"], "finished_task"))),
    ]


def scope_text(doc: dict[str, Any], lang: str = "en") -> str:
    """"all tasks", "task ID", "… since 2026-12-01 09:30", in LANG (`[wording] stats_*`)."""
    from .language import message

    scope = doc["scope"]
    where = (message("wording.stats_task", lang, id=scope["task_id"]) if scope["task_id"]
             else message("wording.stats_all", lang))
    if scope["since"] is not None:
        at = dt.datetime.fromtimestamp(scope["since"]).astimezone().strftime("%Y-%m-%d %H:%M")
        where = message("wording.stats_since", lang, scope=where, at=at)
    return where


def _cells(text: str) -> int:
    """TEXT's width in terminal cells (a CJK character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def render(doc: dict[str, Any], lang: str = "en") -> str:
    """`lomo stats` for a person in LANG: one line per metric, what it is made of, and '—' where nothing was
    measured; the values aligned by terminal cells."""
    from .language import message

    lines = rows(doc, lang)
    width = max(_cells(name) for name, _ in lines)
    return "\n".join([message("wording.stats_heading", lang, scope=scope_text(doc, lang)),
                      *(f"  {name}{' ' * (width - _cells(name))}  {value}" for name, value in lines)])


async def activity(conn: AsyncConnection, *, days: int = 14, now: float | None = None, task_id: str | None = None,
                   since: float | None = None, top: int = 8, lang: str = "en") -> dict[str, Any]:
    """What the stats view charts: per local day over the last DAYS (oldest first, today last) the verified and
    claimed transitions and the model calls; and per task (the TOP by model calls; rows from SINCE on) its calls,
    tokens and verified/claimed steps (the main thread and calls of no task named in LANG).
    {"days": [{"day", "verified", "claimed", "model_calls"}],
    "tasks": [{"task_id", "title", "model_calls", "tokens", "verified", "claimed"}]}."""
    from .language import message

    now = clock.now() if now is None else now
    today = dt.date.fromtimestamp(now)
    first = today - dt.timedelta(days=days - 1)
    start = dt.datetime.combine(first, dt.time()).timestamp()

    def bucket(at: float) -> int | None:
        index = (dt.date.fromtimestamp(at) - first).days
        return index if 0 <= index < days else None

    steps = (await conn.execute(select(s.checklist.c.id, s.checklist.c.task_id, s.checklist.c.done_at).where(
        s.checklist.c.state == "done", *_in_task(s.checklist.c.task_id, task_id)))).all()
    verified = await _verified(conn, {r.id for r in steps})
    calls = (await conn.execute(select(s.model_calls.c.task_id, s.model_calls.c.created_at,
                                       s.model_calls.c.prompt_tokens, s.model_calls.c.completion_tokens).where(
        *_in_task(s.model_calls.c.task_id, task_id)))).all()
    series = [{"day": (first + dt.timedelta(days=n)).isoformat(), "verified": 0, "claimed": 0, "model_calls": 0}
              for n in range(days)]
    per_task: dict[str, dict[str, Any]] = {}

    def of(tid: str | None) -> dict[str, Any]:
        return per_task.setdefault(tid or "", {"task_id": tid, "title": "", "model_calls": 0, "tokens": 0,
                                               "verified": 0, "claimed": 0})

    for step in steps:
        if since is None or (step.done_at or 0) >= since:
            entry = of(step.task_id)
            entry["claimed"] += 1
            entry["verified"] += step.id in verified
        index = bucket(step.done_at) if step.done_at and step.done_at >= start else None
        if index is not None:
            series[index]["claimed"] += 1
            series[index]["verified"] += step.id in verified
    for c in calls:
        if since is None or c.created_at >= since:
            entry = of(c.task_id)
            entry["model_calls"] += 1
            entry["tokens"] += (c.prompt_tokens or 0) + (c.completion_tokens or 0)
        index = bucket(c.created_at) if c.created_at >= start else None
        if index is not None:
            series[index]["model_calls"] += 1
    ids = [k for k in per_task if k]
    titles = dict((await conn.execute(select(s.tasks.c.id, s.tasks.c.title).where(
        s.tasks.c.id.in_(ids)))).all()) if ids else {}
    kinds = dict((await conn.execute(select(s.tasks.c.id, s.tasks.c.kind).where(
        s.tasks.c.id.in_(ids)))).all()) if ids else {}
    for key, entry in per_task.items():
        entry["title"] = (message("wording.main_title", lang) if kinds.get(key) == "main"
                          else titles.get(key) or key or message("wording.no_task", lang))
    ranked = sorted(per_task.values(), key=lambda e: (-e["model_calls"], -e["claimed"], e["title"]))
    return {"days": series, "tasks": ranked[:top]}
