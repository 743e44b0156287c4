"""Fault injection at ledger boundaries (CONTRACTS §3). Free when LOMO_FAULTS is unset."""
from __future__ import annotations

import os
import signal
from collections import Counter

from .errors import LomoError

POINTS = frozenset(
    {"after_decision_commit", "after_tool_started", "after_tool_effect", "after_tool_done", "after_gen_submit",
     "before_wakeup", "during_migration",
     "before_summary_commit", "after_summary_commit",
     "after_forget_commit", "after_node_ordered", "after_node_made"}
)
ACTIONS = frozenset({"crash", "stop", "drop"})


class Faults:
    """Parsed `POINT:ACTION[@N]` rules; `hit(point)` fires the action on the N-th arrival."""

    def __init__(self, spec: str = "") -> None:
        self.rules: dict[str, tuple[str, int]] = {}
        self.seen: Counter[str] = Counter()
        for item in filter(None, (part.strip() for part in spec.split(","))):
            point, _, action = item.partition(":")
            action, _, nth = action.partition("@")
            if point not in POINTS or action not in ACTIONS:
                raise LomoError(f"LOMO_FAULTS item {item!r} is not POINT:ACTION[@N] with a known point and action")
            if action == "drop" and point != "before_wakeup":
                raise LomoError("LOMO_FAULTS: 'drop' only applies to before_wakeup")
            try:
                count = int(nth) if nth else 1
            except ValueError:
                raise LomoError(f"LOMO_FAULTS item {item!r}: N must be an integer") from None
            self.rules[point] = (action, count)

    def hit(self, point: str) -> bool:
        """Reach a fault point. Returns True when the action is `drop` (the caller drops the work)."""
        if not self.rules or point not in self.rules:
            return False
        self.seen[point] += 1
        action, nth = self.rules[point]
        if self.seen[point] != nth:
            return False
        if action == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
            return False
        return action == "drop"
