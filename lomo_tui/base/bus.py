"""In-process notices for live views (the TUI). The database stays the source of truth.

Every notice type is a member of `Notice`: publishers pass a member and live views listen for
members, so a view cannot wait for a name nobody publishes.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Notice(StrEnum):
    """The kinds of notice the runtime publishes (a str: `Notice.JOB_DONE == "job_done"`)."""

    MESSAGE_DELIVERED = "message_delivered"
    MESSAGE_FAILED = "message_failed"  # the main thread could not answer this message (data: message_id, reason)
    TURN_STARTED = "turn_started"
    THINKING = "thinking"
    TOKEN = "token"
    STEP_COMMITTED = "step_committed"
    TOOL_FINISHED = "tool_finished"
    TURN_SUSPENDED = "turn_suspended"
    TURN_COMPLETED = "turn_completed"
    TURN_FAILED = "turn_failed"
    TURN_ENDED = "turn_ended"
    JOB_PROGRESS = "job_progress"
    JOB_DONE = "job_done"  # settled: done (data: path) or failed/expired/unknown (data: status, error)
    JOB_CANCELLED = "job_cancelled"
    OBJECT_CHANGED = "object_changed"
    DB_CHANGED = "db_changed"
    CONTEXT_SUMMARISED = "context_summarised"  # a span of a task's history became a summary segment
    DISK_FULL = "disk_full"  # a write hit a full disk; work waits (data: message)
    DISK_SPACE_BACK = "disk_space_back"  # the disk has room again; waiting turns go on (data: turns)


@dataclass(frozen=True)
class Published:
    """One notice as a subscriber receives it."""

    type: Notice
    task_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


class Bus:
    """Fan-out of notices to subscribers; a slow subscriber drops old notices, never blocks the runtime."""

    def __init__(self) -> None:
        self._subscribers: list[asyncio.Queue[Published]] = []

    def subscribe(self, maxsize: int = 1000) -> asyncio.Queue[Published]:
        queue: asyncio.Queue[Published] = asyncio.Queue(maxsize)
        self._subscribers.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Published]) -> None:
        if queue in self._subscribers:
            self._subscribers.remove(queue)

    def publish(self, type: Notice | str, task_id: str | None = None, **data: Any) -> None:
        """Send a notice to every subscriber. TYPE must be a `Notice` (or its value): an unknown name
        raises ValueError at the publisher, where the mistake is."""
        notice = Published(Notice(type), task_id, data)
        for queue in self._subscribers:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(notice)
