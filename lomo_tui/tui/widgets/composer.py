"""The input at the bottom of a pane; its label says where the next message goes ("→ Main")."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static


class Composer(Horizontal):
    DEFAULT_CSS = """
    Composer { height: 3; padding: 0 0; }
    Composer #target { width: auto; max-width: 40%; height: 3; content-align: left middle; padding: 0 1;
                       color: $primary; text-style: bold; }
    Composer Input { width: 1fr; }
    """

    target_title: reactive[str] = reactive("Main")

    class Submitted(Message):
        def __init__(self, composer: "Composer", text: str, task_id: str | None) -> None:
            super().__init__()
            self.composer = composer
            self.text = text
            self.task_id = task_id

    def __init__(self, placeholder: str = "Message Lomo — Enter sends", *, task_id: str | None = None,
                 title: str = "Main", fixed: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.placeholder = placeholder
        self.task_id = task_id
        self.fixed = fixed  # a task view's composer always talks to its task
        self.set_reactive(Composer.target_title, title)

    def compose(self) -> ComposeResult:
        yield Static(self._label(), id="target")
        yield Input(placeholder=self.placeholder, id="composer-input")

    def _label(self) -> Content:
        return Content.from_markup("→ $title", title=self.target_title)

    def watch_target_title(self) -> None:
        if self.is_mounted:
            self.query_one("#target", Static).update(self._label())

    def set_target(self, task_id: str | None, title: str) -> None:
        if self.fixed:
            return
        self.task_id = task_id
        self.target_title = title if task_id else "Main"

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        self.post_message(self.Submitted(self, text, self.task_id))
        event.input.value = ""
