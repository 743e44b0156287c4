"""What follows what (#11 §8): the one room for the consequences of events.

The packages below record facts — the ledger a finished turn or a stop, governance a gate's answer, the
studio a settled job, the watchdog an overdue gate. What each fact sets going is decided here, in the
transaction that recorded it:

- a turn completed      → the stop check settles the task (G2): go on, back off, wait for a card, done;
- a task stopped/archived → its in-flight jobs are cancelled (refunded) and its pending gates expire (C9);
- a gate answered       → a clarify card delivers the words as chosen (A4); a checkpoint completes its step;
                          a failure card retries, waits or stops; the task goes on unless it was stopped;
- a job settled         → the turn waiting on it is queued again (D3);
- a gate overdue        → it expires as declined, and its turn is re-checked;
- a task finished       → unless the model already said so, Lomo says it is done and what it made.

Nothing here imports the UI. Only the runtime imports this module.
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update

from .. import clock
from ..language import message
from ..governance import gates
from ..language import phrase
from ..ledger import TERMINAL_TASK, Claim, Ledger, ensure_turn, now
from ..router import deterministic, index, memory
from ..store import schema as s
from ..store.engine import Database
from ..studio.service import cancel_task_jobs
from ..tasks import checklist, evidence, stopcheck
from . import decision, remedy

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


class Reactions:
    """The runtime's answers to the ledger's events (ledger.Reactions) and to gate answers and settled jobs."""

    def __init__(self, ledger: Ledger, time_scale: float = 1.0) -> None:
        self.ledger = ledger
        self.time_scale = time_scale  # scales the stop check's back-off after a transient failure
        self.root: Path | None = None  # the workspace folder (the runtime's); None: where each file is

    # ---- a turn completed ----------------------------------------------------------------------
    async def turn_completed(self, conn: AsyncConnection, ledger: Ledger, claim: Claim) -> None:
        """The stop check settles the task (G2); leftover inbox gets a fresh turn."""
        task = await ledger.task_row(conn, claim.task_id)
        turn = (await conn.execute(select(s.turns).where(s.turns.c.id == claim.turn_id))).one()
        if task.status in TERMINAL_TASK or task.status == "paused":
            return
        if await ledger.pending_inbox(conn, claim.task_id):
            await ledger.ensure_turn(conn, claim.task_id)
            await ledger.set_task_status(conn, claim.task_id, "active")
            return
        verdict = await stopcheck.decide(conn, task, turn, self.time_scale)
        remedied = await self._remedied(conn, claim) if task.kind != "main" and (
            verdict.status == "done" or verdict.next_turn) else None
        if remedied:
            return
        await ledger.set_task_status(conn, claim.task_id, verdict.status, verdict.reason)
        if verdict.next_turn:
            await ledger.ensure_turn(conn, claim.task_id)
        elif verdict.retry_after:  # a transient failure: the next turn waits out its back-off (the watchdog wakes it)
            await ledger.backoff_turn(conn, claim.task_id, now() + verdict.retry_after)
        elif verdict.status in ("done", "blocked"):
            await ledger.event(conn, f"task_{'finished' if verdict.status == 'done' else 'blocked'}", claim.task_id,
                               reason=verdict.reason)
            if verdict.status == "done":
                await self.say_finished(conn, claim.task_id)
        if task.kind != "main" and remedied is None:  # the main thread runs only for a message
            await decision.record(conn, claim.task_id, claim.turn_id,
                                  decision.decide(await decision.read_state(conn, claim.task_id)), stage="turn_end")

    async def _remedied(self, conn: AsyncConnection, claim: Claim) -> bool | None:
        """A turn that finished its checklist (or goes on) while a result broke or the goal changed: the runtime
        repairs or marks the plan (runtime/remedy.py) and the next turn goes on with it, instead of the task
        ending on a hole. A replan the turn was already told about is left to the stop check. Returns None when
        there was nothing to act on, False when it acted (recorded) and the stop check's verdict stands."""
        chosen = decision.decide(dataclasses.replace(await decision.read_state(conn, claim.task_id), status="active"))
        if chosen.action not in remedy.ACTS or (chosen.action == "replan"
                                                and await remedy.told(conn, claim.task_id, claim.turn_id)):
            return None
        after = await remedy.act(conn, claim.task_id, claim.turn_id, chosen, stage="turn_end", root=self.root)
        if after.action not in remedy.GOES_ON:
            return False
        await self.ledger.ensure_turn(conn, claim.task_id)
        lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == claim.task_id))).scalar()
        await self.ledger.set_task_status(conn, claim.task_id, "active", after.words(lang or "en"))
        return True

    # ---- a task finished -----------------------------------------------------------------------
    async def say_finished(self, conn: AsyncConnection, task_id: str) -> None:
        """A persistent task that finished without a closing word from the model (the runtime settled it:
        the last job came back, or the creator approved the last checkpoint) tells the creator it is done
        and what it made, in the task's language. A one-shot shows its result on its card (D3)."""
        task = await self.ledger.task_row(conn, task_id)
        if task.kind != "persistent":
            return
        last = (await conn.execute(select(s.messages.c.role, s.messages.c.content, s.messages.c.tool_calls).where(
            s.messages.c.task_id == task_id).order_by(s.messages.c.id.desc()).limit(1))).first()
        if last is not None and last.role == "assistant" and (last.content or "").strip() and not last.tool_calls:
            return  # the model's own last word stands
        made: list[str] = []
        for item in await checklist.items(conn, task_id):
            made += [path for path in item.artifacts if path not in made]
        text = phrase("all_done", task.language or "en", title=task.title)
        if made:
            text += "\n" + ", ".join(made)
        await conn.execute(insert(s.messages).values(task_id=task_id, role="assistant", content=text,
                                                     created_at=clock.now()))

    # ---- a task stopped or archived -------------------------------------------------------------
    async def called_off(self, conn: AsyncConnection, task_id: str, reason: str) -> None:
        """A stop is a stop however it is asked for: in-flight jobs cancelled (refunded), pending gates expired.
        REASON: "stopped" or "archived" (the gates keep it as a catalogue text), or free text."""
        said = gates.CALLED_OFF.get(reason)
        lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
        await cancel_task_jobs(conn, task_id, said.text(lang) if said is not None else reason)
        await gates.expire_task_gates(conn, task_id, said or reason)

    # ---- a job settled ----------------------------------------------------------------------------
    async def job_settled(self, conn: AsyncConnection, turn_id: str | None) -> bool:
        """The turn that waits on a settled job is queued again (if all it waits for settled). Returns whether."""
        return turn_id is not None and await self.ledger.requeue_if_settled(conn, turn_id)

    # ---- a gate answered -------------------------------------------------------------------------
    async def gate_answered(self, conn: AsyncConnection, gate: Any, approved: bool, by: str) -> None:
        """What the creator's answer sets going, in the transaction that recorded it."""
        if gate.kind == "clarify":
            await self.deliver_choice(conn, gate, approved, by)
        continue_task = await self.checkpoint_answered(conn, gate, approved)
        if continue_task is None or not await _may_run(conn, continue_task):
            return
        if (gate.scope or {}).get("checklist_item"):  # a checkpoint passed: decide before running (J3, D3)
            await self.after_checkpoint(conn, continue_task, gate)
            return
        await self._go_on(conn, continue_task)  # a failure card's "try again"

    async def after_checkpoint(self, conn: AsyncConnection, task_id: str, gate: Any) -> None:
        """Run only when work remains: a finished checklist goes quiet (done) and a checkpoint that is next
        gets its card, neither asking the model."""
        state = dataclasses.replace(await decision.read_state(conn, task_id), status="active")
        chosen = decision.decide(state)
        if chosen.action in remedy.ACTS:  # a result broke or the goal changed: the runtime acts on it first
            chosen = await remedy.act(conn, task_id, gate.turn_id, chosen, stage="gate_answered", root=self.root)
        else:
            await decision.record(conn, task_id, gate.turn_id, chosen, stage="gate_answered")
        if chosen.action == "quiet":
            lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                status="done", status_reason=chosen.words(lang), updated_at=clock.now()))
            await self.ledger.event(conn, "task_finished", task_id, reason=chosen.reason)
            await self.say_finished(conn, task_id)
        elif chosen.action == "ask":
            task = await self.ledger.task_row(conn, task_id)
            head = next(i for i in await checklist.items(conn, task_id) if i.state in checklist.OPEN)
            await stopcheck.checkpoint_gate(conn, task, head)
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                status="waiting_gate", status_reason=message("report.waiting_review", task.language, step=head.title),
                updated_at=clock.now()))
        else:
            await self._go_on(conn, task_id)

    @staticmethod
    async def _go_on(conn: AsyncConnection, task_id: str) -> None:
        await ensure_turn(conn, task_id)
        await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
            status="active", status_reason="", updated_at=clock.now()))

    async def checkpoint_answered(self, conn: AsyncConnection, gate: Any, approved: bool) -> str | None:
        """After a checkpoint gate: approval completes the step and returns the task id to continue.
        (A failure card is answered by `failure_answered`.)"""
        scope = gate.scope or {}
        if scope.get("failure"):
            return await self.failure_answered(conn, gate, approved)
        item_id = scope.get("checklist_item")
        if not item_id:
            return None
        if not approved:
            lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == gate.task_id))).scalar()
            await conn.execute(update(s.tasks).where(s.tasks.c.id == gate.task_id).values(
                status="idle", status_reason=message("status.changes_asked", lang or "en"), updated_at=clock.now()))
            return None
        await evidence.complete_by_answer(conn, gate, item_id)  # the creator's answer is the step's evidence
        return gate.task_id

    async def failure_answered(self, conn: AsyncConnection, gate: Any, approved: bool) -> str | None:
        """After a failure card: 1 tries again (returns the task id to continue), 2 waits for the creator's
        change, 3 (or a rejection) stops the task."""
        option = (gate.resolution or {}).get("option") if approved else 3
        t = clock.now()
        task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == gate.task_id))).first()
        if task is None or task.status == "stopped":
            return None
        if option == 1:
            return gate.task_id
        if option == 2:
            await conn.execute(update(s.tasks).where(s.tasks.c.id == gate.task_id).values(
                status="idle", status_reason=message("status.waiting_change", task.language), idle_turns=0,
                updated_at=t))
            return None
        stopped = message("status.stopped_failure", task.language)
        await conn.execute(update(s.tasks).where(s.tasks.c.id == gate.task_id).values(
            status="stopped", status_reason=stopped, epoch=task.epoch + 1, updated_at=t))
        await conn.execute(insert(s.events).values(type="task_stop", at=t, task_id=gate.task_id,
                                                   data={"reason": stopped}))
        await self.called_off(conn, gate.task_id, "stopped")
        return None

    async def deliver_choice(self, conn: AsyncConnection, gate: Any, approved: bool, by: str) -> str | None:
        """A clarify card's answer (A4: a card action goes straight to its task): deliver the card's words — to
        the chosen task, to a task reopened for it, or to a new task — and remember the choice for similar
        messages. The main thread never waited for it. Routing grants no authority (A9). Returns the task it
        went to (None: cancelled)."""
        scope = gate.scope or {}
        actions = scope.get("actions") or []
        option = (gate.resolution or {}).get("option") or 0
        if not approved or not 1 <= option <= len(actions):
            return None
        action = actions[option - 1]
        words = scope.get("words") or scope.get("message") or ""
        if action.get("do") == "new":
            task_id = stable("task", gate.id)
            if (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.id == task_id))).first() is None:
                await self.ledger.create_task(action.get("title") or "Task", kind=action.get("kind") or "persistent",
                                              goal=action.get("goal") or words, brief=action.get("brief") or "",
                                              language=scope.get("language"), conn=conn, task_id=task_id)
        elif action.get("do") in ("send", "resume"):
            row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == action["task_id"]))).first()
            if row is None:
                return None
            if not deterministic.usable(row):
                await reopen(conn, row, by)
            task_id = row.id
        else:
            return None
        await self.ledger.deliver(task_id, words, source="router", origin=gate.id, conn=conn,
                                  message_id=stable("msg", gate.id + task_id))
        await memory.remember(conn, words, task_id)
        await index.refresh_search_text(conn, task_id)
        return task_id

    # ---- a gate overdue (the watchdog) -------------------------------------------------------------
    async def expire_overdue(self, db: Database) -> list[str]:
        """Gates past their deadline expire as declined; returns the turns to re-check."""
        return [gate.turn_id for gate in await gates.expire_overdue(db) if gate.turn_id]


