"""In-process notices for live views (the TUI). The database stays the source of truth."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Notice:
    type: str
    task_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


class Bus:
    """Fan-out of notices to subscribers; a slow subscriber drops old notices, never blocks the runtime."""

    def __init__(self) -> None:
        self._subscribers: list[asyncio.Queue[Notice]] = []

    def subscribe(self, maxsize: int = 1000) -> asyncio.Queue[Notice]:
        queue: asyncio.Queue[Notice] = asyncio.Queue(maxsize)
        self._subscribers.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Notice]) -> None:
        if queue in self._subscribers:
            self._subscribers.remove(queue)

    def publish(self, type: str, task_id: str | None = None, **data: Any) -> None:
        notice = Notice(type, task_id, data)
        for queue in self._subscribers:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(notice)
