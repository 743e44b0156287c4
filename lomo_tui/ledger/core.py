"""The ledger: the one door through which the runtime changes durable state.

It records; it does not decide what follows. The consequences of a finished turn and of a stop or archive
are the runtime's (`Reactions`, implemented by runtime/reactions.py), run inside the same transaction.

Every write made on behalf of a running turn is *fenced*: it opens with a guard update that checks
the writer's epoch and lease owner (and renews the lease). A stale writer's guard matches no row;
its transaction is rolled back, a `stale_write_rejected` event is recorded, and StaleWrite is raised.
"""
from __future__ import annotations

import json
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Iterable, NamedTuple, Protocol

from sqlalchemy import func, insert, select, update

from .. import clock
from ..errors import LomoError, Said, StaleWrite, UnknownId
from ..language import detect_language, message
from ..redact import redact, redact_data
from ..store import schema as s
from ..store.engine import Database, fetch, run
from ..router.index import refresh_search_text
from ..tasks import goals
from ..workspace.scope import belongs_to, tasks_of
from ..base.ids import call_key, new_id

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

ACTIVE_TURN = ("queued", "running", "waiting")
TERMINAL_TASK = ("done", "failed", "stopped")
MAIN_REFUSES = {"stop": "stopped", "archive": "archived"}  # what the main thread refuses, as the message says
PROMOTE_AFTER_REVISIONS = 2  # a one-shot revised this often becomes a persistent task (A2)
MAIN_TASK_LOCK = 0x6C6F6D6D  # advisory lock key: creating the main thread ("lomm")


@dataclass(frozen=True)
class Claim:
    """A worker's hold on a turn: who, at which epoch, until when."""

    turn_id: str
    task_id: str
    owner: str
    epoch: int
    took_over_from: str | None = None


class Reactions(Protocol):
    """What follows events the ledger records, run in the recording transaction (runtime/reactions.py)."""

    async def turn_completed(self, conn: AsyncConnection, ledger: "Ledger", claim: Claim) -> None: ...

    async def called_off(self, conn: AsyncConnection, task_id: str, reason: str) -> None: ...


class StartedCall(NamedTuple):
    """A tool call about to run, as its `started` row records it."""

    seq: int
    name: str
    arguments: dict[str, Any]
    side_effect: str


# The hot path's statements (plain SQL, portable between SQLite and PostgreSQL; see store.engine.run).
GUARD = ("UPDATE turns SET lease_expires = :expires, updated_at = :now WHERE id = :id AND epoch = :epoch "
         "AND lease_owner = :owner AND status = 'running'")
GUARD_DECISION = ("UPDATE turns SET lease_expires = :expires, updated_at = :now, steps = steps + 1, "
                  "model_calls = model_calls + 1 WHERE id = :id AND epoch = :epoch AND lease_owner = :owner "
                  "AND status = 'running'")
GUARD_CHECKPOINT = ("UPDATE turns SET lease_expires = :expires, updated_at = :now, checkpoint = :step, "
                    "crash_count = 0 WHERE id = :id AND epoch = :epoch AND lease_owner = :owner AND status = 'running'")
INSERT_STEP = "INSERT INTO steps (turn_id, step, epoch, decision, created_at) VALUES (:turn, :step, :epoch, :decision, :at)"
INSERT_MESSAGE = ("INSERT INTO messages (task_id, turn_id, step, role, content, tool_calls, tool_call_id, name, "
                  "created_at) VALUES (:task, :turn, :step, :role, :content, :calls, :call_id, :name, :at)")
INSERT_MODEL_CALL = ("INSERT INTO model_calls (task_id, turn_id, step, purpose, model, prompt_tokens, "
                     "completion_tokens, cached_tokens, cache_write_tokens, cost, latency_ms, created_at) VALUES "
                     "(:task, :turn, :step, :purpose, :model, :prompt_tokens, :completion_tokens, :cached_tokens, "
                     ":cache_write_tokens, :cost, :latency_ms, :at)")
UPSERT_STARTED = ("INSERT INTO tool_calls (id, turn_id, step, seq, name, arguments, status, idempotency_key, "
                  "executions, side_effect, epoch, started_at) VALUES (:id, :turn, :step, :seq, :name, :args, "
                  "'started', :id, 0, :side_effect, :epoch, :at) ON CONFLICT (id) DO UPDATE SET status = 'started', "
                  "epoch = excluded.epoch, started_at = excluded.started_at")
FINISH_CALL = ("UPDATE tool_calls SET status = :status, result = :result, finished_at = :at, "
               "executions = executions + :ran WHERE id = :id")


PENDING_INBOX = "SELECT * FROM inbox WHERE task_id = :task_id AND status = 'pending' ORDER BY sent_at"
_MODEL_CALLS = select(func.count()).select_from(s.model_calls)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class _InboxMoved(Exception):
    """A message the model read was withdrawn before the decision could commit."""


