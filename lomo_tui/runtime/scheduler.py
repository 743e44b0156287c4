"""The embedded runtime: workers, wake-ups, watchdog. Hosted by the TUI, `--run-once` and `lomo worker`.

The database is the source of truth; the in-process queue only wakes workers (C6). A lost or
duplicate wake-up is harmless: the watchdog finds queued turns, expired leases and orphaned inbox
messages every LOMO_WATCHDOG_SECONDS, and a claim is a compare-and-swap on the turn row.
"""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from typing import Any

from sqlalchemy import func, select

from ..config import Settings
from ..faults import Faults
from ..models import ModelClient, make_model
from ..store import migrate
from ..store import schema as s
from ..store.engine import Database, DiskFull
from ..tools import default_registry
from ..tools.registry import Registry, Tool
from ..tools.services import Services
from ..governance import budget
from ..governance.budget import Budget
from ..language import Carried, parse
from .. import clock, memory
from ..tasks import checklist
from ..router import hooks as router_hooks
from ..router import index as router_index
from ..router.reindex import SearchRekey
from ..router.vectors import TaskVectors
from ..studio.service import Studio
from ..workspace.live import LiveWorkspace
from ..workspace.objects import Workspace
from ..workspace import scope
from ..base.bus import Bus, Notice
from ..ledger import Ledger
from . import remedy
from .reactions import Reactions, resolve_gate
from .space import SpaceWatch
from .turns import TurnRunner

log = logging.getLogger("lomo.runtime")


