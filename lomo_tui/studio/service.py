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
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import insert, select, update

from ..base.bus import Notice
from ..base.ids import new_id
from ..language import message
from ..store import schema as s
from ..tasks import evidence as steps_evidence
from ..workspace.files import atomic_write, replace_if_unchanged
from ..workspace.errors import WorkspaceError
from ..errors import Said
from .providers import STATUS_RANK, TERMINAL, JobEvent, Provider, ProviderError, choose_provider, said, split_error
from .results import keep as keep_result
from .. import clock

if TYPE_CHECKING:
    from ..base.bus import Bus
    from ..config import Settings
    from ..faults import Faults
    from ..ledger import Claim, Ledger
    from ..store.engine import Database
    from ..workspace.objects import Workspace

log = logging.getLogger("lomo.studio")
SILENCE_SECONDS = 30.0  # a job that said nothing for this long (× time scale) is polled
MIN_DEADLINE = 120.0
DEADLINE_FACTOR = 10.0  # a job expires after this many times its expected latency (× time scale)


def slug(text: str, limit: int = 40) -> str:
    words = re.findall(r"\w+", text.lower())
    out = "-".join(words)[:limit].strip("-")
    return out or "untitled"


class JobReactions(Protocol):
    async def job_settled(self, conn: Any, turn_id: str | None) -> bool: ...


class StudioHost(Protocol):
    """What the studio uses of the runtime that hosts it (and nothing more)."""

    settings: Settings
    db: Database
    ledger: Ledger
    bus: Bus
    faults: Faults
    workspace: Workspace
    reactions: JobReactions  # what follows a settled job (runtime/reactions.py)

    def wake(self, turn_id: str) -> None: ...

    def changed(self) -> None: ...


class Order(Protocol):
    """The tool call an order is placed for (a tools.ToolContext)."""

    claim: Claim
    step: int
    key: str

    @property
    def task_id(self) -> str: ...


