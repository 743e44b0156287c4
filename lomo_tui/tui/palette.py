"""Textual's own chrome in the creator's language: the command palette's placeholder and its "No matches
found", the theme search, and Textual's system commands (Theme, Quit, Maximize, Screenshot), worded from the
catalogue's `[tui_palette]`. Textual's "Keys" (its help panel, every widget's bindings in English) is left
out: Lomo's own "Help: keys" (F1) lists the keys in the creator's language. Lomo's commands: `commands.py`."""
from __future__ import annotations

from typing import Any, Iterable

from rich.align import Align
from rich.text import Text
from textual.app import SystemCommand
from textual.command import CommandList, CommandPalette
from textual.screen import Screen
from textual.widgets.option_list import Option

from .strings import text

# Textual's system commands by their English title and help → the [tui_palette] key that words them
SYSTEM_WORDS = {
    "Theme": "theme", "Change the current theme": "theme_help",
    "Quit": "quit", "Quit the application as soon as possible": "quit_help",
    "Maximize": "maximize", "Maximize the focused widget": "maximize_help",
    "Minimize": "minimize", "Minimize the widget and restore to normal size": "minimize_help",
    "Screenshot": "screenshot", "Save an SVG 'screenshot' of the current screen": "screenshot_help",
}


def _worded(words: str) -> str:
    key = SYSTEM_WORDS.get(words)
    return text(f"palette.{key}") if key else words


class LomoPalette(CommandPalette):
    """Textual's command palette, its "No matches found" in the creator's language."""

    def _start_no_matches_countdown(self, search_value: str) -> None:
        """As Textual's own (textual/command.py), worded from the catalogue."""
        self._stop_no_matches_countdown()

        def show_no_matches() -> None:
            if search_value:  # an empty search is discovery: nothing to say
                self.query_one(CommandList).add_option(Option(
                    Align.center(Text(text("palette.no_matches"), style="not bold")), disabled=True,
                    id=self._NO_MATCHES))
            self._list_visible = bool(search_value)

        self._no_matches_timer = self.set_timer(self._NO_MATCHES_COUNTDOWN, show_no_matches)


class PaletteChrome:
    """Mixed into the app (before `App`): the palettes it opens and Textual's system commands, worded."""

    use_command_palette: bool
    push_screen: Any

    def action_command_palette(self) -> None:
        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(LomoPalette(id="--command-palette", placeholder=text("palette.placeholder")))

    def search_themes(self) -> None:
        from textual.theme import ThemeProvider

        self.push_screen(LomoPalette(providers=[ThemeProvider], placeholder=text("palette.themes_placeholder")))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):  # type: ignore[misc]
            if command.title != "Keys":
                yield command._replace(title=_worded(command.title), help=_worded(command.help))
