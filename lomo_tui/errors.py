"""Errors the creator sees: each says what happened and what to do."""
from __future__ import annotations


class LomoError(Exception):
    """A failure with a message fit for the creator (no traceback)."""


class UnknownId(LomoError):
    """An id that names nothing (task, gate, message)."""


class UsageError(LomoError):
    """The command line asked for something that cannot be done as asked."""


class StaleWrite(LomoError):
    """A write refused by fencing: another worker owns this turn now (or it was stopped)."""

    def __init__(self, turn_id: str, epoch: int, why: str = "epoch moved on") -> None:
        super().__init__(f"write for turn {turn_id} at epoch {epoch} refused: {why}")
        self.turn_id = turn_id
        self.epoch = epoch
        self.why = why
