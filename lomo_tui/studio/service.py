"""The generation service: orders, jobs, progress, artifacts — and when (not) to wake the agent.

- One order per (workspace, idempotency key); the charge carries the same key, so an old and a new
  worker of one turn map to one job and one charge (C7).
- The job row exists *before* the provider is called ("submitting"); the provider's job id is written
  the moment it is known. A submit whose outcome is unknown is never resubmitted; a job that never
  resolves expires at its deadline and is refunded (C8).
- Events are idempotent and monotonic (D4): duplicates and stale events are ignored, a late "running"
  never undoes "done"; silent jobs are polled.
- Progress updates cards with no model call (D2). Completion writes the artifact into the workspace
  (atomically, as an agent version) and re-evaluates the waiting turn; a stopped task stays stopped (C9).
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update

from ..runtime.ids import new_id
from ..store import schema as s
from ..tasks import checklist
from ..workspace.files import atomic_write
from .providers import STATUS_RANK, TERMINAL, JobEvent, Provider, ProviderError, choose_provider

if TYPE_CHECKING:
    from ..runtime.scheduler import Runtime
    from ..tools.registry import ToolContext

log = logging.getLogger("lomo.studio")
SILENCE_SECONDS = 30.0  # a job that said nothing for this long (× time scale) is polled
MIN_DEADLINE = 120.0
DEADLINE_FACTOR = 10.0  # a job expires after this many times its expected latency (× time scale)


def slug(text: str, limit: int = 40) -> str:
    words = re.findall(r"\w+", text.lower())
    out = "-".join(words)[:limit].strip("-")
    return out or "untitled"


class Studio:
    """A runtime service (start/stop/busy) that owns jobs."""

    def __init__(self, runtime: "Runtime", provider: Provider | None = None) -> None:
        self.rt = runtime
        settings = runtime.settings
        section = settings.section("studio")
        self.deadline_seconds = section.get("deadline_seconds")
        self.provider: Provider = provider or choose_provider(settings)
        self.provider.subscribe(self.on_event)
        self.workspace_key = str(settings.workspace)
        self._loop_task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    # ---- life cycle --------------------------------------------------------------------------
    async def start(self) -> None:
        await self.provider.start()
        await self._resume_accepted()
        self._loop_task = asyncio.create_task(self._reconcile_loop(), name="lomo-studio-reconcile")

    async def stop(self) -> None:
        self._stop.set()
        if self._loop_task:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        await self.provider.stop()

    async def busy(self) -> bool:
        """Whether a job of an in-process provider is still running (run-once waits for those)."""
        if not self.provider.local:
            settling = getattr(self.provider, "settling", None)
            return bool(settling and settling())
        async with self.rt.db.read() as conn:
            row = (await conn.execute(select(s.jobs.c.id).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status.notin_(tuple(TERMINAL))))).first()
        return row is not None

    async def _resume_accepted(self) -> None:
        resume = getattr(self.provider, "resume", None)
        async with self.rt.db.read() as conn:
            rows = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status.in_(("queued", "running")), s.jobs.c.provider_job_id.is_not(None)))).all()
        for row in rows:
            if resume is not None:
                resume(row.provider_job_id, row.kind, row.params)

    # ---- orders ---------------------------------------------------------------------------------
    async def job_for_key(self, key: str) -> Any:
        async with self.rt.db.read() as conn:
            return (await conn.execute(select(s.jobs).where(
                s.jobs.c.workspace == self.workspace_key, s.jobs.c.idempotency_key == key))).first()

    def deadline(self, kind: str, params: dict[str, Any], expected: float) -> float:
        """When an unresolved job is given up and refunded: `[studio] deadline_seconds` for real providers,
        else a multiple of the embedded studio's expected latency."""
        if self.deadline_seconds:
            return time.time() + float(self.deadline_seconds)
        scale = self.rt.settings.time_scale if self.provider.local else 1.0
        return time.time() + max(MIN_DEADLINE * scale, DEADLINE_FACTOR * expected * scale, 1.0)

    async def submit(self, ctx: "ToolContext", kind: str, prompt: str, params: dict[str, Any], amount: float,
                     expected_latency: float) -> Any:
        """Place the order for this call (once per key) and charge it (once per key)."""
        existing = await self.job_for_key(ctx.key)
        if existing is not None:
            return await self.recover(existing)
        job_id = new_id("job")
        t = time.time()
        async with self.rt.ledger.fenced(ctx.claim) as conn:
            await conn.execute(insert(s.jobs).values(
                id=job_id, workspace=self.workspace_key, idempotency_key=ctx.key, task_id=ctx.task_id,
                turn_id=ctx.claim.turn_id, step=ctx.step, kind=kind, provider=self.provider.name,
                status="submitting", prompt=prompt, params=params, cost=amount,
                deadline=self.deadline(kind, params, expected_latency), created_at=t, updated_at=t))
            await conn.execute(insert(s.charges).values(
                id=new_id("chg"), job_id=job_id, task_id=ctx.task_id, amount=amount, idempotency_key=ctx.key,
                status="charged", created_at=t))
            await self.rt.ledger.event(conn, "job_submitted", ctx.task_id, ctx.claim.turn_id, job_id=job_id,
                                       kind=kind, amount=amount)
        try:
            provider_job_id = await self.provider.submit(kind, params, ctx.key)
        except ProviderError as exc:
            await self._finish(job_id, "unknown" if exc.unknown else "failed", str(exc), refund=not exc.unknown)
            return await self.job(job_id)
        self.rt.faults.hit("after_gen_submit")
        async with self.rt.db.write() as conn:
            await conn.execute(update(s.jobs).where(s.jobs.c.id == job_id, s.jobs.c.status == "submitting").values(
                provider_job_id=provider_job_id, status="queued", updated_at=time.time()))
        self.rt.bus.publish("job_progress", ctx.task_id, job_id=job_id, status="queued", progress=0.0)
        return await self.job(job_id)

    async def recover(self, job: Any) -> Any:
        """A job row left in `submitting` was interrupted between order and id: its outcome is unknown.
        It is never resubmitted; it is refunded if nothing arrives before its deadline."""
        if job.status == "submitting" and job.provider_job_id is None:
            await self._finish(job.id, "unknown", "interrupted while submitting: outcome unknown, not resubmitted",
                               refund=False)
            return await self.job(job.id)
        return job

    async def job(self, job_id: str) -> Any:
        async with self.rt.db.read() as conn:
            return (await conn.execute(select(s.jobs).where(s.jobs.c.id == job_id))).one()

    # ---- events ---------------------------------------------------------------------------------
    async def on_event(self, event: JobEvent) -> None:
        try:
            await self._apply(event)
        except Exception:  # noqa: BLE001 — a bad event must not kill the provider's loop
            log.exception("studio event %s failed", event)

    async def _apply(self, event: JobEvent) -> None:
        async with self.rt.db.write() as conn:
            job = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.provider_job_id == event.provider_job_id))).first()
            if job is None or job.status in TERMINAL or event.seq <= job.event_seq:
                return  # unknown, settled, duplicate or stale
            if STATUS_RANK.get(event.status, 0) < STATUS_RANK.get(job.status, 0):
                return
            if event.status in ("queued", "running"):
                await conn.execute(update(s.jobs).where(s.jobs.c.id == job.id).values(
                    status=event.status, progress=max(event.progress, job.progress), event_seq=event.seq,
                    updated_at=time.time()))
        if event.status in ("queued", "running"):
            self.rt.bus.publish("job_progress", job.task_id, job_id=job.id, status=event.status,
                                progress=event.progress)
            return
        if event.status == "done":
            await self._complete(job, event.seq)
        else:
            await self._finish(job.id, event.status if event.status in TERMINAL else "failed",
                               event.error or "the studio reported a failure", refund=True, seq=event.seq)

    async def _complete(self, job: Any, seq: int) -> None:
        try:
            data, ext = await self.provider.fetch(job.provider_job_id)
        except ProviderError as exc:
            await self._finish(job.id, "failed", f"result could not be fetched: {exc}", refund=True, seq=seq)
            return
        rel = f"renders/{job.kind if job.kind != '3d' else 'meshes'}/{slug(job.prompt)}-{job.id[-6:]}.{ext}"
        path = self.rt.settings.workspace / rel

        def store() -> str:  # one trip to a thread: folder, atomic write, hash of the bytes in hand
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
            return hashlib.sha256(data).hexdigest()

        digest = await asyncio.to_thread(store)
        workspace = self.rt.workspace
        async with self.rt.db.write() as conn:
            current = (await conn.execute(select(s.jobs.c.status).where(s.jobs.c.id == job.id))).scalar()
            if current in TERMINAL:
                return
            seen = await workspace.record(conn, rel, digest, len(data), author="agent", task_id=job.task_id,
                                          key=job.idempotency_key)
            if job.task_id:
                await workspace.touch(conn, job.task_id, seen, wrote=True)
            step = (job.params or {}).get("step")
            if step:
                await checklist.complete(conn, step, evidence=f"made {rel}", objects=[(seen.object_id, seen.version)])
            await conn.execute(update(s.jobs).where(s.jobs.c.id == job.id).values(
                status="done", progress=1.0, event_seq=seq, artifact_path=rel, updated_at=time.time(),
                finished_at=time.time()))
            await self.rt.ledger.event(conn, "job_done", job.task_id, job.turn_id, job_id=job.id, path=rel)
        discard = getattr(self.provider, "discard", None)
        if discard is not None:
            discard(job.provider_job_id)
        self.rt.bus.publish("job_done", job.task_id, job_id=job.id, path=rel)
        await self.rt.poke(job.turn_id)

    async def _finish(self, job_id: str, status: str, error: str, *, refund: bool, seq: int | None = None) -> None:
        t = time.time()
        async with self.rt.db.write() as conn:
            job = (await conn.execute(select(s.jobs).where(s.jobs.c.id == job_id))).one()
            if job.status in TERMINAL and not (job.status == "unknown" and status == "expired"):
                return
            values: dict[str, Any] = dict(status=status, error=error, updated_at=t, finished_at=t)
            if seq is not None:
                values["event_seq"] = seq
            await conn.execute(update(s.jobs).where(s.jobs.c.id == job_id).values(**values))
            if refund:
                await conn.execute(update(s.charges).where(s.charges.c.job_id == job_id,
                                                           s.charges.c.status == "charged").values(
                    status="refunded", refunded_at=t))
            await self.rt.ledger.event(conn, f"job_{status}", job.task_id, job.turn_id, job_id=job_id, error=error,
                                       refunded=refund)
        discard = getattr(self.provider, "discard", None)
        if discard is not None and job.provider_job_id:
            discard(job.provider_job_id)
        self.rt.bus.publish("job_done", job.task_id, job_id=job_id, status=status, error=error)
        await self.rt.poke(job.turn_id)

    # ---- reconciliation ---------------------------------------------------------------------------
    async def _reconcile_loop(self) -> None:
        period = max(0.05, min(self.rt.settings.watchdog_seconds, SILENCE_SECONDS * self.rt.settings.time_scale))
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=period)
            except asyncio.TimeoutError:
                pass
            try:
                await self.reconcile()
            except Exception:  # noqa: BLE001 — keep reconciling
                log.exception("studio reconcile failed")

    async def reconcile(self) -> None:
        """Poll silent jobs (lost callbacks) and expire the ones past their deadline (refunded)."""
        t = time.time()
        silence = SILENCE_SECONDS * self.rt.settings.time_scale
        async with self.rt.db.read() as conn:
            rows = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status.in_(("submitting", "queued", "running", "unknown"))))).all()
        for job in rows:
            if t > job.deadline:
                await self._finish(job.id, "expired", "no result before the deadline; the charge was refunded",
                                   refund=True)
            elif job.provider_job_id and job.status != "unknown" and t - job.updated_at > silence:
                try:
                    await self._apply(await self.provider.status(job.provider_job_id))
                except ProviderError as exc:
                    log.info("poll of %s failed: %s", job.id, exc)