def reacting_ledger(db: Database, lease_seconds: float = 30.0, time_scale: float = 1.0) -> Ledger:
    """A ledger whose events have their consequences (what the CLI uses without a whole runtime)."""
    ledger = Ledger(db, lease_seconds, time_scale)
    ledger.reactions = Reactions(ledger, time_scale)
    return ledger


async def resolve_gate(db: Database, gate_id: str, *, approve: bool, option: int | None = None,
                       by: str = "creator:cli", reactions: Reactions | None = None) -> Any:
    """Approve (optionally choosing OPTION, 1-based) or reject a pending gate, and set going what it allows, in
    one transaction. Raises if unknown, resolved or expired; of several concurrent answers one wins."""
    reactions = reactions or Reactions(reacting_ledger(db))
    async with db.write() as conn:
        resolved = await gates.answer_gate(conn, gate_id, approve=approve, option=option, by=by)
        await reactions.gate_answered(conn, resolved, approve, by)
        await gates.record_resolved(conn, resolved, approve, by)
        return (await conn.execute(select(s.gates).where(s.gates.c.id == gate_id))).one()


def stable(prefix: str, key: str) -> str:
    """An id derived from a key, so doing the same thing twice finds what the first time made."""
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


async def reopen(conn: AsyncConnection, row: Any, by: str) -> None:
    """The creator chose to resume an archived or stopped task: unarchive, unstop (epoch + 1, like resume)."""
    values: dict[str, Any] = {"archived": False, "updated_at": clock.now()}
    if row.status in ("stopped", "failed"):
        values.update(status="idle", status_reason="", epoch=row.epoch + 1)
    await conn.execute(update(s.tasks).where(s.tasks.c.id == row.id).values(**values))
    await Ledger.event(conn, "task_resumed", row.id, by=by, archived=bool(row.archived), previous_status=row.status)


async def _may_run(conn: AsyncConnection, task_id: str) -> bool:
    """Only the creator's resume restarts a stopped or archived task."""
    row = (await conn.execute(select(s.tasks.c.status, s.tasks.c.archived).where(s.tasks.c.id == task_id))).first()
    return row is not None and row.status != "stopped" and not row.archived
