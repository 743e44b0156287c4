"""Real generation providers through litellm: images, videos and speech (there is no 3D endpoint).

- Images and speech finish inside `submit`: the bytes go to the spool (`<workspace>/.lomo/studio/`)
  under a job id minted here (`img-…`/`aud-…`, derived from the idempotency key), and "queued" then
  "done" are announced right after — and announced again, with the same seq, until the service
  takes the result (`discard`), because the service learns the id only when `submit` returns.
- Videos return the provider's id at once (the service persists it); a background loop polls
  `avideo_status` every `poll_seconds`, reports progress, downloads `avideo_content` into the spool
  on completion and then reports "done". Provider status words are normalised in `STATUS_WORDS`.
- An event's seq is a function of its state (status, progress), so a fresh instance after a
  restart numbers events exactly as the old one did: the service's "seq must grow" rule keeps working.
  `status(id)` of a video this instance never saw asks the provider; `fetch(id)` downloads it.
- Calls pass `timeout=` and `max_retries=0`; nothing is retried inside `submit` (orders are not
  idempotent everywhere). A timeout or a connection that broke after the request went out makes an
  *unknown* outcome (`ProviderError(unknown=True)`; the service never resubmits it); a refused
  connection or a 4xx is a plain failure. Polls and downloads that fail transiently are retried by
  the loop with backoff. No message carries the API key.
"""
from __future__ import annotations

import asyncio
import base64
import fnmatch
import hashlib
import logging
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from ..models.remote import caused_by, connection_kinds, Endpoint, timeout_kinds, is_loaded, preload
from ..redact import redact
from ..workspace.files import atomic_write
from ..errors import Said
from .providers import STATUS_RANK, TERMINAL, EventSink, JobEvent, ProviderError, kind_said, said, split_error

log = logging.getLogger("lomo.studio")

SERVICE_KEYS = frozenset({"provider", "deadline_seconds"})  # read by the generation service, not here
CONFIG_KEYS = frozenset({"image_model", "video_model", "speech_model", "voice", "api_base", "api_key", "timeout",
                         "poll_seconds", "image_sizes", "video_sizes", "video_durations", "audio_format",
                         "image_references"})
REFERENCES_FILE = Path(__file__).with_name("data") / "image_references.toml"
NO_3D = "no 3D endpoint through litellm; use the embedded studio for 3D"  # the English of `job.no_3d`
ACTIONS = {"making the image": "doing_image", "making the audio": "doing_audio", "ordering the video": "doing_order",
           "checking the video": "doing_check", "downloading the video": "doing_download"}  # `job.doing_*`
STATUS_WORDS: dict[str, str] = {
    **dict.fromkeys(("queued", "pending", "submitted", "created", "waiting", "not_started", "scheduled",
                     "starting", "accepted"), "queued"),
    **dict.fromkeys(("in_progress", "processing", "running", "generating", "started", "active", "rendering",
                     "working"), "running"),
    **dict.fromkeys(("completed", "complete", "succeeded", "success", "successful", "done", "finished",
                     "ready"), "done"),
    **dict.fromkeys(("failed", "failure", "error", "errored", "rejected", "expired", "timed_out", "timeout",
                     "moderated", "blocked"), "failed"),
    **dict.fromkeys(("cancelled", "canceled", "aborted"), "cancelled"),
}
WAV_PROVIDERS = frozenset({"openai", "azure"})  # providers whose speech endpoint takes response_format="wav"
ANNOUNCE_DELAYS = (0.02, 0.25, 1.0, 3.0, 10.0, 30.0)  # (re)deliveries of a finished job until discarded
POLL_BACKOFF_CAP = 60.0
SUBMIT_UNKNOWN_STATUS = frozenset({408, 502, 504})  # a proxy/gateway lost the answer: maybe accepted
_UNKNOWN_WORDS: set[str] = set()


class StudioCallError(ProviderError):
    """A failed provider call; `retryable` tells the poll loop whether trying again may help."""

    def __init__(self, message: str | Said, *, unknown: bool = False, retryable: bool = False,
                 status: int | None = None) -> None:
        super().__init__(message, unknown=unknown)
        self.retryable = retryable
        self.status = status


def event_seq(status: str, progress: float) -> int:
    """The seq of a job state: grows with the state, equal for equal states (across restarts too)."""
    if status == "queued":
        return 1000
    if status == "running":
        return 2000 + round(min(max(progress, 0.0), 1.0) * 998)
    return 3999


