"""Helpers for pilot flows against a running runtime (workers on, embedded model or replay)."""
from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any, Callable

from sqlalchemy import func, select

from lomo_tui.config import Settings
from lomo_tui.tui.app import LomoApp
from lomo_tui.tui.fmt import frozen_clock


def live_app(tmp: Path, *, model: str = "lomo/local", replies: list[dict[str, Any]] | None = None,
             seed: Any = None, **file: Any) -> LomoApp:
    """A Lomo app with real workers on a fresh database (replies: the lomo/replay script)."""
    replay = None
    if replies is not None:
        model = "lomo/replay"
        replay = tmp / "replies.jsonl"
        replay.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
    settings = Settings(workspace=tmp / "ws", db_url=f"sqlite+aiosqlite:///{tmp / 'lomo.db'}", model=model,
                        time_scale=0.01, replay_file=replay, file=file)
    return LomoApp(settings, clock=frozen_clock(), images="off", config_dir=tmp / "config", seed=seed)


async def wait_until(pilot: Any, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "it") -> Any:
    """Poll PREDICATE (sync or async) between UI steps until it is truthy; fail after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await pilot.pause(0.02)


async def booted(pilot: Any) -> None:
    await wait_until(pilot, lambda: pilot.app.booted or pilot.app.boot_error, what="the runtime to start")
    assert pilot.app.boot_error is None, pilot.app.boot_error


async def rows(app: LomoApp, table: Any, *where: Any) -> list[Any]:
    async with app.session.db.read() as conn:
        return list((await conn.execute(select(table).where(*where))).all())


async def count(app: LomoApp, table: Any, *where: Any) -> int:
    async with app.session.db.read() as conn:
        return int((await conn.execute(select(func.count()).select_from(table).where(*where))).scalar() or 0)


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*[("space" if ch == " " else ch) for ch in text])


def notifications(app: LomoApp) -> list[tuple[str, str]]:
    """Record (title, message) of every notification the app shows from now on."""
    seen: list[tuple[str, str]] = []
    original = app.notify

    def notify(message: str, *, title: str = "", **kwargs: Any) -> None:
        seen.append((title, str(message)))
        original(message, title=title, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return seen
