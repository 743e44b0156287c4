"""The generation-service interface every provider speaks (embedded studio, litellm adapters)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

STATUS_RANK = {"submitting": 0, "queued": 1, "running": 2, "done": 3, "failed": 3, "unknown": 3, "expired": 3,
               "cancelled": 3}
TERMINAL = frozenset({"done", "failed", "unknown", "expired", "cancelled"})
MEDIA_EXT = {"image": "png", "video": "gif", "3d": "gltf", "audio": "wav"}


class ProviderError(Exception):
    """A provider refused or failed. `unknown` means the request may or may not have been accepted."""

    def __init__(self, message: str, *, unknown: bool = False) -> None:
        super().__init__(message)
        self.unknown = unknown


@dataclass(frozen=True)
class JobEvent:
    """A provider's word about a job: monotonic by `seq`; duplicates and stale events are ignored."""

    provider_job_id: str
    seq: int
    status: str  # queued | running | done | failed
    progress: float = 0.0
    error: str | None = None


EventSink = Callable[[JobEvent], Awaitable[None]]


class Provider(Protocol):
    name: str
    local: bool  # runs inside this process (run-once waits for its jobs)
    cancels: bool  # `cancel` really stops the job (else a cancelled job's late result is kept aside)

    def subscribe(self, sink: EventSink) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def submit(self, kind: str, params: dict[str, Any], key: str) -> str: ...

    async def status(self, provider_job_id: str) -> JobEvent: ...

    async def fetch(self, provider_job_id: str) -> tuple[bytes, str]: ...

    async def cancel(self, provider_job_id: str) -> bool: ...
