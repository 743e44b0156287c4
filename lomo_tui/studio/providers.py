"""The generation-service interface every provider speaks (embedded studio, litellm adapters)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

from ..errors import Said

STATUS_RANK = {"submitting": 0, "queued": 1, "running": 2, "done": 3, "failed": 3, "unknown": 3, "expired": 3,
               "cancelled": 3}
TERMINAL = frozenset({"done", "failed", "unknown", "expired", "cancelled"})
MEDIA_EXT = {"image": "png", "video": "gif", "3d": "gltf", "audio": "wav"}


def said(key: str, **fields: Any) -> Said:
    """A job's error by its catalogue key in `[job]` (what became of a generation job)."""
    return Said(f"job.{key}", fields)


def kind_said(kind: str) -> Said | str:
    """A generation's KIND as the catalogue says it (`tool_error.kind_*`; an unknown kind as it is)."""
    return Said(f"tool_error.kind_{kind}") if kind in MEDIA_EXT else kind


def split_error(error: str | Said | None) -> tuple[str | None, Said | None]:
    """A job's ERROR as (its English, its catalogue form or None)."""
    return (error.text("en"), error) if isinstance(error, Said) else (error, None)


class ProviderError(Exception):
    """A provider refused or failed. `unknown` means the request may or may not have been accepted."""

    def __init__(self, message: str | Said, *, unknown: bool = False) -> None:
        said = message if isinstance(message, Said) else None  # the creator's wording (catalogue `job.*`)
        super().__init__(said.text("en") if said is not None else message)
        self.unknown = unknown
        self.said_as = said

    @property
    def words(self) -> str | Said:
        """This failure as the job's error keeps it: its catalogue form, else its English."""
        return self.said_as if self.said_as is not None else str(self)


@dataclass(frozen=True)
class JobEvent:
    """A provider's word about a job: monotonic by `seq`; duplicates and stale events are ignored."""

    provider_job_id: str
    seq: int
    status: str  # queued | running | done | failed
    progress: float = 0.0
    error: str | None = None
    said: Said | None = None  # the error as catalogue text (`error` is its English)


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


class WithEmbeddedFallback:
    """A remote provider for the kinds it makes, the embedded studio for the rest (3D through litellm).

    Jobs keep the remote's provider name; the embedded studio's ids (`emb-…`) say which side owns a job.
    Run-once waits for the embedded side's jobs (`settling`), as it does for the embedded studio alone."""

    local = False

    def __init__(self, remote: Any, embedded: Any) -> None:
        self.remote, self.embedded = remote, embedded
        self.name = remote.name
        self.remote_kinds = frozenset(getattr(remote, "models", {}))
        self._embedded_open: set[str] = set()

    @property
    def image_references(self) -> bool:
        """Whether the remote image model takes reference images (see LiteLLMStudio)."""
        return bool(getattr(self.remote, "image_references", False))

    @property
    def models(self) -> dict[str, Any]:
        return dict(getattr(self.remote, "models", {}))

    def _owner(self, provider_job_id: str) -> Any:
        return self.embedded if provider_job_id.startswith("emb-") else self.remote

    def subscribe(self, sink: EventSink) -> None:
        self.remote.subscribe(sink)
        self.embedded.subscribe(sink)

    async def start(self) -> None:
        await self.embedded.start()
        await self.remote.start()

    async def stop(self) -> None:
        await self.remote.stop()
        await self.embedded.stop()

    async def submit(self, kind: str, params: dict[str, Any], key: str) -> str:
        if kind in self.remote_kinds:
            return await self.remote.submit(kind, params, key)
        job_id = await self.embedded.submit(kind, params, key)
        self._embedded_open.add(job_id)
        return job_id

    async def status(self, provider_job_id: str) -> JobEvent:
        return await self._owner(provider_job_id).status(provider_job_id)

    async def fetch(self, provider_job_id: str) -> tuple[bytes, str]:
        return await self._owner(provider_job_id).fetch(provider_job_id)

    async def cancel(self, provider_job_id: str) -> bool:
        return await self._owner(provider_job_id).cancel(provider_job_id)

    def discard(self, provider_job_id: str) -> None:
        self._embedded_open.discard(provider_job_id)
        discard = getattr(self._owner(provider_job_id), "discard", None)
        if discard is not None:
            discard(provider_job_id)

    def resume(self, provider_job_id: str, kind: str, params: dict[str, Any]) -> None:
        if provider_job_id.startswith("emb-"):
            self._embedded_open.add(provider_job_id)
        resume = getattr(self._owner(provider_job_id), "resume", None)
        if resume is not None:
            resume(provider_job_id, kind, params)

    def settling(self) -> bool:
        settling = getattr(self.remote, "settling", None)
        return bool(self._embedded_open) or bool(settling and settling())


def choose_provider(settings: Any) -> Provider:
    """The provider `[studio] provider` names: the embedded studio (default), or litellm with the embedded
    studio for what litellm cannot make (3D)."""
    from .embedded import EmbeddedStudio

    spool = settings.workspace / ".lomo" / "studio"
    embedded = EmbeddedStudio(spool, time_scale=settings.time_scale, faults=settings.studio_faults)
    if settings.section("studio").get("provider") == "litellm":
        from .remote import LiteLLMStudio

        return WithEmbeddedFallback(LiteLLMStudio.from_settings(settings), embedded)
    return embedded
