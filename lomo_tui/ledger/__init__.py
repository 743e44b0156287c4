"""The step ledger: the one door through which durable state changes (leases, fencing, steps, tool calls,
inbox, task control). It records what happened; what *follows* (the stop check after a turn, calling off a
stopped task's jobs and gates) is the runtime's, handed in as `Reactions` (runtime/reactions.py)."""
from .core import (ACTIVE_TURN, TERMINAL_TASK, Claim, Ledger, Reactions, StartedCall, ensure_turn, now)

__all__ = ["ACTIVE_TURN", "TERMINAL_TASK", "Claim", "Ledger", "Reactions", "StartedCall", "ensure_turn", "now"]
