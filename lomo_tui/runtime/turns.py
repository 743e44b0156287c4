"""Running one turn: a series of durable steps (C1–C3).

Per step: read state → infer (unless the decision is already persisted) → commit decision, pending
calls and consumed inbox in one transaction → run each call through the tool ledger → checkpoint.
Recovery never re-infers a persisted decision: done results are reused, idempotent calls re-run
with the same key, and a non-idempotent call that started without a result becomes
`outcome_unknown`, which the model hears about at its next step.
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..errors import LomoError, StaleWrite
from ..models.base import ModelError, ModelReply, ModelRequest
from ..router.deterministic import resolve_files
from ..store import schema as s
from ..store.engine import fetch
from ..tools.registry import Suspend, ToolContext, ToolError
from ..workspace.errors import WorkspaceError
from . import context
from .ids import call_key
from .ledger import Claim, StartedCall

if TYPE_CHECKING:
    from .scheduler import Runtime

log = logging.getLogger("lomo.turns")

MAX_STEPS = 40
TERMINAL_CALL = ("done", "failed", "outcome_unknown")
OUTCOME_UNKNOWN = ("outcome unknown: this call started before an interruption and may or may not have taken "
                   "effect. Check the current state before doing it again.")


TASK = "SELECT * FROM tasks WHERE id = :task_id"
MODEL_CALLS = "SELECT count(*) AS n FROM model_calls"


class TurnRunner:
    def __init__(self, runtime: "Runtime", claim: Claim) -> None:
        self.rt = runtime
        self.claim = claim
        self.ledger = runtime.ledger
        self.context = context.TurnContext(runtime, claim.task_id, claim)
        self._next_step: int | None = None  # known after the first step: no re-read of the turn per step
        self._steps = 0

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
        except ModelError as exc:
            await self._fail(f"model error: {exc}")
            return "failed"
        except LomoError as exc:
            await self._fail(str(exc))
            return "failed"
        except Exception as exc:  # noqa: BLE001 — a defect fails this turn with a reason, never hangs it
            log.exception("turn %s failed unexpectedly", self.claim.turn_id)
            await self._fail(f"internal error ({type(exc).__name__}: {exc}); see the log file for details")
            return "failed"
        finally:
            keeper.cancel()

    async def _fail(self, reason: str) -> None:
        self.rt.errors.append(f"{self.claim.task_id}: {reason}")
        try:
            await self.ledger.fail_turn(self.claim, reason)
        except StaleWrite:
            return
        self.rt.bus.publish("turn_failed", self.claim.task_id, reason=reason)

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
            if self._steps >= MAX_STEPS:
                raise LomoError(f"the turn reached {MAX_STEPS} steps without finishing; stopped to avoid spinning")
            committed = await self._decide(step)
            if committed is None:
                self._next_step = step
                return "continue"  # a message the model read was withdrawn: think again
            decision, finished, task, prestarted = committed
            self._steps += 1
            self.rt.faults.hit("after_decision_commit")
            if finished:
                self.rt.bus.publish("turn_completed", task.id, turn_id=self.claim.turn_id,
                                    reply=decision.get("content"))
                self.rt.after_commit_wake(task.id)
                return "completed"
        if task is None:
            async with self.rt.db.read() as conn:
                task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == self.claim.task_id))).one()
        outcome = await self._run_calls(task, step, decision, calls, prestarted)
        self._next_step = step + 1 if outcome == "continue" else None
        return outcome

    async def _decide(self, step: int) -> tuple[dict[str, Any], bool, Any, frozenset[int]] | None:
        request, consumed, task = await self._request()
        self.rt.bus.publish("thinking", task.id, turn_id=self.claim.turn_id, step=step)

        async def on_token(text: str) -> None:
            self.rt.bus.publish("token", task.id, turn_id=self.claim.turn_id, text=text)

        try:
            reply: ModelReply = await self.rt.model.complete(request, on_token=on_token)
        except ModelError as exc:
            if not exc.context_too_long:
                raise
            request, consumed, task = await self._request(force_summary=True)  # summarise, then one retry
            reply = await self.rt.model.complete(request, on_token=on_token)
        decision = reply.to_decision()
        decision["domains"] = request.hints["tool_domains"]  # what this step may call (E2)
        finish = not reply.tool_calls
        usage = reply.usage
        record = dict(purpose=request.purpose, model=reply.model or self.rt.model.name,
                      prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                      cached_tokens=usage.cached_tokens, cache_write_tokens=usage.cache_write_tokens,
                      cost=usage.cost, latency_ms=reply.latency_ms)
        started = [] if finish else self._idempotent_calls(task, decision)
        ok = await self.ledger.commit_decision(self.claim, step, decision, consumed, record, finish=finish,
                                               started=started)
        if not ok:
            return None
        self.rt.bus.publish("step_committed", task.id, turn_id=self.claim.turn_id, step=step,
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
            pending = await self.ledger.pending_inbox(conn, task.id)
            extra, hints = await self.rt.context_extras(conn, task)
            # a task's planner gets the workspace paths of files the new messages name ("把海报_1.png" is
            # posters/海报_1.png); the main thread's router resolves names itself (router.hooks)
            resolved = {} if task.kind == "main" else await resolve_files(conn, " ".join(m.text for m in pending))
            if getattr(self.rt.model, "wants_recorded_count", False):  # lomo/replay's cursor; count(*) scans
                hints["model_calls_recorded"] = (await fetch(conn, MODEL_CALLS, {}))[0]["n"]
        prompt = await self.context.build(task, extra, hints, [m.text for m in pending], force_summary=force_summary)
        hints.update(task_id=task.id, task_kind=task.kind, title=task.title, brief=task.brief,
                     language=task.language, new_messages=[m.text for m in pending], resolved_files=resolved,
                     tool_domains=sorted(prompt.domains))
        request = ModelRequest(messages=prompt.messages, tools=prompt.tool_schemas(),
                               purpose="router" if task.kind == "main" else "worker", task_id=task.id, hints=hints,
                               breakpoints=prompt.breakpoints, tail_start=prompt.tail_start)
        return request, [m.id for m in pending], task

    async def _run_calls(self, task: Any, step: int, decision: dict[str, Any], calls: dict[int, Any],
                         prestarted: frozenset[int] = frozenset()) -> str:
        planned = decision.get("tool_calls") or []
        last = len(planned) - 1
        visible = self._visible(task, decision)  # a tool the step did not show never runs
        finished_last = False
        deferred: list[Suspend] = []
        for seq, call in enumerate(planned):
            row = calls.get(seq)
            if row is not None and row.status in TERMINAL_CALL:
                continue
            name, args = call["name"], dict(call.get("arguments") or {})
            tool = self.rt.registry.get(name)
            is_last = seq == last
            if tool is None or name not in visible:
                error = f"unknown tool {name!r}" if tool is None else f"{name} is not available to this task"
                await self._finish(step, seq, name, "failed", {"error": error}, ran=False,
                                   last=is_last and not deferred)
                finished_last = is_last
                continue
            if row is not None and row.status == "started" and not tool.idempotent:
                await self._finish(step, seq, name, "outcome_unknown", {"outcome_unknown": True,
                                                                        "message": OUTCOME_UNKNOWN},
                                   ran=False, last=is_last and not deferred)
                finished_last = is_last
                continue
            if seq not in prestarted:  # else its `started` row was committed with the decision
                await self.ledger.start_call(self.claim, step, seq, name, args, tool.side_effect)
            self.rt.faults.hit("after_tool_started")
            ctx = ToolContext(self.rt, self.claim, step, seq, call_key(self.claim.turn_id, step, seq))
            status, result = await self._invoke(tool, ctx, args)
            if isinstance(result, Suspend):
                if result.defer:
                    deferred.append(result)
                    continue
                await self.ledger.suspend(self.claim, result.kind, result.ref, result.task_status)
                self.rt.bus.publish("turn_suspended", task.id, wait_kind=result.kind, wait_ref=result.ref)
                await self.rt.poke(self.claim.turn_id)  # it may have resolved while we parked
                return "suspended"
            self.rt.faults.hit("after_tool_effect")
            await self._finish(step, seq, name, status, result, ran=True, last=is_last and not deferred,
                               durable=tool.side_effect != "read")
            self.rt.faults.hit("after_tool_done")
            finished_last = is_last
        if deferred:
            waiting_gate = any(d.kind == "gate" for d in deferred)
            refs = [{"kind": d.kind, "ref": d.ref} for d in deferred]
            await self.ledger.suspend(self.claim, "step", f"{self.claim.turn_id}/{step}",
                                      "waiting_gate" if waiting_gate else "waiting_job", refs)
            self.rt.bus.publish("turn_suspended", task.id, wait_kind="step", wait_ref=f"{self.claim.turn_id}/{step}")
            await self.rt.poke(self.claim.turn_id)
            return "suspended"
        tools = [self.rt.registry.get(c["name"]) for c in planned]
        if planned and await self.rt.step_ends_turn(task, [t for t in tools if t is not None], len(planned)):
            await self.ledger.complete_turn(self.claim, step)
            self.rt.bus.publish("turn_completed", task.id, turn_id=self.claim.turn_id, reply=decision.get("content"))
            self.rt.after_commit_wake(task.id)
            return "completed"
        if not finished_last:
            async with self.ledger.fenced(self.claim) as conn:
                await conn.execute(s.turns.update().where(s.turns.c.id == self.claim.turn_id).values(checkpoint=step))
        return "continue"

    async def _invoke(self, tool: Any, ctx: ToolContext, args: dict[str, Any]) -> tuple[str, Any]:
        missing = [p for p in tool.parameters.get("required", []) if p not in args]
        if missing:
            return "failed", {"error": f"{tool.name} needs {', '.join(missing)}"}
        unknown = [p for p in args if p not in tool.parameters.get("properties", {})]
        if unknown:
            return "failed", {"error": f"{tool.name} does not take {', '.join(unknown)}"}
        try:
            result = await tool.fn(ctx, **args)
        except StaleWrite:
            raise
        except ToolError as exc:
            return "failed", {"error": str(exc)}
        except (LomoError, WorkspaceError) as exc:
            return "failed", {"error": str(exc)}
        except Exception as exc:  # noqa: BLE001 — a broken tool must not sink the turn
            log.exception("tool %s failed", tool.name)
            return "failed", {"error": f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}"}
        return "done", result

    async def _finish(self, step: int, seq: int, name: str, status: str, result: Any, *, ran: bool,
                      last: bool, durable: bool = True) -> None:
        message = context.compact_result(result, call_key(self.claim.turn_id, step, seq),
                                         self.context.history.large_output_chars)
        await self.ledger.finish_call(self.claim, step, seq, status, result, ran=ran, last_in_step=last, name=name,
                                      tool_message=message, durable=durable)
        self.rt.bus.publish("tool_finished", self.claim.task_id, turn_id=self.claim.turn_id, step=step, seq=seq,
                            name=name, status=status)