class Runtime:
    """One process's share of the work on one database."""

    def __init__(self, settings: Settings, *, model: ModelClient | None = None, watch: bool = True) -> None:
        self.settings = settings
        self.db = Database(settings.db_url, sync_window=settings.sync_window)
        self.ledger = Ledger(self.db, settings.lease_seconds, settings.time_scale)
        self.reactions = Reactions(self.ledger, settings.time_scale)  # what follows what (runtime/reactions.py)
        self.ledger.reactions = self.reactions
        self.bus = Bus()
        self.faults = Faults(settings.faults)
        self.registry: Registry = default_registry()
        self.workspace = Workspace(settings.workspace, self.db)
        self.reactions.root = self.workspace.root  # a repair judges the task's files there (runtime/remedy.py)
        self.budget = Budget.from_config(settings.section("budget"))
        self.studio = Studio(self)
        self.vectors = TaskVectors(self)
        self.messages = Carried()  # creators' messages parsed on arrival, by id (language.parsed)
        self.rekey = SearchRekey(self.db)
        self.model: ModelClient = model or make_model(settings, self.ledger.count_model_calls)
        self.memory_models = memory.MemoryModels(self.db, settings, lambda: self.model)  # remote extraction, vectors
        self.host = socket.gethostname()
        self.owner = f"{self.host}:{os.getpid()}:{secrets.token_hex(3)}"
        self.errors: list[str] = []
        self.live = LiveWorkspace(self, watch=watch)
        self.space = SpaceWatch(self)
        # objects with async start()/stop() (and busy(), when run-once should wait for them)
        self.services: list[Any] = [self.live, self.studio, self.vectors, self.rekey, self.memory_models]
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._pending: set[str] = set()
        self._active: set[str] = set()
        self._tasks: list[asyncio.Task[Any]] = []
        self._stop = asyncio.Event()
        self._changed = asyncio.Event()
        self.started = False
        self.draining = False
        self._event_marker: int | None = None

    # ---- life cycle ---------------------------------------------------------------------------
    async def open(self) -> None:
        """Bring the schema up to date and make sure the main thread exists. No workers yet."""
        self.workspace.ensure()  # a folder that cannot be a workspace stops here, before any write
        await migrate.upgrade(self.db)
        await self.workspace.open()
        self.ledger.workspace_id = self.db.workspace_id = self.workspace.id  # its tasks only (workspace.scope)
        scope.serve(self.workspace.id)
        await self.ledger.main_task_id()
        await memory.complete_pending(self.db)  # a forget cascade an earlier process left half done (F4)

    async def start(self) -> None:
        if self.started:
            return
        await self.open()
        for service in self.services:
            await service.start()
        for n in range(max(1, self.settings.workers)):
            self._tasks.append(asyncio.create_task(self._worker(), name=f"lomo-worker-{n}"))
        self._tasks.append(asyncio.create_task(self._watchdog(), name="lomo-watchdog"))
        self.started = True
        try:
            await self.sweep()
        except DiskFull as exc:  # a worker starting on a full disk waits for room (runtime/space.py)
            self.space.noticed(exc)

    async def close(self, grace: float = 10.0) -> None:
        """Stop: turns in flight finish their current step and hand back their lease (or are cancelled
        after GRACE seconds, releasing it), so another worker can go on at once."""
        self.draining = True
        self._stop.set()
        deadline = time.monotonic() + grace
        while self._active and time.monotonic() < deadline:
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=deadline - time.monotonic())
            except asyncio.TimeoutError:
                break
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        await self.space.stop()
        for service in reversed(self.services):
            await service.stop()
        await self.db.close()

    # ---- wake-ups -------------------------------------------------------------------------------
    def wake(self, turn_id: str) -> None:
        if self.faults.hit("before_wakeup"):
            return  # the wake-up is lost; the watchdog will find the turn
        if turn_id in self._pending or turn_id in self._active:
            return
        self._pending.add(turn_id)
        self._queue.put_nowait(turn_id)

    def changed(self) -> None:
        """Something a waiter (run-once) may care about moved on."""
        self._changed.set()

    def owner_alive(self, owner: str) -> bool:
        """Whether a lease owner on this host still runs (another host: assume alive until expiry)."""
        host, _, rest = owner.partition(":")
        pid_text, _, token = rest.partition(":")
        if host != self.host or not pid_text.isdigit():
            return True
        pid = int(pid_text)
        if pid == os.getpid():
            return owner == self.owner
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return _process_state(pid) != "Z"

    async def sweep(self) -> None:
        """Watchdog pass: adopt orphaned inbox messages, requeue settled waits, wake runnable turns,
        fail poisoned ones."""
        for turn_id in await self.reactions.expire_overdue(self.db):  # a gate past its deadline expires
            await self.poke(turn_id)
        for turn_id in await self.ledger.adopt_orphans():
            self.wake(turn_id)
        for turn_id in await self.ledger.waiting_turns():
            await self.poke(turn_id)
        for row in await self.ledger.runnable_turns(self.owner_alive):
            if row.id in self._active or self.space.parked(row.id):
                continue
            crashed = row.status == "running" and row.lease_owner is not None
            if crashed and row.crash_count + 1 >= self.settings.max_turn_crashes:
                await self.ledger.fail_poisoned(
                    row.id, f"its worker crashed {row.crash_count + 1} times in a row; stopped retrying")
                self.errors.append(f"turn {row.id} failed after {row.crash_count + 1} crashes")
                self._changed.set()
                continue
            self.wake(row.id)
        # approved forgets, extraction retries (the remote extractor's own pass does those), finished tasks' summaries
        await memory.maintain(self.db, extraction=self.memory_models.extractor is None)

    async def _watchdog(self) -> None:
        scope.serve(self.workspace.id)
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=self.settings.watchdog_seconds)
            except asyncio.TimeoutError:
                pass
            if self._stop.is_set():
                return
            try:
                await self.sweep()
                await self._notice_outside_changes()
                self.space.went_on(None)
            except DiskFull as exc:
                self.space.noticed(exc)
            except Exception:  # noqa: BLE001 — the watchdog must outlive a bad pass
                log.exception("watchdog pass failed")

    async def _notice_outside_changes(self) -> None:
        """Tell live views when the event log moved (another process answered a gate, sent a message…)."""
        async with self.db.read() as conn:
            marker = (await conn.execute(select(func.max(s.events.c.id)))).scalar()
        if self._event_marker is not None and marker != self._event_marker:
            self.bus.publish(Notice.DB_CHANGED, None, last_event=marker)
        self._event_marker = marker

    async def _worker(self) -> None:
        scope.serve(self.workspace.id)  # this task's own context: right even with two runtimes in one loop
        while True:
            turn_id = await self._queue.get()
            self._pending.discard(turn_id)
            self._active.add(turn_id)
            try:
                await self._run_turn(turn_id)
                self.space.went_on(turn_id)
            except DiskFull as exc:
                self.space.noticed(exc, turn_id)
            except Exception:  # noqa: BLE001 — one broken turn must not kill the worker
                log.exception("turn %s crashed the worker", turn_id)
                self.errors.append(f"turn {turn_id} hit an internal error; the log file has the detail")
            finally:
                self._active.discard(turn_id)
                self._changed.set()

    async def _run_turn(self, turn_id: str) -> None:
        dead = await self._dead_owner(turn_id)
        claim = await self.ledger.claim(turn_id, self.owner, dead_owner=dead)
        if claim is None:
            return
        self.bus.publish(Notice.TURN_STARTED, claim.task_id, turn_id=turn_id, epoch=claim.epoch)
        outcome = await TurnRunner(self, claim).run()
        self.bus.publish(Notice.TURN_ENDED, claim.task_id, turn_id=turn_id, outcome=outcome)

    async def _dead_owner(self, turn_id: str) -> str | None:
        async with self.db.read() as conn:
            owner = (await conn.execute(select(s.turns.c.lease_owner).where(s.turns.c.id == turn_id))).scalar()
        return owner if owner and owner != self.owner and not self.owner_alive(owner) else None

    # ---- what the runtime adds to a step ----------------------------------------------------------
    def tool_services(self) -> Services:
        """What a tool body may use (tools/services.py), built per call from the runtime's current parts."""
        return Services(db=self.db, ledger=self.ledger, workspace=self.workspace, studio=self.studio,
                        budget=self.budget, registry=self.registry, after_commit_wake=self.after_commit_wake,
                        settings=self.settings, faults=self.faults, messages=self.messages)

    def tools_for(self, task: Any) -> list[Tool]:
        return self.registry.visible("main" if task.kind == "main" else task.kind)

    async def readable_inbox(self, conn: Any, task: Any, turn_id: str | None = None) -> list[Any]:
        """The unread messages TASK's next step reads. A task reads all of them (follow-ups to one piece of
        work belong together); the main thread reads one per turn, oldest first, so each creator message is
        routed and answered on its own — three requests are three tasks or answers, never one merged one."""
        pending = await self.ledger.pending_inbox(conn, task.id)
        if task.kind != "main":
            return pending
        if turn_id is not None and (await conn.execute(select(s.inbox.c.id).where(
                s.inbox.c.consumed_turn == turn_id).limit(1))).first() is not None:
            return []  # this turn already took its message; the next one gets a turn of its own
        # a message typed with another folder open is routed there, among that folder's tasks (workspace.scope)
        return [m for m in pending if self.ledger.serves(m.workspace_id)][:1]

    async def context_extras(self, conn: Any, task: Any, pending: list[Any] | None = None
                             ) -> tuple[list[str], dict[str, Any]]:
        """Dynamic-tail sections and model hints beyond the brief (checklist, changes, waits).
        PENDING: the inbox messages the step reads (by default, what `readable_inbox` gives), each as
        parsed on arrival (`self.messages`)."""
        extra: list[str] = []
        hints: dict[str, Any] = {"now": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(clock.now()))}
        if task.kind == "main":
            rows = pending if pending is not None else await self.readable_inbox(conn, task)
            pending = [m.text for m in rows]
            similar = await self.vectors.similar(pending, router_index.RETRIEVED)
            parsed = self.messages.joined([(m.id, m.text) for m in rows]) if len(rows) == 1 else None
            router_extra, router_hints = await router_hooks.main_context(conn, task, pending, similar=similar,
                                                                         parsed=parsed)
            extra.extend(router_extra)
            hints.update(router_hints)
            hints.update(daily_cap=self.budget.daily_free_cap, currency=self.budget.currency)
        else:
            steps = await checklist.items(conn, task.id)
            if steps:
                extra.append(checklist.render(steps))
            hints["checklist"] = [i.to_dict() for i in steps]
            spent, today, allowance = await budget.snapshot(conn, task.id)
            c = self.budget.currency
            extra.append(f"Budget: this task spent {spent:.2f} {c}" + (f" of an approved {allowance:.2f}" if allowance
                         else "") + f"; today {today:.2f} of the {self.budget.daily_free_cap:.2f} {c} free cap; "
                         f"free per call up to {self.budget.free_per_call:.2f} {c}. Autonomy: {task.autonomy}.")
            hints.update(spent=spent, plan_allowance=allowance, spent_today=today,
                         **await self.workspace.task_views(conn, task.id))
            remedies, remedy_hints = await remedy.context(conn, task.id, steps)  # what to repair or re-plan (J3)
            extra.extend(remedies)
            hints.update(remedy_hints)
        notices = await self.workspace.open_notices(conn, task.id)
        if notices:
            extra.append("Files changed by the creator since you read them:\n" + "\n".join(f"- {n}" for n in notices))
        hints["notices"] = notices
        return extra, hints

    # ---- entry points -----------------------------------------------------------------------------
    async def send(self, text: str, task_id: str | None = None) -> tuple[str, str]:
        """Deliver a creator's message to TASK_ID (or the main thread) and wake its turn."""
        target = task_id
        parsed = parse(text)  # once, here: the router, the planner and the tools read this (language.parsed)
        if target is None:
            async with self.db.read() as conn:
                target = await router_hooks.direct_target(conn, parsed)
        target = target or await self.ledger.main_task_id()
        message_id, turn_id = await self.ledger.deliver(target, text)
        self.messages.keep(message_id, parsed)
        extractor = self.memory_models.extractor  # a remote model reads it in the background (F2)
        await memory.record_creator_message(self.db, message_id, target, text, defer=extractor is not None)
        if extractor is not None:
            self.memory_models.poke()
        self.bus.publish(Notice.MESSAGE_DELIVERED, target, message_id=message_id, text=text)
        self.wake(turn_id)
        return message_id, turn_id

    def after_commit_wake(self, task_id: str) -> None:
        """Wake TASK_ID's active turn once the caller's transaction has committed."""
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._wake_task(task_id)))

    async def _wake_task(self, task_id: str) -> None:
        async with self.db.read() as conn:
            turn_id = (await conn.execute(select(s.turns.c.id).where(
                s.turns.c.task_id == task_id, s.turns.c.status == "queued"))).scalar()
        if turn_id:
            self.wake(turn_id)

    async def poke(self, turn_id: str | None) -> bool:
        """Re-check what a waiting turn waits for; when it is settled, queue the turn and wake it."""
        if turn_id is None:
            return False
        async with self.db.write() as conn:
            if not await self.ledger.requeue_if_settled(conn, turn_id):
                return False
        self.wake(turn_id)
        self._changed.set()
        return True

    async def resolve_gate(self, gate_id: str, *, approve: bool, option: int | None = None,
                           by: str = "creator") -> Any:
        """The creator answers a gate: record it and what it sets going (reactions), then wake that."""
        async with self.db.read() as conn:
            task_id = (await conn.execute(select(s.gates.c.task_id).where(s.gates.c.id == gate_id))).scalar()
        await remedy.sync_results(self.workspace, task_id)  # the decision after it reads the files as they are
        gate = await resolve_gate(self.db, gate_id, approve=approve, option=option, by=by, reactions=self.reactions)
        await self.poke(gate.turn_id)
        await self.sweep()  # a clarify answer or a checkpoint may have queued a turn elsewhere
        self._changed.set()
        return gate

    async def step_ends_turn(self, task: Any, tools: list[Tool], planned: int) -> bool:
        """After a step whose calls all finished: may the turn end without asking the model again?
        Yes for routing calls; and for a lightweight task's generations (D3: a one-shot shows its result)."""
        if len(tools) != planned:
            return False
        if all(t.ends_turn for t in tools):
            return True
        return task.kind == "lightweight" and all(t.side_effect == "paid" for t in tools)

    async def quiet(self) -> bool:
        """Nothing this database could run now: no queued or running turn except paused/stopped tasks'."""
        if self._active or self._pending:
            return False
        for row in await self.ledger.runnable_turns(self.owner_alive):
            return False
        async with self.db.read() as conn:
            held = (await conn.execute(select(s.turns.c.id).join(s.tasks, s.tasks.c.id == s.turns.c.task_id).where(
                s.turns.c.status.in_(("queued", "running")), scope.tasks_of(self.workspace.id),
                s.tasks.c.status.notin_(("paused", "stopped"))))).first()
        if held is not None:
            return False
        return not await self.local_waits()

    async def local_waits(self) -> bool:
        """Whether any turn waits on something this process will finish by itself (embedded studio jobs, a
        back-off after a transient failure)."""
        async with self.db.read() as conn:
            backoff = (await conn.execute(select(s.turns.c.id).join(s.tasks, s.tasks.c.id == s.turns.c.task_id).where(
                s.turns.c.status == "waiting", s.turns.c.wait_kind == "backoff", scope.tasks_of(self.workspace.id),
                s.tasks.c.status.notin_(("paused", "stopped"))))).first()
        if backoff is not None:
            return True
        return any([await service.busy() for service in self.services if hasattr(service, "busy")])

    async def run_until_quiescent(self, max_wait: float = 600.0) -> bool:
        """Run until nothing can move without the creator or a remote job. False when max_wait ran out."""
        await self.start()
        deadline = time.monotonic() + max_wait
        poll = min(0.5, max(self.settings.lease_seconds / 10, 0.05))
        while True:
            if await self.quiet():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=min(poll, left))
            except asyncio.TimeoutError:
                await self.sweep()

    async def serve(self, stop: asyncio.Event) -> None:
        """`lomo worker`: run until STOP is set."""
        await self.start()
        await stop.wait()


def _process_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"
