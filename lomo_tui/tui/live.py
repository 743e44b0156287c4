"""From runtime notices to screen updates, without polling.

The pump waits on the runtime bus. Tokens go straight to the screen showing that task's stream;
every other notice marks the views stale and schedules one refresh a short moment later, so a burst
of notices (a turn with ten tool calls) costs one round of queries, not ten. Idle = no work at all.
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ..base.bus import Notice

if TYPE_CHECKING:
    from .app import LomoApp

from .strings import creator_language, text

log = logging.getLogger("lomo.tui.live")

COALESCE_S = 0.05
PROGRESS_S = 0.25  # job progress can tick many times a second; cards need not
PROGRESS_TYPES = (Notice.JOB_PROGRESS,)
STREAM_TYPES = (Notice.TOKEN, Notice.THINKING)
END_LIVE = (Notice.STEP_COMMITTED, Notice.TURN_COMPLETED, Notice.TURN_ENDED, Notice.TURN_FAILED,
            Notice.TURN_SUSPENDED)
# Notices after which a task (and its card) should be looked at again, and ones that may change files.
FILE_TYPES = (Notice.OBJECT_CHANGED, Notice.TOOL_FINISHED, Notice.JOB_DONE)


class Live:
    def __init__(self, app: "LomoApp") -> None:
        self.app = app
        self.tasks: set[str | None] = set()
        self.files: list[dict[str, Any]] = []
        self.everything = False
        self._timer: Any = None
        self._lock = asyncio.Lock()
        self.notices = 0  # how many notices arrived (tests and the benchmark read it)
        self.refreshes = 0

    async def pump(self, queue: asyncio.Queue[Any]) -> None:
        while True:
            notice = await queue.get()
            self.notices += 1
            try:
                await self.dispatch(notice)
            except Exception:  # noqa: BLE001 — one bad notice must not stop live updates
                log.exception("live update for %s failed", notice.type)

    async def dispatch(self, notice: Any) -> None:
        screen = self.app.screen
        if notice.type in STREAM_TYPES:
            handler = getattr(screen, "on_live_token", None)
            if handler is not None:
                await handler(notice)
            return
        if notice.type in END_LIVE:
            handler = getattr(screen, "on_live_end", None)
            if handler is not None:
                await handler(notice)
        if notice.type == Notice.TURN_FAILED:
            reason = notice.data.get("reason", "")
            if notice.task_id in (None, self.app.session.main_id):
                lang = creator_language(self.app)
                self.app.notify(f"{text('error.toast_main', lang, reason=reason)}\n"
                                f"{text('error.toast_main_todo', lang)}",
                                title=text("error.toast_title_main", lang), severity="error", timeout=10)
            else:
                title = await self.app.task_title(notice.task_id)
                lang = self.app.task_language(notice.task_id)
                self.app.notify(f"{text('error.toast_task', lang, title=title, reason=reason)}\n"
                                f"{text('error.toast_task_todo', lang)}", title=text("error.toast_title", lang),
                                severity="error", timeout=8)
        if notice.type == Notice.JOB_DONE and notice.data.get("job_id"):
            self.app.run_worker(self.app.job_finished(notice.data["job_id"], notice.task_id), group="bell",
                                exit_on_error=False)
        self.tasks.add(notice.task_id)
        if notice.type in FILE_TYPES:
            self.files.append(dict(notice.data, type=notice.type))
        self.schedule(delay=PROGRESS_S if notice.type in PROGRESS_TYPES else COALESCE_S)

    def schedule(self, everything: bool = False, delay: float = COALESCE_S) -> None:
        """Refresh once, DELAY seconds from now (notices arriving meanwhile join the same refresh)."""
        self.everything = self.everything or everything
        if self._timer is None:
            self._timer = self.app.set_timer(delay, self._fire, name="live-refresh")

    def _fire(self) -> None:
        self._timer = None
        self.app.run_worker(self.flush(), group="live-refresh", exit_on_error=False)

    async def flush(self) -> None:
        async with self._lock:
            tasks, self.tasks = self.tasks, set()
            files, self.files = self.files, []
            everything, self.everything = self.everything, False
            self.refreshes += 1
            await self.app.refresh_views(tasks=tasks, files=files, everything=everything)