def now() -> float:
    return clock.now()


async def ensure_turn(conn: AsyncConnection, task_id: str) -> str:
    """The task's active turn, or a new queued one (at most one active turn per task)."""
    active = (await conn.execute(select(s.turns.c.id).where(
        s.turns.c.task_id == task_id, s.turns.c.status.in_(ACTIVE_TURN)))).scalar()
    if active:
        return active
    turn_id = new_id("turn")
    t = now()
    await conn.execute(insert(s.turns).values(id=turn_id, task_id=task_id, status="queued", epoch=0,
                                              created_at=t, updated_at=t))
    return turn_id


class Ledger:
    def __init__(self, db: Database, lease_seconds: float = 30.0, time_scale: float = 1.0,
                 reactions: Reactions | None = None) -> None:
        self.db = db
        self.lease_seconds = lease_seconds
        self.time_scale = time_scale  # scales the stop check's back-off after a transient failure
        self.reactions = reactions  # None (a bare ledger: benches, store tests): a finished turn only records
        # the workspace this ledger's process serves (set when the runtime opens it): tasks it creates belong to
        # it, and it runs only its tasks' turns (None: every task, as a bare ledger sees them)
        self.workspace_id: str | None = None

    # ---- events ---------------------------------------------------------------------------
    @staticmethod
    async def event(conn: AsyncConnection, type: str, task_id: str | None = None, turn_id: str | None = None,
                    **data: Any) -> None:
        await conn.execute(insert(s.events).values(type=type, at=now(), task_id=task_id, turn_id=turn_id,
                                                   data=redact_data(data) or None))

    async def record_event(self, type: str, task_id: str | None = None, turn_id: str | None = None,
                           **data: Any) -> None:
        async with self.db.write() as conn:
            await self.event(conn, type, task_id, turn_id, **data)

    # ---- tasks -----------------------------------------------------------------------------
    async def main_task_id(self) -> str:
        """The main thread's task, created on first use."""
        async with self.db.read() as conn:
            found = (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.kind == "main"))).scalar()
        if found:
            return found
        async with self.db.write() as conn:
            await self.db.serialise(conn, MAIN_TASK_LOCK)  # concurrent first starts create one main thread
            found = (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.kind == "main"))).scalar()
            if found:
                return found
            await self._insert_task(conn, "main", "main", "Main", status="idle")
            await self.event(conn, "task_created", "main", kind="main")
            return "main"

    async def create_task(self, title: str, *, kind: str = "persistent", goal: str = "", brief: str = "",
                          language: str | None = None, conn: AsyncConnection | None = None,
                          task_id: str | None = None) -> str:
        """A new task; its LANGUAGE (what its cards speak) is the language of its words unless the caller knows."""
        task_id = task_id or new_id("task")
        language = language or detect_language(" ".join((title, goal, brief)))
        if conn is not None:
            await self._insert_task(conn, task_id, kind, title, goal=goal, brief=brief, language=language,
                                    workspace_id=self.workspace_id)
            await refresh_search_text(conn, task_id)
            await self.event(conn, "task_created", task_id, kind=kind, title=title)
            return task_id
        async with self.db.write() as conn:
            return await self.create_task(title, kind=kind, goal=goal, brief=brief, language=language, conn=conn,
                                          task_id=task_id)

    @staticmethod
    async def _insert_task(conn: AsyncConnection, task_id: str, kind: str, title: str, *, status: str = "idle",
                           goal: str = "", brief: str = "", language: str = "en",
                           workspace_id: str | None = None) -> None:
        t = now()
        await conn.execute(insert(s.tasks).values(
            id=task_id, kind=kind, status=status, title=title, goal=goal or title, brief=brief, language=language,
            created_at=t, updated_at=t, workspace_id=workspace_id))
        await goals.record(conn, task_id, goal=goal or title, brief=brief, who="lomo",
                           why=Said("goal_why.created"), at=t)

    @staticmethod
    async def task_row(conn: AsyncConnection, task_id: str) -> Any:
        row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).first()
        if row is None:
            raise UnknownId.said("cli_error.no_task", id=task_id)
        return row

    @staticmethod
    async def set_task_status(conn: AsyncConnection, task_id: str, status: str, reason: str = "") -> None:
        await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
            status=status, status_reason=redact(reason), updated_at=now()))

    # ---- inbox -----------------------------------------------------------------------------
    async def deliver(self, task_id: str, text: str, *, source: str = "creator", origin: str | None = None,
                      conn: AsyncConnection | None = None, message_id: str | None = None) -> tuple[str, str]:
        """Put TEXT in TASK_ID's inbox and make sure a turn will consume it. Returns (message id, turn id)."""
        if conn is None:
            async with self.db.write() as conn:
                return await self.deliver(task_id, text, source=source, origin=origin, conn=conn,
                                          message_id=message_id)
        task = await self.task_row(conn, task_id)
        if task.archived:
            raise LomoError.said("cli_error.task_archived", id=task_id, title=task.title)
        if task.status == "stopped":
            raise LomoError.said("cli_error.task_stopped", id=task_id, title=task.title)
        msg_id = message_id or new_id("msg")
        await conn.execute(insert(s.inbox).values(id=msg_id, task_id=task_id, text=text, source=source,
                                                  status="pending", sent_at=now(), origin=origin,
                                                  workspace_id=self.workspace_id))
        await self.event(conn, "message_delivered", task_id, message_id=msg_id, source=source)
        if task.kind == "lightweight" and task.source_inbox and task.source_inbox != msg_id:
            revisions = task.revisions + 1
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(revisions=revisions))
            if revisions >= PROMOTE_AFTER_REVISIONS:
                await self.promote(conn, task_id, f"revised {revisions} times")
        elif task.source_inbox is None:
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(source_inbox=msg_id))
            await goals.attribute_first(conn, task_id, msg_id)
        if task.status in ("failed", "done", "idle", "blocked"):
            await self.set_task_status(conn, task_id, "active")
        turn_id = await self.ensure_turn(conn, task_id)
        return msg_id, turn_id

    @staticmethod
    async def ensure_turn(conn: AsyncConnection, task_id: str) -> str:
        """The task's active turn, or a new queued one."""
        return await ensure_turn(conn, task_id)

    @staticmethod
    async def backoff_turn(conn: AsyncConnection, task_id: str, until: float) -> str:
        """A new turn for TASK_ID that waits (`wait_kind` backoff) until UNTIL, then is queued like any other."""
        turn_id = await ensure_turn(conn, task_id)
        await conn.execute(update(s.turns).where(s.turns.c.id == turn_id, s.turns.c.status == "queued").values(
            status="waiting", wait_kind="backoff", wait_ref=f"{until:.3f}", updated_at=now()))
        return turn_id

    async def withdraw(self, message_id: str, replacement: str | None = None) -> str | None:
        """Withdraw an unconsumed message (B2); with REPLACEMENT, put the new text in its place."""
        async with self.db.write() as conn:
            row = (await conn.execute(select(s.inbox).where(s.inbox.c.id == message_id))).first()
            if row is None:
                raise UnknownId.said("cli_error.no_message", id=message_id)
            if row.status != "pending":
                raise LomoError.said("cli_error.message_settled", id=message_id, status=row.status)
            await conn.execute(update(s.inbox).where(s.inbox.c.id == message_id).values(status="withdrawn"))
            await self.event(conn, "message_withdrawn", row.task_id, message_id=message_id)
            if replacement is None:
                return None
            new = new_id("msg")
            await conn.execute(insert(s.inbox).values(id=new, task_id=row.task_id, text=replacement,
                                                      source=row.source, status="pending", sent_at=now(),
                                                      replaces=message_id, origin=row.origin,
                                                      workspace_id=row.workspace_id))
            await self.event(conn, "message_replaced", row.task_id, message_id=new, replaces=message_id)
            return new

    @staticmethod
    async def pending_inbox(conn: AsyncConnection, task_id: str) -> list[Any]:
        return await fetch(conn, PENDING_INBOX, {"task_id": task_id})

    # ---- leases and fencing -------------------------------------------------------------------
    async def claim(self, turn_id: str, owner: str, dead_owner: str | None = None) -> Claim | None:
        """Take TURN_ID if it is free, its lease expired, or its owner is known dead. Epoch + 1 on success."""
        t = now()
        async with self.db.write() as conn:
            row = (await conn.execute(select(s.turns).where(s.turns.c.id == turn_id))).first()
            if row is None or row.status not in ("queued", "running"):
                return None
            task = (await conn.execute(select(s.tasks.c.kind, s.tasks.c.status, s.tasks.c.archived,
                                              s.tasks.c.workspace_id).where(s.tasks.c.id == row.task_id))).first()
            if task is None or task.status in ("paused", "stopped") or task.archived:
                return None  # a paused task's turn waits for resume; a stopped or archived one never runs by itself
            if not self.serves(task.workspace_id):
                return None  # another folder's task: its files are not here (it runs where it was made)
            if task.kind == "main" and row.status == "queued" and not await self._main_message_here(conn, row.task_id):
                return None  # only messages typed with another folder open wait: that folder's Lomo routes them
            free = row.lease_owner is None or (row.lease_expires or 0) < t or row.lease_owner == owner or (
                dead_owner is not None and row.lease_owner == dead_owner)
            if not free:
                return None
            epoch = row.epoch + 1
            crashed = row.status == "running" and row.lease_owner is not None
            result = await conn.execute(update(s.turns).where(
                s.turns.c.id == turn_id, s.turns.c.epoch == row.epoch).values(
                epoch=epoch, lease_owner=owner, lease_expires=t + self.lease_seconds, status="running",
                crash_count=row.crash_count + (1 if crashed else 0), updated_at=t))
            if result.rowcount != 1:
                return None
            await conn.execute(update(s.tasks).where(s.tasks.c.id == row.task_id).values(
                status="running", updated_at=t))
            if crashed:
                await self.event(conn, "lease_taken_over", row.task_id, turn_id, epoch=epoch, owner=owner,
                                 previous_owner=row.lease_owner, previous_epoch=row.epoch)
            return Claim(turn_id, row.task_id, owner, epoch, row.lease_owner if crashed else None)

    async def guard(self, conn: AsyncConnection, claim: Claim, sql: str = GUARD, **extra: Any) -> None:
        """Fence check + lease renewal as the first statement of a turn's write transaction.
        Variants of the guard also move the turn's counters in the same statement."""
        t = now()
        if await run(conn, sql, dict(extra, id=claim.turn_id, epoch=claim.epoch, owner=claim.owner,
                                     expires=t + self.lease_seconds, now=t)) != 1:
            raise StaleWrite(claim.turn_id, claim.epoch)

    @asynccontextmanager
    async def fenced(self, claim: Claim, sql: str = GUARD, *, durable: bool = True,
                     **extra: Any) -> AsyncIterator[AsyncConnection]:
        """A write transaction that only commits if CLAIM still owns the turn (DURABLE: see Database.write)."""
        try:
            async with self.db.write(durable=durable) as conn:
                await self.guard(conn, claim, sql, **extra)
                yield conn
        except StaleWrite:
            await self.record_event("stale_write_rejected", claim.task_id, claim.turn_id, epoch=claim.epoch,
                                    owner=claim.owner)
            raise

    async def renew(self, claim: Claim) -> None:
        async with self.fenced(claim):
            pass

    async def release(self, claim: Claim) -> None:
        """Give the lease back without finishing (graceful shutdown): the turn is queued again."""
        async with self.db.write() as conn:
            await conn.execute(update(s.turns).where(
                s.turns.c.id == claim.turn_id, s.turns.c.epoch == claim.epoch,
                s.turns.c.lease_owner == claim.owner, s.turns.c.status == "running").values(
                status="queued", lease_owner=None, lease_expires=None, updated_at=now()))

    # ---- steps ------------------------------------------------------------------------------
    async def commit_decision(self, claim: Claim, step: int, decision: dict[str, Any], consumed: Iterable[str],
                              model_call: dict[str, Any], *, finish: bool = False,
                              started: Iterable[StartedCall] = (),
                              also: Callable[[Any], Awaitable[None]] | None = None) -> bool:
        """C2: decision + pending calls + consumed inbox (+ the model call) in one transaction.

        STARTED lists calls of idempotent tools to mark `started` in this same transaction. For them a
        separate `started` commit would carry no information: recovery re-runs an idempotent call with
        the same key whether or not its body began. Non-idempotent calls still get their own `started`
        commit (`start_call`) right before their body runs, so a crash in between is told apart.

        Returns False (and commits nothing) if a message the model read was withdrawn meanwhile.
        With FINISH (the reply has no tool calls) the turn completes in the same transaction, and the stop
        check settles the task. ALSO(conn) writes more of the step's rows inside that same transaction
        (which memories its context used, F4).
        """
        try:
            await self._commit_decision(claim, step, decision, list(consumed), model_call, finish, list(started),
                                        also)
        except _InboxMoved:
            return False
        return True

    async def _commit_decision(self, claim: Claim, step: int, decision: dict[str, Any], consumed: list[str],
                               model_call: dict[str, Any], finish: bool, started: list[StartedCall],
                               also: Callable[[Any], Awaitable[None]] | None = None) -> None:
        t = now()
        durable = self._decision_must_sync(decision, started, finish)
        async with self.fenced(claim, GUARD_DECISION, durable=durable) as conn:
            if consumed:
                result = await conn.execute(update(s.inbox).where(
                    s.inbox.c.id.in_(consumed), s.inbox.c.status == "pending").values(
                    status="consumed", consumed_turn=claim.turn_id, consumed_step=step, consumed_at=t))
                if result.rowcount != len(consumed):
                    raise _InboxMoved()
                rows = (await conn.execute(select(s.inbox.c.id, s.inbox.c.text).where(
                    s.inbox.c.id.in_(consumed)).order_by(s.inbox.c.sent_at))).all()
                for row in rows:
                    await run(conn, INSERT_MESSAGE, dict(task=claim.task_id, turn=claim.turn_id, step=step, role="user",
                                                         content=row.text, calls=None, call_id=None, name=None, at=t))
            calls = decision.get("tool_calls") or None
            await run(conn, INSERT_STEP, dict(turn=claim.turn_id, step=step, epoch=claim.epoch,
                                              decision=_json(decision), at=t))
            await run(conn, INSERT_MESSAGE, dict(task=claim.task_id, turn=claim.turn_id, step=step, role="assistant",
                                                 content=decision.get("content"), calls=_json(calls) if calls else None,
                                                 call_id=None, name=None, at=t))
            await run(conn, INSERT_MODEL_CALL, dict({"cache_write_tokens": 0, **model_call}, task=claim.task_id,
                                                     turn=claim.turn_id, step=step, at=t))
            for call in started:
                await run(conn, UPSERT_STARTED, self._started_row(claim, step, call, t))
            if also is not None:
                await also(conn)
            if finish:
                await conn.execute(update(s.turns).where(s.turns.c.id == claim.turn_id).values(
                    status="completed", checkpoint=step, lease_owner=None, lease_expires=None, finished_at=t,
                    crash_count=0))
                await self._after_turn(conn, claim)

    @staticmethod
    def _decision_must_sync(decision: dict[str, Any], started: list[StartedCall], finish: bool) -> bool:
        """A decision must be on disk before anything outside the database follows from it: a reply that ends
        the turn, or any call but a read. A step of reads only is group-committed (Database.write): losing it
        to a power cut costs nothing but thinking again."""
        if finish:
            return True
        planned = decision.get("tool_calls") or []
        return len(started) != len(planned) or any(c.side_effect != "read" for c in started)

    async def start_call(self, claim: Claim, step: int, seq: int, name: str, arguments: dict[str, Any],
                         side_effect: str) -> str:
        """Mark a tool call started (insert, or re-mark a recovered row at this epoch)."""
        call = StartedCall(seq, name, arguments, side_effect)
        async with self.fenced(claim) as conn:
            await run(conn, UPSERT_STARTED, self._started_row(claim, step, call, now()))
        return call_key(claim.turn_id, step, seq)

    @staticmethod
    def _started_row(claim: Claim, step: int, call: StartedCall, at: float) -> dict[str, Any]:
        key = call_key(claim.turn_id, step, call.seq)
        return dict(id=key, turn=claim.turn_id, step=step, seq=call.seq, name=call.name, args=_json(call.arguments),
                    side_effect=call.side_effect, epoch=claim.epoch, at=at)

    async def finish_call(self, claim: Claim, step: int, seq: int, status: str, result: Any, *, ran: bool,
                          last_in_step: bool, name: str, tool_message: str, durable: bool = True) -> None:
        """Record a call's end (done | failed | outcome_unknown) and its message for the model.
        A read's end need not wait for the disk (durable=False): after a power cut it is simply read again."""
        key = call_key(claim.turn_id, step, seq)
        t = now()
        guard, extra = (GUARD_CHECKPOINT, {"step": step}) if last_in_step else (GUARD, {})
        if status != "done":  # a provider's error may echo the key
            result, tool_message = redact_data(result), redact(tool_message)
        async with self.fenced(claim, guard, durable=durable, **extra) as conn:
            await run(conn, FINISH_CALL, dict(id=key, status=status, result=_json(result), at=t, ran=1 if ran else 0))
            await run(conn, INSERT_MESSAGE, dict(task=claim.task_id, turn=claim.turn_id, step=step, role="tool",
                                                 content=tool_message, calls=None, call_id=key, name=name, at=t))

    async def hold_calls(self, claim: Claim, step: int, held: list[tuple[int, str, str]]) -> None:
        """STEP is done but for calls held on a gate that covers only them (G4): each gets a message for the
        model (seq, name, text) while its row stays `started`; the turn goes on from the next step."""
        t = now()
        async with self.fenced(claim, GUARD_CHECKPOINT, step=step) as conn:
            for seq, name, text in held:
                key = call_key(claim.turn_id, step, seq)
                await run(conn, INSERT_MESSAGE, dict(task=claim.task_id, turn=claim.turn_id, step=step, role="tool",
                                                     content=text, calls=None, call_id=key, name=name, at=t))

    async def finish_held(self, claim: Claim, call_id: str, status: str, result: Any, *, ran: bool, step: int,
                          note: str) -> None:
        """A held call ran after its card was answered: its row ends, and NOTE tells the model: a `system`
        message named `lomo` (`RUNTIME_NOTE`) of the step about to be decided — the call's own tool message was
        the held notice. It is the runtime's word, not the creator's: summaries, memory and the stream never
        take it for theirs (the prompt carries it in place as user text, `context.history.as_chat`)."""
        t = now()
        if status != "done":
            result, note = redact_data(result), redact(note)
        async with self.fenced(claim) as conn:
            await run(conn, FINISH_CALL, dict(id=call_id, status=status, result=_json(result), at=t,
                                              ran=1 if ran else 0))
            await run(conn, INSERT_MESSAGE, dict(task=claim.task_id, turn=claim.turn_id, step=step, role="system",
                                                 content=note, calls=None, call_id=None, name=s.RUNTIME_NOTE, at=t))

    async def complete_turn(self, claim: Claim, step: int) -> None:
        """Finish the turn after STEP without another inference (its calls ended it)."""
        t = now()
        async with self.fenced(claim) as conn:
            await conn.execute(update(s.turns).where(s.turns.c.id == claim.turn_id).values(
                status="completed", checkpoint=step, lease_owner=None, lease_expires=None, finished_at=t,
                crash_count=0))
            await self._after_turn(conn, claim)

    async def suspend(self, claim: Claim, wait_kind: str, wait_ref: str, task_status: str,
                      refs: list[dict[str, str]] | None = None) -> None:
        """Park the turn on a gate or a job (or, for a step, on each of REFS): lease released, no model
        request held (D1). A turn that parks made durable progress: its crash count starts again (a production
        graph's one long turn is not poisoned by crashes far apart)."""
        async with self.fenced(claim) as conn:
            await conn.execute(update(s.turns).where(s.turns.c.id == claim.turn_id).values(
                status="waiting", wait_kind=wait_kind, wait_ref=wait_ref, wait_refs=refs, lease_owner=None,
                lease_expires=None, updated_at=now(), crash_count=0))
            await self.set_task_status(conn, claim.task_id, task_status)
            await self.event(conn, "turn_suspended", claim.task_id, claim.turn_id, wait_kind=wait_kind,
                             wait_ref=wait_ref)

    async def fail_turn(self, claim: Claim, reason: str) -> None:
        reason = redact(reason)
        async with self.fenced(claim) as conn:
            await conn.execute(update(s.turns).where(s.turns.c.id == claim.turn_id).values(
                status="failed", reason=reason, lease_owner=None, lease_expires=None, finished_at=now()))
            await self.set_task_status(conn, claim.task_id, "failed", reason)
            await self.event(conn, "turn_failed", claim.task_id, claim.turn_id, reason=reason)

    async def fail_poisoned(self, turn_id: str, reason: str) -> None:
        """Fail a turn that keeps crashing its workers (no claim: it is failed instead of taken)."""
        reason = redact(reason)
        async with self.db.write() as conn:
            row = (await conn.execute(select(s.turns).where(s.turns.c.id == turn_id))).first()
            if row is None or row.status not in ("queued", "running"):
                return
            await conn.execute(update(s.turns).where(s.turns.c.id == turn_id, s.turns.c.epoch == row.epoch).values(
                status="failed", reason=reason, lease_owner=None, lease_expires=None, epoch=row.epoch + 1,
                finished_at=now()))
            task = await self.task_row(conn, row.task_id)
            if task.kind != "main":
                await self.set_task_status(conn, row.task_id, "failed", reason)
                await self.event(conn, "turn_failed", row.task_id, turn_id, reason=reason, poison=True)
                return
            # the main thread never stays failed: the message it choked on (read by this turn, or else the next
            # unread one, which is `failed`) carries the error; the messages after it go on
            pending = await self.pending_inbox(conn, row.task_id)
            choked = list((await conn.execute(select(s.inbox.c.id).where(
                s.inbox.c.consumed_turn == turn_id))).scalars())
            if not choked and pending:
                choked, pending = [pending[0].id], pending[1:]
                await conn.execute(update(s.inbox).where(s.inbox.c.id == choked[0]).values(status="failed"))
            for message_id in choked:
                await self.event(conn, "message_failed", row.task_id, turn_id, message_id=message_id, reason=reason)
            await self.set_task_status(conn, row.task_id, "idle", reason)
            await self.event(conn, "turn_failed", row.task_id, turn_id, reason=reason, poison=True)
            if pending:
                await self.ensure_turn(conn, row.task_id)

    async def _after_turn(self, conn: AsyncConnection, claim: Claim) -> None:
        """A turn completed: recorded, then what follows is the runtime's (the stop check, G2)."""
        await self.event(conn, "turn_completed", claim.task_id, claim.turn_id)
        if self.reactions is not None:
            await self.reactions.turn_completed(conn, self, claim)

    async def promote(self, conn: AsyncConnection, task_id: str, reason: str) -> bool:
        """A lightweight task becomes persistent (A2), keeping its id, messages, artifacts and ledger."""
        result = await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id, s.tasks.c.kind == "lightweight")
                                    .values(kind="persistent", updated_at=now()))
        if result.rowcount:
            await self.event(conn, "task_promoted", task_id, reason=reason)
        return bool(result.rowcount)

    # ---- control (stop / pause / resume) --------------------------------------------------------
    async def control(self, task_id: str, action: str, reason: str = "") -> None:
        """Stop, pause, resume, archive or promote a task. Stop and pause go through state + epoch (C4):
        a running worker is fenced out."""
        async with self.db.write() as conn:
            task = await self.task_row(conn, task_id)
            if task.kind == "main" and action in MAIN_REFUSES:
                raise LomoError.said(f"cli_error.main_{action}")
            active = (await conn.execute(select(s.turns).where(
                s.turns.c.task_id == task_id, s.turns.c.status.in_(ACTIVE_TURN)))).first()
            t = now()
            if action in ("stop", "pause"):
                if task.status == "stopped":
                    return
                if active is not None:
                    await conn.execute(update(s.turns).where(s.turns.c.id == active.id).values(
                        status="stopped" if action == "stop" else "queued", epoch=active.epoch + 1,
                        lease_owner=None, lease_expires=None, updated_at=t,
                        finished_at=t if action == "stop" else None))
                await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                    status="stopped" if action == "stop" else "paused",
                    status_reason=reason or message(f"status.by_{action}", task.language or "en"),
                    epoch=task.epoch + 1, updated_at=t))
                if action == "stop":
                    await self._call_off(conn, task_id, "stopped")
            elif action in ("archive", "unarchive"):
                if action == "archive" and active is not None and task.status in ("running", "active", "waiting_job"):
                    raise LomoError.said("cli_error.still_working", id=task_id)
                values: dict[str, Any] = {}
                if action == "archive" and active is not None:  # parked on a gate: it never runs again by itself
                    await conn.execute(update(s.turns).where(s.turns.c.id == active.id).values(
                        status="stopped", epoch=active.epoch + 1, lease_owner=None, lease_expires=None,
                        updated_at=t, finished_at=t))
                    values = dict(status="idle", status_reason=message("status.archived_waiting", task.language or "en"))
                await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                    archived=action == "archive", updated_at=t, **values))
                if action == "archive":
                    await self._call_off(conn, task_id, "archived")
            elif action == "promote":
                if task.kind != "lightweight":
                    raise LomoError.said("cli_error.already_kind", id=task_id, kind=Said(f"export.kind_{task.kind}"))
                await self.promote(conn, task_id, "asked by the creator")
                return
            elif action == "resume":
                if task.status not in ("paused", "failed", "stopped"):
                    return
                if active is not None or task.status == "stopped" or await self.pending_inbox(conn, task_id):
                    await self.ensure_turn(conn, task_id)
                await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                    status="active", status_reason="", epoch=task.epoch + 1, updated_at=t))
            else:
                raise LomoError(f"unknown task action {action!r}")
            await self.event(conn, f"task_{action}", task_id, reason=reason)

    async def _call_off(self, conn: AsyncConnection, task_id: str, reason: str) -> None:
        """A stopped or archived task's in-flight jobs are cancelled (refunded) and its pending gates expire
        (REASON: "stopped" or "archived")."""
        if self.reactions is None:  # a stop that left jobs running and gates open would not be a stop
            raise LomoError("this ledger has no reactions; stop and archive go through the runtime's "
                            "(runtime.reactions.reacting_ledger)")
        await self.reactions.called_off(conn, task_id, reason)

    # ---- queries the scheduler uses -------------------------------------------------------------
    def serves(self, task_workspace: str | None) -> bool:
        """Whether this ledger's process runs a task whose `workspace_id` is TASK_WORKSPACE."""
        return belongs_to(self.workspace_id, task_workspace)

    def _here(self) -> Any:
        return tasks_of(self.workspace_id)

    async def _main_message_here(self, conn: AsyncConnection, task_id: str) -> bool:
        """Whether the main thread has a message this process should route (typed in its folder), or none waits
        at all (a turn that has other work: a gate answered, a retry)."""
        if self.workspace_id is None:
            return True
        pending = await self.pending_inbox(conn, task_id)
        return not pending or any(self.serves(m.workspace_id) for m in pending)

    async def runnable_turns(self, owner_alive: Any = None) -> list[Any]:
        """Queued turns, and running turns whose lease expired (or whose owner is dead)."""
        t = now()
        async with self.db.read() as conn:
            rows = (await conn.execute(select(
                s.turns.c.id, s.turns.c.status, s.turns.c.lease_owner, s.turns.c.lease_expires,
                s.turns.c.crash_count, s.tasks.c.status.label("task_status")).join(
                s.tasks, s.tasks.c.id == s.turns.c.task_id).where(
                s.turns.c.status.in_(("queued", "running")), self._here()))).all()
        out = []
        for row in rows:
            if row.task_status in ("paused", "stopped"):
                continue
            if row.status == "queued" or row.lease_owner is None or (row.lease_expires or 0) < t:
                out.append(row)
            elif owner_alive is not None and not owner_alive(row.lease_owner):
                out.append(row)
        return out

    async def orphan_inbox_tasks(self) -> list[str]:
        """Tasks with unconsumed messages but no active turn (C6 watchdog)."""
        async with self.db.read() as conn:
            active = select(s.turns.c.task_id).where(s.turns.c.status.in_(ACTIVE_TURN))
            rows = (await conn.execute(select(s.inbox.c.task_id).distinct().join(
                s.tasks, s.tasks.c.id == s.inbox.c.task_id).where(
                s.inbox.c.status == "pending", s.tasks.c.status.notin_(("paused", "stopped", "failed")),
                s.tasks.c.archived.is_(False), self._here(), tasks_of(self.workspace_id, s.inbox.c.workspace_id),
                s.inbox.c.task_id.notin_(active)))).scalars().all()
        return list(rows)

    async def adopt_orphans(self) -> list[str]:
        turns = []
        for task_id in await self.orphan_inbox_tasks():
            async with self.db.write() as conn:
                turns.append(await self.ensure_turn(conn, task_id))
        return turns

    async def waiting_turns(self) -> list[str]:
        async with self.db.read() as conn:
            return list((await conn.execute(select(s.turns.c.id).join(s.tasks, s.tasks.c.id == s.turns.c.task_id).where(
                s.turns.c.status == "waiting", self._here()))).scalars())

    async def requeue_if_settled(self, conn: AsyncConnection, turn_id: str) -> bool:
        """If TURN_ID waits on something that has settled (gate answered, jobs finished), queue it again."""
        turn = (await conn.execute(select(s.turns).where(s.turns.c.id == turn_id))).first()
        if turn is None or turn.status != "waiting" or not await self._settled(conn, turn):
            return False
        owner = await self.task_row(conn, turn.task_id)
        if owner.status == "stopped" or owner.archived:
            return False  # only the creator's resume restarts it
        await conn.execute(update(s.turns).where(s.turns.c.id == turn_id, s.turns.c.status == "waiting").values(
            status="queued", wait_kind=None, wait_ref=None, wait_refs=None, updated_at=now()))
        task = await self.task_row(conn, turn.task_id)
        if task.status not in ("paused", "stopped"):
            await self.set_task_status(conn, turn.task_id, "active")
        return True

    @staticmethod
    async def _settled(conn: AsyncConnection, turn: Any) -> bool:
        kind, ref = turn.wait_kind, turn.wait_ref or ""
        if kind == "backoff":
            return now() >= float(ref or 0)
        if kind == "gate":
            status = (await conn.execute(select(s.gates.c.status).where(s.gates.c.id == ref))).scalar()
            return status != "pending"
        if kind == "job":
            status = (await conn.execute(select(s.jobs.c.status).where(s.jobs.c.id == ref))).scalar()
            return status not in ("submitting", "queued", "running")
        if kind == "any" and turn.wait_refs:  # a production graph: the first of its jobs to settle
            statuses = (await conn.execute(select(s.jobs.c.status).where(
                s.jobs.c.id.in_([w["ref"] for w in turn.wait_refs])))).scalars().all()
            return any(status not in ("submitting", "queued", "running") for status in statuses)
        if kind == "step" and turn.wait_refs:  # every gate answered and every job settled
            for wait in turn.wait_refs:
                table = s.gates if wait["kind"] == "gate" else s.jobs
                status = (await conn.execute(select(table.c.status).where(table.c.id == wait["ref"]))).scalar()
                if status in ("pending", "submitting", "queued", "running"):
                    return False
            return True
        if kind == "step":
            turn_id, _, step = ref.rpartition("/")
            gate = (await conn.execute(select(s.gates.c.id).where(
                s.gates.c.turn_id == turn_id, s.gates.c.status == "pending",
                s.gates.c.tool_call_id.like(f"{turn_id}/{step}/%")))).first()
            job = (await conn.execute(select(s.jobs.c.id).where(
                s.jobs.c.turn_id == turn_id, s.jobs.c.step == int(step),
                s.jobs.c.status.in_(("submitting", "queued", "running"))))).first()
            return gate is None and job is None
        return False

    async def count_model_calls(self) -> int:
        async with self.db.read() as conn:
            return (await conn.execute(_MODEL_CALLS)).scalar() or 0

    async def busy_summary(self) -> dict[str, int]:
        """How many turns are in each active state (for quiescence checks)."""
        async with self.db.read() as conn:
            rows = (await conn.execute(select(s.turns.c.status, func.count()).where(
                s.turns.c.status.in_(ACTIVE_TURN)).group_by(s.turns.c.status))).all()
        return {status: count for status, count in rows}
