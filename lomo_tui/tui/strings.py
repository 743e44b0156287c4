"""The TUI's creator-facing sentences, read from the one message catalogue (`lomo_tui.language`,
`messages/{en,zh,ja,ru}.toml`, sections ``tui_*``).

`text("composer.queued", count=2)` is ``message("tui_composer.queued", LANG, count=2)``. `lang=` names the
language where the text is about a task or a message (a card speaks its task's, a stream line its words');
without it the text is the app's own and speaks the creator's language — that of the last message they sent
in the running app (`Session.language`), English outside an app.
"""
from __future__ import annotations

import os
from typing import Any

from ..language import LANGUAGES, locale_language, message, template


def _key(key: str) -> str:
    return "tui_" + key


def lines(key: str, lang: str | None = None) -> list[str]:
    """A list entry (examples, capabilities; one item a line in the catalogue) in LANG."""
    return [line for line in template(_key(key), lang or current_language()).split("\n") if line]


def text(key: str, lang: str | None = None, **values: Any) -> str:
    """The sentence KEY ("group.name") in LANG (the creator's when None), formatted with VALUES."""
    return message(_key(key), lang or current_language(), **values)


def has(key: str) -> bool:
    """Whether the catalogue has KEY (for labels that fall back to a raw value: a job status)."""
    try:
        template(_key(key), "en")
    except KeyError:
        return False
    return True


def current_language() -> str:
    """The creator's language in the running app ("en" outside one: a test, the CLI)."""
    try:
        from textual._context import active_app  # what `Widget.app` reads: the app this code runs under
    except ImportError:  # pragma: no cover — a Textual without it
        return "en"
    return creator_language(active_app.get(None))


def creator_language(app: Any) -> str:
    """The language notices speak: the creator's, from the last message they sent ("en" before any).
    APP is the app, or a screen or widget of it."""
    session = getattr(app, "session", None) or getattr(getattr(app, "app", None), "session", None)
    return getattr(session, "language", None) or "en"


def starting_language(settings: Any) -> str:
    """The creator's language before they have said anything: `language` (env LOMO_LANGUAGE, then config.toml),
    else the locale's (LC_ALL / LC_MESSAGES / LANG), as the CLI's own lines (config.creator_language)."""
    chosen = (os.environ.get("LOMO_LANGUAGE") or "").strip()
    if not chosen:
        file = getattr(settings, "file", None)
        chosen = str(file.get("language") or "") if isinstance(file, dict) else ""
    return chosen if chosen in LANGUAGES else locale_language(os.environ)
