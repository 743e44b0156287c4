"""Acting on a repair or replan decision (DESIGN J2, J3; #16 §4): the runtime does it, not a model call.

`decision.decide` names the action; `act` does the runtime's part in the caller's transaction and returns what
follows:

- **repair** — done steps whose evidence no longer holds (a result deleted, saved over with something broken or
  of the wrong kind, an answer that expired) are checked again at once (`evidence.recheck`): what still checks
  out stays done on new evidence, the rest is re-opened with the reason (`step_reopened`, on the card). The
  next turn's context tail says exactly which steps to make again (`context`), so no model call is spent
  finding out.
- **replan** — the creator changed the goal after the plan was written: the runtime records which steps were
  planned for the old goal (`plan_outdated`; each reads as outdated on the checklist and the card) and the next
  turn is told to rebuild the plan, with the old and the new goal.

Each is recorded as `run_decided` (stage: where; action), followed by what the runtime did (`step_reopened` or
`evidence_revalidated` with `by: run_decided:STAGE`; `plan_outdated`). `change_goal` is the
creator's goal change (`lomo task goal`): a new goal version, then the same decision, in one transaction.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from .. import clock
from ..errors import Said
from ..governance.gates import expire_gate
from ..language import message
from ..ledger import Ledger, ensure_turn
from ..store import schema as s
from ..tasks import checklist, evidence, goals, replan
from . import decision

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

ACTS = ("repair", "replan")
GOES_ON = ("run", "repair", "replan")  # decisions after which the task's next turn runs now


async def act(conn: AsyncConnection, task_id: str, turn_id: str | None, chosen: decision.Decision, *, stage: str,
              root: Path | None = None) -> decision.Decision:
    """Do the runtime's part of a repair or replan decision and record it; returns the decision that follows
    (recorded too when it is not to go on: a repair that found every result still good goes quiet)."""
    if chosen.action == "repair":
        await decision.record(conn, task_id, turn_id, chosen, stage=stage)  # then what it did: step_reopened /
        await evidence.recheck(conn, root, task_id, by=f"run_decided:{stage}")  # evidence_revalidated events
        state = dataclasses.replace(await decision.read_state(conn, task_id), status="active")
        after = decision.decide(state)
        if after.action not in GOES_ON:
            await decision.record(conn, task_id, turn_id, after, stage=stage)
        return after
    if chosen.action == "replan":
        change = await replan.pending(conn, task_id)
        await decision.record(conn, task_id, turn_id, chosen, stage=stage, outcome={
            "outdated": [i.id for i in await checklist.items(conn, task_id)],
            "goal_version": change.version if change else None})
        await replan.mark(conn, task_id, turn_id, stage=stage)
    return chosen


async def told(conn: AsyncConnection, task_id: str, turn_id: str) -> bool:
    """Whether TURN_ID already asked the model with the replan instruction for the pending goal change (then a
    turn that ends without rebuilding the plan is not sent round again: the stop check settles it)."""
    change = await replan.pending(conn, task_id)
    if change is None:
        return False
    marked = (await conn.execute(select(s.events.c.at, s.events.c.data).where(
        s.events.c.task_id == task_id, s.events.c.type == "plan_outdated"))).all()
    at = min((r.at for r in marked if (r.data or {}).get("goal_version") == change.version), default=None)
    if at is None:
        return False
    asked = (await conn.execute(select(s.model_calls.c.id).where(
        s.model_calls.c.turn_id == turn_id, s.model_calls.c.created_at >= at).limit(1))).first()
    return asked is not None


async def context(conn: AsyncConnection, task_id: str, steps: list[checklist.Item] | None = None
                  ) -> tuple[list[str], dict[str, Any]]:
    """The context tail's repair and replan sections for the task's next step, and the matching model hints
    (`repair`: the re-opened steps; `replan`: the old and the new goal). STEPS: the checklist, if read already."""
    lines: list[str] = []
    hints: dict[str, Any] = {}
    change = await replan.pending(conn, task_id)
    if change is not None:
        lines.append(replan.instruction(change))
        hints["replan"] = change.to_dict()
    steps = steps if steps is not None else await checklist.items(conn, task_id)
    broken = [i for i in steps if i.state in checklist.OPEN and i.evidence.startswith(checklist.REOPENED)]
    if broken and change is None:
        rows = [f"- step {i.position} “{i.title}” (id {i.id}): {i.evidence}"
                + (f" — call {i.tool} with the step's args and step=\"{i.id}\"" if i.tool else "") for i in broken]
        lines.append("Repair: the runtime re-opened these steps because what showed them done no longer holds. "
                     "Make or check only these again; the other done steps stand:\n" + "\n".join(rows))
        gone = await _deleted_results(conn, task_id, [i.id for i in broken])
        hints["repair"] = [{"step": i.id, "n": i.position, "why": i.evidence.removeprefix(checklist.REOPENED).strip(),
                            "tool": i.tool, "deleted": gone.get(i.id, [])} for i in broken]
    return lines, hints


async def sync_results(workspace: Any, task_id: str | None) -> list[str]:
    """Record what happened on disk to the files TASK_ID's done steps showed (deleted, or a different size) before
    a decision reads them: a process without the live watcher (`lomo approve`) would otherwise decide on the
    database's older look. A stat per file; returns the paths it recorded."""
    if not task_id:
        return []
    async with workspace.db.read() as conn:
        rows = (await conn.execute(select(s.objects.c.path, s.objects.c.size).distinct().join(
            s.checklist_links, s.checklist_links.c.object_id == s.objects.c.id).join(
            s.checklist, s.checklist.c.id == s.checklist_links.c.item_id).where(
            s.checklist.c.task_id == task_id, s.checklist.c.state == "done",
            s.objects.c.deleted.is_(False)))).all()
    changed = []
    for row in rows:
        path = workspace.root / row.path
        gone = not path.is_file()
        if gone or path.stat().st_size != row.size:
            await workspace.observe(row.path, deleted=gone)
            changed.append(row.path)
    return changed


