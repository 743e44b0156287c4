"""Which piece of a series a message points at: "the second poster", "the last one", "the first two",
第二张, 2枚目, вторую, "that one". The words are data (ordinals.toml); this module only reads them."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

ORDINALS_FILE = Path(__file__).with_name("ordinals.toml")
Kind = Literal["nth", "last", "recent", "first_n", "last_n"]


@dataclass(frozen=True)
class Reference:
    """A pointer into a series: the Nth piece (1-based), the last, the most recent, or the first/last N.
    AT: where its words start in the message (-1: unknown)."""

    kind: Kind
    n: int = 1
    at: int = field(default=-1, compare=False)
    media: str | None = field(default=None, compare=False)  # the kind of piece its counter counts (2枚目: image)

    def pick(self, series: Sequence[str], recent: Sequence[str] = ()) -> list[str]:
        """The pieces of SERIES (in series order) this reference names; RECENT: pieces newest first.
        Empty when it points past the series."""
        if self.kind == "recent":
            return list(recent[:1] or series[-1:])
        if self.kind == "last":
            return list(series[-1:])
        if self.kind == "first_n":
            return list(series[:self.n])
        if self.kind == "last_n":
            return list(series[-self.n:])
        return [series[self.n - 1]] if 0 < self.n <= len(series) else []


@cache
def _data() -> dict[str, Any]:
    with ORDINALS_FILE.open("rb") as fh:
        return tomllib.load(fh)


_KATAKANA = "ァ-ヺー"


def _word(word: str) -> str:
    """WORD as a pattern; a katakana word does not match inside a longer one (ラスト is not in イラスト)."""
    if all("ァ" <= ch <= "ヺ" or ch == "ー" for ch in word):
        return f"(?<![{_KATAKANA}]){re.escape(word)}(?![{_KATAKANA}])"
    return re.escape(word)


def _words(words: Sequence[str], spaced: bool) -> str:
    alternation = "|".join(_word(w) for w in sorted(words, key=len, reverse=True))
    return rf"(?<!\w)(?:{alternation})(?!\w)" if spaced else f"(?:{alternation})"


@cache
def _matchers(lang: str) -> tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Reference | None]], ...]:
    """The language's patterns, in the order they are tried, each with what a match means."""
    data = _data()
    table = data.get(lang) or data["en"]
    spaced = bool(table.get("spaced", True))
    numerals: dict[str, int] = {**data["numerals"].get(lang, {})}
    number = r"(\d{1,2}|" + "|".join(re.escape(w) for w in sorted(numerals, key=len, reverse=True)) + ")"

    def count(kind: Kind) -> Callable[[re.Match[str]], Reference | None]:
        def build(m: re.Match[str]) -> Reference | None:
            token = m.group(1)
            n = int(token) if token.isdigit() else numerals.get(token)
            return Reference(kind, n) if n else None
        return build

    out: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Reference | None]]] = []
    for key in ("first_n", "last_n", "nth"):
        for pattern in table.get(key, ()):
            out.append((re.compile(pattern.replace("{n}", number)), count(key)))  # type: ignore[arg-type]
    ordinals: dict[str, int] = table.get("ordinal", {})
    if ordinals:
        out.append((re.compile(f"({_words(list(ordinals), spaced)})"),
                    lambda m: Reference("nth", ordinals[m.group(1)])))
    for key in ("last", "recent"):
        if table.get(key):
            out.append((re.compile(_words(table[key], spaced)), lambda m, k=key: Reference(k)))  # type: ignore[misc]
    return tuple(out)


@cache
def _not_after(lang: str) -> re.Pattern[str] | None:
    words = (_data().get(lang) or {}).get("not_after") or ()
    alternation = "|".join(w[3:] if w.startswith("re:") else rf"(?<!\w){re.escape(w)}\s+" for w in words)
    return re.compile(f"(?:{alternation})$") if words else None


@cache
def _not_before(lang: str) -> re.Pattern[str] | None:
    table = _data().get(lang) or {}
    words = table.get("not_before") or ()
    end = r"(?!\w)" if table.get("spaced", True) else ""
    return re.compile(r"\s*(?:%s)%s" % ("|".join(re.escape(w) for w in words), end)) if words else None


def find_reference(text: str, lang: str) -> Reference | None:
    """The piece (or pieces) TEXT points at, by the words of LANG (else English); None when it names none.
    A position after `not_after` words ("a second poster") is another piece, and one before `not_before` words
    ("last month") a time: neither is a reference."""
    folded = text.lower().replace("ё", "е")
    for language in dict.fromkeys((lang, "en")):
        indefinite, timely = _not_after(language), _not_before(language)
        for pattern, build in _matchers(language):
            for match in pattern.finditer(folded):
                if indefinite is not None and indefinite.search(folded[:match.start()]):
                    continue
                if timely is not None and timely.match(folded, match.end()):
                    continue  # "from last month", "the first time": a time, not a piece
                found = build(match)
                if found is not None:
                    counted = folded[match.start():match.end() + 1]  # 第三首: the counter may follow the match
                    return replace(found, at=match.start(), media=_counted(language, counted))
    return None


def _counted(lang: str, words: str) -> str | None:
    counters: dict[str, str] = (_data().get(lang) or {}).get("counters") or {}
    return next((media for counter, media in counters.items() if counter in words), None)


def series_size(text: str, lang: str, count: int | None = None) -> int | None:
    """How many pieces a goal asks for: COUNT (the reading's) or the first number word in TEXT ("Three 30s
    audiograms" → 3; a number in digits may be a length, so only words count)."""
    if count:
        return count
    numerals: dict[str, int] = _data()["numerals"].get(lang, {})
    spaced = bool((_data().get(lang) or {}).get("spaced", True))
    if not numerals:
        return None
    counters = (_data().get(lang) or {}).get("size_counters") or ""
    if not spaced and counters:  # "四张海报", "景品イラスト10種" count pieces, "九折" is a discount, "100円" a price
        digits = re.search(f"(?<![0-9])([0-9]{{1,2}})(?=[{re.escape(counters)}])", text)
        match = re.search(f"{_words(list(numerals), spaced)}(?=[{re.escape(counters)}])", text.lower())
        if digits and (match is None or digits.start() < match.start()):
            return int(digits.group(1))
    else:
        match = re.search(_words(list(numerals), spaced), text.lower())
    return numerals[match.group(0)] if match else None
