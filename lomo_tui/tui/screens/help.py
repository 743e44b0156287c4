"""The help screen: every key (with the creator's keymap applied), how to change them, and tips — in the
creator's language (the catalogue's [tui_keys], [tui_scope] and [tui_help])."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.content import Content
from textual.widgets import Markdown, Static

from .. import keys
from ..strings import creator_language, text


def keys_content(keymap: dict[str, str], lang: str = "en") -> Content:
    """The key table in LANG, grouped by where the keys work."""
    lines: list[Content] = [Content.from_markup("[b $primary]$t[/]", t=text("help.title", lang))]
    scope = None
    for where, pressed, what in keys.help_rows(keymap, lang):
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
            lang = creator_language(self.app)
            yield Static(keys_content(self.keymap, lang), id="help-keys")
            yield Markdown(text("help.tips", lang))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