class Studio:
    """A runtime service (start/stop/busy) that owns jobs."""

    def __init__(self, host: StudioHost, provider: Provider | None = None) -> None:
        self.host = host
        settings = host.settings
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
        async with self.host.db.read() as conn:
            row = (await conn.execute(select(s.jobs.c.id).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status.notin_(tuple(TERMINAL))))).first()
        return row is not None

    async def _resume_accepted(self) -> None:
        resume = getattr(self.provider, "resume", None)
        async with self.host.db.read() as conn:
            rows = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status.in_(("queued", "running")), s.jobs.c.provider_job_id.is_not(None)))).all()
        for row in rows:
            if resume is not None:
                resume(row.provider_job_id, row.kind, row.params)

    # ---- orders ---------------------------------------------------------------------------------
    async def job_for_key(self, key: str) -> Any:
        async with self.host.db.read() as conn:
            return (await conn.execute(select(s.jobs).where(
                s.jobs.c.workspace == self.workspace_key, s.jobs.c.idempotency_key == key))).first()

    async def error_said(self, job: Any) -> Said | None:
        """JOB's error as catalogue text (None when it has none, or its row's words changed since)."""
        from .words import error_saids, job_said

        if job.task_id is None or not job.error:
            return None
        async with self.host.db.read() as conn:
            return job_said(job, await error_saids(conn, [job.task_id]))

    def deadline(self, kind: str, params: dict[str, Any], expected: float) -> float:
        """When an unresolved job is given up and refunded: `[studio] deadline_seconds` for real providers,
        else a multiple of the embedded studio's expected latency."""
        if self.deadline_seconds:
            return clock.now() + float(self.deadline_seconds)
        scale = self.host.settings.time_scale if self.provider.local else 1.0
        return clock.now() + max(MIN_DEADLINE * scale, DEADLINE_FACTOR * expected * scale, 1.0)

    async def place(self, conn: Any, ctx: Order, kind: str, prompt: str, params: dict[str, Any],
                    amount: float, expected_latency: float) -> str:
        """Write this call's job row and its charge inside the caller's transaction (the one that checked the
        spend, G8), once per key. Returns the job id; `send` then hands it to the provider."""
        found = (await conn.execute(select(s.jobs.c.id).where(
            s.jobs.c.workspace == self.workspace_key, s.jobs.c.idempotency_key == ctx.key))).scalar()
        if found is not None:
            return found
        job_id = new_id("job")
        t = clock.now()
        await conn.execute(insert(s.jobs).values(
            id=job_id, workspace=self.workspace_key, idempotency_key=ctx.key, task_id=ctx.task_id,
            turn_id=ctx.claim.turn_id, step=ctx.step, kind=kind, provider=self.provider.name,
            status="submitting", prompt=prompt, params=params, cost=amount,
            deadline=self.deadline(kind, params, expected_latency), created_at=t, updated_at=t))
        await conn.execute(insert(s.charges).values(
            id=new_id("chg"), job_id=job_id, task_id=ctx.task_id, amount=amount, idempotency_key=ctx.key,
            status="charged", created_at=t))
        await self.host.ledger.event(conn, "job_submitted", ctx.task_id, ctx.claim.turn_id, job_id=job_id,
                                   kind=kind, amount=amount)
        return job_id

    async def send(self, job_id: str) -> Any:
        """Hand a placed job (still `submitting`) to the provider and record its id."""
        job = await self.job(job_id)
        if job.status != "submitting" or job.provider_job_id is not None:
            return await self.recover(job)
        try:
            provider_job_id = await self.provider.submit(job.kind, dict(job.params or {}), job.idempotency_key)
        except ProviderError as exc:
            await self._finish(job_id, "unknown" if exc.unknown else "failed", exc.words, refund=not exc.unknown)
            return await self.job(job_id)
        self.host.faults.hit("after_gen_submit")
        async with self.host.db.write() as conn:
            moved = await conn.execute(update(s.jobs).where(s.jobs.c.id == job_id, s.jobs.c.status == "submitting")
                                       .values(provider_job_id=provider_job_id, status="queued",
                                               updated_at=clock.now()))
            if not moved.rowcount:  # cancelled (its task stopped) while the provider took it
                await conn.execute(update(s.jobs).where(s.jobs.c.id == job_id, s.jobs.c.provider_job_id.is_(None))
                                   .values(provider_job_id=provider_job_id))
        if moved.rowcount:
            self.host.bus.publish(Notice.JOB_PROGRESS, job.task_id, job_id=job_id, status="queued", progress=0.0)
        else:
            await self.settle_cancelled()
        return await self.job(job_id)

    async def submit(self, ctx: Order, kind: str, prompt: str, params: dict[str, Any], amount: float,
                     expected_latency: float) -> Any:
        """Place the order for this call (once per key) and charge it (once per key), then send it.
        Paid tools check the spend and place in one transaction instead (tools.media)."""
        existing = await self.job_for_key(ctx.key)
        if existing is not None:
            return await self.recover(existing)
        async with self.host.ledger.fenced(ctx.claim) as conn:
            job_id = await self.place(conn, ctx, kind, prompt, params, amount, expected_latency)
        return await self.send(job_id)

    async def recover(self, job: Any) -> Any:
        """A job row left in `submitting` was interrupted between order and id: its outcome is unknown.
        It is never resubmitted; it is refunded if nothing arrives before its deadline."""
        if job.status == "submitting" and job.provider_job_id is None:
            await self._finish(job.id, "unknown", said("interrupted"), refund=False)
            return await self.job(job.id)
        return job

    async def job(self, job_id: str) -> Any:
        async with self.host.db.read() as conn:
            return (await conn.execute(select(s.jobs).where(s.jobs.c.id == job_id))).one()

    # ---- events ---------------------------------------------------------------------------------
    async def on_event(self, event: JobEvent) -> None:
        try:
            await self._apply(event)
        except Exception:  # noqa: BLE001 — a bad event must not kill the provider's loop
            log.exception("studio event %s failed", event)

    async def _apply(self, event: JobEvent) -> None:
        async with self.host.db.write() as conn:
            job = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.provider_job_id == event.provider_job_id))).first()
            if job is None or event.seq <= job.event_seq:
                return  # unknown, duplicate or stale
            if job.status in TERMINAL:
                if not (event.status == "done" and self._late(job)):
                    return  # settled (a late result of a job the provider could not cancel is kept aside below)
            elif STATUS_RANK.get(event.status, 0) < STATUS_RANK.get(job.status, 0):
                return
            if event.status in ("queued", "running"):
                moved = await conn.execute(update(s.jobs).where(
                    s.jobs.c.id == job.id, s.jobs.c.status == job.status, s.jobs.c.event_seq == job.event_seq).values(
                    status=event.status, progress=max(event.progress, job.progress), event_seq=event.seq,
                    updated_at=clock.now()))
                if not moved.rowcount:
                    return
        if event.status in ("queued", "running"):
            self.host.bus.publish(Notice.JOB_PROGRESS, job.task_id, job_id=job.id, status=event.status,
                                progress=event.progress)
            return
        if job.status == "cancelled":
            await self._keep_aside(job, event.seq)
        elif event.status == "done":
            await self._complete(job, event.seq)
        else:
            await self._finish(job.id, event.status if event.status in TERMINAL else "failed",
                               (event.said if event.said is not None and event.said.text("en") == event.error
                                else event.error) or said("studio_failed"), refund=True, seq=event.seq)

    async def _complete(self, job: Any, seq: int) -> None:
        """Deliver a finished job's result: the transition to `done` comes first, conditional on the state
        this worker read; only the worker whose transition happened writes the file and the version."""
        try:
            data, ext = await self.provider.fetch(job.provider_job_id)
        except ProviderError as exc:
            await self._finish(job.id, "failed", said("fetch_failed", detail=exc.words), refund=True, seq=seq)
            return
        rel = f"renders/{job.kind if job.kind != '3d' else 'meshes'}/{slug(job.prompt)}-{job.id[-6:]}.{ext}"
        wanted = str((job.params or {}).get("output") or "")
        path = self.host.settings.workspace / rel
        if wanted.lower().endswith(f".{ext}"):  # the tool's output path (a piece's next version), checked again
            try:
                path, rel = self.host.workspace.resolve(wanted)
            except (WorkspaceError, ValueError, OSError):
                log.warning("job %s: output %r is no longer a workspace path; wrote %s instead", job.id, wanted, rel)
        previous: list[bytes] = []  # the version a remade piece replaces, put back if the transition fails
        params = job.params or {}
        fallback = self.host.settings.workspace / f"renders/{job.kind if job.kind != '3d' else 'meshes'}/" \
            f"{slug(job.prompt)}-{job.id[-6:]}.{ext}"

        superseded = False  # a later order for the same output path owns it now (fenced by order, not just content)

        def store() -> tuple[str, Any, str]:  # one trip to a thread: folder, write, hash of the bytes in hand
            nonlocal path, rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if params.get("keep"):  # a production result: its bytes stay restorable by hash (studio/results.py)
                keep_result(self.host.settings.workspace, data, ext)
            if path != fallback and superseded:
                log.info("job %s: a later order writes %s; this older result goes to a new file", job.id, rel)
                path, rel = fallback, str(fallback.relative_to(self.host.settings.workspace))
                path.parent.mkdir(parents=True, exist_ok=True)
            elif path != fallback and "output_base" in params:  # a remade piece: only over the version it was made from
                before = path.read_bytes() if path.is_file() else None
                if replace_if_unchanged(path, data, params["output_base"]):
                    previous.extend([before] if before is not None else [])
                    return hashlib.sha256(data).hexdigest(), path, rel
                log.info("job %s: %s changed since it was ordered; the result goes to a new file", job.id, rel)
                path, rel = fallback, str(fallback.relative_to(self.host.settings.workspace))
                path.parent.mkdir(parents=True, exist_ok=True)
            elif path.is_file():
                previous.append(path.read_bytes())
            atomic_write(path, data)
            return hashlib.sha256(data).hexdigest(), path, rel

        workspace = self.host.workspace
        t = clock.now()
        written = False
        refused = ""  # why the result did not check out against its step (J4), if it did not
        try:
            async with self.host.db.write() as conn:
                current = (await conn.execute(select(s.jobs.c.status).where(s.jobs.c.id == job.id))).scalar()
                if current in TERMINAL:
                    settled = current
                else:
                    moved = await conn.execute(update(s.jobs).where(s.jobs.c.id == job.id, s.jobs.c.status == current)
                                               .values(status="done", progress=1.0, event_seq=seq, artifact_path=rel,
                                                       updated_at=t, finished_at=t))
                    settled = None if moved.rowcount else "moved"
                if settled is None:
                    superseded = bool(wanted and params.get("keep") and await self._superseded(conn, job, wanted))
                    digest, path, rel = await asyncio.to_thread(store)
                    written = True
                    if rel != (params.get("output") or rel):  # the creator's newer save stayed; say where this went
                        await conn.execute(update(s.jobs).where(s.jobs.c.id == job.id).values(artifact_path=rel))
                    seen = await workspace.record(conn, rel, digest, len(data), author="agent", task_id=job.task_id,
                                                  key=job.idempotency_key)
                    if job.task_id:
                        await workspace.touch(conn, job.task_id, seen, wrote=True)
                    step = (job.params or {}).get("step")
                    refused, refusal = "", None
                    if step:  # VALIDATE before the checklist moves (J4)
                        verdict = await steps_evidence.complete_by_job(conn, self.host.workspace.root, job, step, rel,
                                                                       seen.object_id, seen.version)
                        refusal = None if verdict.ok else said("did_not_check_out", problems="; ".join(verdict.problems))
                        refused = refusal.text("en") if refusal is not None else ""
                    if refusal is not None:  # not what was ordered: the job's failure (refunded)
                        await conn.execute(update(s.jobs).where(s.jobs.c.id == job.id).values(
                            status="failed", error=refused))
                        await refund_job(conn, job.id, t)
                        await self.host.ledger.event(conn, "job_failed", job.task_id, job.turn_id, job_id=job.id,
                                                   error=refused, error_said=refusal.stored(), refunded=True, path=rel)
                    else:
                        await self.host.ledger.event(conn, "job_done", job.task_id, job.turn_id, job_id=job.id,
                                                   path=rel)
                    requeued = await self._requeue(conn, job.turn_id)
        except BaseException:
            if written:  # the transition did not commit: nothing of it stays in the workspace
                if previous:
                    atomic_write(path, previous[0])
                else:
                    path.unlink(missing_ok=True)
            raise
        if settled is not None:
            latest = await self.job(job.id)
            if self._late(latest):
                await self._keep_aside(latest, seq)
            elif latest.status != "done":
                self._discard(job.provider_job_id)
            return
        self._discard(job.provider_job_id)
        if refused:
            self.host.bus.publish(Notice.JOB_DONE, job.task_id, job_id=job.id, status="failed", error=refused)
        else:
            self.host.bus.publish(Notice.JOB_DONE, job.task_id, job_id=job.id, path=rel)
        self._woken(job.turn_id, requeued)

    async def _superseded(self, conn: Any, job: Any, output: str) -> bool:
        """Whether an order placed after JOB writes the same OUTPUT path (and may still deliver): then JOB's
        late result must not take the path that order owns."""
        later = (await conn.execute(select(s.jobs.c.id).where(
            s.jobs.c.workspace == self.workspace_key, s.jobs.c.id != job.id, s.jobs.c.created_at > job.created_at,
            s.jobs.c.status.notin_(("failed", "cancelled", "expired")),
            s.jobs.c.params["output"].as_string() == output))).first()
        return later is not None

    async def _requeue(self, conn: Any, turn_id: str | None) -> bool:
        """Queue the job's turn in the transaction that settles the job, so no observer (run-once's quiescence
        check) ever sees the job settled while its turn still waits."""
        return turn_id is not None and await self.host.reactions.job_settled(conn, turn_id)

    def _woken(self, turn_id: str | None, requeued: bool) -> None:
        if requeued and turn_id is not None:
            self.host.wake(turn_id)
            self.host.changed()

    def _still_working(self, job: Any) -> bool:
        """A local provider still making JOB in this process is not past its deadline (see EmbeddedStudio)."""
        working = getattr(self.provider, "working", None)
        return bool(working and job.provider_job_id and working(job.provider_job_id))

    def _late(self, job: Any) -> bool:
        """A cancelled job whose provider could not cancel it: a result that still comes is kept aside."""
        return (job.status == "cancelled" and job.cancel_state in ("requested", "unsupported")
                and not getattr(self.provider, "cancels", False))

    def _discard(self, provider_job_id: str | None) -> None:
        discard = getattr(self.provider, "discard", None)
        if discard is not None and provider_job_id:
            discard(provider_job_id)

    async def _finish(self, job_id: str, status: str, error: str | Said, *, refund: bool,
                      seq: int | None = None) -> bool:
        """End a job in STATUS, conditional on the state read here; events, refund and wake-up follow only
        the transition that happened. Returns whether it happened. ERROR: the job's `error` in English, with
        its catalogue form (a `Said`) kept on the `job_<status>` event for the creator's language."""
        error, words = split_error(error)
        error = error or ""
        extra = {"error_said": words.stored()} if words is not None else {}
        t = clock.now()
        async with self.host.db.write() as conn:
            job = (await conn.execute(select(s.jobs).where(s.jobs.c.id == job_id))).one()
            if job.status in TERMINAL and not (job.status == "unknown" and status == "expired"):
                return False
            values: dict[str, Any] = dict(status=status, error=error, updated_at=t, finished_at=t)
            if seq is not None:
                values["event_seq"] = seq
            moved = await conn.execute(update(s.jobs).where(s.jobs.c.id == job_id, s.jobs.c.status == job.status)
                                       .values(**values))
            if not moved.rowcount:
                return False
            if refund:
                await refund_job(conn, job_id, t)
            await self.host.ledger.event(conn, f"job_{status}", job.task_id, job.turn_id, job_id=job_id, error=error,
                                       refunded=refund, **extra)
            requeued = await self._requeue(conn, job.turn_id)
        self._discard(job.provider_job_id)
        self.host.bus.publish(Notice.JOB_DONE, job.task_id, job_id=job_id, status=status, error=error)
        self._woken(job.turn_id, requeued)
        return True

    # ---- cancellation (a stopped or archived task) ---------------------------------------------------
    async def settle_cancelled(self) -> None:
        """Tell the provider about jobs cancelled in the database (by a stop in any process): the embedded
        studio stops rendering; a provider that cannot cancel is noted on the job, and its late result, if
        it comes, is kept aside."""
        async with self.host.db.read() as conn:
            rows = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status == "cancelled", s.jobs.c.cancel_state == "requested",
                s.jobs.c.provider_job_id.is_not(None)))).all()
        for job in rows:
            if getattr(self.provider, "cancels", False):
                try:
                    await self.provider.cancel(job.provider_job_id)
                    state, note = "cancelled", ""
                except ProviderError as exc:
                    state, note = "unsupported", f"; the studio could not cancel it ({exc})"
            else:
                state, note = "unsupported", ("; the provider cannot cancel a job, so a result that still comes "
                                              "is kept aside in .lomo/late/ (not attached)")
            async with self.host.db.write() as conn:
                moved = await conn.execute(update(s.jobs).where(
                    s.jobs.c.id == job.id, s.jobs.c.cancel_state == "requested").values(
                    cancel_state=state, error=(job.error or "cancelled") + note, updated_at=clock.now()))
            if moved.rowcount and state == "cancelled":
                self._discard(job.provider_job_id)
            if moved.rowcount:
                self.host.bus.publish(Notice.JOB_DONE, job.task_id, job_id=job.id, status="cancelled")

    async def _keep_aside(self, job: Any, seq: int) -> None:
        """A cancelled job's late result: stored under .lomo/late/, never attached, never progress."""
        try:
            data, ext = await self.provider.fetch(job.provider_job_id)
        except ProviderError as exc:
            log.info("late result of cancelled job %s could not be fetched: %s", job.id, exc)
            return
        rel = f".lomo/late/{job.id}.{ext}"
        path = self.host.settings.workspace / rel
        async with self.host.db.write() as conn:
            moved = await conn.execute(update(s.jobs).where(
                s.jobs.c.id == job.id, s.jobs.c.status == "cancelled",
                s.jobs.c.cancel_state.in_(("requested", "unsupported"))).values(
                cancel_state="kept_aside", event_seq=seq, updated_at=clock.now(),
                error=message("job.kept_aside", await _language(conn, job.task_id), error=job.error or "cancelled",
                              path=rel)))
            if moved.rowcount:
                def store() -> None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(path, data)

                await asyncio.to_thread(store)
                await self.host.ledger.event(conn, "job_result_kept_aside", job.task_id, job.turn_id, job_id=job.id,
                                           path=rel)
        self._discard(job.provider_job_id)

    # ---- reconciliation ---------------------------------------------------------------------------
    async def _reconcile_loop(self) -> None:
        period = max(0.05, min(self.host.settings.watchdog_seconds, SILENCE_SECONDS * self.host.settings.time_scale))
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
        """Pass cancellations to the provider, poll silent jobs (lost callbacks) and expire the ones past
        their deadline (refunded)."""
        await self.settle_cancelled()
        t = clock.now()
        silence = SILENCE_SECONDS * self.host.settings.time_scale
        async with self.host.db.read() as conn:
            rows = (await conn.execute(select(s.jobs).where(
                s.jobs.c.provider == self.provider.name, s.jobs.c.workspace == self.workspace_key,
                s.jobs.c.status.in_(("submitting", "queued", "running", "unknown"))))).all()
        for job in rows:
            if job.status == "cancelled":
                continue
            if t > job.deadline and not self._still_working(job):
                await self._finish(job.id, "expired", said("deadline"), refund=True)
            elif job.provider_job_id and job.status != "unknown" and t - job.updated_at > silence:
                try:
                    await self._apply(await self.provider.status(job.provider_job_id))
                except ProviderError as exc:
                    log.info("poll of %s failed: %s", job.id, exc)


