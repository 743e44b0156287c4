"""Running one turn: a series of durable steps (C1–C3).

Per step: read state → infer (unless the decision is already persisted) → commit decision, pending
calls and consumed inbox in one transaction → run each call through the tool ledger → checkpoint.
Recovery never re-infers a persisted decision: done results are reused, idempotent calls re-run
with the same key, and a non-idempotent call that started without a result becomes
`outcome_unknown`, which the model hears about at its next step.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from ..errors import LomoError, Said, StaleWrite, for_model, said_error
from .. import memory
from ..redact import redact
from ..models.base import ModelError, ModelReply, ModelRequest
from ..router.deterministic import resolve_files
from ..store import schema as s
from ..store.engine import DiskFull, fetch
from ..tasks import checklist, stopcheck, transition
from ..tools.registry import Suspend, ToolContext, ToolError, plain_error, scrub_surrogates
from ..workspace.errors import WorkspaceError
from . import context, decision, remedy, wording
from ..base.bus import Notice
from ..base.ids import call_key
from ..ledger import Claim, StartedCall
from .. import clock

if TYPE_CHECKING:
    from .scheduler import Runtime

log = logging.getLogger("lomo.turns")

MAX_STEPS = 40
TERMINAL_CALL = ("done", "failed", "outcome_unknown")
OUTCOME_UNKNOWN = ("outcome unknown: this call started before an interruption and may or may not have taken "
                   "effect. Check the current state before doing it again.")


HELD_NOTE = ("waiting for the creator's answer on this card, which covers only this call. It runs by itself once "
             "they answer (do not order it again); go on with the work the card does not cover.")

TASK = "SELECT * FROM tasks WHERE id = :task_id"
MODEL_CALLS = "SELECT count(*) AS n FROM model_calls"


class TurnRunner:
    def __init__(self, runtime: "Runtime", claim: Claim) -> None:
        self.rt = runtime
        self.claim = claim
        self.ledger = runtime.ledger
        self.context = context.TurnContext(runtime, claim.task_id, claim)
        self._memory_used: list[str] = []  # memory versions the current step's context carries
        self._next_step: int | None = None  # known after the first step: no re-read of the turn per step
        self._steps = 0
        self._reading: list[str] = []  # the inbox messages the step being decided reads
        self._task_kind: str | None = None
        self._held: dict[str, str] | None = None  # held calls (key -> gate id) of this turn; None: not read yet
        self._held_idle = 0  # steps in a row that only held calls

    async def run(self) -> str:
        """Run steps until the turn completes, suspends, fails or is fenced. Returns how it ended."""
        keeper = asyncio.create_task(self._keep_lease())
        try:
            while True:
                if self.rt.draining:
                    await self.ledger.release(self.claim)
                    return "released"
                outcome = await self._step()
                if outcome != "continue":
                    return outcome
        except asyncio.CancelledError:
            await asyncio.shield(self.ledger.release(self.claim))
            raise
        except StaleWrite:
            log.info("turn %s fenced at epoch %s", self.claim.turn_id, self.claim.epoch)
            return "fenced"
        except DiskFull:
            raise  # not the turn's failure: the runtime parks it until the disk has room (runtime/space.py)
        except ModelError as exc:
            log.warning("turn %s: model error: %s", self.claim.turn_id, exc)
            await self._fail(await wording.failure_reason(self.rt.db, self.claim.task_id, exc))
            return "failed"
        except LomoError as exc:
            await self._fail(await wording.failure_reason(self.rt.db, self.claim.task_id, exc))
            return "failed"
        except Exception:  # noqa: BLE001 — a defect fails this turn with a reason, never hangs it
            log.exception("turn %s failed unexpectedly", self.claim.turn_id)
            await self._fail("internal error; see the log file for details")
            return "failed"
        finally:
            keeper.cancel()

    async def _fail(self, reason: str) -> None:
        self.rt.errors.append(f"{self.claim.task_id}: {reason}")
        try:
            if await self._is_main():
                messages = await self._fail_main(reason)
            else:
                messages = []
                await self.ledger.fail_turn(self.claim, reason)
        except StaleWrite:
            return
        self.rt.bus.publish(Notice.TURN_FAILED, self.claim.task_id, turn_id=self.claim.turn_id, reason=reason,
                            message_ids=messages)
        for message_id in messages:
            self.rt.bus.publish(Notice.MESSAGE_FAILED, self.claim.task_id, message_id=message_id, reason=reason)
        if await self._is_main():  # a message that arrived meanwhile gets its own turn now
            self.rt.after_commit_wake(self.claim.task_id)

    async def _is_main(self) -> bool:
        if self._task_kind is None:
            async with self.rt.db.read() as conn:
                self._task_kind = (await conn.execute(select(s.tasks.c.kind).where(
                    s.tasks.c.id == self.claim.task_id))).scalar()
        return self._task_kind == "main"

    async def _fail_main(self, reason: str) -> list[str]:
        """The main thread never stays failed (its failure would hold every later message): the turn
        fails, the error is put on the message(s) it concerns — unread ones become `failed`, with a
        `message_failed` event — and the thread goes back to idle, so the next message tries again."""
        t = clock.now()
        reason = redact(reason)  # a provider's error may echo a key (#11 §7)
        async with self.ledger.fenced(self.claim) as conn:
            await conn.execute(update(s.turns).where(s.turns.c.id == self.claim.turn_id).values(
                status="failed", reason=reason, lease_owner=None, lease_expires=None, finished_at=t))
            if self._reading:
                await conn.execute(update(s.inbox).where(s.inbox.c.id.in_(self._reading),
                                                         s.inbox.c.status == "pending").values(status="failed"))
            concerned = list((await conn.execute(select(s.inbox.c.id).where(
                (s.inbox.c.id.in_(self._reading)) | (s.inbox.c.consumed_turn == self.claim.turn_id)).order_by(
                s.inbox.c.sent_at))).scalars())
            for message_id in concerned:
                await self.ledger.event(conn, "message_failed", self.claim.task_id, self.claim.turn_id,
                                        message_id=message_id, reason=reason)
            await self.ledger.set_task_status(conn, self.claim.task_id, "idle", reason)
            await self.ledger.event(conn, "turn_failed", self.claim.task_id, self.claim.turn_id, reason=reason,
                                    message_ids=concerned)
            if await self.ledger.pending_inbox(conn, self.claim.task_id):
                await self.ledger.ensure_turn(conn, self.claim.task_id)  # later messages go on
        return concerned

    async def _keep_lease(self) -> None:
        period = max(self.ledger.lease_seconds / 3, 0.05)
        while True:
            await asyncio.sleep(period)
            try:
                await self.ledger.renew(self.claim)
            except StaleWrite:
                return
            except Exception:  # noqa: BLE001 — a failed renewal is retried next period; the guard decides
                log.exception("lease renewal failed")

    async def _state(self) -> tuple[Any, Any, dict[str, Any] | None, dict[int, Any]]:
        async with self.rt.db.read() as conn:
            turn = (await conn.execute(select(s.turns).where(s.turns.c.id == self.claim.turn_id))).one()
            task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == self.claim.task_id))).one()
            step_no = turn.checkpoint + 1
            decision = (await conn.execute(select(s.steps.c.decision).where(
                s.steps.c.turn_id == turn.id, s.steps.c.step == step_no))).scalar()
            calls = {}
            if decision is not None:
                rows = (await conn.execute(select(s.tool_calls).where(
                    s.tool_calls.c.turn_id == turn.id, s.tool_calls.c.step == step_no))).all()
                calls = {r.seq: r for r in rows}
        return turn, task, decision, calls

    async def _step(self) -> str:
        if self._next_step is None:  # first step of this claim: recover from the ledger
            turn, task, decision, calls = await self._state()
            if turn.epoch != self.claim.epoch or turn.status != "running":
                raise StaleWrite(self.claim.turn_id, self.claim.epoch)
            step, self._steps = turn.checkpoint + 1, turn.steps
        else:  # every later step starts fresh; each write's guard still checks the fence
            step, decision, calls = self._next_step, None, {}
            task = None
        prestarted: frozenset[int] = frozenset()
        if decision is None:
            held = await self._run_held(step)
            if held == "suspended":
                return "suspended"
            if held == "ran" and await self._nothing_to_ask(task or await self._task_row()):  # J3/D3 again
                await self.ledger.complete_turn(self.claim, step - 1)
                self.rt.bus.publish(Notice.TURN_COMPLETED, self.claim.task_id, turn_id=self.claim.turn_id, reply=None)
                self.rt.after_commit_wake(self.claim.task_id)
                return "completed"
            if self._steps >= MAX_STEPS:
                raise LomoError.said("cli_error.too_many_steps", n=MAX_STEPS)
            committed = await self._decide(step)
            if committed is None:
                self._next_step = step
                return "continue"  # a message the model read was withdrawn: think again
            decision, finished, task, prestarted = committed
            self._steps += 1
            self.rt.faults.hit("after_decision_commit")
            if finished:
                self.rt.bus.publish(Notice.TURN_COMPLETED, task.id, turn_id=self.claim.turn_id,
                                    reply=decision.get("content"))
                self.rt.after_commit_wake(task.id)
                return "completed"
            if not decision.get("tool_calls"):  # the model is done but calls are held: wait for their cards
                return await self._park_on_holds(task, step)
        if task is None:
            async with self.rt.db.read() as conn:
                task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == self.claim.task_id))).one()
        outcome = await self._run_calls(task, step, decision, calls, prestarted)
        self._next_step = step + 1 if outcome == "continue" else None
        return outcome

    async def _decide(self, step: int) -> tuple[dict[str, Any], bool, Any, frozenset[int]] | None:
        seen = await transition.read(self.rt, self.claim, step)  # J4 READ: stale evidence re-validated first
        request, consumed, task = await self._request()
        self._reading = consumed
        self.rt.bus.publish(Notice.THINKING, task.id, turn_id=self.claim.turn_id, step=step)

        async def on_token(text: str) -> None:
            self.rt.bus.publish(Notice.TOKEN, task.id, turn_id=self.claim.turn_id, text=text)

        try:
            reply: ModelReply = await self.rt.model.complete(request, on_token=on_token)
        except ModelError as exc:
            if not exc.context_too_long:
                raise
            request, consumed, task = await self._request(force_summary=True)  # summarise, then one retry
            reply = await self.rt.model.complete(request, on_token=on_token)
        decision = checked_decision(reply.to_decision())
        decision["domains"] = request.hints["tool_domains"]  # what this step may call (E2)
        finish = not reply.tool_calls and not self._held  # a held call still to run keeps the turn open
        usage = reply.usage
        record = dict(purpose=request.purpose, model=reply.model or self.rt.model.name,
                      prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                      cached_tokens=usage.cached_tokens, cache_write_tokens=usage.cache_write_tokens,
                      cost=usage.cost, latency_ms=reply.latency_ms)
        started = [] if finish else self._idempotent_calls(task, decision)
        used = list(self._memory_used)

        async def context_use(conn: Any) -> None:  # which memories this step's context carried (F4)
            await memory.record_context_use(self.rt.db, task.id, self.claim.turn_id, step, used, conn=conn)

        ok = await self.ledger.commit_decision(self.claim, step, decision, consumed, record, finish=finish,
                                               started=started, also=context_use)
        if not ok:
            return None
        await transition.decided(self.rt, self.claim, step, decision, seen)  # J4 DECIDE, CLAIM
        if consumed and task.kind != "main":  # the creator's new message answers the task's failure card
            async with self.rt.db.read() as conn:
                open_card = await stopcheck.open_failure_card(conn, task.id)
            if open_card:
                async with self.rt.db.write() as conn:
                    await stopcheck.close_failure_cards(conn, task.id)
        self.rt.bus.publish(Notice.STEP_COMMITTED, task.id, turn_id=self.claim.turn_id, step=step,
                            content=decision.get("content"), tool_calls=decision.get("tool_calls"))
        return decision, finish, task, frozenset(c.seq for c in started)

    def _idempotent_calls(self, task: Any, decision: dict[str, Any]) -> list[StartedCall]:
        """The decision's calls whose `started` row can share the decision's commit (see Ledger.commit_decision):
        known, visible to this task, and idempotent."""
        visible = self._visible(task, decision)
        out = []
        for seq, call in enumerate(decision.get("tool_calls") or []):
            tool = self.rt.registry.get(call["name"])
            if tool is not None and tool.idempotent and tool.name in visible:
                out.append(StartedCall(seq, tool.name, dict(call.get("arguments") or {}), tool.side_effect))
        return out

    def _visible(self, task: Any, decision: dict[str, Any]) -> set[str]:
        """The tools the step's prompt showed (its decision records their domains)."""
        if "domains" not in decision:
            return {t.name for t in self.rt.tools_for(task)}
        return self.context.visible_names("main" if task.kind == "main" else task.kind, decision["domains"])

    async def _request(self, force_summary: bool = False) -> tuple[ModelRequest, list[str], Any]:
        async with self.rt.db.read() as conn:
            [task] = await fetch(conn, TASK, {"task_id": self.claim.task_id})
            await self.context.refresh(conn, task)
            pending = await self.rt.readable_inbox(conn, task, self.claim.turn_id)
            extra, hints = await self.rt.context_extras(conn, task, pending)
            # a task's planner gets the workspace paths of files the new messages name ("把海报_1.png" is
            # posters/海报_1.png); the main thread's router resolves names itself (router.hooks)
            parsed = self.rt.messages.joined([(m.id, m.text) for m in pending])  # as parsed on arrival
            resolved = {} if task.kind == "main" or parsed is None else await resolve_files(conn, parsed)
            if getattr(self.rt.model, "wants_recorded_count", False):  # lomo/replay's cursor; count(*) scans
                hints["model_calls_recorded"] = (await fetch(conn, MODEL_CALLS, {}))[0]["n"]
        profile, recall, self._memory_used = await self.context.memory_inputs(task, [m.text for m in pending])
        prompt = await self.context.build(task, extra, hints, [m.text for m in pending], force_summary=force_summary,
                                          profile=profile, recall=recall)
        hints.update(task_id=task.id, task_kind=task.kind, title=task.title, brief=task.brief,
                     language=task.language, new_messages=[m.text for m in pending], resolved_files=resolved,
                     tool_domains=sorted(prompt.domains))
        request = ModelRequest(messages=prompt.messages, tools=prompt.tool_schemas(),
                               purpose="router" if task.kind == "main" else "worker", task_id=task.id, hints=hints,
                               breakpoints=prompt.breakpoints, tail_start=prompt.tail_start, message=parsed)
        return request, [m.id for m in pending], task

    async def _run_calls(self, task: Any, step: int, decision: dict[str, Any], calls: dict[int, Any],
                         prestarted: frozenset[int] = frozenset()) -> str:
        planned = decision.get("tool_calls") or []
        last = len(planned) - 1
        visible = self._visible(task, decision)  # a tool the step did not show never runs
        finished_last = False
        failed = False
        deferred: list[Suspend] = []
        held: list[tuple[int, str, Suspend, dict[str, Any]]] = []
        for seq, call in enumerate(planned):
            row = calls.get(seq)
            if row is not None and row.status in TERMINAL_CALL:
                continue
            name, args = call["name"], dict(call.get("arguments") or {})
            tool = self.rt.registry.get(name)
            is_last = seq == last
            if tool is None or name not in visible:
                error = f"unknown tool {name!r}" if tool is None else f"{name} is not available to this task"
                said = Said("call_error.unknown_tool", {"name": repr(name)}) if tool is None else \
                    Said("call_error.not_available", {"tool": _tool_words(name)})
                await self._finish(step, seq, name, "failed",
                                   said_error({"error": error, "error_kind": "unknown_tool"}, said), ran=False,
                                   last=is_last and not deferred and not held)
                finished_last = is_last
                continue
            problem = call.get("invalid") or tool.check(args)
            if problem:  # checked against the tool's JSON Schema before its body runs or anything is ordered
                if seq not in prestarted and row is None:
                    await self.ledger.start_call(self.claim, step, seq, name, args, tool.side_effect)
                await self._finish(step, seq, name, "failed",
                                   said_error({"error": problem, "error_kind": "invalid_arguments"},
                                              Said("call_error.invalid_arguments", {"tool": _tool_words(name)})),
                                   ran=False, last=is_last and not deferred and not held)
                finished_last, failed = is_last, True
                continue
            if row is not None and row.status == "started" and not tool.idempotent:
                await self._finish(step, seq, name, "outcome_unknown", {"outcome_unknown": True,
                                                                        "message": OUTCOME_UNKNOWN},
                                   ran=False, last=is_last and not deferred and not held)
                finished_last = is_last
                continue
            if seq not in prestarted:  # else its `started` row was committed with the decision
                await self.ledger.start_call(self.claim, step, seq, name, args, tool.side_effect)
            self.rt.faults.hit("after_tool_started")
            ctx = ToolContext(self.rt.tool_services(), self.claim, step, seq, call_key(self.claim.turn_id, step, seq))
            status, result = await self._invoke(tool, ctx, args)
            if isinstance(result, Suspend):
                if result.holds and task.kind == "persistent":  # G4: the card waits; the task's other work goes on
                    held.append((seq, name, result, args))
                    continue
                if result.defer:
                    deferred.append(result)
                    continue
                await self.ledger.suspend(self.claim, result.kind, result.ref, result.task_status,
                                          [{"kind": "job", "ref": r} for r in result.refs] or None)
                self.rt.bus.publish(Notice.TURN_SUSPENDED, task.id, wait_kind=result.kind, wait_ref=result.ref)
                await self.rt.poke(self.claim.turn_id)  # it may have resolved while we parked
                return "suspended"
            self.rt.faults.hit("after_tool_effect")
            await self._finish(step, seq, name, status, result, ran=True, last=is_last and not deferred and not held,
                               durable=tool.side_effect != "read")
            self.rt.faults.hit("after_tool_done")
            finished_last, failed = is_last, failed or status == "failed"
        if deferred:
            waiting_gate = any(d.kind == "gate" for d in deferred)
            refs = [{"kind": d.kind, "ref": d.ref} for d in deferred]
            await self.ledger.suspend(self.claim, "step", f"{self.claim.turn_id}/{step}",
                                      "waiting_gate" if waiting_gate else "waiting_job", refs)
            self.rt.bus.publish(Notice.TURN_SUSPENDED, task.id, wait_kind="step", wait_ref=f"{self.claim.turn_id}/{step}")
            await self.rt.poke(self.claim.turn_id)
            return "suspended"
        if held:
            await self._hold(step, held)
            finished_last = True
            self._held_idle = self._held_idle + 1 if len(held) == len(planned) else 0
            if self._held_idle > 1 or not await self._work_besides(task, held):  # nothing else, or re-ordering
                return await self._park_on_holds(task, step)
        tools = [self.rt.registry.get(c["name"]) for c in planned]
        if planned and (await self.rt.step_ends_turn(task, [t for t in tools if t is not None], len(planned))
                        or failed and await self._failing_again(task)):
            await self.ledger.complete_turn(self.claim, step)
            self.rt.bus.publish(Notice.TURN_COMPLETED, task.id, turn_id=self.claim.turn_id, reply=decision.get("content"))
            self.rt.after_commit_wake(task.id)
            return "completed"
        changed = any(t is not None and t.side_effect != "read" for t in tools)  # a read moves no checklist or job
        if changed and await self._nothing_to_ask(task):  # J3/D3: the next step needs no model call
            await self.ledger.complete_turn(self.claim, step)
            self.rt.bus.publish(Notice.TURN_COMPLETED, task.id, turn_id=self.claim.turn_id, reply=None)
            self.rt.after_commit_wake(task.id)
            return "completed"
        if not finished_last:
            async with self.ledger.fenced(self.claim) as conn:
                await conn.execute(s.turns.update().where(s.turns.c.id == self.claim.turn_id).values(checkpoint=step))
        return "continue"

    async def _hold(self, step: int, held: list[tuple[int, str, Suspend, dict[str, Any]]]) -> None:
        """Record the step's held calls: the model hears each waits on its card and runs by itself once answered."""
        self._held = dict(self._held or {})
        notes = []
        for seq, name, wait, _ in held:
            self._held[call_key(self.claim.turn_id, step, seq)] = wait.ref
            notes.append((seq, name, json.dumps({"held": True, "gate_id": wait.ref, "note": HELD_NOTE},
                                                ensure_ascii=False)))
        await self.ledger.hold_calls(self.claim, step, notes)

    async def _work_besides(self, task: Any, held: list[tuple[int, str, Suspend, dict[str, Any]]]) -> bool:
        """Whether the task has open checklist work the held calls do not cover (then the turn goes on; else it
        waits for their cards — a model is not asked to find work where the plan names none)."""
        async with self.rt.db.read() as conn:
            steps = await checklist.items(conn, task.id)
            covered = set()
            for *_, args in held:
                if args.get("step") is not None:
                    item = await checklist.find(conn, task.id, args["step"])
                    covered.add(item.id if item else None)
        return any(i.state in checklist.OPEN and not i.needs_confirmation and i.id not in covered for i in steps)

    async def _run_held(self, step: int) -> str | None:  # "suspended" | "ran" | None
        """Before the model decides STEP: run the held calls whose cards were answered (the creator approved:
        the order goes ahead with its own key; declined: the call fails as declined). A held call that now
        waits on its job parks the turn until the job settles."""
        if self._held is None:  # first step of this claim: calls held by an earlier owner of the turn
            async with self.rt.db.read() as conn:
                rows = (await conn.execute(select(s.tool_calls.c.id).where(
                    s.tool_calls.c.turn_id == self.claim.turn_id, s.tool_calls.c.status == "started",
                    s.tool_calls.c.step < step))).scalars().all()
            self._held = {key: "" for key in rows}
        if not self._held:
            return None
        async with self.rt.db.read() as conn:
            rows = (await conn.execute(select(s.tool_calls).where(
                s.tool_calls.c.id.in_(list(self._held)), s.tool_calls.c.status == "started"))).all()
        self._held = {}
        ran = None
        for row in rows:
            tool = self.rt.registry.get(row.name)
            args = json.loads(row.arguments) if isinstance(row.arguments, str) else dict(row.arguments or {})
            ctx = ToolContext(self.rt.tool_services(), self.claim, row.step, row.seq, row.id)
            status, result = await self._invoke(tool, ctx, args)
            if isinstance(result, Suspend):
                if result.holds:
                    self._held[row.id] = result.ref  # still waiting for the creator
                    continue
                self._held[row.id] = ""
                await self.ledger.suspend(self.claim, result.kind, result.ref, result.task_status)
                self.rt.bus.publish(Notice.TURN_SUSPENDED, self.claim.task_id, wait_kind=result.kind,
                                    wait_ref=result.ref)
                await self.rt.poke(self.claim.turn_id)
                return "suspended"
            message = context.compact_result(for_model(result), row.id, self.context.history.large_output_chars)
            await self.ledger.finish_held(self.claim, row.id, status, result, ran=True, step=step,
                                          note=f"[Lomo runtime] {row.name} (call {row.id}), held for the creator's "
                                               f"answer, has run: {message}")
            self.rt.bus.publish(Notice.TOOL_FINISHED, self.claim.task_id, turn_id=self.claim.turn_id,
                                step=row.step, seq=row.seq, name=row.name, status=status)
            ran = "ran"
        return ran

    async def _task_row(self) -> Any:
        async with self.rt.db.read() as conn:
            return (await conn.execute(select(s.tasks).where(s.tasks.c.id == self.claim.task_id))).one()

    async def _park_on_holds(self, task: Any, step: int) -> str:
        """The model has nothing more to do while calls are held: the turn waits for their cards."""
        refs = [{"kind": "gate", "ref": gate} for gate in (self._held or {}).values() if gate]
        async with self.ledger.fenced(self.claim) as conn:
            await conn.execute(s.turns.update().where(s.turns.c.id == self.claim.turn_id).values(checkpoint=step))
        await self.ledger.suspend(self.claim, "step", f"{self.claim.turn_id}/{step}", "waiting_gate", refs)
        self.rt.bus.publish(Notice.TURN_SUSPENDED, task.id, wait_kind="step", wait_ref=f"{self.claim.turn_id}/{step}")
        await self.rt.poke(self.claim.turn_id)
        return "suspended"

    async def _nothing_to_ask(self, task: Any) -> bool:
        """Decide before asking the model again (runtime/decision.py): when only a human checkpoint is next
        the turn ends and the stop check opens its card; a finished checklist ends a turn the creator did not
        start (one they did gets the model's answer). Recorded as `run_decided` (at: step)."""
        if task.kind != "persistent":
            return False
        async with self.rt.db.read() as conn:
            chosen = decision.decide(await decision.read_state(conn, task.id))
        acted = chosen.action in remedy.ACTS
        if acted:  # a result broke or the goal changed: the runtime re-opens or marks first (runtime/remedy.py)
            async with self.ledger.fenced(self.claim) as conn:
                chosen = await remedy.act(conn, task.id, self.claim.turn_id, chosen, stage="step",
                                          root=self.rt.workspace.root)
        if chosen.action == "quiet":
            async with self.rt.db.read() as conn:
                asked = (await conn.execute(select(s.inbox.c.id).where(
                    s.inbox.c.consumed_turn == self.claim.turn_id, s.inbox.c.source == "creator").limit(1))).first()
            if asked is not None:
                return False
        if chosen.action not in ("ask", "quiet"):
            return False
        if not acted:
            async with self.ledger.fenced(self.claim) as conn:
                await decision.record(conn, task.id, self.claim.turn_id, chosen, stage="step")
        return True

    async def _failing_again(self, task: Any) -> bool:
        """Whether this step's failure repeats an earlier one (or is transient): then the turn ends here and
        the stop check decides — stop with a card, or back off — instead of the model ordering it again."""
        if task.kind == "main":
            return False
        async with self.rt.db.read() as conn:
            return await stopcheck.repeated_failure(conn, task, self.claim.turn_id) is not None

    async def _invoke(self, tool: Any, ctx: ToolContext, args: dict[str, Any]) -> tuple[str, Any]:
        """Run the tool body. A failure is a result the model can act on — `error` (plain words, never
        exception text; the log keeps that) and `error_kind` (what the stop check compares)."""
        try:
            result = await tool.fn(ctx, **args)
        except StaleWrite:
            raise
        except ToolError as exc:
            return "failed", said_error({"error": str(exc), "error_kind": exc.kind}, exc.said_as)
        except DiskFull:
            raise  # the step is rolled back and redone when the disk has room
        except (LomoError, WorkspaceError) as exc:
            refused = f"{tool.name} was refused"
            error = plain_error(str(exc), refused, keep_detail=True)
            said = getattr(exc, "said_as", None) if error == str(exc) else None
            if error == refused:
                said = Said("call_error.refused", {"tool": _tool_words(tool.name)})
            return "failed", said_error({"error": error, "error_kind": "refused"}, said)
        except Exception:  # noqa: BLE001 — a broken tool must not sink the turn
            log.exception("tool %s failed", tool.name)
            return "failed", said_error({"error": f"{tool.name} failed unexpectedly; the log file has the detail",
                                         "error_kind": "internal"},
                                        Said("call_error.internal", {"tool": _tool_words(tool.name)}))
        return "done", result

    async def _finish(self, step: int, seq: int, name: str, status: str, result: Any, *, ran: bool,
                      last: bool, durable: bool = True) -> None:
        message = context.compact_result(for_model(result), call_key(self.claim.turn_id, step, seq),
                                         self.context.history.large_output_chars)
        await self.ledger.finish_call(self.claim, step, seq, status, result, ran=ran, last_in_step=last, name=name,
                                      tool_message=message, durable=durable)
        self.rt.bus.publish(Notice.TOOL_FINISHED, self.claim.task_id, turn_id=self.claim.turn_id, step=step, seq=seq,
                            name=name, status=status)


def _tool_words(name: str) -> Said | str:
    """A tool as the creator reads it on a card (`tui_tools.NAME`); a name Lomo has no words for as it is."""
    from ..language import template

    try:
        template(f"tui_tools.{name}", "en")
    except KeyError:
        return name
    return Said(f"tui_tools.{name}")


def checked_decision(decision: dict[str, Any]) -> dict[str, Any]:
    """A model's decision made storable: lone surrogates (which no database or provider accepts) are
    replaced; a call whose arguments held one is marked `invalid` with a reason the model hears back,
    instead of the whole turn failing on the write."""
    content, _ = scrub_surrogates(decision.get("content"))
    calls = []
    for call in decision.get("tool_calls") or []:
        name, _ = scrub_surrogates(call.get("name"))
        args, where = scrub_surrogates(call.get("arguments") or {})
        checked = dict(call, name=name, arguments=args)
        if where is not None:
            checked["invalid"] = (f"{name}: {where} holds a character that is not valid Unicode (a lone "
                                  "surrogate); send that text again without it")
        calls.append(checked)
    return dict(decision, content=content, tool_calls=calls)