async def _deleted_results(conn: AsyncConnection, task_id: str, items: list[str]) -> dict[str, list[str]]:
    """Per re-opened step, the files it had made that are deleted now (a repair may make them at the same path)."""
    rows = (await conn.execute(select(s.checklist_links.c.item_id, s.objects.c.path).join(
        s.objects, s.objects.c.id == s.checklist_links.c.object_id).where(
        s.checklist_links.c.item_id.in_(items), s.objects.c.deleted.is_(True)))).all()
    live = set((await conn.execute(select(s.objects.c.path).where(
        s.objects.c.path.in_([r.path for r in rows]), s.objects.c.deleted.is_(False)))).scalars()) if rows else set()
    out: dict[str, list[str]] = {}
    for row in rows:
        if row.path not in live:  # nothing has taken the name since
            out.setdefault(row.item_id, []).append(row.path)
    return out


async def change_goal(conn: AsyncConnection, task_id: str, *, goal: str | None, brief: str | None, who: str,
                      why: str | Said, root: Path | None = None) -> dict[str, Any]:
    """The creator changes a task's goal (and/or brief): a goal version, the checkpoint cards that asked about the
    old plan expire, and the runtime decides at once (stage `goal_changed`): a planned task is marked for a
    replan and its next turn queued; a paused or stopped one only records it. Returns what happened."""
    task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).first()
    if task is None:
        raise LookupError(task_id)
    version = await goals.revise(conn, task_id, goal=goal, brief=brief, who=who, why=why)
    if version is None:
        return {"id": task_id, "version": None, "action": None}
    await Ledger.event(conn, "goal_changed", task_id, version=version, who=who,
                       why=why.text("en") if isinstance(why, Said) else why)
    for gate in (await conn.execute(select(s.gates).where(
            s.gates.c.task_id == task_id, s.gates.c.status == "pending"))).all():
        if (gate.scope or {}).get("checklist_item"):  # a review of work planned for the old goal
            await expire_gate(conn, gate, Said("gate_expiry.goal_changed"), Said("gate_expiry.replanned"))
    state = await decision.read_state(conn, task_id)
    runs = task.kind == "persistent" and task.status not in ("paused", "stopped") and not task.archived
    if runs:
        state = dataclasses.replace(state, status="active")
    chosen = decision.decide(state)
    if chosen.action in ACTS:
        chosen = await act(conn, task_id, None, chosen, stage="goal_changed", root=root)
    else:
        await decision.record(conn, task_id, None, chosen, stage="goal_changed")
    if runs and chosen.action in GOES_ON:  # (not planned yet: the next message plans for the new goal)
        await ensure_turn(conn, task_id)
        await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
            status="active", status_reason=message("status.replanning", task.language or "en", version=version),
            updated_at=clock.now()))
    return {"id": task_id, "version": version, "action": chosen.action, "reason": chosen.reason,
            "said": chosen.said}  # the reason as catalogue text (the CLI words it for the creator)
