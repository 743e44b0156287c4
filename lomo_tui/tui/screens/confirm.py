"""Asks before an action that cannot be taken back with one key (stop, archive, reject).

Letters do nothing here: only Enter on the highlighted button (Cancel is highlighted first), a click,
or Esc (cancel). So keys typed by accident never confirm anything.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ..strings import text


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; max-width: 95%; height: auto; padding: 1 2; background: $surface;
                               border: tall $warning; }
    ConfirmScreen #confirm-question { text-style: bold; }
    ConfirmScreen #confirm-detail { color: $text-muted; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """
    BINDINGS = [("escape", "cancel", "Cancel"), ("left,right", "app.focus_next", "")]
    AUTO_FOCUS = "#confirm-cancel"

    def __init__(self, question: str, detail: str, verb: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.verb = verb

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="confirm-question", markup=False)
            if self.detail:
                yield Static(self.detail, id="confirm-detail", markup=False)
            with Horizontal():
                yield Button(text("confirm.cancel"), id="confirm-cancel")
                yield Button(self.verb, id="confirm-ok", variant="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-ok")

    def action_cancel(self) -> None:
        self.dismiss(False)
