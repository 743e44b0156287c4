"""The English creation verbs (data, `verbs.toml`), listed once for every table that needs them."""
from __future__ import annotations

import tomllib
from pathlib import Path

with Path(__file__).with_name("verbs.toml").open("rb") as _fh:
    _EN = tomllib.load(_fh)["en"]

CREATE: tuple[str, ...] = tuple(_EN["create"])  # every English creation verb
CREATE_ONLY: tuple[str, ...] = tuple(v for v in CREATE if v not in _EN["also_edit"])  # never an edit
CREATE_STOPWORDS: tuple[str, ...] = tuple(v for v in CREATE if v not in _EN["also_content"])  # no keyword


def alternation(verbs: tuple[str, ...] = CREATE) -> str:
    """VERBS as one regular-expression alternation (no group): "make|create|…"."""
    return "|".join(verbs)
