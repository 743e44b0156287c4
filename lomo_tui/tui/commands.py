"""Command palette (Ctrl+P): new task, open task, approve next gate, switch model, switch theme,
open file, pause all, memory, stats, help."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Awaitable, Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .. import views
from .strings import text

Command = tuple[str, Callable[[], Awaitable[Any] | Any], str]


def model_choices(settings: Any, current: str) -> list[str]:
    """Models offered for switching: lomo/local, the current one, and `[models] choices` from config."""
    names = ["lomo/local", current]
    for section in ("models", "tui"):
        listed = settings.section(section).get("choices" if section == "models" else "models", [])
        if isinstance(listed, list):
            names += [str(n) for n in listed]
    return list(dict.fromkeys(n for n in names if n))


class LomoCommands(Provider):
    async def startup(self) -> None:
        self.tasks: list[views.TaskChoice] = []
        self.archived: list[views.TaskChoice] = []
        self.files: list[str] = []
        app: Any = self.app
        if app.session.opened:
            self.tasks = await views.load_task_choices(app.session.db)
            self.archived = await views.load_task_choices(app.session.db, archived=True)
            self.files = await views.load_file_paths(app.session.db, workspace=app.session.settings.workspace)

    def commands(self) -> list[Command]:
        """The palette's commands, worded in the creator's language."""
        app: Any = self.app
        out: list[Command] = [(text(f"palette.{name}"), action, text(f"palette.{name}_help")) for name, action in (
            ("new_task", app.action_new_task), ("approve_next", app.approve_next_gate),
            ("pause_all", app.do_pause_all), ("memory", app.action_memory), ("stats", app.action_stats),
            ("context", app.action_context), ("help", app.action_help))]
        out += [(text("palette.open_task", title=t.title), partial(app.open_task, t.id),
                 f"{t.kind} · {t.status} · {t.id}") for t in self.tasks]
        out += [(text("palette.unarchive", title=t.title), partial(app.do_unarchive, t.id), f"{t.kind} · {t.id}")
                for t in self.archived]
        current = app.session.model_name
        out += [(text("palette.switch_model", name=name), partial(app.do_switch_model, name),
                 text("palette.current_model") if name == current else text("palette.use_model"))
                for name in model_choices(app.session.settings, current)]
        out += [(text("palette.switch_theme", name=name), partial(app.action_switch_theme, name),
                 text("palette.current_theme") if name == app.theme else "")
                for name in sorted(app.available_themes) if name.startswith("lomo") or name == app.theme]
        root: Path = app.workspace_root
        self.quiet = (text("palette.open_file", path=""), text("palette.switch_theme", name=""))
        out += [(text("palette.open_file", path=path), partial(app.open_file, root / path),
                 text("palette.open_file_help")) for path in self.files]
        return out

    async def discover(self) -> Hits:
        commands = self.commands()
        for said, callback, help_text in commands:
            if said.startswith(self.quiet):  # files and themes are found by searching, not listed
                continue
            yield DiscoveryHit(said, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for said, callback, help_text in self.commands():
            score = matcher.match(said)
            if score > 0:
                yield Hit(score, matcher.highlight(said), callback, help=help_text)
