"""The one message catalogue: every creator-facing text (cards, replies, notices, errors, report lines) in
en/zh/ja/ru, read from `messages/{lang}.toml` (one section per area, one key per message, the same keys and
``{fields}`` in every language). A language's file is parsed on first use, so importing costs nothing.

    message("card.spend_decline", "ja")             -> "断る"
    message("route.duplicate", "ru", title="Кофе")  -> "Похоже на уже существующую задачу «Кофе»…"
"""
from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh", "ja", "ru")
_DIR = Path(__file__).with_name("messages")


class _Fields(dict):
    """Leaves unknown placeholders visible instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@cache
def catalogue(lang: str) -> dict[str, dict[str, str]]:
    """{section: {key: template}} of LANG (English for a language Lomo does not speak)."""
    if lang not in LANGUAGES:
        lang = "en"
    with (_DIR / f"{lang}.toml").open("rb") as fh:
        return tomllib.load(fh)


def template(key: str, lang: str) -> str:
    """The raw template "section.key" in LANG, English where LANG lacks it. KeyError for an unknown key."""
    section, _, name = key.partition(".")
    texts = catalogue(lang).get(section, {})
    if name in texts:
        return texts[name]
    return catalogue("en")[section][name]


def message(key: str, lang: str, **fields: object) -> str:
    """The message "section.key" in LANG, filled with FIELDS (a missing field stays visible as ``{name}``)."""
    return template(key, lang).format_map(_Fields(fields))


class Section(Mapping[str, dict[str, str]]):
    """One section of the catalogue as {key: {lang: template}} (read lazily), for code that lists keys."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, key: str) -> dict[str, str]:
        if key not in catalogue("en").get(self.name, {}):
            raise KeyError(key)
        return {lang: catalogue(lang)[self.name][key] for lang in LANGUAGES
                if key in catalogue(lang).get(self.name, {})}

    def __iter__(self) -> Iterator[str]:
        return iter(catalogue("en").get(self.name, {}))

    def __len__(self) -> int:
        return len(catalogue("en").get(self.name, {}))
