"""The nominative of a noun phrase a preposition governs (data: `cases.toml`; Russian today): "про лису в
снежном лесу" → "лиса в снежном лесу", so a subject reads right in a sentence of our own ("появляется {subject}").
Endings only, no dictionary: a word no rule fits stays as the creator wrote it."""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any


@cache
def _table() -> dict[str, Any]:
    with Path(__file__).with_name("cases.toml").open("rb") as fh:
        return tomllib.load(fh)


def governs(preposition: str, lang: str) -> bool:
    """Does PREPOSITION put its phrase in a case `nominative` undoes (in LANG)?"""
    return preposition.lower() in _table().get(lang, {}).get("case", {})


def _undo(word: str, rules: list[list[str]], gender: str | None) -> tuple[str, str | None]:
    low = word.lower()
    for ending, nominative, g in rules:
        if (gender is None or g == gender) and low.endswith(ending) and len(low) > len(ending) + 1:
            return word[:len(word) - len(ending)] + nominative, g
    return word, gender


def nominative(phrase: str, preposition: str, lang: str) -> str:
    """PHRASE (what PREPOSITION governs, and what follows it) with the governed words in the nominative."""
    table = _table().get(lang, {})
    case = table.get("case", {}).get(preposition.lower())
    if case is None:
        return phrase
    words = phrase.split()
    ends = set(table.get("ends", ()))
    head = next((i for i, w in enumerate(words) if i and w.lower().strip(",.") in ends), len(words))
    rules, gender = table[case], None
    for i in range(head - 1):  # the adjectives set the gender their noun's rule must have
        words[i], gender = _undo(words[i], rules["adjective"], gender)
    if head:
        words[head - 1], _ = _undo(words[head - 1], rules["noun"], gender)
    return " ".join(words)
