"""The composer at the bottom of a pane; its label says where the next message goes ("→ Main").

It takes several lines: Enter sends; Ctrl+J (every terminal), Shift+Enter (terminals with the kitty
keyboard protocol) or Alt+Enter start a new line. A paste keeps every line; a long one shows as a
compact chip ("[pasted 400 lines]") that is sent whole. Nothing typed is dropped: the text stays in
the composer until the screen accepts it (sent, or queued while Lomo starts).
"""
from __future__ import annotations

import re
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static, TextArea

from ..strings import text

NEWLINE_KEYS = ("shift+enter", "ctrl+j", "newline", "alt+enter", "ctrl+enter")
CHIP_LINES = 12  # a paste of more lines than this (or CHIP_CHARS characters) becomes a chip
CHIP_CHARS = 1500
CHIP = re.compile(r"\[pasted \d+ lines?(?: #\d+)?\]")


class ComposerInput(TextArea):
    """A few lines of text; Enter submits (see the module docstring for new lines)."""

    DEFAULT_CSS = """
    ComposerInput { height: auto; min-height: 3; max-height: 12; width: 1fr; }
    """

    class Submitted(Message):
        def __init__(self, field: "ComposerInput", value: str) -> None:
            super().__init__()
            self.input = field
            self.value = value

    def __init__(self, placeholder: str = "", **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=False,
                         placeholder=placeholder, **kwargs)
        self.pastes: dict[str, str] = {}  # chip text -> the pasted text it stands for

    # ---- what Enter means --------------------------------------------------------------------------------
    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.value))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    async def _on_paste(self, event: events.Paste) -> None:
        pasted = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = len(pasted.splitlines()) or 1
        if lines <= CHIP_LINES and len(pasted) <= CHIP_CHARS:
            return await super()._on_paste(events.Paste(pasted))
        event.stop()
        event.prevent_default()
        chip = f"[pasted {lines} lines]"
        number = 2
        while chip in self.pastes:
            chip = f"[pasted {lines} lines #{number}]"
            number += 1
        self.pastes[chip] = pasted
        self.insert(chip)

    # ---- the text as sent -------------------------------------------------------------------------------
    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, new: str) -> None:
        self.load_text(new)
        self.move_cursor(self.document.end)

    def expanded(self) -> str:
        """The text with every paste chip replaced by what was pasted."""
        return CHIP.sub(lambda m: self.pastes.get(m.group(0), m.group(0)), self.text)

    def clear_all(self) -> None:
        self.pastes.clear()
        self.load_text("")


class Composer(Horizontal):
    DEFAULT_CSS = """
    Composer { height: auto; padding: 0 0; }
    Composer #target { width: auto; max-width: 40%; height: 3; content-align: left middle; padding: 0 1;
                       color: $primary; text-style: bold; }
    Composer.-away #target { color: $text-muted; text-style: none; }
    Composer #queued { display: none; width: auto; max-width: 30%; height: 3; content-align: left middle;
                       padding: 0 1; color: $warning; }
    Composer.-queued #queued { display: block; }
    """

    target_title: reactive[str] = reactive("Main")

    class Submitted(Message):
        def __init__(self, composer: "Composer", text: str, task_id: str | None) -> None:
            super().__init__()
            self.composer = composer
            self.text = text
            self.task_id = task_id

    def __init__(self, placeholder: str | None = None, *, task_id: str | None = None,
                 title: str | None = None, fixed: bool = False, away_hint: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.worded = placeholder is None  # the app's own words: re-worded when the creator's language changes
        self.away_hint = away_hint or text("composer.away")  # what the label says while the focus is elsewhere
        self.placeholder = placeholder or text("composer.placeholder")
        self.task_id = task_id
        self.fixed = fixed  # a task view's composer always talks to its task
        self.away = False
        self.set_reactive(Composer.target_title, title or text("composer.main"))

    def compose(self) -> ComposeResult:
        yield Static(self._label(), id="target")
        yield ComposerInput(self.placeholder, id="composer-input")
        yield Static(id="queued")

    def _label(self) -> Content:
        if self.away:
            return Content.from_markup("→ $title [i]($hint)[/]", title=self.target_title, hint=self.away_hint)
        return Content.from_markup("→ $title", title=self.target_title)

    def watch_target_title(self) -> None:
        if self.is_mounted:
            self.query_one("#target", Static).update(self._label())

    def set_away(self, away: bool) -> None:
        """Show that keys go elsewhere (a card or a gate has the focus), so nobody types into a card."""
        if away != self.away:
            self.away = away
            self.set_class(away, "-away")
            if self.is_mounted:
                self.query_one("#target", Static).update(self._label())

    def set_placeholder(self, placeholder: str, away_hint: str | None = None) -> None:
        """Say the input's hint (and the away hint) in another language."""
        self.placeholder = placeholder
        self.away_hint = away_hint or self.away_hint
        if self.is_mounted:
            self.input.placeholder = placeholder
            self.query_one("#target", Static).update(self._label())

    def set_target(self, task_id: str | None, title: str) -> None:
        if self.fixed:
            return
        self.task_id = task_id
        self.target_title = title if task_id else text("composer.main")

    def reword(self) -> None:
        """Speak the creator's language, which just changed: the hint, the away hint and the main thread's name."""
        if self.worded:
            self.set_placeholder(text("composer.placeholder"), text("composer.away"))
        if self.task_id is None and not self.fixed:
            self.target_title = text("composer.main")

    def show_queued(self, count: int) -> None:
        self.set_class(count > 0, "-queued")
        if count:
            self.query_one("#queued", Static).update(text("composer.queued", count=count))

    @property
    def input(self) -> ComposerInput:
        return self.query_one(ComposerInput)

    def on_composer_input_submitted(self, event: ComposerInput.Submitted) -> None:
        event.stop()
        message = event.input.expanded().strip()
        if not message:
            return
        self.post_message(self.Submitted(self, message, self.task_id))

    def accept(self) -> None:
        """The message was sent or queued: empty the composer."""
        self.input.clear_all()


class TypeAhead(Message):
    """A printable key pressed where it means nothing (a card, a gate): the screen types it in the input."""

    def __init__(self, character: str) -> None:
        super().__init__()
        self.character = character


class TypesIntoComposer:
    """For a screen with a Composer: a letter typed where it means nothing (a card, a gate, a list) goes to
    the input, and the composer shows when the focus is away from it."""

    def on_type_ahead(self, event: TypeAhead) -> None:
        event.stop()
        field = self.query_one(Composer).input  # type: ignore[attr-defined]
        field.focus()
        field.insert(event.character)

    def on_descendant_focus(self, event: Any) -> None:
        self.query_one(Composer).set_away(not isinstance(event.widget, ComposerInput))  # type: ignore[attr-defined]


def redirect_letters(widget: Any, event: events.Key) -> bool:
    """If EVENT is a printable key no binding on WIDGET's focus chain takes, post it as a TypeAhead."""
    if not event.is_printable or not event.character or event.key in widget.app.active_bindings:
        return False
    if event.key in ("space", "enter", "tab"):
        return False
    event.stop()
    event.prevent_default()
    widget.post_message(TypeAhead(event.character))
    return True
