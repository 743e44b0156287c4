"""The stop check after every turn (G2), owned by the runtime — the model ending its reply is not the
task ending. Meaningful progress (G3) is a new artifact, a step completed on verified evidence, or a newly
submitted job that has not failed; rewording the plan, flipping step states or a failed order is not.

Nothing spins: the same failure twice in a task (same tool, same kind of error) since the creator last
spoke stops it with a plain reason and a card (try again / change the request / stop); a transient
failure (a job that expired) backs off and is tried again, a few times at most. A one-shot whose
generation failed is `failed`, never `done`.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update

from ..errors import ERROR_SAID, error_words
from ..governance.gates import open_gate
from ..language import message
from ..store import schema as s
from . import checklist, evidence
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

NO_PROGRESS_LIMIT = 3
SAME_FAILURE_LIMIT = 2  # the same failure this often stops the task
TRANSIENT_LIMIT = 4  # transient failures of one kind are retried (with back-off) until this many
BACKOFF_SECONDS = 5.0  # first retry after a transient failure; doubles each time (× LOMO_TIME_SCALE)
BACKOFF_MAX = 300.0
FAILED_JOBS = ("failed", "expired", "unknown", "cancelled")
TRANSIENT = frozenset({"transient", "job_expired"})  # error kinds (tools.registry.ToolError) that back off
NOT_FAILURES = frozenset({"declined"})
EXACT_KINDS = frozenset({"refused", "unverified"})  # kinds whose failures are the same only with the same words  # the creator said no: an answer, not a failure to repeat
# The checkpoint and failure cards speak the task's language: `checkpoint.*`, `failure.*` and `doing.*` in the
# message catalogue (lomo_tui/language/messages/).


@dataclass(frozen=True)
class Verdict:
    status: str  # the task's status after this turn
    reason: str = ""
    next_turn: bool = False  # schedule another turn now (no "continue" needed)
    retry_after: float = 0.0  # schedule another turn after this many seconds (a transient failure's back-off)


@dataclass(frozen=True)
class Failure:
    """A failed tool call as the stop check compares them."""

    tool: str
    kind: str
    error: str  # the English the model read (what `signature` compares)
    attempt: str = ""  # turn/step: parallel calls of one step that fail alike are one attempt
    said: Any = field(default=None, compare=False)  # the error as catalogue text (`error_said`), if it has one

    def words(self, lang: str) -> str:
        """The error as the creator reads it in LANG (its English where it has no catalogue form)."""
        return error_words({"error": self.error, ERROR_SAID: self.said}, lang) if self.error else ""

    @property
    def signature(self) -> tuple[str, str, str]:
        """What makes two failures the same one. A job's failure is its kind (the same unreadable input
        fails every render alike); a refusal (a snippet not found, a path refused) also by its words, since
        an agent correcting its edit after "'x' not found" and failing on another snippet is not repeating
        itself."""
        return self.tool, self.kind, self.error if self.kind in EXACT_KINDS else ""


async def made_progress(conn: AsyncConnection, task_id: str, since: float) -> bool:
    versions = (await conn.execute(select(func.count()).select_from(s.object_versions).where(
        s.object_versions.c.task_id == task_id, s.object_versions.c.author == "agent",
        s.object_versions.c.created_at >= since))).scalar()
    steps = await evidence.verified_since(conn, task_id, since)  # a claim nothing showed is not progress
    jobs = (await conn.execute(select(func.count()).select_from(s.jobs).where(
        s.jobs.c.task_id == task_id, s.jobs.c.created_at >= since, s.jobs.c.status.notin_(FAILED_JOBS)))).scalar()
    return bool(versions or steps or jobs)


async def failures_since(conn: AsyncConnection, task_id: str, since: float) -> list[Failure]:
    """The task's failed tool calls since SINCE, oldest first."""
    rows = (await conn.execute(select(s.tool_calls.c.name, s.tool_calls.c.result, s.tool_calls.c.turn_id,
                                      s.tool_calls.c.step).join(
        s.turns, s.turns.c.id == s.tool_calls.c.turn_id).where(
        s.turns.c.task_id == task_id, s.tool_calls.c.status == "failed",
        s.tool_calls.c.finished_at >= since).order_by(s.tool_calls.c.finished_at))).all()
    out = []
    for row in rows:
        result = row.result
        if isinstance(result, str):
            try:
                result = json.loads(result)
            except ValueError:
                result = {"error": result}
        result = result if isinstance(result, dict) else {}
        out.append(Failure(row.name, str(result.get("error_kind") or "refused"), str(result.get("error") or ""),
                           f"{row.turn_id}/{row.step}", result.get(ERROR_SAID)))
    return out


