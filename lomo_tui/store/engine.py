"""The async engine: SQLite tuned for a durable ledger, or any SQLAlchemy async URL.

SQLite: WAL, synchronous=FULL, busy_timeout, foreign_keys; the driver's own transaction handling is
off and every write transaction opens with BEGIN IMMEDIATE (reads with a deferred BEGIN), because
pysqlite's implicit transactions silently lose updates under concurrency.
"""
from __future__ import annotations

import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from ..errors import LomoError

BUSY_TIMEOUT_MS = 30_000


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite"):
        return None
    database = parsed.database or ""
    return None if database in ("", ":memory:") else Path(database)


def create_engine(url: str) -> AsyncEngine:
    """Open an engine for URL (SQLite gets the ledger pragmas and BEGIN IMMEDIATE writes)."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # noqa: BLE001 — any parse failure is a usage problem
        raise LomoError(f"database URL {url!r} is not a SQLAlchemy URL ({exc})") from None
    if parsed.drivername == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    if parsed.drivername.startswith("postgresql") and "+" not in parsed.drivername:
        parsed = parsed.set(drivername="postgresql+asyncpg")
    path = _sqlite_path(str(parsed))
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LomoError(f"cannot create the database folder {path.parent}: {exc.strerror}") from None
    if parsed.drivername.startswith("sqlite"):
        engine = create_async_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _tune_sqlite(engine)
    else:
        engine = create_async_engine(parsed, pool_pre_ping=True)
    return engine


def _tune_sqlite(engine: AsyncEngine) -> None:
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        mode = "DEFERRED" if conn.get_execution_options().get("lomo_read") else "IMMEDIATE"
        conn.exec_driver_sql(f"BEGIN {mode}")


def explain_db_error(exc: BaseException, url: str) -> LomoError:
    """Turn a driver error into a sentence the creator can act on."""
    msg = str(getattr(exc, "orig", exc))
    if isinstance(getattr(exc, "orig", None), sqlite3.OperationalError) or "sqlite" in url:
        if "readonly" in msg or "read-only" in msg:
            return LomoError(f"the database is read-only ({_where(url)}): check its permissions or pass --db")
        if "unable to open" in msg:
            return LomoError(f"cannot open the database ({_where(url)}): check that the folder exists and is writable")
        if "locked" in msg:
            return LomoError(f"the database is locked by another program ({_where(url)}); try again in a moment")
        if "malformed" in msg or "not a database" in msg:
            return LomoError(f"the database file is damaged ({_where(url)}); restore a backup or pass another --db")
    return LomoError(f"database error ({_where(url)}): {msg.splitlines()[0] if msg else type(exc).__name__}")


def _where(url: str) -> str:
    path = _sqlite_path(url)
    return str(path) if path else make_url(url).render_as_string(hide_password=True)


class Database:
    """Engine plus the two doors into it: `write()` (BEGIN IMMEDIATE) and `read()` (snapshot)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine(url)
        self.is_sqlite = self.engine.dialect.name == "sqlite"

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        try:
            async with self.engine.begin() as conn:
                yield conn
        except (OperationalError, DBAPIError) as exc:
            if isinstance(exc, DBAPIError) and not isinstance(exc, OperationalError) and not self.is_sqlite:
                raise
            raise explain_db_error(exc, self.url) from exc

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        try:
            async with self.engine.connect() as conn:
                conn = await conn.execution_options(lomo_read=True)
                async with conn.begin():
                    yield conn
        except OperationalError as exc:
            raise explain_db_error(exc, self.url) from exc

    async def close(self) -> None:
        await self.engine.dispose()

    async def integrity_ok(self) -> bool:
        if not self.is_sqlite:
            return True
        async with self.read() as conn:
            return (await conn.execute(text("PRAGMA integrity_check"))).scalar() == "ok"
