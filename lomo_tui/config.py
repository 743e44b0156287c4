"""Settings: flag > environment > config.toml > default (CONTRACTS §1).

Every key config.toml may hold is one line of `config_schema.toml` (type, range, choices, the
environment variable that overrides it, default). The file and the environment are checked against it
when loaded: a value of the wrong type or out of range, an unknown key (with the nearest valid name),
a folder where the file should be — each is one `LomoError` line naming the key and the file.
"""
from __future__ import annotations

import difflib
import math
import os
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from collections.abc import Mapping
from typing import Any

import platformdirs

from . import clock
from .errors import LomoError, Said

APP = "lomo"
SCHEMA_FILE = Path(__file__).with_name("config_schema.toml")
TYPE_WORDS = {"str": "text in quotes", "path": "a path in quotes", "int": "a whole number", "float": "a number",
              "bool": "true or false", "list": "a list like [\"a\", \"b\"]"}  # catalogue [config_error] type_*


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP))


def log_dir() -> Path:
    return Path(platformdirs.user_log_dir(APP))


def default_workspace() -> Path:
    return Path(platformdirs.user_documents_dir()) / "Lomo"


def default_db_url() -> str:
    return f"sqlite+aiosqlite:///{data_dir() / 'lomo.db'}"


# ---- the schema ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """One setting of config_schema.toml."""

    name: str
    type: str
    min: float | None = None
    max: float | None = None
    above: float | None = None
    choices: tuple[str, ...] = ()
    env: str | None = None
    default: Any = None
    secret: bool = False

    def check(self, value: Any) -> str | None:
        """Why VALUE does not fit this key (in English), or None."""
        problem = self.problem(value)
        return problem.text("en") if problem is not None else None

    def problem(self, value: Any) -> Said | None:
        """Why VALUE does not fit this key, as catalogue text ([config_error]), or None."""
        kind = self.type
        ok = {"str": isinstance(value, str), "path": isinstance(value, str), "bool": isinstance(value, bool),
              "list": isinstance(value, list),
              "int": isinstance(value, int) and not isinstance(value, bool),
              "float": isinstance(value, (int, float)) and not isinstance(value, bool)}[kind]
        if not ok:
            return Said("config_error.must_be", {"what": Said(f"config_error.type_{kind}"), "value": _shown(value)})
        if kind in ("int", "float"):
            if not math.isfinite(value):
                return Said("config_error.finite", {"value": _shown(value)})
            for word, limit, fails in (("above", self.above, lambda v, x: not v > x),
                                       ("at_least", self.min, lambda v, x: v < x),
                                       ("at_most", self.max, lambda v, x: v > x)):
                if limit is not None and fails(value, limit):
                    return Said(f"config_error.{word}", {"limit": _num(limit), "value": _num(value)})
        if self.choices and value not in self.choices:
            nearest = difflib.get_close_matches(str(value), self.choices, n=1)
            hint = Said("config_error.one_of_hint", {"nearest": nearest[0]}) if nearest else ""
            return Said("config_error.one_of", {"choices": ", ".join(self.choices), "value": _shown(value),
                                                "hint": hint})
        return None

    def parse_env(self, text: str) -> Any:
        """An environment variable's text as this key's type (a LomoError when it does not parse)."""
        try:
            value: Any = {"int": int, "float": float}.get(self.type, str)(text.strip())
        except ValueError:
            raise LomoError.said("config_error.bad_env", env=self.env, text=repr(text),
                                 problem=self.problem(text)) from None
        problem = self.problem(value)
        if problem:
            raise LomoError.said("config_error.bad_env", env=self.env, text=repr(text), problem=problem)
        return value


def _shown(value: Any) -> str:
    return repr(value) if not isinstance(value, str) else '"' + value[:60] + '"'


def _num(value: float) -> str:
    return f"{value:g}"


@cache
def schema() -> dict[str, Key]:
    """Dotted name -> Key, from config_schema.toml."""
    table = tomllib.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return {name: Key(name=name, **{k: tuple(v) if k == "choices" else v for k, v in spec.items()})
            for name, spec in table.items()}


def secret_key_names() -> frozenset[str]:
    """The last segment of every secret setting (api_key): the redactor looks for these in the file."""
    return frozenset(name.rsplit(".", 1)[-1] for name, key in schema().items() if key.secret)