def normalise(raw: Any) -> tuple[str, float, Said | None]:
    """(status, progress 0..1, error) from a provider's video object (OpenAI, Veo, … words)."""
    word = str(_field(raw, "status") or "").strip().lower().replace("-", "_").replace(" ", "_")
    status = STATUS_WORDS.get(word)
    if status is None:
        if word not in _UNKNOWN_WORDS:
            _UNKNOWN_WORDS.add(word)
            log.warning("video status word %r is not known; treating it as running", word)
        status = "running"
    try:
        progress = float(_field(raw, "progress") or 0.0)
    except (TypeError, ValueError):
        progress = 0.0
    progress = min(max(progress / 100.0 if progress > 1.0 else progress, 0.0), 1.0)
    if status == "done":
        progress = 1.0
    error = None
    if status in ("failed", "cancelled"):
        detail = _field(raw, "error")
        message = (_field(detail, "message") or _field(detail, "code")) if detail else None
        error = said("provider_reported_detail" if message else "provider_reported", word=word or status,
                     detail=str(message or ""))
    return status, progress, error


@dataclass
class _Job:
    id: str
    kind: str
    status: str = "queued"
    progress: float = 0.0
    error: str | None = None
    said: Said | None = None  # the error as catalogue text
    result: Path | None = None
    published: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def event(self) -> JobEvent:
        return JobEvent(self.id, event_seq(self.status, self.progress), self.status, self.progress, self.error,
                        self.said)

    def advance(self, status: str, progress: float, error: str | Said | None = None) -> bool:
        """Move to a later state (never back, never out of a terminal one); True when it changed."""
        if self.status in TERMINAL:
            return False
        rank, current = STATUS_RANK.get(status, 0), STATUS_RANK.get(self.status, 0)
        if rank < current or (rank == current and progress <= self.progress):
            return False
        self.status, (self.error, self.said) = status, split_error(error)
        self.progress = max(progress, self.progress)
        return True