async def last_word(conn: AsyncConnection, task_id: str) -> float:
    """When the creator last spoke to the task: a message read, a failure card answered, a resume."""
    read = (await conn.execute(select(func.max(s.inbox.c.consumed_at)).where(
        s.inbox.c.task_id == task_id, s.inbox.c.source == "creator"))).scalar()
    answered = (await conn.execute(select(func.max(s.gates.c.resolved_at)).where(
        s.gates.c.task_id == task_id, s.gates.c.dedupe_key.like("failure:%")))).scalar()
    resumed = (await conn.execute(select(func.max(s.events.c.at)).where(
        s.events.c.task_id == task_id, s.events.c.type == "task_resume"))).scalar()
    return max(read or 0.0, answered or 0.0, resumed or 0.0)


async def repeated_failure(conn: AsyncConnection, task: Any, turn_id: str) -> tuple[Failure, bool, int] | None:
    """The failure of turn TURN_ID that should end it — (it, whether it stops the task, attempts so far) — or
    None. It stops the task when it repeats a failure (same tool and kind) of an earlier attempt since the
    creator last spoke (a transient kind: the TRANSIENT_LIMIT-th attempt); a transient one backs off instead.
    Failures of earlier turns that were since worked past decide nothing."""
    failures = [f for f in await failures_since(conn, task.id, await last_word(conn, task.id))
                if f.kind not in NOT_FAILURES]
    now = [f for f in failures if f.attempt.startswith(f"{turn_id}/")]
    if not now:
        return None
    counts = attempts(failures)
    for failure in reversed(now):
        if counts[failure.signature] >= (TRANSIENT_LIMIT if failure.kind in TRANSIENT else SAME_FAILURE_LIMIT):
            return failure, True, counts[failure.signature]
    transient = [f for f in now if f.kind in TRANSIENT]
    return (transient[-1], False, counts[transient[-1].signature]) if transient else None


async def failure_verdict(conn: AsyncConnection, task: Any, turn: Any, time_scale: float = 1.0) -> Verdict | None:
    """Stop (with a card) on the same failure twice; back off after a transient one; None when neither."""
    found = await repeated_failure(conn, task, turn.id)
    if found is None:
        return None
    failure, stops, tries = found
    if stops:
        return await stop_on_failure(conn, task, failure, tries)
    delay = min(BACKOFF_SECONDS * 2 ** (tries - 1), BACKOFF_MAX) * time_scale
    return Verdict("active", message("report.retrying", task.language, what=tool_words(task, failure.tool),
                                     error=failure.words(task.language)),
                   retry_after=delay)


def attempts(failures: list[Failure]) -> Counter[tuple[str, str, str]]:
    """How many attempts (distinct steps) failed with each signature."""
    return Counter(signature for signature, _ in {(f.signature, f.attempt) for f in failures})


def tool_words(task: Any, tool: str) -> str:
    try:
        return message(f"doing.{tool}", task.language)
    except KeyError:
        return tool


async def stop_on_failure(conn: AsyncConnection, task: Any, failure: Failure, tries: int) -> Verdict:
    """The task stops repeating itself: failed, with a plain reason, and a card asking how to go on."""
    lang = task.language
    what = tool_words(task, failure.tool)
    error = failure.words(lang)
    error = error if len(error) <= 240 else error[:239] + "…"
    times = message("failure.twice", lang) if tries == 2 else message("failure.times", lang, n=tries)
    reason = message("failure.question", lang, title=task.title, what=what, times=times, error=error)
    words = [message(f"failure.{k}", lang) for k in
             ("question", "retry", "retry_then", "change", "change_then", "stop", "stop_then")]
    at = clock.now()
    await open_gate(conn, task_id=task.id, kind="question", dedupe_key=f"failure:{task.id}:{at:.6f}",
                    question=reason,
                    options=[{"label": words[1], "consequence": words[2]}, {"label": words[3], "consequence": words[4]},
                             {"label": words[5], "consequence": words[6]}],
                    scope={"failure": {"tool": failure.tool, "kind": failure.kind}, "task": task.id,
                           "description": message("gate.this_task", lang)},
                    continues=message("gate.other_tasks", lang))
    await conn.execute(insert(s.events).values(type="task_failed", at=at, task_id=task.id,
                                               data={"reason": reason, "tool": failure.tool, "kind": failure.kind}))
    return Verdict("failed", reason)


