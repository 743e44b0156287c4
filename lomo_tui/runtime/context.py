"""The runtime's side of context engineering (lomo_tui.context): a step's prompt built within its
budget, summary segments written under the turn's fence, large tool results kept outside the history,
and the task's summary for the router's index (A6) kept current."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from sqlalchemy import update

from .. import memory
from ..memory import contexts as memory_contexts
from ..context import summaries
from ..context.assemble import OFFLINE_MODELS, Prompt, StepContext, system_prompt, task_summary
from ..context.history import Entry, Segment
from ..context.outputs import tool_message
from ..router.index import refresh_search_text
from ..store import schema as s
from ..base.bus import Notice

if TYPE_CHECKING:
    from ..ledger import Claim
    from .scheduler import Runtime

__all__ = ["Prompt", "TurnContext", "system_prompt", "tool_message"]


class TurnContext(StepContext):
    """A task's StepContext bound to a runtime; with a CLAIM it may write (summaries, the task summary),
    without one (`lomo context`) it only shows what the next step would send."""

    def __init__(self, runtime: "Runtime", task_id: str, claim: "Claim | None" = None) -> None:
        super().__init__(task_id, runtime.registry)
        self.rt = runtime
        self.claim = claim
        self._task_summary: str | None = None
        self._budget_tokens = 0
        self._forgets: int | None = None  # completed forgets when the held summaries were read
        self.recall_timeout = float(runtime.settings.section("memory").get("recall_timeout", memory.RECALL_TIMEOUT))

    async def memory_inputs(self, task: Any, pending: list[str]) -> tuple[str, list[str], list[str]]:
        """What memory gives this step (E1, F4): the profile snapshot for the stable prefix, a few recalled
        memories, and the memory versions both came from; the messages of steps that carried a since-forgotten
        memory leave the history."""
        profile, used = await memory.profile_with_versions(self.rt.db)
        query = " ".join([task.title or "", task.brief or "", *pending])
        models = getattr(self.rt, "memory_models", None)
        recalled = await memory.recall_for_step(self.rt.db, task.id, query, timeout=self.recall_timeout,
                                                vectors=models.vectors if models is not None else None)
        async with self.rt.db.read() as conn:
            self.history.exclude(await memory.excluded_message_ids(self.rt.db, task.id, conn=conn))
            forgets = await memory.forgets_done(conn)
            if self._forgets is not None and forgets != self._forgets:  # a forget may have rewritten a segment
                await self.history.reread_segments(conn)
            self._forgets = forgets
        return profile, [r.render().removeprefix("- ") for r in recalled], used + [r.version_id for r in recalled]

    async def build(self, task: Any, extra: list[str], hints: dict[str, Any], pending: list[str], *,
                    force_summary: bool = False, profile: str = "", recall: Iterable[str] = ()) -> Prompt:
        if force_summary:
            self.scale = max(0.25, self.scale * 0.5)
        budget = await self.resolve_budget(self.rt.model, self.rt.settings.section("context"))
        self._budget_tokens = budget.tokens
        checklist = hints.get("checklist") or []
        prompt = await self.assemble(task, extra, checklist, pending, budget, self._summarise, profile=profile,
                                     recall=recall, force_summary=force_summary)
        if self.claim is not None and task.kind != "main":
            await self._keep_task_summary(task, checklist)
        return prompt

    async def _summarise(self, span: list[Entry]) -> Segment | None:
        text, method, call, model = None, "extractive", None, None
        async with self.rt.db.read() as conn:  # nothing a forget took out of use goes into a summary (F4)
            usable = await memory_contexts.usable(conn, self.task_id, span)
        if not usable:
            text = summaries.header(span[0].id, span[-1].id, len(span)) + "\n" + memory_contexts.GONE
        elif self.claim is not None and self.rt.model.name not in OFFLINE_MODELS:
            made = await summaries.model_summary(self.rt.model, usable, self._budget_tokens // 2)
            if made is not None:
                (text, call), method = made, "model"
                model = call["model"]
        if text is None:
            text = summaries.extractive(usable)
        if usable and usable is not span:  # the segment still covers (and names) the whole span
            body = text.split("\n", 1)
            text = summaries.header(span[0].id, span[-1].id, len(span)) + ("\n" + body[1] if len(body) > 1 else "")
        if self.claim is None:  # a preview: what the next step would write
            return Segment(-1 - len(self.history.segments), span[0].id, span[-1].id, len(span), text, method)
        self.rt.faults.hit("before_summary_commit")
        async with self.rt.ledger.fenced(self.claim, durable=False) as conn:  # lost to a power cut: redone
            segment = await summaries.store(conn, self.task_id, span, text, method, model, call,
                                            turn_id=self.claim.turn_id)
        self.rt.faults.hit("after_summary_commit")
        self.rt.bus.publish(Notice.CONTEXT_SUMMARISED, self.task_id, from_message=segment.from_message,
                            to_message=segment.to_message)
        return segment

    async def _keep_task_summary(self, task: Any, checklist: list[dict[str, Any]]) -> None:
        """Rewrite tasks.summary when its checklist or summaries moved it (before either exists the index's
        title and goal already say all it would): one small commit per change, none per step."""
        if not checklist and not self.history.segments:
            return
        digest = task_summary(task, checklist, self.history.segments)
        if digest == (self._task_summary if self._task_summary is not None else (task.summary or "")):
            return
        async with self.rt.ledger.fenced(self.claim, durable=False) as conn:
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task.id).values(summary=digest))
            await refresh_search_text(conn, task.id)
        self._task_summary = digest


def compact_result(result: Any, key: str, limit: int | None) -> str:
    """A tool result as the history keeps it (a stand-in with a handle when it is long)."""
    from ..context.budget import LARGE_OUTPUT_CHARS

    return tool_message(result, key, limit or LARGE_OUTPUT_CHARS)
