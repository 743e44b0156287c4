"""Names a text mentions, from a keyword table: {name: (words in any of en/zh/ja/ru)}.

The one matcher of the language layer (`text.compile_entries`) does the matching: Latin and Cyrillic
words match whole (an English plural allowed), a trailing ``*`` makes a stem, CJK and kana match as
substrings. Where matches of different names overlap, the longest wins, so ``海报`` (poster) is not also
``海`` (sea) and ``golden hour`` is not also ``golden``.
"""
from __future__ import annotations

from collections.abc import Mapping

from .text import compile_entries, normalise

KeywordTable = Mapping[str, tuple[str, ...]]


def _spans(text: str, table: KeywordTable) -> list[tuple[int, int, str]]:
    """All non-overlapping matches as (start, end, name), longest first, then in text order."""
    found = []
    for name, words in table.items():
        rx = compile_entries(tuple(words))
        if rx is not None:
            found.extend((m.start(), m.end(), name) for m in rx.finditer(text) if m.end() > m.start())
    kept: list[tuple[int, int, str]] = []
    for start, end, name in sorted(found, key=lambda s: (s[0] - s[1], s[0])):
        if all(end <= k0 or start >= k1 for k0, k1, _ in kept):
            kept.append((start, end, name))
    return sorted(kept)


def mentions(text: str, table: KeywordTable) -> list[str]:
    """Names the text mentions, each once, in order of first mention."""
    return list(dict.fromkeys(name for _, _, name in _spans(normalise(text), table)))


def most_mentioned(text: str, table: KeywordTable, default: str) -> str:
    """The most-mentioned name (ties go to the earliest mention), or ``default``."""
    spans = _spans(normalise(text), table)
    if not spans:
        return default
    counts: dict[str, int] = {}
    for _, _, name in spans:
        counts[name] = counts.get(name, 0) + 1
    return max(counts, key=lambda n: (counts[n], -list(counts).index(n)))