async def open_failure_card(conn: AsyncConnection, task_id: str) -> bool:
    return (await conn.execute(select(s.gates.c.id).where(
        s.gates.c.task_id == task_id, s.gates.c.status == "pending",
        s.gates.c.dedupe_key.like("failure:%")).limit(1))).first() is not None


async def close_failure_cards(conn: AsyncConnection, task_id: str) -> int:
    """The creator spoke to the task (a new message): its open failure cards are answered by that and close
    as `expired`. Returns how many closed."""
    result = await conn.execute(update(s.gates).where(
        s.gates.c.task_id == task_id, s.gates.c.status == "pending", s.gates.c.dedupe_key.like("failure:%")).values(
        status="expired", resolved_at=clock.now(), resolved_by="superseded by the creator's message"))
    return result.rowcount or 0


async def one_shot_verdict(conn: AsyncConnection, task: Any, turn: Any) -> Verdict:
    """A lightweight task is done when its turn made something; failed (with the reason) when what it
    ordered failed and nothing came of it."""
    rows = (await conn.execute(select(s.tool_calls.c.status, s.tool_calls.c.result).where(
        s.tool_calls.c.turn_id == turn.id, s.tool_calls.c.side_effect == "paid"))).all()
    if not rows or any(r.status == "done" for r in rows):
        return Verdict("done")
    failures = await failures_since(conn, task.id, turn.created_at)
    if failures and all(f.kind == "declined" for f in failures):
        return Verdict("idle", message("status.spend_declined", task.language))
    error = next((f.words(task.language) for f in reversed(failures) if f.error),
                 message("status.generation_failed", task.language))
    await conn.execute(insert(s.events).values(type="task_failed", at=clock.now(), task_id=task.id,
                                               data={"reason": error}))
    return Verdict("failed", error)


async def decide(conn: AsyncConnection, task: Any, turn: Any, time_scale: float = 1.0) -> Verdict:
    if task.kind == "main":
        return Verdict("idle")
    if task.kind == "lightweight":
        return await one_shot_verdict(conn, task, turn)
    steps = await checklist.items(conn, task.id)
    if not steps:
        return Verdict("idle", message("status.waiting_creator", task.language))
    remaining = [i for i in steps if i.state in checklist.OPEN]
    if not remaining:
        return Verdict("done", message("status.checklist_complete", task.language))
    failed = await failure_verdict(conn, task, turn, time_scale)
    if failed is not None:
        return failed
    progressed = await made_progress(conn, task.id, turn.created_at)
    idle_turns = 0 if progressed else task.idle_turns + 1
    await conn.execute(update(s.tasks).where(s.tasks.c.id == task.id).values(idle_turns=idle_turns))
    if idle_turns >= NO_PROGRESS_LIMIT:
        return Verdict("blocked", message("report.no_progress", task.language, turns=idle_turns))
    head = remaining[0]
    if head.needs_confirmation:
        await checkpoint_gate(conn, task, head)
        return Verdict("waiting_gate", message("report.waiting_review", task.language, step=head.title))
    return Verdict("active", next_turn=True)  # work remains: go on without waiting for "continue"


async def checkpoint_gate(conn: AsyncConnection, task: Any, item: checklist.Item) -> Any:
    """G5: a task at a human checkpoint always gets a card, whether or not its model asked."""
    lang = task.language
    words = [message(f"checkpoint.{k}", lang) for k in ("question", "approve", "approve_then", "changes", "changes_then")]
    return await open_gate(
        conn, task_id=task.id, kind="question", dedupe_key=f"checkpoint:{item.id}",
        question=message("checkpoint.question", lang, title=task.title, step=item.title),
        options=[{"label": words[1], "consequence": words[2]}, {"label": words[3], "consequence": words[4]}],
        scope={"checklist_item": item.id, "task": task.id, "description": message("gate.rest_of_task", lang)},
        continues=message("gate.other_tasks", lang))
