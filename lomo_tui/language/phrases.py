"""The offline planner's replies: the `reply` section of the message catalogue (messages/{lang}.toml)."""
from __future__ import annotations

from .messages import Section, message

PHRASES = Section("reply")  # {key: {lang: template}}; every key exists in every language with the same fields


def phrase(key: str, lang: str, **fields: object) -> str:
    """The reply `key` in `lang` (English when the language is unknown), filled with `fields`.

    Raises KeyError for an unknown key; a missing field stays visible as ``{name}``."""
    return message(f"reply.{key}", lang, **fields)
