"""Plan tools for persistent tasks: write the brief and checklist, complete steps with evidence."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ..errors import Said
from ..governance.budget import plan_allowance, spent_today, task_spend
from ..governance.gates import expire_gate, open_gate
from ..language import message
from ..store import schema as s
from ..studio.prices import quote
from ..tasks import checklist, goals
from ..tasks import evidence as steps_evidence
from .registry import Registry, ToolContext, ToolError, obj, tool

STR = {"type": "string"}
PAID = {"generate_image": "image", "generate_video": "video", "generate_3d": "3d", "generate_audio": "audio"}
CHARGED_JOBS = ("submitting", "queued", "running", "done", "unknown")  # ordered and not refunded
STEP = obj({"id": {"type": "string", "description": "an existing step's id, to keep it and its artifacts"},
            "title": {"type": "string", "description": "what the step does, in the creator's language"},
            "tool": {"type": "string", "description": "the tool that does it (e.g. generate_image), if one does"},
            "args": {"type": "object", "description": "that tool's arguments, so the step can be quoted"},
            "needs_confirmation": {"type": "boolean", "description": "true when the creator must review it"}},
           ["title"])


def quotes(steps: list[dict[str, Any]]) -> list[float]:
    """The quote of each paid step of a plan."""
    return [q for q in (_quote(step) for step in steps) if q is not None]


def _quote(step: dict[str, Any]) -> float | None:
    kind = PAID.get(step.get("tool") or "")
    if not kind:
        return None
    args = dict(step.get("args") or {})
    return quote(kind, {"seconds": args.get("seconds")} if kind in ("video", "audio") else {})


async def open_quotes(conn: Any, task_id: str, steps: list[dict[str, Any]], items: list[Any]) -> list[float]:
    """The quotes of the paid steps still to pay for: a re-quote leaves out steps already done (or skipped)
    and steps whose job is already ordered and charged (ITEMS: the revised checklist, by position)."""
    ordered = set()
    for job in (await conn.execute(select(s.jobs.c.params).where(
            s.jobs.c.task_id == task_id, s.jobs.c.status.in_(CHARGED_JOBS)))).all():
        ordered.add((job.params or {}).get("step"))
    by_position = {item.position: item for item in items}
    out = []
    for position, step in enumerate(steps, 1):
        price = _quote(step)
        item = by_position.get(position)
        if price is None or (item is not None and (item.state in ("done", "skipped") or item.id in ordered)):
            continue
        out.append(price)
    return out


async def needs_approval(conn: Any, budget: Any, task_id: str, each: list[float]) -> bool:
    """Whether the plan's paid steps still to pay for would stop at gates without more approved plan budget
    (what an approved plan has left is its allowance less what the task spent)."""
    cost = sum(each)
    if not cost:
        return False
    allowance = await plan_allowance(conn, task_id)
    if allowance and round(allowance - await task_spend(conn, task_id), 4) >= round(cost, 4):
        return False
    return max(each) > budget.free_per_call or await spent_today(conn) + cost > budget.daily_free_cap


async def supersede_plan_gates(conn: Any, task_id: str, keep: str) -> None:
    """A revised plan replaces the question about the previous one (it asks again if it still needs to)."""
    rows = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task_id, s.gates.c.kind == "plan",
                                                     s.gates.c.status == "pending",
                                                     s.gates.c.dedupe_key != keep))).all()
    for row in rows:
        await expire_gate(conn, row, Said("gate_expiry.plan_revised"), Said("gate_expiry.plan_quoted"))


def register(reg: Registry) -> None:
    @tool(reg, "update_plan", "Write or revise the task's brief and checklist. Keep a step's id to keep its "
          "artifacts; paid steps should name their tool and args so the plan can be quoted.",
          obj({"brief": {"type": "string", "description": "the whole brief: goal, constraints, direction"},
               "steps": {"type": "array", "items": STEP, "description": "the whole checklist, in order"}}, []),
          side_effect="write", idempotent=True)
    async def update_plan(ctx: ToolContext, brief: str | None = None, steps: list[dict[str, Any]] | None = None
                          ) -> dict[str, Any]:
        sv = ctx.services
        async with sv.ledger.fenced(ctx.claim) as conn:
            task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == ctx.task_id))).one()
            if task.kind == "lightweight" and steps:  # a one-shot that grew into multi-step work (A2)
                await sv.ledger.promote(conn, ctx.task_id, "grew into a multi-step plan")
            if brief is not None:
                await goals.revise(conn, ctx.task_id, brief=brief, who="agent", why=Said("goal_why.plan_revised"),
                                   message_id=await goals.prompting_message(conn, ctx.task_id, ctx.claim.turn_id,
                                                                            ctx.step))
            result: dict[str, Any] = {}
            if steps is not None:
                try:
                    items = await checklist.revise(conn, ctx.task_id, steps)
                except checklist.PlanError as exc:
                    raise ToolError.said(exc.said_as.key, **exc.said_as.fields) from None
                result["checklist"] = [{"id": i.id, "n": i.position, "title": i.title, "state": i.state}
                                       for i in items]
                each = await open_quotes(conn, ctx.task_id, steps, items)
                cost = round(sum(each), 2)
                result["estimate"] = cost
                await supersede_plan_gates(conn, ctx.task_id, f"plan:{ctx.key}")
                if task.autonomy != "ask" and await needs_approval(conn, sv.budget, ctx.task_id, each):
                    lang = task.language or "en"
                    money = {"amount": f"{cost:.2f}", "currency": sv.budget.currency}
                    rest = len(each) < len(quotes(steps))
                    gate = await open_gate(
                        conn, task_id=ctx.task_id, kind="plan", dedupe_key=f"plan:{ctx.key}",
                        turn_id=ctx.claim.turn_id,
                        question=message("card.plan_question_rest" if rest else "card.plan_question", lang,
                                         title=task.title, steps=len(items), paid=len(each), **money),
                        options=[{"label": message("card.plan_approve", lang, **money),
                                  "consequence": message("card.plan_approve_then", lang)},
                                 {"label": message("card.plan_later", lang),
                                  "consequence": message("card.plan_later_then", lang)}],
                        scope={"budget": cost, "task": ctx.task_id, "blocks": message("card.plan_blocks", lang)},
                        continues=message("card.plan_continues", lang))
                    result["plan_gate"] = gate.id
                    result["note"] = "paid steps wait for the creator to approve the plan; unpaid work can go on"
            await sv.ledger.event(conn, "plan_updated", ctx.task_id, ctx.claim.turn_id,
                                  steps=len(steps or []), brief=brief is not None)
        return result or {"ok": True}

    @tool(reg, "complete_step", "Mark a checklist step done. The runtime checks the result before the step moves: "
          "name the workspace files the step made in `artifacts` (a new version this task wrote, of the kind the "
          "step promised); a step whose job finished, whose file was read or whose question the creator answered "
          "needs no files. A claim nothing shows is refused with what is missing.",
          obj({"step": {"type": "string", "description": "the step's id or number"},
               "evidence": {"type": "string", "description": "what was made or checked, in a few words"},
               "artifacts": {"type": "array", "items": STR, "description": "workspace paths of what the step made"}},
              ["step"]),
          side_effect="write", idempotent=True, kinds=("persistent",))
    async def complete_step(ctx: ToolContext, step: str, evidence: str = "", artifacts: list[str] | None = None
                            ) -> dict[str, Any]:
        sv = ctx.services
        async with sv.ledger.fenced(ctx.claim) as conn:
            item = await checklist.find(conn, ctx.task_id, step)
            if item is None:
                raise ToolError.said("no_step", step=repr(step))
            if item.needs_confirmation:
                raise ToolError.said("step_needs_confirmation", n=item.position)
            if item.state == "done":
                return {"step": item.id, "state": "done", "evidence": item.evidence}
            verdict = await steps_evidence.claim(conn, sv.workspace, ctx.task_id, item.id, artifacts or [],
                                                 note=evidence, turn_id=ctx.claim.turn_id)
        if not verdict.ok:  # the refusal is on the record (committed above); the step did not move
            raise ToolError.said("step_unverified", kind="unverified", n=item.position,
                                 problems=verdict.problems)
        return {"step": item.id, "state": "done", "verified": [src.describe() for src in verdict.sources]}
