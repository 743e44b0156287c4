"""What the router says on its choice cards (clarify gates): the `route` section of the message catalogue."""
from __future__ import annotations

from ..language import message


def say(key: str, lang: str, **fields: object) -> str:
    return message(f"route.{key}", lang, **fields)
