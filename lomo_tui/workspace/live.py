"""The workspace as the runtime sees it over time: a start-up reconcile, then a live watcher.

At start the folder is compared with the database (files edited, added or deleted while Lomo was
closed become creator versions); with `watch`, a watchfiles watcher then records every save as it
happens. Each creator version leaves change notices for tasks that read an older one; nothing
wakes the agent (H2).
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import select

from ..base.bus import Notice
from ..store import schema as s
from .watcher import FileStamp, WorkspaceWatcher

if TYPE_CHECKING:
    from ..base.bus import Bus
    from ..store.engine import Database
    from .objects import Workspace

log = logging.getLogger("lomo.workspace")
STAMPS = "stamps.json"


class WorkspaceHost(Protocol):
    """What the live workspace uses of the runtime that hosts it."""

    workspace: Workspace
    db: Database
    bus: Bus


class LiveWorkspace:
    def __init__(self, host: WorkspaceHost, *, watch: bool) -> None:
        self.host = host
        self.watch = watch
        self.watcher = WorkspaceWatcher(host.workspace.root)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    @property
    def _stamps_path(self) -> Any:
        return self.host.workspace.root / ".lomo" / STAMPS

    def _load_stamps(self) -> dict[str, FileStamp]:
        try:
            raw = json.loads(self._stamps_path.read_text(encoding="utf-8"))
            return {rel: FileStamp(**stamp) for rel, stamp in raw.items()}
        except (OSError, ValueError, TypeError):
            return {}

    def _save_stamps(self) -> None:
        try:
            self._stamps_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._stamps_path.with_suffix(".tmp")
            tmp.write_text(json.dumps({rel: asdict(st) for rel, st in self.watcher.stamps.items()}))
            tmp.replace(self._stamps_path)
        except OSError as exc:
            log.warning("could not save workspace stamps: %s", exc)

    async def start(self) -> None:
        if self.host.workspace.id is None:
            await self.host.workspace.open()
        scanned = await asyncio.to_thread(self.watcher.initial_scan, self._load_stamps())
        await self.reconcile(scanned)
        await asyncio.to_thread(self._save_stamps)
        if self.watch:
            self._task = asyncio.create_task(self._loop(), name="lomo-watcher")
        self.ready.set()

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            await asyncio.to_thread(self._save_stamps)

    async def reconcile(self, scanned: dict[str, str]) -> None:
        """Bring the database in line with the folder as it is now."""
        async with self.host.db.read() as conn:
            known = {r.path: r.hash for r in (await conn.execute(select(s.objects.c.path, s.objects.c.hash).where(
                self.host.workspace.scope))).all()}
        new = {rel: digest for rel, digest in scanned.items() if rel not in known}
        if new:
            await self.host.workspace.index_new(new)
        for rel, digest in scanned.items():
            if rel in known and known[rel] != digest:
                await self._observe(rel, "modified")
        for rel in known.keys() - scanned.keys():
            await self._observe(rel, "deleted")

    async def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                async for batch in self.watcher.changes(self._stop):
                    for change in batch:
                        await self._observe(change.rel, change.change, change.old_rel)
            except Exception:  # noqa: BLE001 — a watcher hiccup must not end live updates
                log.exception("workspace watcher failed; restarting it")
                await asyncio.sleep(1.0)

    async def _observe(self, rel: str, change: str, old_rel: str | None = None) -> None:
        try:
            seen = await self.host.workspace.observe(rel, deleted=change == "deleted", moved_from=old_rel)
        except Exception:  # noqa: BLE001 — one unreadable file must not stop the others
            log.exception("could not record %s", rel)
            return
        version = seen.version if seen else None
        self.host.bus.publish(Notice.OBJECT_CHANGED, None, path=rel, change=change, version=version,
                            new_version=bool(seen and seen.new), old_path=old_rel)
