"""The embedded studio: an offline provider inside the process that makes real files.

It behaves like a remote service: it accepts a job and returns an id, reports progress through
callbacks, and takes realistic time (scaled by LOMO_TIME_SCALE). Orders are idempotent by key, as a
provider with idempotency keys would be. Fault knobs for drills come from LOMO_STUDIO_FAULTS:
`duplicate` (every callback twice), `out_of_order` (a late "running" after "done"), `lose_final`
(the completion callback is lost; polling must find it), `submit_unknown` (accepts, then the
submit call fails as if the connection dropped), `never_resolve` (jobs hang forever).
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .prices import simulated_latency
from ..errors import Said
from .providers import EventSink, JobEvent, ProviderError, kind_said, said, split_error

log = logging.getLogger("lomo.studio")
FAULTS = frozenset({"duplicate", "out_of_order", "lose_final", "submit_unknown", "never_resolve"})
PROGRESS_TICKS = 5


@dataclass
class _Job:
    id: str
    kind: str
    params: dict[str, Any]
    seq: int = 0
    status: str = "queued"
    progress: float = 0.0
    error: str | None = None
    said: Said | None = None  # the error as catalogue text
    result: Path | None = None
    runner: asyncio.Task[None] | None = field(default=None, repr=False)
    # A render runs in a worker thread that cancelling the runner does not stop: the thread puts its file in
    # place only while the job is not called off, and calling it off removes a file already there (one lock
    # for both, so neither can slip between the other's check and its act).
    called_off: bool = False
    spooling: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def spool(self, path: Path, data: bytes) -> bool:
        """Write DATA to PATH (in a worker thread) unless the job was called off; True when it is there."""
        part = path.with_name(path.name + ".part")
        part.write_bytes(data)
        with self.spooling:
            if self.called_off:
                part.unlink(missing_ok=True)
                return False
            part.replace(path)
            return True

    def call_off(self, spool: Path) -> None:
        """Nothing of this job may stay in SPOOL: a file its thread has written, or writes after this."""
        with self.spooling:
            self.called_off = True
            for leftover in spool.glob(f"{self.id}.*"):
                leftover.unlink(missing_ok=True)


class EmbeddedStudio:
    name = "embedded"
    local = True
    cancels = True  # a cancelled render stops: nothing is made

    def __init__(self, spool: Path, *, time_scale: float = 1.0, faults: str = "") -> None:
        self.spool = spool
        self.time_scale = time_scale
        self.faults = {f.strip() for f in faults.split(",") if f.strip()}
        unknown = self.faults - FAULTS
        if unknown:
            raise ValueError(f"LOMO_STUDIO_FAULTS: unknown fault(s) {', '.join(sorted(unknown))}")
        self._jobs: dict[str, _Job] = {}
        self._sinks: list[EventSink] = []

    def working(self, provider_job_id: str) -> bool:
        """Whether this process is still making the job. The deadline covers the simulated wait, not the
        real work of a loaded machine (queueing for the CPU, the render itself), so a job whose runner is
        alive here is not given up; a hung one (the `never_resolve` fault) or one this process never
        picked up is."""
        job = self._jobs.get(provider_job_id)
        return (job is not None and job.runner is not None and not job.runner.done()
                and "never_resolve" not in self.faults)

    def subscribe(self, sink: EventSink) -> None:
        self._sinks.append(sink)

    async def start(self) -> None:
        self.spool.mkdir(parents=True, exist_ok=True)

    async def stop(self) -> None:
        running = [job for job in self._jobs.values() if job.runner and not job.runner.done()]
        for job in running:
            job.call_off(self.spool)  # a restart renders it again: no half-delivered file stays behind
            job.runner.cancel()  # type: ignore[union-attr]
        runners = [job.runner for job in running]
        await asyncio.gather(*runners, return_exceptions=True)

    @staticmethod
    def job_id(key: str) -> str:
        return "emb-" + hashlib.sha1(key.encode()).hexdigest()[:16]

    async def submit(self, kind: str, params: dict[str, Any], key: str) -> str:
        job_id = self.job_id(key)
        if job_id not in self._jobs:
            self._accept(job_id, kind, params)
        if "submit_unknown" in self.faults:
            raise ProviderError(said("connection_dropped"), unknown=True)
        return job_id

    def resume(self, job_id: str, kind: str, params: dict[str, Any]) -> None:
        """Pick up an accepted job after a restart (a real service keeps running while we are away)."""
        if job_id not in self._jobs:
            self._accept(job_id, kind, params)

    def _accept(self, job_id: str, kind: str, params: dict[str, Any]) -> None:
        job = _Job(job_id, kind, dict(params))
        self._jobs[job_id] = job
        job.runner = asyncio.create_task(self._run(job), name=f"studio-{job_id}")

    async def status(self, provider_job_id: str) -> JobEvent:
        job = self._jobs.get(provider_job_id)
        if job is None:
            raise ProviderError(said("no_job", id=provider_job_id))
        return JobEvent(job.id, job.seq, job.status, job.progress, job.error, job.said)

    async def fetch(self, provider_job_id: str) -> tuple[bytes, str]:
        job = self._jobs.get(provider_job_id)
        if job is None or job.result is None:
            raise ProviderError(said("no_result", id=provider_job_id))
        return await asyncio.to_thread(job.result.read_bytes), job.result.suffix.lstrip(".")

    def discard(self, provider_job_id: str) -> None:
        """The service has the result: drop the job's spooled file."""
        job = self._jobs.pop(provider_job_id, None)
        if job is None:
            return
        if job.runner is not None and not job.runner.done():
            job.runner.cancel()
        job.call_off(self.spool)

    async def cancel(self, provider_job_id: str) -> bool:
        job = self._jobs.get(provider_job_id)
        if job is None or job.status in ("done", "failed", "cancelled"):
            return False
        if job.runner:
            job.runner.cancel()
        job.call_off(self.spool)  # the render's thread may still be writing: its file never lands
        await self._emit(job, "cancelled", job.progress)
        return True

    async def _emit(self, job: _Job, status: str, progress: float, error: str | Said | None = None,
                    deliver: bool = True) -> None:
        job.seq += 1
        job.status, job.progress, (job.error, job.said) = status, progress, split_error(error)
        event = JobEvent(job.id, job.seq, status, progress, job.error, job.said)
        if not deliver:
            return
        copies = 2 if "duplicate" in self.faults else 1
        for _ in range(copies):
            for sink in self._sinks:
                await sink(event)

    async def _run(self, job: _Job) -> None:
        try:
            seed = int(job.params.get("seed") or zlib.crc32(job.id.encode()))
            latency = simulated_latency(job.kind, job.params, seed) * self.time_scale
            await self._emit(job, "running", 0.0)
            if "never_resolve" in self.faults:
                await asyncio.Event().wait()
            for tick in range(1, PROGRESS_TICKS):
                await asyncio.sleep(latency / PROGRESS_TICKS)
                await self._emit(job, "running", tick / PROGRESS_TICKS)
            data, ext = await asyncio.to_thread(self._render, job.kind, job.params, seed)
            path = self.spool / f"{job.id}.{ext}"
            if not await asyncio.to_thread(job.spool, path, data):
                return  # called off while it rendered
            await asyncio.sleep(latency / PROGRESS_TICKS)
            job.result = path
            stale = JobEvent(job.id, job.seq, "running", job.progress)
            await self._emit(job, "done", 1.0, deliver="lose_final" not in self.faults)
            if "out_of_order" in self.faults:
                for sink in self._sinks:
                    await sink(stale)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — a failed render is the job's failure, reported as such
            log.exception("studio job %s failed", job.id)
            # the creator reads the job's error: a plain sentence; the log above keeps the exception
            await self._emit(job, "failed", job.progress, said("could_not_render", what=kind_said(job.kind)))

    @staticmethod
    def _render(kind: str, params: dict[str, Any], seed: int) -> tuple[bytes, str]:
        from .render import (  # Pillow (and PyAV): only when rendering
            CLIP_FORMATS, clip_format, render_audio, render_clip, render_image, render_mesh,
        )

        prompt = str(params.get("prompt", ""))
        inputs = [Path(p) for p in params.get("input_files", [])]
        if kind == "image":
            size = tuple(params.get("size_px") or (768, 768))
            return render_image(prompt, seed=seed, size=size, inputs=inputs), "png"  # type: ignore[arg-type]
        if kind == "video":  # MP4 where PyAV can encode H.264, else GIF; a job may ask for gif or webp
            fmt = str(params.get("format") or clip_format())
            if fmt not in CLIP_FORMATS or (fmt == "mp4" and clip_format() != "mp4"):
                fmt = clip_format()
            size = tuple(params.get("size_px") or (480, 270))
            seconds = float(params.get("seconds", 5))
            return render_clip(prompt, seed=seed, seconds=seconds, size=size, inputs=inputs, fmt=fmt), fmt  # type: ignore[arg-type]
        if kind == "3d":
            return render_mesh(prompt, seed=seed), "gltf"
        if kind == "audio":
            return render_audio(prompt, seed=seed, seconds=float(params.get("seconds", 3))), "wav"
        raise ProviderError(said("cannot_make", what=kind_said(kind)))