LIVE = ("submitting", "queued", "running", "unknown")


async def refund_job(conn: Any, job_id: str, at: float) -> None:
    await conn.execute(update(s.charges).where(s.charges.c.job_id == job_id, s.charges.c.status == "charged").values(
        status="refunded", refunded_at=at))


async def _language(conn: Any, task_id: str | None) -> str:
    """The language of TASK_ID ("en" without one): a job's words are its task's."""
    if task_id is None:
        return "en"
    return (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"


async def cancel_task_jobs(conn: Any, task_id: str, reason: str) -> list[str]:
    """Cancel TASK_ID's in-flight jobs in the caller's transaction (its stop or archive): each ends
    `cancelled` (conditional on the state read), its charge is refunded (nothing was delivered), event
    `job_cancelled`. The provider hears of it from the studio that runs the job (`settle_cancelled`)."""
    t = clock.now()
    cancelled = []
    rows = (await conn.execute(select(s.jobs).where(s.jobs.c.task_id == task_id, s.jobs.c.status.in_(LIVE)))).all()
    error = message("job.cancelled", await _language(conn, task_id), reason=reason) if rows else ""
    for job in rows:
        moved = await conn.execute(update(s.jobs).where(s.jobs.c.id == job.id, s.jobs.c.status == job.status).values(
            status="cancelled", cancel_state="requested", error=error, updated_at=t, finished_at=t))
        if not moved.rowcount:
            continue
        await refund_job(conn, job.id, t)
        await conn.execute(insert(s.events).values(type="job_cancelled", at=t, task_id=task_id, turn_id=job.turn_id,
                                                   data={"job_id": job.id, "reason": reason, "refunded": True}))
        cancelled.append(job.id)
    return cancelled
