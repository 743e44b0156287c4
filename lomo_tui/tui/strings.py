"""The TUI's creator-facing sentences, read from the one message catalogue (`lomo_tui.language`,
`messages/{en,zh,ja,ru}.toml`, sections ``tui_*``).

`text("composer.queued", count=2)` is ``message("tui_composer.queued", "en", count=2)``; `lang=` picks
another language (a task's card, a routed message's line, the creator's language for a notice).
"""
from __future__ import annotations

from typing import Any

from ..language import message
from ..language.messages import template


def _key(key: str) -> str:
    return "tui_" + key


def lines(key: str, lang: str = "en") -> list[str]:
    """A list entry (examples, capabilities; one item a line in the catalogue) in LANG."""
    return [line for line in template(_key(key), lang).split("\n") if line]


def text(key: str, lang: str = "en", **values: Any) -> str:
    """The sentence KEY ("group.name") in LANG (English where LANG lacks it), formatted with VALUES."""
    return message(_key(key), lang, **values)


def has(key: str) -> bool:
    """Whether the catalogue has KEY (for labels that fall back to a raw value: a job status)."""
    try:
        template(_key(key), "en")
    except KeyError:
        return False
    return True


def creator_language(app: Any) -> str:
    """The language notices speak: the creator's, from the last message they sent ("en" before any).
    APP is the app, or a screen or widget of it."""
    session = getattr(app, "session", None) or getattr(getattr(app, "app", None), "session", None)
    return getattr(session, "language", None) or "en"
