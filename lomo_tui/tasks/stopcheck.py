"""The stop check after every turn (G2), owned by the runtime — the model ending its reply is not the
task ending. Meaningful progress (G3) is a new artifact, a completed step with evidence, or a newly
submitted job; rewording the plan or flipping step states is not.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update

from ..governance.gates import open_gate
from ..store import schema as s
from . import checklist

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

NO_PROGRESS_LIMIT = 3
# The checkpoint card in the task's language (A10): question, approve, its consequence, changes, its consequence.
CHECKPOINT_WORDS = {
    "en": ("“{title}”: {step} — ready to continue?", "Looks good — continue",
           "this step is marked done and the task goes on", "Needs changes", "the task waits for your notes"),
    "zh": ("“{title}”：{step} —— 可以继续吗？", "没问题，继续", "这一步标记为完成，任务继续", "需要修改", "任务等待你的意见"),
    "ja": ("「{title}」：{step} — 続けてよいですか？", "問題なし、続ける", "このステップを完了にしてタスクを続けます",
           "直してほしい", "タスクはあなたのコメントを待ちます"),
    "ru": ("«{title}»: {step} — продолжаем?", "Всё хорошо — продолжай", "шаг отмечен выполненным, задача идёт дальше",
           "Нужны правки", "задача ждёт ваших замечаний"),
}


@dataclass(frozen=True)
class Verdict:
    status: str  # the task's status after this turn
    reason: str = ""
    next_turn: bool = False  # schedule another turn now (no "continue" needed)


async def made_progress(conn: AsyncConnection, task_id: str, since: float) -> bool:
    versions = (await conn.execute(select(func.count()).select_from(s.object_versions).where(
        s.object_versions.c.task_id == task_id, s.object_versions.c.author == "agent",
        s.object_versions.c.created_at >= since))).scalar()
    steps = (await conn.execute(select(func.count()).select_from(s.checklist).where(
        s.checklist.c.task_id == task_id, s.checklist.c.state == "done", s.checklist.c.done_at >= since,
        s.checklist.c.evidence != ""))).scalar()
    jobs = (await conn.execute(select(func.count()).select_from(s.jobs).where(
        s.jobs.c.task_id == task_id, s.jobs.c.created_at >= since))).scalar()
    return bool(versions or steps or jobs)


async def decide(conn: AsyncConnection, task: Any, turn: Any) -> Verdict:
    if task.kind == "main":
        return Verdict("idle")
    if task.kind == "lightweight":
        return Verdict("done")
    steps = await checklist.items(conn, task.id)
    if not steps:
        return Verdict("idle", "waiting for the creator")
    remaining = [i for i in steps if i.state in checklist.OPEN]
    if not remaining:
        return Verdict("done", "checklist complete")
    progressed = await made_progress(conn, task.id, turn.created_at)
    idle_turns = 0 if progressed else task.idle_turns + 1
    await conn.execute(update(s.tasks).where(s.tasks.c.id == task.id).values(idle_turns=idle_turns))
    if idle_turns >= NO_PROGRESS_LIMIT:
        return Verdict("blocked", f"no meaningful progress in {idle_turns} turns; tell me how to go on")
    head = remaining[0]
    if head.needs_confirmation:
        await checkpoint_gate(conn, task, head)
        return Verdict("waiting_gate", f"waiting for your review: {head.title}")
    return Verdict("active", next_turn=True)  # work remains: go on without waiting for "continue"


async def checkpoint_gate(conn: AsyncConnection, task: Any, item: checklist.Item) -> Any:
    """G5: a task at a human checkpoint always gets a card, whether or not its model asked."""
    words = CHECKPOINT_WORDS.get(task.language, CHECKPOINT_WORDS["en"])
    return await open_gate(
        conn, task_id=task.id, kind="question", dedupe_key=f"checkpoint:{item.id}",
        question=words[0].format(title=task.title, step=item.title),
        options=[{"label": words[1], "consequence": words[2]}, {"label": words[3], "consequence": words[4]}],
        scope={"checklist_item": item.id, "task": task.id, "description": "the rest of this task"},
        continues="other tasks")


async def on_checkpoint_resolved(conn: AsyncConnection, gate: Any, approved: bool) -> str | None:
    """After a checkpoint gate: approval completes the step and returns the task id to continue."""
    scope = gate.scope or {}
    item_id = scope.get("checklist_item")
    if not item_id:
        return None
    if not approved:
        await conn.execute(update(s.tasks).where(s.tasks.c.id == gate.task_id).values(
            status="idle", status_reason="the creator asked for changes", updated_at=time.time()))
        return None
    await checklist.complete(conn, item_id, evidence=f"approved by {gate.resolved_by or 'the creator'}")
    return gate.task_id
