"""The first phases of a bounded verified transition (DESIGN J4): read → decide → claim, as events.

A persistent task's step that orders work on its checklist is one transition attempt. Before the model is
asked, `read` re-validates the task's stale evidence (J2: nothing acts on evidence that no longer holds) and
notes what the step reads: the goal revision, the checklist's open steps. After the decision commits,
`decided` records that note, what was decided and which steps it claims (the steps its calls name), under
the turn's epoch — only for a decision that claims steps, so a plain step costs no extra write. The later phases — execute, validate, write back, account — are written by `tasks.evidence` when a
result is judged. Main-thread and one-shot turns are not checklist transitions and record none of this.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from ..store import schema as s
from . import checklist, evidence

if TYPE_CHECKING:
    from ..ledger import Claim
    from ..runtime.scheduler import Runtime

STEP_ARG = "step"  # the argument naming the checklist step a call works on (generate_*, complete_step)


@dataclass(frozen=True)
class Seen:
    """What a step read before deciding: the goal revision and the checklist as it stood."""

    goal_version: int | None
    open: tuple[str, ...]
    state: str
    revalidated: tuple[dict[str, Any], ...]


async def read(rt: Runtime, claim: Claim, step: int) -> Seen | None:
    """READ: re-validate stale evidence, then note the state this step decides on (None: not a checklist task).
    Nothing is written unless evidence went stale: the note is recorded with the decision that claims work."""
    async with rt.db.read() as conn:
        kind = (await conn.execute(select(s.tasks.c.kind).where(s.tasks.c.id == claim.task_id))).scalar()
        if kind != "persistent":
            return None
        stale = await evidence.stale(conn, claim.task_id)
    changed = await evidence.revalidate(rt.db, rt.workspace.root, claim.task_id) if stale else []
    async with rt.db.read() as conn:
        items = await checklist.items(conn, claim.task_id)
        if not items:
            return None
        goal = (await conn.execute(select(func.max(s.task_goal_versions.c.version)).where(
            s.task_goal_versions.c.task_id == claim.task_id))).scalar()
    state = hashlib.sha1("|".join(f"{i.id}:{i.state}" for i in items).encode()).hexdigest()[:12]
    return Seen(goal, tuple(i.id for i in items if i.state in checklist.OPEN), state, tuple(changed))


async def decided(rt: Runtime, claim: Claim, step: int, decision: dict[str, Any], seen: Seen | None) -> None:
    """DECIDE and CLAIM: when the step's calls work on checklist steps (they name one), record what it read,
    what it decided and which steps it claims, under the turn's epoch — one write, after the decision's."""
    calls = decision.get("tool_calls") or []
    named = [str(c["arguments"][STEP_ARG]) for c in calls
             if isinstance(c.get("arguments"), dict) and c["arguments"].get(STEP_ARG) is not None]
    if seen is None or not named:
        return
    async with rt.db.read() as conn:
        claimed = []
        for ref in dict.fromkeys(named):
            item = await checklist.find(conn, claim.task_id, ref)
            if item is not None:
                claimed.append(item.id)
    async with rt.ledger.fenced(claim) as conn:
        await rt.ledger.event(conn, "transition_read", claim.task_id, claim.turn_id, step=step,
                              goal_version=seen.goal_version, open=list(seen.open), state=seen.state,
                              revalidated=list(seen.revalidated))
        await rt.ledger.event(conn, "transition_decided", claim.task_id, claim.turn_id, step=step,
                              calls=[c.get("name") for c in calls])
        await rt.ledger.event(conn, "transition_claimed", claim.task_id, claim.turn_id, step=step,
                              items=claimed, epoch=claim.epoch, owner=claim.owner)