class LiteLLMStudio:
    """A `Provider` for real services through litellm, configured by a dict (the `[studio]` section)."""

    name = "litellm"
    local = False
    cancels = False  # litellm cannot cancel at the provider: a late result is kept aside (Studio._keep_aside)

    def __init__(self, config: Mapping[str, Any], spool: Path) -> None:
        unknown = sorted(set(config) - CONFIG_KEYS)
        if unknown:
            raise ValueError(f"[studio]: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(CONFIG_KEYS))}")
        self.models = {"image": config.get("image_model") or None, "video": config.get("video_model") or None,
                       "audio": config.get("speech_model") or None}
        self.voice = str(config.get("voice") or "alloy")
        self.api_base = config.get("api_base") or None
        self.api_key = config.get("api_key") or None
        self.timeout = _positive(config, "timeout", 120.0)
        self.poll_seconds = _positive(config, "poll_seconds", 5.0)
        self.image_sizes = _sizes(config, "image_sizes")
        self.video_sizes = _sizes(config, "video_sizes")
        self.video_durations = sorted(float(s) for s in config.get("video_durations") or [])
        self.audio_format = config.get("audio_format") or None
        self.image_references = takes_references(self.models["image"], config.get("image_references"))
        self.spool = spool
        self._jobs: dict[str, _Job] = {}
        self._by_key: dict[str, str] = {}
        self._sinks: list[EventSink] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    @classmethod
    def from_settings(cls, settings: Any) -> "LiteLLMStudio":
        """From the `[studio]` section of config.toml (its `provider` key chooses this class)."""
        section = {k: v for k, v in settings.section("studio").items() if k not in SERVICE_KEYS}
        return cls(section, settings.workspace / ".lomo" / "studio")

    def __repr__(self) -> str:
        return f"LiteLLMStudio(models={self.models!r}, api_base={self.api_base!r})"

    # ---- Provider ---------------------------------------------------------------------------------
    def subscribe(self, sink: EventSink) -> None:
        self._sinks.append(sink)

    async def start(self) -> None:
        self._stopped = False
        await asyncio.to_thread(self.spool.mkdir, parents=True, exist_ok=True)

    async def stop(self) -> None:
        self._stopped = True
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def submit(self, kind: str, params: dict[str, Any], key: str) -> str:
        if key in self._by_key:
            return self._by_key[key]
        if kind == "3d":
            raise ProviderError(said("no_3d"))
        if kind not in self.models:
            raise ProviderError(said("litellm_cannot_make", what=kind_said(kind)))
        model = self.models[kind]
        if not model:
            setting = "speech_model" if kind == "audio" else f"{kind}_model"
            raise ProviderError(said("no_model", what=kind_said(kind), setting=setting))
        if kind == "video":
            job_id = await self._order_video(model, params, key)
        else:
            job_id = await self._make_now(kind, model, params, key)
        self._by_key[key] = job_id
        return job_id

    async def status(self, provider_job_id: str) -> JobEvent:
        job = self._known(provider_job_id)
        if job.kind == "video" and job.status not in TERMINAL:
            async with job.lock:
                await self._refresh(job)
        return job.event

    async def fetch(self, provider_job_id: str) -> tuple[bytes, str]:
        job = self._known(provider_job_id)
        if job.kind == "video" and job.result is None:
            async with job.lock:
                if job.result is None:
                    await self._refresh(job)
            if job.result is None:
                raise ProviderError(said("not_ready", id=_short(job.id), status=job.status))
        if job.result is None:
            raise ProviderError(said("no_result", id=job.id))
        try:
            data = await asyncio.to_thread(job.result.read_bytes)
        except OSError as exc:
            raise ProviderError(said("spool_unreadable", id=_short(job.id), detail=str(exc.strerror))) from None
        return data, job.result.suffix.lstrip(".")

    async def cancel(self, provider_job_id: str) -> bool:
        """Stop waiting for a job (litellm has no call that cancels a video at the provider, hence
        `cancels = False`: the service keeps a late result aside instead of calling this)."""
        job = self._jobs.get(provider_job_id)
        if job is None or job.status in TERMINAL:
            return False
        if job.task is not None:
            job.task.cancel()
        job.status, (job.error, job.said) = "cancelled", split_error(said("cancelled_here"))
        await self._publish(job)
        return True

    def resume(self, provider_job_id: str, kind: str, params: dict[str, Any]) -> None:
        """Pick up a job the service knows (after a restart): poll a video, announce a spooled result."""
        job = self._jobs.get(provider_job_id)
        if job is None:
            try:
                job = self._known(provider_job_id)
            except ProviderError:
                log.info("job %s has no spooled result to resume", provider_job_id)
                return
        if job.task is not None and not job.task.done():
            return
        if job.status not in TERMINAL:
            self._spawn(job, self._poll_loop(job))
        elif job.result is not None:
            self._spawn(job, self._announce(job))

    def settling(self) -> bool:
        """Whether a finished result is in hand but not yet taken by the service (a run-once waits for
        those; it never waits for remote jobs still running)."""
        return any(job.status == "done" for job in self._jobs.values())  # the service discards what it took

    def discard(self, provider_job_id: str) -> None:
        """The service has the result: forget the job and drop its spooled file."""
        job = self._jobs.pop(provider_job_id, None)
        path = job.result if job is not None else self._spooled(provider_job_id)
        if job is not None and job.task is not None and job.task is not asyncio.current_task():
            job.task.cancel()
        if path is not None:
            path.unlink(missing_ok=True)

    # ---- images and speech: done within submit --------------------------------------------------------
    async def _make_now(self, kind: str, model: str, params: dict[str, Any], key: str) -> str:
        job_id = ("img-" if kind == "image" else "aud-") + hashlib.sha256(key.encode()).hexdigest()[:24]
        path = self._spooled(job_id)
        if path is None:  # not made before a restart
            if kind == "image":
                data = await self._image(model, params, key)
                ext = _sniff(data, "png")
            else:
                data, ext = await self._speech(model, params, key)
            path = self._path(job_id, ext)
            await asyncio.to_thread(atomic_write, path, data)
        job = self._jobs[job_id] = _Job(job_id, kind, "done", 1.0, result=path)
        self._spawn(job, self._announce(job))
        return job_id

    async def _image(self, model: str, params: dict[str, Any], key: str) -> bytes:
        args: dict[str, Any] = {**self._args(model, key, via="headers"), "prompt": str(params.get("prompt", "")),
                                "n": 1}
        size = _nearest(params.get("size_px"), self.image_sizes)
        if size:
            args["size"] = size
        inputs = [Path(p) for p in params.get("input_files") or []] if self.image_references else []
        if inputs:  # reference images (a key frame's character sheet and scene): the edit call takes them
            images = [await asyncio.to_thread(p.read_bytes) for p in inputs]
            args["image"] = images if len(images) > 1 else images[0]
            response = await self._call(model, "making the image", lambda lt: lt.aimage_edit(**args), submitting=True)
        else:
            response = await self._call(model, "making the image", lambda lt: lt.aimage_generation(**args),
                                        submitting=True)
        items = _field(response, "data") or []
        item = items[0] if items else None
        b64, url = _field(item, "b64_json"), _field(item, "url")
        if b64:
            return base64.b64decode(b64)
        if url and str(url).startswith("data:"):
            return base64.b64decode(str(url).split(",", 1)[1])
        if url:
            return await self._download(str(url), model)
        raise ProviderError(said("no_image", model=model))

    async def _download(self, url: str, model: str) -> bytes:
        import httpx

        try:
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=True) as client:
                response = await client.get(url)
                response.raise_for_status()
                return response.content
        except httpx.HTTPError as exc:
            raise ProviderError(said("download_failed", model=model, kind=type(exc).__name__)) from None

    async def _speech(self, model: str, params: dict[str, Any], key: str) -> tuple[bytes, str]:
        args: dict[str, Any] = {**self._args(model), "input": str(params.get("prompt", "")), "voice": self.voice}
        fmt = self.audio_format or ("wav" if model.split("/", 1)[0] in WAV_PROVIDERS else None)
        if fmt:
            args["response_format"] = fmt
        response = await self._call(model, "making the audio", lambda lt: lt.aspeech(**args), submitting=True)
        data = response if isinstance(response, bytes) else response.content
        return data, _sniff(data, fmt or "mp3")

    async def _announce(self, job: _Job) -> None:
        """Tell subscribers "queued" then "done"; repeat "done" (same seq) until the service takes it."""
        first = True
        for delay in ANNOUNCE_DELAYS:
            await asyncio.sleep(delay)
            if self._jobs.get(job.id) is not job:
                return  # discarded: the service has the result
            if first:
                await self._emit(JobEvent(job.id, event_seq("queued", 0.0), "queued"))
                first = False
            await self._emit(job.event)
            job.published = job.event.seq

    # ---- videos: ordered, then polled ---------------------------------------------------------------
    async def _order_video(self, model: str, params: dict[str, Any], key: str) -> str:
        args: dict[str, Any] = {**self._args(model, key), "prompt": str(params.get("prompt", ""))}
        seconds = params.get("seconds")
        if seconds is not None:
            args["seconds"] = _duration(float(seconds), self.video_durations)
        size = _nearest(params.get("size_px"), self.video_sizes)
        if size:
            args["size"] = size
        inputs = [Path(p) for p in params.get("input_files") or []]
        if inputs:
            args["input_reference"] = await asyncio.to_thread(inputs[0].read_bytes)
        raw = await self._call(model, "ordering the video", lambda lt: lt.avideo_generation(**args), submitting=True)
        video_id = _field(raw, "id")
        if not video_id:
            raise ProviderError(said("no_video_id", model=model), unknown=True)
        job = self._jobs.get(video_id) or _Job(str(video_id), "video")
        self._jobs[job.id] = job
        status, progress, error = normalise(raw)
        if status != "done":  # the file is fetched by the loop; "done" is reported only with it in the spool
            job.advance(status, progress, error)
        if job.task is None or job.task.done():
            self._spawn(job, self._poll_loop(job))
        return job.id

    async def _poll_loop(self, job: _Job) -> None:
        failures = 0
        while job.status not in TERMINAL and not self._stopped:
            pause = self.poll_seconds if not failures else min(POLL_BACKOFF_CAP, self.poll_seconds * 2 ** failures)
            await asyncio.sleep(pause)
            try:
                async with job.lock:
                    await self._refresh(job)
                failures = 0
            except StudioCallError as exc:
                if exc.retryable:
                    failures += 1
                    log.info("polling video %s failed (%d): %s", _short(job.id), failures, exc)
                    continue
                job.advance("failed", job.progress, exc.words)
            except ProviderError as exc:
                job.advance("failed", job.progress, exc.words)
            await self._publish(job)
        await self._publish(job)

    async def _refresh(self, job: _Job) -> None:
        """Ask the provider once; on completion put the file in the spool first. Hold `job.lock`."""
        if job.status in TERMINAL:
            return
        raw = await self._call(self.models["video"] or "video", "checking the video",
                               lambda lt: lt.avideo_status(video_id=job.id, **self._args(None)), video=job.id)
        status, progress, error = normalise(raw)
        if status == "done":
            data = await self._call(self.models["video"] or "video", "downloading the video",
                                    lambda lt: lt.avideo_content(video_id=job.id, **self._args(None)), video=job.id)
            data = data if isinstance(data, bytes) else bytes(data)
            path = self._path(job.id, _sniff(data, "mp4"))
            await asyncio.to_thread(atomic_write, path, data)
            job.result = path
        job.advance(status, progress, error)

    # ---- plumbing ----------------------------------------------------------------------------------
    def _args(self, model: str | None, key: str | None = None, via: str = "extra_headers") -> dict[str, Any]:
        """Common litellm arguments; with `key`, an Idempotency-Key header sent through the argument `via`
        (litellm 1.110: `headers` for images — `extra_headers` would also land in the JSON body —,
        `extra_headers` for videos; its OpenAI speech path forwards neither)."""
        args: dict[str, Any] = {"timeout": self.timeout, "max_retries": 0}
        if model:
            args["model"] = model
        if self.api_base:
            args["api_base"] = self.api_base
        if self.api_key:
            args["api_key"] = self.api_key
        if key is not None:  # honoured by providers with idempotency keys, ignored by the rest
            args[via] = {"Idempotency-Key": "lomo-" + hashlib.sha256(key.encode()).hexdigest()[:32]}
        return args

    async def _call(self, model: str, action: str, make: Callable[[Any], Awaitable[Any]], *,
                    submitting: bool = False, video: str | None = None) -> Any:
        lt = preload() if is_loaded() else await asyncio.to_thread(preload)
        try:
            # litellm's video status/content GETs ignore `timeout=`: bound every call here too
            return await asyncio.wait_for(make(lt), timeout=self.timeout + (1.0 if submitting else 0.0))
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 — every provider failure is classified
            raise self._failure(exc, model, action, submitting, video) from None

    def _failure(self, exc: Exception, model: str, action: str, submitting: bool,
                 video: str | None) -> StudioCallError:
        import httpx

        endpoint = Endpoint(model, self.api_base, self.api_key, self.timeout, 1, 0.5, 30.0)
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) else None
        where = self.api_base or said("the_provider")
        doing = said(ACTIONS[action]) if action in ACTIONS else action
        seconds = f"{self.timeout:g}"
        if caused_by(exc, timeout_kinds()):
            if submitting:
                return StudioCallError(said("timeout_unknown", model=model, seconds=seconds, action=doing),
                                       unknown=True)
            return StudioCallError(said("timeout", model=model, seconds=seconds, action=doing), retryable=True)
        if caused_by(exc, connection_kinds()):
            if caused_by(exc, (httpx.ConnectError,)):  # the request never left: nothing was ordered
                return StudioCallError(said("unreachable", where=where, model=model, action=doing), retryable=True)
            if submitting:
                return StudioCallError(said("broke_unknown", where=where, action=doing), unknown=True)
            return StudioCallError(said("broke", where=where, action=doing), retryable=True)
        if submitting and status in SUBMIT_UNKNOWN_STATUS:
            detail = self._scrub(endpoint.detail(exc))
            return StudioCallError(said("answered_unknown", where=where, status=status, action=doing, detail=detail),
                                   unknown=True, status=status)
        if video is not None and status == 404:
            return StudioCallError(said("no_video", id=_short(video)), status=status)
        failure = endpoint.classify(exc)
        scrubbed = self._scrub(failure.message)
        return StudioCallError(failure.said if scrubbed == failure.message else scrubbed,
                               retryable=failure.retryable, status=status)

    def _scrub(self, text: str) -> str:
        text = text.replace(self.api_key, "***") if self.api_key and len(self.api_key) >= 4 else text
        return redact(text)  # keys from the environment too

    def _known(self, provider_job_id: str) -> _Job:
        """A job by id: in memory, in the spool (image/speech), or a video to ask the provider about."""
        job = self._jobs.get(provider_job_id)
        if job is not None:
            return job
        if provider_job_id.startswith(("img-", "aud-")):
            path = self._spooled(provider_job_id)
            if path is None:
                raise ProviderError(said("litellm_no_result", id=provider_job_id))
            kind = "image" if provider_job_id.startswith("img-") else "audio"
            job = _Job(provider_job_id, kind, "done", 1.0, result=path)
        else:
            job = _Job(provider_job_id, "video")
            job.result = self._spooled(provider_job_id)
            if job.result is not None:
                job.status, job.progress = "done", 1.0
        self._jobs[provider_job_id] = job
        return job

    def _path(self, job_id: str, ext: str) -> Path:
        return self.spool / f"{_stem(job_id)}.{ext}"

    def _spooled(self, job_id: str) -> Path | None:
        stem = _stem(job_id)
        try:
            return next((p for p in self.spool.glob(f"{stem}.*") if not p.name.startswith(".")), None)
        except OSError:
            return None

    def _spawn(self, job: _Job, coro: Any) -> None:
        task = asyncio.create_task(coro, name=f"litellm-studio-{_short(job.id)}")
        job.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, job: _Job) -> None:
        event = job.event
        if event.seq > job.published:
            job.published = event.seq
            await self._emit(event)

    async def _emit(self, event: JobEvent) -> None:
        for sink in list(self._sinks):
            try:
                await sink(event)
            except Exception:  # noqa: BLE001 — a subscriber's failure must not stop the loop
                log.exception("studio subscriber failed on %s", event)


