"""Command palette (Ctrl+P): new task, open task, approve next gate, switch model, switch theme,
open file, pause all, memory, stats, help."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Awaitable, Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .. import views

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
        app: Any = self.app
        out: list[Command] = [
            ("New task…", app.action_new_task, "Create a persistent task by its title (no routing)"),
            ("Approve next gate", app.approve_next_gate, "Approve the oldest gate waiting for you (option 1)"),
            ("Pause all tasks", app.do_pause_all, "Pause every running or waiting task"),
            ("Memory: what Lomo remembers", app.action_memory, "Each memory with its sources; edit, confirm, forget"),
            ("Stats: verified progress and model calls", app.action_stats, "The figures of `lomo stats`, charted"),
            ("Context: what the model sees", app.action_context,
             "The next step's prompt: layers, budget, tools, cache (`lomo context`)"),
            ("Help: keys", app.action_help, "Every key, and how to change them"),
        ]
        out += [(f"Open task: {t.title}", partial(app.open_task, t.id), f"{t.kind} · {t.status} · {t.id}")
                for t in self.tasks]
        out += [(f"Unarchive task: {t.title}", partial(app.do_unarchive, t.id), f"{t.kind} · {t.id}")
                for t in self.archived]
        current = app.session.model_name
        out += [(f"Switch model: {name}", partial(app.do_switch_model, name),
                 "current model" if name == current else "use it for the next steps")
                for name in model_choices(app.session.settings, current)]
        out += [(f"Switch theme: {name}", partial(app.action_switch_theme, name),
                 "current theme" if name == app.theme else "")
                for name in sorted(app.available_themes) if name.startswith("lomo") or name == app.theme]
        root: Path = app.workspace_root
        out += [(f"Open file: {path}", partial(app.open_file, root / path), "preview (e edits)")
                for path in self.files]
        return out

    async def discover(self) -> Hits:
        for text, callback, help_text in self.commands():
            if text.startswith(("Open file:", "Switch theme:")):
                continue
            yield DiscoveryHit(text, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, callback, help_text in self.commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), callback, help=help_text)
