"""Names across scripts: a creator writes a brand or a place in katakana (オリベッティ) that a task spells in Latin
letters (Olivetti). Both are folded to one key — katakana read as Latin letters, Latin letters folded the way
katakana hears them (l/r, v/b, c as k or s), doubled letters collapsed — and two names meet when their keys are
equal. The readings are data (katakana.toml)."""
from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from .text import LazyRe

KEY_CHARS = 5  # a shorter key says too little to join two names
_KATAKANA_RUN = LazyRe(r"[ァ-ヺー]{3,}")
_LATIN_WORD = LazyRe(r"[A-Za-z]{4,}")


@cache
def _data() -> dict[str, Any]:
    with Path(__file__).with_name("katakana.toml").open("rb") as fh:
        return tomllib.load(fh)


@cache
def _folds() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(a), b) for a, b in _data()["latin_folds"]["folds"])


def _fold(latin: str) -> str:
    out = latin.lower()
    for rx, to in _folds():
        out = rx.sub(to, out)
    return re.sub(r"(.)\1+", r"\1", out)


def romanised(run: str) -> str:
    """A katakana RUN in Latin letters, two-character sounds first ("オリベッティ" -> "oribeti")."""
    pairs, single = _data()["pairs"], _data()["single"]
    out, i = [], 0
    while i < len(run):
        if run[i:i + 2] in pairs:
            out.append(pairs[run[i:i + 2]])
            i += 2
        else:
            out.append(single.get(run[i], ""))
            i += 1
    return "".join(out)


def _kind_word(word: str, lang: str) -> bool:
    """A word for a kind of piece or another word unrelated tasks share (ラベル / label, モデル / model): no name."""
    from .intent import media_kinds
    from .matching import is_generic, keywords

    words = keywords(word)
    return not words or all(is_generic(w) for w in words) or bool(media_kinds(word, lang))


def katakana_keys(text: str) -> set[str]:
    """The keys of the katakana names in TEXT (not of its words for kinds of piece)."""
    keys = set()
    for m in _KATAKANA_RUN.finditer(text):
        if _kind_word(m.group(), "ja"):
            continue
        key = _fold(romanised(m.group()))
        keys.add(key)
        if re.search(r"[^aeiou][uo]$", key):
            keys.add(key[:-1])  # a vowel katakana adds after a final consonant: ロボット, "robot"
    return {k for k in keys if len(k) >= KEY_CHARS}


def latin_keys(text: str) -> set[str]:
    """The keys of the Latin-lettered words in TEXT (not of its words for kinds of piece)."""
    keys = {_fold(m.group()) for m in _LATIN_WORD.finditer(text) if not _kind_word(m.group(), "en")}
    return {k for k in keys if len(k) >= KEY_CHARS}
