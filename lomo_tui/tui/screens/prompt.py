"""A small dialog that asks for one line of text (a task title, a replacement message)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..strings import text


class PromptScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 70; max-width: 95%; height: auto; padding: 1 2; background: $surface;
                              border: tall $primary; }
    PromptScreen #prompt-title { text-style: bold; color: $primary; }
    PromptScreen #prompt-hint { color: $text-muted; }
    """
    BINDINGS = [("escape", "cancel", "Cancel")]

    def __init__(self, title: str, hint: str = "", value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, id="prompt-title", markup=False)
            if self.hint:
                yield Static(self.hint, id="prompt-hint", markup=False)
            yield Input(value=self.value, id="prompt-input")
            yield Static(text("preview.prompt_keys"), id="prompt-keys")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
