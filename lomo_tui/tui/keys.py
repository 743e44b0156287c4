"""Every key of the TUI in one table: the bindings, the help screen and the README section come from it.

Keys are configurable in `config.toml`:

    [keys]
    "app.help" = "f1,question_mark"
    "gate.approve" = "a"

No default uses ctrl+b (tmux's prefix) or needs the mouse; everything also works with the mouse.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.binding import Binding

from ..errors import Said
from ..language import message


@dataclass(frozen=True)
class Key:
    """One key: what it does and where it works are in the catalogue (`tui_keys.<id>`, `tui_scope.<where>`)."""

    id: str
    key: str
    action: str
    where: str  # a key of the catalogue's [tui_scope]
    show: bool = True
    priority: bool = False
    display: str | None = None

    def what(self, lang: str = "en") -> str:
        return message("tui_keys." + self.id.replace(".", "_"), lang)

    def place(self, lang: str = "en") -> str:
        return message("tui_scope." + self.where, lang)

    @property
    def description(self) -> str:
        """What it does, in English (the binding's word, the README's table; the footer says `what(lang)`)."""
        return self.what()

    @property
    def scope(self) -> str:
        return self.place()


KEYS: tuple[Key, ...] = (
    Key("app.quit", "ctrl+q", "quit", "anywhere", priority=True),
    Key("app.help", "f1,question_mark", "help", "anywhere_help"),
    Key("app.palette", "ctrl+p", "command_palette", "anywhere", show=False, priority=True),
    Key("app.new_task", "ctrl+n", "new_task", "anywhere"),
    Key("app.gates", "ctrl+g", "focus_gates", "anywhere"),
    Key("app.tree", "ctrl+t", "focus_tree", "anywhere"),
    Key("app.refresh", "f5", "refresh_views", "anywhere", show=False),
    Key("app.memory", "f2,ctrl+r", "memory", "anywhere", show=False),
    Key("app.stats", "f3", "stats", "anywhere", show=False),
    Key("app.context", "f4", "context", "anywhere", show=False),
    Key("app.input", "escape", "focus_input", "main_screen", show=False),
    Key("card.open", "enter,o", "open", "card"),
    Key("card.reply", "r", "reply", "card"),
    Key("card.pause", "p", "pause", "card"),
    Key("card.stop", "s", "stop", "card"),
    Key("card.promote", "m", "promote", "card", show=False),
    Key("card.archive", "delete", "archive", "card", show=False),
    Key("gate.approve", "a,y", "approve", "gates"),
    Key("gate.reject", "r,n", "reject", "gates"),
    Key("gate.choose", "1,2,3,4,5,6,7,8,9", "choose_key", "gates", show=False,
        display="1–9"),
    Key("gate.open", "enter,o", "open_task", "gates", show=False),
    Key("tree.edit", "e", "edit", "tree"),
    Key("tree.preview", "space,o", "preview", "tree"),
    Key("stream.earlier", "ctrl+u", "load_earlier", "main_pane", show=False),
    Key("task.back", "escape", "back", "task_view"),
    Key("inbox.withdraw", "w", "withdraw", "task_inbox"),
    Key("inbox.replace", "e", "replace", "task_inbox"),
    Key("artifact.preview", "enter", "preview", "task_artifacts"),
    Key("artifact.edit", "e", "edit", "task_artifacts"),
    Key("graph.open", "enter", "open", "task_graph"),
    Key("graph.rerun", "r", "rerun", "task_graph"),
    Key("graph.skip", "s", "skip", "task_graph"),
    Key("memory.edit", "e", "edit", "memory_view"),
    Key("memory.confirm", "c", "confirm", "memory_view"),
    Key("memory.forget", "f,delete", "forget", "memory_view"),
    Key("memory.back", "escape", "back", "memory_view"),
    Key("stats.period", "p", "period", "stats_view"),
    Key("stats.back", "escape,q", "back", "stats_view"),
    Key("context.back", "escape,q", "back", "context_view"),
    Key("preview.edit", "e", "edit", "preview"),
    Key("preview.next", "right,n", "step(1)", "preview"),
    Key("preview.previous", "left,p", "step(-1)", "preview"),
    Key("preview.play", "space", "play", "preview"),
    Key("preview.close", "escape,q", "dismiss", "preview"),
)
BY_ID = {k.id: k for k in KEYS}


def bindings(*ids: str) -> list[Binding]:
    """Textual bindings (with ids, so a keymap can move them) for the keys IDS."""
    out = []
    for key_id in ids:
        k = BY_ID[key_id]
        out.append(Binding(k.key, k.action, k.description, show=k.show, priority=k.priority, id=k.id,
                           key_display=k.display))
    return out


def keymap_from_config(file: dict[str, Any]) -> tuple[dict[str, str], list[Said]]:
    """The [keys] table of config.toml as a Textual keymap, plus a message per entry that was ignored
    (`[tui_mount]`; `.text(lang)` words it)."""
    table = file.get("keys") if isinstance(file.get("keys"), dict) else {}
    keymap: dict[str, str] = {}
    problems: list[Said] = []
    for key_id, value in table.items():
        if key_id not in BY_ID or key_id == "gate.choose":
            problems.append(Said("tui_mount.key_unknown", {"key": repr(key_id)}))
        elif not isinstance(value, str) or not value.strip():
            problems.append(Said("tui_mount.key_empty", {"key": repr(key_id)}))
        elif "ctrl+b" in value.replace(" ", "").split(","):
            problems.append(Said("tui_mount.key_tmux", {"key": repr(key_id)}))
        else:
            keymap[key_id] = value.replace(" ", "")
    return keymap, problems


NAMES = {"escape": "Esc", "enter": "Enter", "space": "Space", "question_mark": "?", "tab": "Tab", "delete": "Del"}


def pretty(key: str) -> str:
    """"ctrl+q,f1" -> "Ctrl+q / F1"."""
    out = []
    for one in key.split(","):
        *mods, last = one.split("+")
        last = NAMES.get(last, last.upper() if last[:1] == "f" and last[1:].isdigit() else last)
        out.append("+".join([m.capitalize() for m in mods] + [last]))
    return " / ".join(out)


def help_rows(keymap: dict[str, str] | None = None, lang: str = "en") -> list[tuple[str, str, str]]:
    """(scope, keys, what) rows in LANG, with the creator's keymap applied."""
    keymap = keymap or {}
    return [(k.place(lang), k.display or pretty(keymap.get(k.id, k.key)), k.what(lang)) for k in KEYS]


def markdown_table(keymap: dict[str, str] | None = None) -> str:
    """The key table as Markdown (the help screen shows it; the README carries a copy)."""
    lines = ["| Where | Keys | What |", "|---|---|---|"]
    lines += [f"| {scope} | {keys} | {what} |" for scope, keys, what in help_rows(keymap)]
    return "\n".join(lines)
