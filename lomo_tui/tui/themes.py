"""Themes from files: the bundled ones in `lomo_tui/themes/` (the top-level `themes/` folder of the
repository is a symlink to it, so a wheel carries them as package data) and the creator's own in
`<config dir>/themes/*.toml`. Each file maps to the fields of `textual.theme.Theme`."""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from textual.theme import Theme

from ..errors import LomoError

BUNDLED = Path(__file__).resolve().parent.parent / "themes"
DEFAULT_THEME = "lomo-dark"
FIELDS = {f.name for f in dataclasses.fields(Theme)}


def theme_from_mapping(data: dict[str, Any], source: str) -> Theme:
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise LomoError(f"theme {source}: unknown field(s) {', '.join(unknown)}; "
                        f"allowed: {', '.join(sorted(FIELDS))}")
    if not data.get("name") or not data.get("primary"):
        raise LomoError(f"theme {source}: `name` and `primary` are required")
    variables = data.get("variables") or {}
    if not isinstance(variables, dict):
        raise LomoError(f"theme {source}: [variables] must be a table of strings")
    data = dict(data, variables={str(k): str(v) for k, v in variables.items()})
    try:
        return Theme(**data)
    except (TypeError, ValueError) as exc:
        raise LomoError(f"theme {source}: {exc}") from None


def load_theme_file(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LomoError(f"theme file {path} could not be read ({exc}); fix or remove it") from None
    return theme_from_mapping(data, str(path))


def discover(user_dir: Path | None) -> tuple[list[Theme], list[str]]:
    """Bundled themes, then the creator's (a user theme with a bundled name replaces it).
    Returns the themes and one message per file that could not be loaded."""
    themes: dict[str, Theme] = {}
    errors: list[str] = []
    folders = [BUNDLED] + ([user_dir] if user_dir is not None else [])
    for folder in folders:
        try:
            files = sorted(folder.glob("*.toml"))
        except OSError:
            continue
        for path in files:
            try:
                theme = load_theme_file(path)
            except LomoError as exc:
                errors.append(str(exc))
                continue
            themes[theme.name] = theme
    return list(themes.values()), errors
