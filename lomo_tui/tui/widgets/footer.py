"""The footer in the creator's language (issue #12 §5).

Textual's bindings carry one description, fixed when the class is made (the English of `keys.KEYS`, which the
README's table also uses). This footer lays the keys out as Textual's does and words each one from the
catalogue by its binding id (`Key.what(lang)`); `refresh_footers(app)` redraws it when the creator's
language changes."""
from __future__ import annotations

from typing import Any, Iterable

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # not exported by textual.widgets (8.2)

from ..keys import BY_ID
from ..strings import creator_language


class KeyFooter(Footer):
    """Textual's Footer, each key's word in the creator's language."""

    lang: str | None = None  # the language it was last worded in

    def compose(self) -> ComposeResult:
        self.lang = creator_language(self.app)
        yield from self._worded(super().compose())

    def _worded(self, widgets: Iterable[Widget]) -> Iterable[Widget]:
        active = self.screen.active_bindings
        for widget in widgets:
            if isinstance(widget, FooterKey):
                entry = active.get(widget.key)  # one key each: Textual splits "enter,o" into two bindings
                key = BY_ID.get(entry[1].id or "") if entry is not None else None
                if key is not None:
                    word = key.what(self.lang)
                    if widget.tooltip and widget.tooltip == entry[1].description:  # a grouped key, the palette
                        widget.tooltip = word
                    if widget.description:
                        widget.description = word
            yield widget


def refresh_footers(app: Any) -> None:
    """Re-word the footer of every screen on the stack whose footer speaks another language than the creator's."""
    lang = creator_language(app)
    for screen in getattr(app, "screen_stack", ()):
        if any(footer.lang not in (None, lang) for footer in screen.query(KeyFooter)):
            screen.refresh_bindings()