@lru_cache(maxsize=1)
def _reference_patterns() -> tuple[str, ...]:
    with REFERENCES_FILE.open("rb") as fh:
        return tuple(tomllib.load(fh).get("takes_references", ()))


def takes_references(model: str | None, override: Any = None) -> bool:
    """Whether the image MODEL takes reference images (litellm's image edit call with several images): the
    `[studio] image_references` setting when given, else the list in data/image_references.toml."""
    if override is not None and override != "auto":
        if isinstance(override, str):
            return override.strip().lower() in ("true", "yes", "1", "on")
        return bool(override)
    return bool(model) and any(fnmatch.fnmatchcase(str(model), pattern) for pattern in _reference_patterns())


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _stem(job_id: str) -> str:
    """A file-name-safe stem for any provider id (litellm video ids are base64: '/' and '+')."""
    prefix = job_id[:4] if job_id.startswith(("img-", "aud-")) else "vid-"
    return prefix + hashlib.sha256(job_id.encode()).hexdigest()[:24]


def _short(job_id: str) -> str:
    return job_id if len(job_id) <= 24 else job_id[:12] + "…" + job_id[-6:]


def _positive(config: Mapping[str, Any], key: str, default: float) -> float:
    try:
        value = float(config.get(key, default))
    except (TypeError, ValueError):
        raise ValueError(f"[studio] {key} must be a number of seconds, not {config.get(key)!r}") from None
    if not value > 0:
        raise ValueError(f"[studio] {key} must be above 0")
    return value


