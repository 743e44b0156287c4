"""The Lomo TUI application: one screen (stream, gates, tree), a task view, a palette, themes.

Start-up order: the main screen paints first (settings are already read); then a worker builds the
runtime in a thread (SQLAlchemy, migrations, workers), subscribes to its bus and shows the state. A
remote model's client library (litellm) loads last, in a thread, while the header says "loading".
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterable

from textual.app import App
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from .. import views
from ..errors import LomoError, Said
from . import keys
from .actions import Actions, log_hint
from .fmt import Clock, clock_time
from .images import image_mode
from .live import Live
from .palette import PaletteChrome
from .session import Seed, Session, is_remote
from .strings import creator_language, has, text
from .themes import DEFAULT_THEME, discover

log = logging.getLogger("lomo.tui")
BELL_CHOICES = ("gates", "jobs", "all", "off")


def _commands() -> Any:
    from .commands import LomoCommands

    return LomoCommands


def _main_screen() -> Screen:
    from .screens.main import MainScreen

    return MainScreen()


class LomoApp(PaletteChrome, Actions, App[int]):
    TITLE = "Lomo"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere keep it
    COMMANDS = App.COMMANDS | {_commands}
    MODES = {"main": _main_screen}  # a mode, so the screen's own .tcss is loaded with it
    DEFAULT_MODE = "main"
    path_home: Path | None = None  # what "~" stands for in the header (None: the home folder)
    BINDINGS = keys.bindings("app.quit", "app.help", "app.palette", "app.new_task", "app.gates", "app.tree",
                             "app.refresh", "app.memory", "app.stats", "app.context")

    def __init__(self, settings: Any, *, runtime: Any = None, start_workers: bool = True, seed: Seed | None = None,
                 clock: Clock | None = None, images: str | None = None, config_dir: Path | None = None,
                 theme: str | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.session = Session(settings, runtime=runtime, start_workers=start_workers, seed=seed)
        self.session.on_language = self._language_changed
        self.clock: Clock = clock or clock_time
        self.image_mode = images or image_mode(settings)
        self.workspace_root = Path(settings.workspace)
        self.config_dir = config_dir
        self.currency = str(settings.section("budget").get("currency", "credits"))
        self.requested_theme = theme or str(settings.section("tui").get("theme", "") or self._remembered_theme()
                                            or DEFAULT_THEME)
        self.live = Live(self)
        self.snap: views.Snapshot | None = None
        self.booted = False
        self.boot_error: str | None = None
        self.queued: list[tuple[str, str | None]] = []  # typed before the runtime was ready
        self.keymap, self._problems = keys.keymap_from_config(settings.file or {})
        self.workspace_problem: str | None = None  # the runtime is not started on a workspace it cannot use
        try:
            self.workspace_root.mkdir(parents=True, exist_ok=True)
            if not os.access(self.workspace_root, os.W_OK | os.X_OK):
                self.workspace_problem = text("app.workspace_unwritable", path=self.workspace_root)
        except OSError as exc:
            self.workspace_problem = text("app.workspace_uncreatable", path=self.workspace_root, error=exc.strerror)

    def _language_changed(self, lang: str) -> None:
        """The creator now writes in LANG: the footers and the composers speak it too (the other text reads it
        when drawn)."""
        from .widgets.composer import Composer
        from .widgets.footer import refresh_footers

        refresh_footers(self)
        for screen in self.screen_stack:
            for composer in screen.query(Composer):
                composer.reword()

    # ---- start-up -------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._install_themes()
        if self.keymap:
            self.set_keymap(self.keymap)
        for problem in self._problems:  # the config's and the themes' problems, in the creator's language
            self.notify(problem.text(creator_language(self)), title=text("app.config_title"), severity="warning",
                        timeout=10)
        self.call_after_refresh(self._start)

    def _install_themes(self) -> None:
        user_dir = self.config_dir
        if user_dir is None:
            from ..config import config_dir

            user_dir = config_dir()
        found, problems = discover(user_dir / "themes")
        for theme in found:
            self.register_theme(theme)
        self._problems.extend(problems)
        name = self.requested_theme
        if name not in self.available_themes:
            self._problems.append(Said("tui_app.theme_missing", {"name": repr(name), "default": DEFAULT_THEME,
                                                                 "folder": user_dir / "themes"}))
            name = DEFAULT_THEME
        try:
            self.theme = name
        except Exception as exc:  # noqa: BLE001 — a theme Textual cannot use: say so, use the built-in one
            log.warning("theme %s failed: %s", name, exc)
            self._problems.append(Said("tui_app.theme_broken", {"name": repr(name), "error": exc,
                                                                "default": DEFAULT_THEME, "folder": user_dir / "themes"}))
            from .themes import builtin

            self.register_theme(builtin(DEFAULT_THEME))
            self.theme = DEFAULT_THEME

    def _start(self) -> None:
        self.run_worker(self._boot(), name="boot", group="boot", exit_on_error=False)

    async def _boot(self) -> None:
        self.set_status(text("header.starting"))
        try:
            if self.workspace_problem:
                raise LomoError(text("app.workspace_choose", problem=self.workspace_problem))
            await self.session.open()
        except Exception as exc:  # noqa: BLE001 — stay open and say what to do
            log.log(logging.WARNING if isinstance(exc, LomoError) else logging.ERROR, "runtime failed to start",
                    exc_info=not isinstance(exc, LomoError))
            self.boot_error = str(exc)
            self.set_status(text("start.not_started"))
            waiting, self.queued = [m for m, _ in self.queued], []
            self.show_queued()
            self.give_back(waiting)
            kept = text("start.kept") if waiting else ""
            self.notify(f"{exc}\n{text('start.check')} {kept}{log_hint()}",
                        title=text("start.failed_title"), severity="error", timeout=30)
            return
        self.run_worker(self.live.pump(self.session.queue), name="live", group="live", exit_on_error=False)
        await self.refresh_views(everything=True)
        self.booted = True
        self.set_status("")
        if self.queued:
            await self.send_queued()
        if is_remote(self.session.model_name):
            self.run_worker(self._load_model(), name="model", group="model", exclusive=True, exit_on_error=False)

    async def _load_model(self) -> None:
        self.set_model_state("loading")
        try:
            await self.session.preload_model()
        except Exception as exc:  # noqa: BLE001
            self.set_model_state("unavailable")
            self.notify(text("app.model_failed", error=exc), title=text("app.model_title"), severity="error",
                        timeout=15)
            return
        self.set_model_state("ready")

    def after_model_switch(self) -> None:
        self.set_model_state(self.session.model_state)
        if is_remote(self.session.model_name):
            self.run_worker(self._load_model(), name="model", group="model", exclusive=True, exit_on_error=False)
        self.live.schedule(everything=True)

    async def on_unmount(self) -> None:
        await self.session.close()

    # ---- state shown everywhere ----------------------------------------------------------------------
    def _headers(self) -> Iterable[Any]:
        from .widgets.header import HeaderBar

        for screen in self.screen_stack:
            yield from screen.query(HeaderBar)

    def set_status(self, status: str) -> None:
        for header in self._headers():
            header.status = status

    def set_model_state(self, state: str) -> None:
        missing = self.key_missing()
        for header in self._headers():
            header.model_state = state
            header.model = self.session.model_name
            header.missing_key = missing or ""

    def key_missing(self) -> str | None:
        """The variable to set when the model has no API key (environment and config.toml; no litellm)."""
        from .keycheck import missing_key

        try:
            return missing_key(self.session.model_name, self.session.settings)
        except Exception:  # noqa: BLE001 — a hint, never a reason not to start
            log.exception("API key check failed")
            return None

    @property
    def main_screen(self) -> Any:
        return self.screen_stack[0] if self.screen_stack else None

    async def refresh_views(self, *, tasks: set[str | None] | None = None, files: list[dict[str, Any]] | None = None,
                            everything: bool = False) -> None:
        """Read the state once and hand it to every screen that shows it."""
        if not self.session.opened:
            return
        snap = await views.snapshot(self.session.db, self.session.settings)
        previous, self.snap = self.snap, snap
        if previous is not None and {g.id for g in snap.gates} - {g.id for g in previous.gates}:
            self.alert("gates")
        for header in self._headers():
            header.header = snap.header
            header.model = self.session.model_name
        for screen in list(self.screen_stack):
            apply = getattr(screen, "apply_snapshot", None)
            if apply is not None:
                await apply(snap, tasks=tasks or set(), everything=everything)

    # ---- the bell: a gate opened, a long job finished ---------------------------------------------------
    def bell_setting(self) -> str:
        """`[tui] bell`: "gates" (default), "jobs", "all" or "off"."""
        value = str(self.settings.section("tui").get("bell", "gates")).lower()
        return value if value in BELL_CHOICES else "gates"

    def alert(self, why: str) -> None:
        """Ring the terminal bell for WHY ("gates" or "jobs") when the creator asked for it."""
        if self.bell_setting() in (why, "all"):
            self.bell()

    async def job_finished(self, job_id: str, task_id: str | None) -> None:
        """A job ended: if it ran long (`[tui] long_job_s`, default 20 s), ring and say so."""
        from sqlalchemy import select

        from ..store import schema as s

        try:
            threshold = float(self.settings.section("tui").get("long_job_s", 20))
        except (TypeError, ValueError):
            threshold = 20.0
        async with self.session.db.read() as conn:
            job = (await conn.execute(select(s.jobs.c.kind, s.jobs.c.status, s.jobs.c.created_at,
                                             s.jobs.c.updated_at).where(s.jobs.c.id == job_id))).first()
        if job is None or (job.updated_at or 0) - (job.created_at or 0) < threshold:
            return
        self.alert("jobs")
        title = await self.task_title(task_id)
        lang = self.task_language(task_id)
        kind = text(f"card.job_{job.kind}", lang) if has(f"card.job_{job.kind}") else job.kind
        status = text(f"card.job_{job.status}", lang) if has(f"card.job_{job.status}") else job.status
        self.notify(text("bell.job_done", lang, kind=kind, title=title, status=status), title=text("bell.title", lang))

    async def task_title(self, task_id: str | None) -> str:
        if self.snap is not None and task_id in self.snap.cards:
            return self.snap.cards[task_id].title
        if task_id in (None, self.session.main_id):
            return text("context.main", creator_language(self))
        return task_id or ""

    def task_language(self, task_id: str | None) -> str:
        """The language of TASK_ID's card (the creator's for the main thread or a task not on screen)."""
        card = self.snap.cards.get(task_id) if self.snap is not None and task_id else None
        return card.language if card is not None else creator_language(self)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            log.error("worker %s failed", event.worker.name, exc_info=error)
            lang = creator_language(self)
            self.notify(f"{type(error).__name__}: {error}. {log_hint(lang)}", title=text("notify.went_wrong", lang),
                        severity="error", timeout=10)

    # ---- app-wide actions ------------------------------------------------------------------------------
    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.keymap))

    async def action_memory(self) -> None:
        from .screens.memory import MemoryScreen

        if not isinstance(self.screen, MemoryScreen):
            await self.push_screen(MemoryScreen())

    async def action_stats(self) -> None:
        from .screens.stats import StatsScreen

        if not isinstance(self.screen, StatsScreen):
            await self.push_screen(StatsScreen())

    async def action_context(self) -> None:
        """What the open task's next step would send (the main thread outside a task view)."""
        from .screens.context_view import ContextScreen
        from .screens.task import TaskScreen

        if isinstance(self.screen, ContextScreen):
            return
        task_id = getattr(self.screen, "task_id", None) if isinstance(self.screen, TaskScreen) else None
        card = self.screen._card(task_id) if task_id else None  # type: ignore[attr-defined]
        title = card.title if card is not None else (task_id or "")
        await self.push_screen(ContextScreen(task_id, title))

    async def action_new_task(self) -> None:
        from .screens.prompt import PromptScreen

        async def made(title: str | None) -> None:
            if title:
                task_id = await self.do_new_task(title)
                if task_id:
                    await self.open_task(task_id)

        await self.push_screen(PromptScreen(text("preview.new_task_title"), text("preview.new_task_ask")), made)

    async def action_refresh_views(self) -> None:
        await self.refresh_views(everything=True)

    def action_focus_gates(self) -> None:
        handler = getattr(self.screen, "focus_gates", None)
        if handler is not None:
            handler()
        else:
            self.notify(text("notify.gates_elsewhere", creator_language(self)))

    def action_focus_tree(self) -> None:
        handler = getattr(self.screen, "focus_tree", None)
        if handler is not None:
            handler()

    def _theme_memory(self) -> Path:
        if self.config_dir is not None:
            return self.config_dir / "last-theme"
        from ..config import config_dir

        return config_dir() / "last-theme"

    def _remembered_theme(self) -> str:
        """The theme last chosen in the palette (config.toml's [tui] theme, when set, wins)."""
        try:
            return self._theme_memory().read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    def action_switch_theme(self, name: str) -> None:
        if name in self.available_themes:
            self.theme = name
            try:  # remembered for the next start
                self._theme_memory().parent.mkdir(parents=True, exist_ok=True)
                self._theme_memory().write_text(name + "\n", encoding="utf-8")
            except OSError as exc:
                self.notify(text("app.theme_unremembered", error=exc.strerror), severity="warning")
        else:
            self.notify(text("app.theme_unknown", name=repr(name)), severity="warning")
