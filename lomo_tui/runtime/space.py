"""Running out of disk: say so once, hold the work the full disk stopped, go on when space returns.

A write that fails because the database's disk is full has been rolled back whole, and the store has renewed
its connection (`store.engine.DiskFull`). The turns it stopped are parked here rather than failed or counted as
crashes. One episode of a full disk is reported once (one stderr line, one log line, a `disk_full` notice on
the bus) and recorded once, as a `disk_full` event written when it is over (it could not be written while the
disk was full). Meanwhile a probe, retried with backoff, waits until the disk has room (SQLite: free space on
its filesystem) and the database takes a write again, hands back the parked turns' leases and wakes them; the
episode is over when one of them gets through.
"""
from __future__ import annotations

import asyncio
import logging
import shutil
import sys
from typing import TYPE_CHECKING

from ..store.engine import DiskFull, run
from ..base.bus import Notice
from .. import clock

if TYPE_CHECKING:
    from .scheduler import Runtime

log = logging.getLogger("lomo.runtime")

FIRST_PROBE_S = 0.1  # the first retry after a disk-full; doubling up to
LAST_PROBE_S = 2.0  # the longest wait between retries: work resumes within this of space returning
MIN_FREE_BYTES = 1 << 20  # SQLite: free space on the database's filesystem before a retry is worth it
RELEASE_PARKED = ("UPDATE turns SET lease_owner = NULL, lease_expires = NULL, updated_at = :now "
                  "WHERE id = :id AND lease_owner = :owner AND status = 'running'")


class SpaceWatch:
    """One per runtime: the disk-full episode of its database, if one is going on."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.full_since: float | None = None
        self.message = ""
        self._parked: set[str] = set()  # stopped by the full disk, not yet woken
        self._episode_turns: set[str] = set()  # every turn this episode stopped
        self._delay = FIRST_PROBE_S
        self._probe: asyncio.Task[None] | None = None
        self._closing: asyncio.Task[None] | None = None

    @property
    def full(self) -> bool:
        return self.full_since is not None

    def parked(self, turn_id: str) -> bool:
        return turn_id in self._parked

    def noticed(self, exc: DiskFull, turn_id: str | None = None) -> None:
        """A write failed for want of space (TURN_ID's, when a turn was stopped by it)."""
        if turn_id is not None:
            self._parked.add(turn_id)
            self._episode_turns.add(turn_id)
        if self.full_since is None:
            self.full_since, self.message, self._delay = clock.now(), str(exc), FIRST_PROBE_S
            log.error("%s", self.message)  # once per episode, without a traceback: it is not a defect
            print(f"lomo: {self.message}", file=sys.stderr, flush=True)
            self.rt.bus.publish(Notice.DISK_FULL, None, message=self.message)
        if self._probe is None or self._probe.done():
            self._probe = asyncio.create_task(self._wait_for_space(), name="lomo-disk-full")

    def went_on(self, turn_id: str | None) -> None:
        """TURN_ID ran without meeting a full disk: if this episode had stopped it, the episode is over. (None: a
        watchdog pass went through; that ends an episode that stopped no turn, once the disk has room.)"""
        if self.full_since is None or turn_id in self._parked:
            return
        if self._episode_turns:
            if turn_id not in self._episode_turns:
                return
        elif not self._has_room():
            return
        since, message, turns = self.full_since, self.message, sorted(self._episode_turns)
        self.full_since, self.message, self._episode_turns = None, "", set()
        log.info("the disk has room again; %d turn(s) went on", len(turns))
        self.rt.bus.publish(Notice.DISK_SPACE_BACK, None, turns=turns)
        self._closing = asyncio.create_task(self._record(since, message, turns), name="lomo-disk-full-event")

    async def stop(self) -> None:
        for task in (self._probe, self._closing):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    def _has_room(self) -> bool:
        path = self.rt.db.sqlite_path
        if path is None:
            return True  # a server's disk: only a write can tell
        try:
            return shutil.disk_usage(path.parent).free >= MIN_FREE_BYTES
        except OSError:
            return True

    async def _wait_for_space(self) -> None:
        while self._parked:
            await asyncio.sleep(self._delay)
            self._delay = min(self._delay * 2, LAST_PROBE_S)
            if not self._has_room():
                continue
            parked = sorted(self._parked)
            try:
                async with self.rt.db.write() as conn:
                    now = clock.now()
                    for turn_id in parked:
                        await run(conn, RELEASE_PARKED, {"id": turn_id, "owner": self.rt.owner, "now": now})
            except DiskFull:
                continue
            self._parked.difference_update(parked)
            for turn_id in parked:
                self.rt.wake(turn_id)

    async def _record(self, since: float, message: str, turns: list[str]) -> None:
        delay = FIRST_PROBE_S
        while True:
            try:
                await self.rt.ledger.record_event("disk_full", message=message, since=since,
                                                  resumed_at=clock.now(), turns=turns)
                return
            except DiskFull:
                await asyncio.sleep(delay)
                delay = min(delay * 2, LAST_PROBE_S)
