"""The help screen: every key (with the creator's keymap applied), how to change them, and tips."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.content import Content
from textual.widgets import Markdown, Static

from .. import keys

TIPS = """
**Where messages go.** The input shows it: “→ Main” lets Lomo route the message (answer it, start a
task, or follow up on one). Press **r** on a card, or type in a task's view, to send straight to that
task — no routing, no model call to decide.

**Typing.** Enter sends; **Ctrl+J** starts a new line (Shift+Enter too, where the terminal tells it
apart). Long pastes are sent whole. On a card or a gate, letters that mean nothing there go to the
input; stop, archive and reject ask first.

**Gates** wait for you in the right pane (Ctrl+G), and in a task's own view: **a** approves, **r**
rejects (after asking), **1–9** picks an option. Nothing is spent or deleted without that key press.

**Memory** (F2) lists what Lomo remembers about you, each with the words of yours it stands on:
**e** edits one in your words, **c** confirms it, **f** forgets it after listing what goes.
**Stats** (F3) counts how the work went, from the ledgers.

**"→ sent to …"** under your message says which task Lomo handed it to; **not this task** takes it
back and asks where it goes.

**Keys** can be changed in `config.toml` (in Lomo's config folder):

```toml
[keys]
"app.help" = "f2"
"gate.approve" = "a"
```

Text can be selected with the mouse and copied with Ctrl+C. Under tmux, hold Shift to let the
terminal select instead. Ctrl+B is never used (it is tmux's prefix).
"""


def keys_content(keymap: dict[str, str]) -> Content:
    """The key table, grouped by where the keys work."""
    lines: list[Content] = [Content.from_markup("[b $primary]Lomo keys[/]")]
    scope = None
    for where, pressed, what in keys.help_rows(keymap):
        if where != scope:
            scope = where
            lines += [Content(""), Content.from_markup("[b]$w[/]", w=where)]
        lines.append(Content.from_markup("  [$accent]$k[/]", k=pressed.ljust(20)) + Content(what))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 96%; height: 90%; background: $surface;
                                  border: tall $primary; padding: 1 2; }
    HelpScreen #help-keys { height: auto; }
    """
    BINDINGS = [("escape,q,f1,question_mark", "dismiss", "Close")]

    def __init__(self, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.keymap = keymap or {}

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(keys_content(self.keymap), id="help-keys")
            yield Markdown(TIPS)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
