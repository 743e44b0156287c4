"""Themes from files: the bundled ones in `lomo_tui/themes/` (the top-level `themes/` folder of the
repository is a symlink to it, so a wheel carries them as package data) and the creator's own in
`<config dir>/themes/*.toml`. Each file maps to the fields of `textual.theme.Theme`. A file that cannot be
used is a `LomoError` worded by the catalogue's `[tui_mount]` (the app shows it in the creator's language)."""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from ..errors import LomoError, Said

BUNDLED = Path(__file__).resolve().parent.parent / "themes"
DEFAULT_THEME = "lomo-dark"
FIELDS = {f.name for f in dataclasses.fields(Theme)}
COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background", "surface",
           "panel", "boost")


def theme_from_mapping(data: dict[str, Any], source: str) -> Theme:
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise LomoError.said("tui_mount.theme_fields", source=source, unknown=", ".join(unknown),
                             allowed=", ".join(sorted(FIELDS)))
    if not data.get("name") or not data.get("primary"):
        raise LomoError.said("tui_mount.theme_required", source=source)
    variables = data.get("variables") or {}
    if not isinstance(variables, dict) or not all(isinstance(v, (str, int, float)) for v in variables.values()):
        raise LomoError.said("tui_mount.theme_variables", source=source)
    for name in ("name", *COLOURS):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise LomoError.said("tui_mount.theme_string", source=source, name=name, kind=type(data[name]).__name__)
    for name, kind in (("dark", bool), ("ansi", bool), ("luminosity_spread", (int, float)),
                       ("text_alpha", (int, float))):
        if name in data and (not isinstance(data[name], kind) or (kind is not bool and isinstance(data[name], bool))):
            raise LomoError.said("tui_mount.theme_bool" if kind is bool else "tui_mount.theme_number", source=source,
                                 name=name)
    for name in COLOURS:
        if data.get(name) is not None:
            try:
                Color.parse(data[name])
            except ColorParseError:
                raise LomoError.said("tui_mount.theme_colour", source=source, name=name,
                                     value=repr(data[name])) from None
    data = dict(data, variables={str(k): str(v) for k, v in variables.items()})
    try:
        theme = Theme(**dict(data, variables={}))
        defaults = theme.to_color_system().generate()  # every derived colour can be made
    except (TypeError, ValueError, ColorParseError) as exc:
        raise LomoError.said("tui_mount.theme_invalid", source=source, error=exc) from None
    for name, value in data["variables"].items():  # a variable that is a colour by default must stay one
        if name in defaults and _is_colour(defaults[name]) and not _is_colour(value):
            raise LomoError.said("tui_mount.theme_variable_colour", source=source, name=name, value=repr(value))
    return Theme(**data)


def _is_colour(value: str) -> bool:
    """A colour as Textual's CSS takes it: a name, hex or rgb(), optionally with an alpha ("#e8a33d 35%"),
    or another variable ("$primary")."""
    words = value.split()
    if len(words) == 2 and words[1].endswith("%") and words[1][:-1].replace(".", "", 1).isdigit():
        words = words[:1]
    if len(words) != 1:
        return False
    if words[0].startswith("$") or words[0] == "auto":
        return True
    try:
        Color.parse(words[0])
    except ColorParseError:
        return False
    return True


def load_theme_file(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LomoError.said("tui_mount.theme_unreadable", path=path, error=exc) from None
    return theme_from_mapping(data, str(path))


def discover(user_dir: Path | None) -> tuple[list[Theme], list[Said]]:
    """Bundled themes, then the creator's (a user theme with a bundled name replaces it).
    Returns the themes and one message per file that could not be loaded (`.text(lang)` words it)."""
    themes: dict[str, Theme] = {}
    errors: list[Said] = []
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
                errors.append(exc.said_as or Said("tui_mount.theme_invalid", {"source": path, "error": exc}))
                continue
            themes[theme.name] = theme
    return list(themes.values()), errors


def builtin(name: str) -> Theme:
    """The bundled theme NAME, as shipped (what a broken user override falls back to)."""
    return load_theme_file(BUNDLED / f"{name.removeprefix('lomo-')}.toml")
