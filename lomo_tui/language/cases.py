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


def object_nominative(phrase: str, lang: str) -> str:
    """PHRASE, which opens with what a creation verb makes (in the accusative: "сову в очках", "рыжего кота на
    подоконнике"), with that noun and the adjectives before it in the nominative ("сова в очках", "рыжий кот на
    подоконнике"). All of them or none: a word no rule fits, or adjectives and a noun that do not agree, leave the
    phrase as the creator wrote it."""
    table = _table().get(lang, {}).get("object")
    if table is None:
        return phrase
    words = phrase.split(" ")
    keep, stressed, animate = set(table.get("keep", ())), set(table.get("stressed", ())), table.get("animate", {})
    out: list[str] = []
    genders: set[str] = set()
    for word in words:
        core, tail = _core(word)
        if core.lower() in stressed:
            out.append(_respelled(core, core.lower()[:-3] + "ой") + tail)
            genders.add("m")
            continue
        undone, gender = _undo(core, table["adjective"], None)
        if gender is None:
            break
        out.append(undone + tail)
        genders.add(gender)
    else:
        return phrase  # adjectives only: no noun to agree with
    core, tail = _core(words[len(out)])
    low = core.lower()
    gender = next(iter(genders), None)
    if len(genders) > 1 or low in keep or low.rpartition("-")[2] in keep:
        return phrase
    parts = [_noun(part, table, animate, gender) for part in core.split("-")]  # "кота-баристу", "шапку-ушанку"
    if all(got is None for _, got in parts) and not (gender == "f" and low.endswith("ь")):
        return phrase  # nothing to undo, or a feminine adjective before a noun no rule fits
    noun = "-".join(part for part, _ in parts)
    return " ".join([*out, noun + tail, *words[len(out) + 1:]])


def _noun(word: str, table: dict[str, Any], animate: dict[str, str], gender: str | None) -> tuple[str, str | None]:
    """WORD, a noun after adjectives of GENDER, in the nominative, and its gender (None where no rule fits)."""
    if word.lower() in animate and gender in (None, "m", "p"):
        return _respelled(word, animate[word.lower()]), gender or "m"
    return _undo(word, table["noun"], "f") if gender in (None, "f") else (word, None)


def _core(word: str) -> tuple[str, str]:
    """WORD without the punctuation after it, and that punctuation ("ёлку," → "ёлку", ",")."""
    core = word.rstrip(",.!?:;…»\")")
    return core, word[len(core):]


def _respelled(word: str, low: str) -> str:
    """LOW (a lower-case form of WORD) with WORD's capital, if it had one."""
    return low[:1].upper() + low[1:] if word[:1].isupper() else low
