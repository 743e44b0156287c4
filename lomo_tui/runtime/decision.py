"""Deciding before a run (DESIGN J3, #16 §4): run / wait / ask / replan / repair / quiet, from persisted state.

`decide` is a pure function over a `TaskState` (no model call, no I/O); `read_state` reads one from the
database. Every automatic run is decided here first — after a turn ends, after a card is answered, and
between the steps of a turn before the model is asked again — and the decision is recorded as a
`run_decided` event (data: stage, action, hint, reason, until) with its scheduler hint:

| hint      | meaning                                                   |
|-----------|-----------------------------------------------------------|
| `now`     | run at once                                               |
| `backoff` | run again at `until` (a transient failure, doubling)      |
| `event`   | wait for an event (a job in flight)                       |
| `creator` | wait for the creator (a card, a message)                  |
| `pause`   | paused or stopped: only the creator's resume runs it      |

Waiting never costs a model call: when only a human checkpoint is left the runtime opens the card itself
(D3), and a finished goal goes quiet. Repair (a done step's result deleted or broken, its evidence expired) and
replan (the creator changed the goal after the plan was written) are carried out by the runtime before the next
turn — steps re-checked and re-opened, an outdated plan marked, the next turn told what to do
(runtime/remedy.py) — never discovered by a model call.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from .. import clock
from ..errors import Said
from ..ledger import Ledger
from ..store import schema as s
from ..tasks import checklist, evidence, replan

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

ACTIONS = ("run", "wait", "ask", "replan", "repair", "quiet")
HINTS = ("now", "backoff", "event", "creator", "pause")
LIVE_JOBS = ("submitting", "queued", "running")
WAITS_FOR_CREATOR = ("idle", "blocked", "failed", "waiting_gate")  # task statuses only the creator moves on


@dataclass(frozen=True)
class TaskState:
    """What the decision reads: the task's persisted state at one moment."""

    kind: str
    status: str
    archived: bool = False
    inbox: int = 0  # unread messages
    planned: bool = False  # the task has a checklist
    open_steps: tuple[bool, ...] = ()  # the open checklist steps, in order: whether each needs the creator
    live_jobs: int = 0
    pending_gates: int = 0
    retry_at: float | None = None  # a transient failure's back-off: run again then
    goal_after_plan: bool = False  # the creator changed the goal after the checklist was last written
    missing: tuple[str, ...] = ()  # artifacts a done step made that are gone from the workspace
    stale: tuple[str, ...] = ()  # why done steps' evidence no longer holds (a file changed or broke, it expired)
    now: float = field(default_factory=clock.now)


@dataclass(frozen=True)
class Decision:
    action: str  # ACTIONS
    hint: str  # HINTS
    reason: str  # in English (the `run_decided` event); `words(lang)` for the creator
    until: float | None = None  # with hint `backoff`
    said: Said | None = field(default=None, compare=False)  # the reason as catalogue text ([decision])

    def event(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and k != "said"}

    def words(self, lang: str) -> str:
        """The reason in LANG (a status reason the creator reads)."""
        return self.said.text(lang) if self.said is not None else self.reason


def _decided(action: str, hint: str, key: str, until: float | None = None, **fields: Any) -> Decision:
    said = Said(f"decision.{key}", fields)
    return Decision(action, hint, said.text("en"), until, said)


def decide(state: TaskState) -> Decision:
    """What the next automatic run of a task should be (pure: same state, same decision)."""
    if state.status == "stopped" or state.archived:
        return _decided("quiet", "pause", "stopped")
    if state.status == "paused":
        return _decided("wait", "pause", "paused")
    if state.inbox:
        return _decided("run", "now", "unread")
    if state.kind == "main":
        return _decided("quiet", "event", "main")
    if state.status == "done" and not (state.planned and (state.missing or state.stale or state.goal_after_plan)):
        return _decided("quiet", "event", "finished")
    if state.retry_at is not None and state.retry_at > state.now:
        return _decided("wait", "backoff", "backoff", until=state.retry_at)
    if state.status in WAITS_FOR_CREATOR:
        return _decided("wait", "creator", "waits_status", status=state.status)
    if state.pending_gates:
        return _decided("wait", "creator", "card_waits")
    if state.live_jobs:
        return _decided("wait", "event", "job")
    if state.kind == "lightweight":
        return _decided("quiet", "event", "one_shot")
    if not state.planned:
        return _decided("wait", "creator", "no_plan")
    if state.missing:
        return _decided("repair", "now", "missing", paths=", ".join(state.missing))
    if state.stale:
        return _decided("repair", "now", "stale", why=state.stale[0])
    if state.goal_after_plan:
        return _decided("replan", "now", "goal_changed")
    if not state.open_steps:
        return _decided("quiet", "event", "complete")
    if state.open_steps[0]:
        return _decided("ask", "creator", "checkpoint")
    return _decided("run", "now", "work")


async def read_state(conn: AsyncConnection, task_id: str) -> TaskState:
    """The task's state as `decide` reads it."""
    now = clock.now()
    task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).one()
    inbox = (await conn.execute(select(func.count()).select_from(s.inbox).where(
        s.inbox.c.task_id == task_id, s.inbox.c.status == "pending"))).scalar() or 0
    steps = await checklist.items(conn, task_id)
    open_steps = tuple(bool(i.needs_confirmation) for i in steps if i.state in checklist.OPEN)
    jobs = (await conn.execute(select(func.count()).select_from(s.jobs).where(
        s.jobs.c.task_id == task_id, s.jobs.c.status.in_(LIVE_JOBS)))).scalar() or 0
    gates = (await conn.execute(select(func.count()).select_from(s.gates).where(
        s.gates.c.task_id == task_id, s.gates.c.status == "pending"))).scalar() or 0
    backoff = (await conn.execute(select(s.turns.c.wait_ref).where(
        s.turns.c.task_id == task_id, s.turns.c.status == "waiting", s.turns.c.wait_kind == "backoff"))).scalar()
    changed = await replan.pending(conn, task_id) if steps else None
    stale = await evidence.stale(conn, task_id, now) if steps else {}
    missing = {r.cur_path for _, rows in stale.values() for r in rows if r.gone and r.cur_path}
    broken = {why for why, rows in stale.values() if not any(r.gone for r in rows)}
    return TaskState(kind=task.kind, status=task.status, archived=bool(task.archived), inbox=inbox,
                     planned=bool(steps), open_steps=open_steps, live_jobs=jobs, pending_gates=gates,
                     retry_at=float(backoff) if backoff else None, goal_after_plan=changed is not None,
                     missing=tuple(sorted(missing)), stale=tuple(sorted(broken)),
                     now=now)


async def record(conn: AsyncConnection, task_id: str, turn_id: str | None, decision: Decision, *,
                 stage: str, **extra: Any) -> None:
    """The decision as a `run_decided` event (STAGE: where it was made: turn_end, step, gate_answered,
    goal_changed; EXTRA: e.g. the `outcome` of a repair or replan the runtime carried out, runtime/remedy.py)."""
    await Ledger.event(conn, "run_decided", task_id, turn_id, stage=stage, **decision.event(), **extra)
