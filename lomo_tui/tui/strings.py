"""The TUI's own creator-facing sentences, from `data/strings.toml` (en first; zh, ja, ru where written).

`text("composer.queued", count=2)` formats the English sentence; `lang=` picks another language and
falls back to English for a key it lacks.
"""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data")


@lru_cache(maxsize=1)
def catalogue() -> dict[str, dict[str, Any]]:
    """{language: {key: sentence}} with dotted keys flattened ("composer.queued")."""
    raw = tomllib.loads((DATA / "strings.toml").read_text(encoding="utf-8"))
    out: dict[str, dict[str, str]] = {}
    for lang, table in raw.items():
        flat: dict[str, Any] = {}
        for group, entries in table.items():
            for key, sentence in entries.items():
                flat[f"{group}.{key}"] = sentence
        out[lang] = flat
    return out


def lines(key: str, lang: str = "en") -> list[str]:
    """A list entry (examples, capabilities) in LANG, else English."""
    table = catalogue()
    value = table.get(lang, {}).get(key) or table["en"][key]
    return list(value) if isinstance(value, list) else [str(value)]


def text(key: str, lang: str = "en", **values: Any) -> str:
    """The sentence KEY in LANG (English when LANG lacks it), formatted with VALUES."""
    table = catalogue()
    sentence = table.get(lang, {}).get(key) or table["en"][key]
    return sentence.format(**values) if values else sentence