def _match(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(parts) == len(pattern) and all(p == "*" or p == q for p, q in zip(pattern, parts))


def _lookup(parts: tuple[str, ...]) -> Key | None:
    for name, key in schema().items():
        if _match(parts, tuple(name.split("."))):
            return key
    return None


def _children(prefix: tuple[str, ...]) -> set[str]:
    """Names that may stand right below PREFIX ("*" when any name may)."""
    out = set()
    for name in schema():
        pattern = tuple(name.split("."))
        if len(pattern) > len(prefix) and _match(prefix, pattern[:len(prefix)]):
            out.add(pattern[len(prefix)])
    return out


def _label(parts: tuple[str, ...]) -> str:
    return parts[-1] if len(parts) == 1 else f"[{'.'.join(parts[:-1])}] {parts[-1]}"


def validate(table: dict[str, Any], path: Path | str) -> None:
    """Check a parsed config.toml against the schema; the first problem is a LomoError naming key and file."""

    def walk(node: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for name, value in node.items():
            parts = (*prefix, name)
            key = _lookup(parts)
            if key is not None:
                problem = key.problem(value)
                if problem:
                    raise LomoError.said("config_error.bad_value", path=str(path), key=_label(parts), problem=problem)
                continue
            children = _children(prefix)
            if name in children or "*" in children:
                if not isinstance(value, dict):
                    raise LomoError.said("config_error.not_section", path=str(path), key=_label(parts),
                                         section=".".join(parts), value=_shown(value))
                walk(value, parts)
                continue
            elsewhere = sorted(k.rsplit(".", 1)[0] for k in schema() if k.endswith("." + name) and "*" not in k)
            nearest = difflib.get_close_matches(name, sorted(children - {"*"}), n=1, cutoff=0.6)
            hint = (Said("config_error.hint_belongs", {"section": elsewhere[0]}) if elsewhere else
                    Said("config_error.hint_nearest", {"nearest": nearest[0]}) if nearest else
                    Said("config_error.hint_remove"))
            where = Said("config_error.unknown_where", {"section": ".".join(prefix)}) if prefix else ""
            raise LomoError.said("config_error.unknown", path=str(path), name=name, where=where, hint=hint)

    walk(table, ())


def load_config_file(path: Path | None = None) -> dict[str, Any]:
    """Read and validate config.toml; a broken file is an error that names the file (and the line or key)."""
    path = path or config_dir() / "config.toml"
    if path.is_dir():
        raise LomoError.said("config_error.folder", path=str(path))
    if not path.exists():
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LomoError.said("config_error.not_toml", path=str(path), detail=str(exc)) from exc
    except OSError as exc:
        raise LomoError.said("config_error.unreadable", path=str(path), detail=exc.strerror) from exc
    validate(table, path)
    from .redact import register_config

    register_config(table, secret_key_names())
    return table


def creator_language(env: Mapping[str, str] | None = None, config_path: Path | None = None) -> str:
    """The language of text that belongs to no task (CLI errors): `language` (env LOMO_LANGUAGE, then
    config.toml), else the locale (LC_ALL / LC_MESSAGES / LANG). A config file that does not load is no
    obstacle: its error is worded by the locale."""
    from .language import LANGUAGES, locale_language

    env = os.environ if env is None else env
    chosen = (env.get("LOMO_LANGUAGE") or "").strip()
    if not chosen:
        try:
            chosen = str(load_config_file(config_path).get("language") or "")
        except LomoError:
            chosen = ""
    return chosen if chosen in LANGUAGES else locale_language(env)


# ---- settings -----------------------------------------------------------------------------------------


@dataclass
class Settings:
    workspace: Path
    db_url: str
    model: str
    lease_seconds: float = 30.0
    watchdog_seconds: float = 10.0
    time_scale: float = 1.0
    replay_file: Path | None = None
    faults: str = ""
    studio_faults: str = ""
    max_turn_crashes: int = 3
    workers: int = 4
    sync_window: float = 0.2  # group commit of read-only steps (store.engine.Database.write); 0 = fsync every commit
    file: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        value = self.file.get(name)
        return value if isinstance(value, dict) else {}

    def value(self, dotted: str) -> Any:
        """A config.toml setting by dotted name ("tui.images"), or its schema default."""
        node: Any = self.file
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            return node
        key = _lookup(tuple(dotted.split(".")))
        return key.default if key else None


def load_settings(
    *,
    workspace: str | None = None,
    db: str | None = None,
    model: str | None = None,
    env: dict[str, str] | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Build the settings with the precedence flag > env > config file > default."""
    env = dict(os.environ if env is None else env)
    file = load_config_file(config_path)
    keys = schema()

    def pick(dotted: str, flag: str | None = None, default: Any = None) -> Any:
        key = keys[dotted]
        if flag not in (None, ""):
            return flag
        if key.env and env.get(key.env, "").strip():
            return key.parse_env(env[key.env])
        node: Any = file
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node not in (None, ""):
            return node
        return key.default if default is None else default

    ws = Path(pick("workspace", workspace, str(default_workspace()))).expanduser()
    clock.set_offset(float(pick("runtime.clock_offset_s")))  # the one wall clock (lomo_tui/clock.py)
    replay = pick("replay_file")
    return Settings(
        workspace=ws.resolve(),
        db_url=str(pick("db", db, default_db_url())),
        model=str(pick("model", model)),
        lease_seconds=float(pick("runtime.lease_seconds")),
        watchdog_seconds=float(pick("runtime.watchdog_seconds")),
        time_scale=float(pick("runtime.time_scale")),
        replay_file=Path(replay).expanduser() if replay else None,
        faults=env.get("LOMO_FAULTS", ""),
        studio_faults=env.get("LOMO_STUDIO_FAULTS", ""),
        max_turn_crashes=int(pick("runtime.max_turn_crashes")),
        workers=int(pick("runtime.workers")),
        sync_window=float(pick("runtime.sync_window")),
        file=file,
    )
