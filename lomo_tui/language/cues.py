"""Cue tables (data, `cues.toml`): for each cue a regular expression per language, matched against
normalised text. One cue is one row of data, so a new phrasing is fixed by adding words, not a branch.
`@create@` / `@create_only@` in a pattern stand for the English creation verbs (`verbs.toml`)."""
from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from .text import normalise
from .verbs import CREATE, CREATE_ONLY, alternation

_FILE = Path(__file__).with_name("cues.toml")


@cache
def _tables() -> dict[str, dict[str, str]]:
    with _FILE.open("rb") as fh:
        raw = tomllib.load(fh)
    return {name: {k: _verbs(v) for k, v in table.items()} for name, table in raw.items()}


def _verbs(pattern: Any) -> Any:
    if not isinstance(pattern, str):
        return pattern
    return pattern.replace("@create_only@", alternation(CREATE_ONLY)).replace("@create@", alternation(CREATE))


def cue_table(name: str) -> dict[str, str]:
    """{language (or concept): pattern} of the cue NAME."""
    return dict(_tables()[name])


@cache
def _compiled(name: str, lang: str) -> re.Pattern[str]:
    table = _tables()[name]
    return re.compile(table.get(lang, table["en"]))


def cue(name: str, lang: str, text: str) -> bool:
    """Does normalised TEXT carry the cue NAME in LANG (English where LANG has no row)?"""
    return _compiled(name, lang).search(normalise(text)) is not None
