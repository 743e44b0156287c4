"""Settings: flag > environment > config.toml > default (CONTRACTS §1)."""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from .errors import LomoError

APP = "lomo"


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


def load_config_file(path: Path | None = None) -> dict[str, Any]:
    """Read config.toml; a broken file is an error that names the file and the line."""
    path = path or config_dir() / "config.toml"
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LomoError(f"config file {path} is not valid TOML ({exc}); fix it or move it away") from exc


def _float(name: str, value: Any, default: float) -> float:
    if value is None or value == "":
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        raise LomoError(f"{name}={value!r} is not a number") from None


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

    def pick(flag: str | None, env_name: str, key: str, default: Any) -> Any:
        if flag not in (None, ""):
            return flag
        if env.get(env_name):
            return env[env_name]
        if file.get(key) not in (None, ""):
            return file[key]
        return default

    runtime = file.get("runtime") if isinstance(file.get("runtime"), dict) else {}
    ws = Path(pick(workspace, "LOMO_WORKSPACE", "workspace", str(default_workspace()))).expanduser()
    replay = env.get("LOMO_REPLAY_FILE") or file.get("replay_file")
    return Settings(
        workspace=ws.resolve(),
        db_url=str(pick(db, "LOMO_DB_URL", "db", default_db_url())),
        model=str(pick(model, "LOMO_MODEL", "model", "lomo/local")),
        lease_seconds=_float("LOMO_LEASE_SECONDS", env.get("LOMO_LEASE_SECONDS") or runtime.get("lease_seconds"), 30.0),
        watchdog_seconds=_float(
            "LOMO_WATCHDOG_SECONDS", env.get("LOMO_WATCHDOG_SECONDS") or runtime.get("watchdog_seconds"), 10.0
        ),
        time_scale=_float("LOMO_TIME_SCALE", env.get("LOMO_TIME_SCALE") or runtime.get("time_scale"), 1.0),
        replay_file=Path(replay).expanduser() if replay else None,
        faults=env.get("LOMO_FAULTS", ""),
        studio_faults=env.get("LOMO_STUDIO_FAULTS", ""),
        max_turn_crashes=int(runtime.get("max_turn_crashes", 3)),
        workers=int(runtime.get("workers", 4)),
        sync_window=_float("LOMO_SYNC_WINDOW", env.get("LOMO_SYNC_WINDOW") or runtime.get("sync_window"), 0.2),
        file=file,
    )