def _sizes(config: Mapping[str, Any], key: str) -> list[tuple[int, int]]:
    out = []
    for item in config.get(key) or []:
        parsed = _wh(item)
        if parsed is None:
            raise ValueError(f"[studio] {key}: {item!r} is not WxH")
        out.append(parsed)
    return out


def _wh(value: Any) -> tuple[int, int] | None:
    if isinstance(value, str) and "x" in value.lower():
        w, _, h = value.lower().partition("x")
        return (int(w), int(h)) if w.strip().isdigit() and h.strip().isdigit() else None
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None


def _nearest(requested: Any, allowed: list[tuple[int, int]]) -> str | None:
    """"WxH" for the request: as asked, or the allowed size nearest in shape, then in area."""
    size = _wh(requested)
    if not allowed:
        return f"{size[0]}x{size[1]}" if size else None
    if size is None:
        w, h = allowed[0]
        return f"{w}x{h}"
    ratio, area = size[0] / size[1], size[0] * size[1]
    w, h = min(allowed, key=lambda s: (round(abs(s[0] / s[1] - ratio), 3), abs(s[0] * s[1] - area)))
    return f"{w}x{h}"


def _duration(seconds: float, allowed: list[float]) -> str:
    """Seconds as the provider spells them: the shortest allowed duration that is long enough."""
    if allowed:
        seconds = next((d for d in allowed if d >= seconds), allowed[-1])
    return f"{seconds:g}" if seconds != int(seconds) else str(int(seconds))


def _sniff(data: bytes, default: str) -> str:
    """A file extension from the leading bytes."""
    head = data[:16]
    if head.startswith(b"\x89PNG"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[4:8] == b"ftyp":
        return "mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"fLaC"):
        return "flac"
    return default

