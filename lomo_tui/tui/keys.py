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


@dataclass(frozen=True)
class Key:
    id: str
    key: str
    action: str
    description: str
    scope: str
    show: bool = True
    priority: bool = False
    display: str | None = None


KEYS: tuple[Key, ...] = (
    Key("app.quit", "ctrl+q", "quit", "Quit", "Anywhere", priority=True),
    Key("app.help", "f1,question_mark", "help", "Help", "Anywhere (? outside the input)"),
    Key("app.palette", "ctrl+p", "command_palette", "Commands", "Anywhere", show=False, priority=True),
    Key("app.new_task", "ctrl+n", "new_task", "New task", "Anywhere"),
    Key("app.gates", "ctrl+g", "focus_gates", "Gates", "Anywhere"),
    Key("app.tree", "ctrl+t", "focus_tree", "Files", "Anywhere"),
    Key("app.refresh", "f5", "refresh_views", "Refresh", "Anywhere", show=False),
    Key("app.memory", "f2,ctrl+r", "memory", "What Lomo remembers (memory view)", "Anywhere", show=False),
    Key("app.stats", "f3", "stats", "Stats: verified progress, model calls", "Anywhere", show=False),
    Key("app.context", "f4", "context", "What the model sees (this task's next prompt)", "Anywhere", show=False),
    Key("app.input", "escape", "focus_input", "Back to the input (again: talk to Main)", "The main screen", show=False),
    Key("card.open", "enter,o", "open", "Open", "A task card"),
    Key("card.reply", "r", "reply", "Reply here", "A task card"),
    Key("card.pause", "p", "pause", "Pause/resume", "A task card"),
    Key("card.stop", "s", "stop", "Stop", "A task card"),
    Key("card.promote", "m", "promote", "Promote", "A task card", show=False),
    Key("card.archive", "delete", "archive", "Archive", "A task card", show=False),
    Key("gate.approve", "a,y", "approve", "Approve", "The gate inbox"),
    Key("gate.reject", "r,n", "reject", "Reject", "The gate inbox"),
    Key("gate.choose", "1,2,3,4,5,6,7,8,9", "choose_key", "Choose option N", "The gate inbox", show=False,
        display="1–9"),
    Key("gate.open", "enter,o", "open_task", "Open task", "The gate inbox", show=False),
    Key("tree.edit", "e", "edit", "Edit in $EDITOR", "The workspace tree"),
    Key("tree.preview", "space,o", "preview", "Preview", "The workspace tree"),
    Key("stream.earlier", "ctrl+u", "load_earlier", "Earlier messages", "The main pane", show=False),
    Key("task.back", "escape", "back", "Back", "The task view"),
    Key("inbox.withdraw", "w", "withdraw", "Withdraw", "The task inbox"),
    Key("inbox.replace", "e", "replace", "Replace", "The task inbox"),
    Key("memory.edit", "e", "edit", "Edit (your words: a new version)", "The memory view"),
    Key("memory.confirm", "c", "confirm", "Confirm", "The memory view"),
    Key("memory.forget", "f,delete", "forget", "Forget (asks first)", "The memory view"),
    Key("memory.back", "escape", "back", "Back", "The memory view"),
    Key("stats.period", "p", "period", "Period: all time / 24 h / 7 days / 30 days", "The stats view"),
    Key("stats.back", "escape,q", "back", "Back", "The stats view"),
    Key("context.back", "escape,q", "back", "Back", "The context view"),
    Key("preview.edit", "e", "edit", "Edit in $EDITOR (text files)", "A preview"),
    Key("preview.next", "right,n", "step(1)", "Next result", "A preview"),
    Key("preview.previous", "left,p", "step(-1)", "Previous result", "A preview"),
    Key("preview.play", "space", "play", "Play/pause a clip", "A preview"),
    Key("preview.close", "escape,q", "dismiss", "Close", "A preview"),
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


def keymap_from_config(file: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The [keys] table of config.toml as a Textual keymap, plus a message per entry that was ignored."""
    table = file.get("keys") if isinstance(file.get("keys"), dict) else {}
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for key_id, value in table.items():
        if key_id not in BY_ID or key_id == "gate.choose":
            problems.append(f"[keys] {key_id!r} is not a key id (see the help screen, F1)")
        elif not isinstance(value, str) or not value.strip():
            problems.append(f"[keys] {key_id!r} needs a key such as \"f2\" or \"ctrl+k\"")
        elif "ctrl+b" in value.replace(" ", "").split(","):
            problems.append(f"[keys] {key_id!r}: ctrl+b is tmux's prefix; choose another key")
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


def help_rows(keymap: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """(scope, keys, what) rows, with the creator's keymap applied."""
    keymap = keymap or {}
    return [(k.scope, k.display or pretty(keymap.get(k.id, k.key)), k.description) for k in KEYS]


def markdown_table(keymap: dict[str, str] | None = None) -> str:
    """The key table as Markdown (the help screen shows it; the README carries a copy)."""
    lines = ["| Where | Keys | What |", "|---|---|---|"]
    lines += [f"| {scope} | {keys} | {what} |" for scope, keys, what in help_rows(keymap)]
    return "\n".join(lines)
