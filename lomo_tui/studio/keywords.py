"""Multilingual keyword matching shared by the studio's renderers.

A keyword table maps a name (a palette family, a subject, a mesh shape, a mood) to words in
English, Chinese, Japanese and Russian. Latin and Cyrillic words match whole words (an English
plural ``s``/``es`` allowed); a trailing ``*`` makes one a stem that matches any ending. Words in
other scripts (CJK, kana) match as substrings. Where matches overlap, the longest wins, so
``海报`` (poster) is not also ``海`` (sea) and ``golden hour`` is not also ``golden``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Mapping

Table = Mapping[str, tuple[str, ...]]

_LETTER = "a-zа-я"  # after normalisation: lower case, ё folded into е


def normalise(text: str) -> str:
    """Case-fold and fold ё into е so Russian spellings match either way."""
    return text.casefold().replace("ё", "е")


def _pattern(word: str) -> str:
    word = normalise(word)
    stem = word.rstrip("*")
    if not re.search(f"[{_LETTER}]", stem):
        return re.escape(stem)
    tail = rf"[{_LETTER}]*" if word.endswith("*") else "(?:e?s)?"
    return rf"(?<![{_LETTER}]){re.escape(stem)}{tail}(?![{_LETTER}])"


@lru_cache(maxsize=None)
def _compiled(items: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile("|".join(_pattern(w) for w in words))) for name, words in items)


def _spans(text: str, table: Table) -> list[tuple[int, int, str]]:
    """All non-overlapping matches as (start, end, name), longest first, then in text order."""
    found = [
        (m.start(), m.end(), name)
        for name, rx in _compiled(tuple(table.items()))
        for m in rx.finditer(text)
    ]
    kept: list[tuple[int, int, str]] = []
    for start, end, name in sorted(found, key=lambda s: (s[0] - s[1], s[0])):
        if all(end <= k0 or start >= k1 for k0, k1, _ in kept):
            kept.append((start, end, name))
    return sorted(kept)


def mentions(prompt: str, table: Table) -> list[str]:
    """Names the prompt mentions, each once, in order of first mention."""
    return list(dict.fromkeys(name for _, _, name in _spans(normalise(prompt), table)))


def best(prompt: str, table: Table, default: str) -> str:
    """The most-mentioned name (ties go to the earliest mention), or ``default``."""
    spans = _spans(normalise(prompt), table)
    if not spans:
        return default
    counts: dict[str, int] = {}
    for _, _, name in spans:
        counts[name] = counts.get(name, 0) + 1
    return max(counts, key=lambda n: (counts[n], -list(counts).index(n)))
