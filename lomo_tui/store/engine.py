"""The database: SQLite tuned for a durable ledger, or any SQLAlchemy async URL.

SQLite: WAL, synchronous=FULL, foreign_keys; the driver's own transaction handling is off and every
write transaction opens with BEGIN IMMEDIATE (reads with a deferred BEGIN), because pysqlite's
implicit transactions silently lose updates under concurrency. Lock waits are cooperative (the loop
keeps running) and bounded by BUSY_TIMEOUT_MS.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from sqlalchemy import Connection, Engine, event, text
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool
from sqlalchemy.exc import DBAPIError, OperationalError

from ..errors import LomoError, Said

log = logging.getLogger("lomo.store")

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

BUSY_TIMEOUT_MS = 30_000  # the longest wait for the write lock (cooperative: the loop keeps running)
IDLE_READERS = 4  # read connections kept open between read transactions
READ_BUSY_MS = 5_000  # SQLite's own wait, for the rare reader that must wait (WAL recovery after a crash)


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite"):
        return None
    database = parsed.database or ""
    return None if database in ("", ":memory:") else Path(database)


def create_engine(url: str) -> AsyncEngine:
    """An async engine for a non-SQLite URL (PostgreSQL: asyncpg). Imported on demand: SQLite never pays
    for SQLAlchemy's asyncio layer."""
    from sqlalchemy.ext.asyncio import create_async_engine

    try:
        parsed = make_url(url)
    except Exception as exc:  # noqa: BLE001 — any parse failure is a usage problem
        raise LomoError.said("db_error.bad_url", url=url, detail=str(exc)) from None
    if parsed.drivername.startswith("postgresql") and "+" not in parsed.drivername:
        parsed = parsed.set(drivername="postgresql+asyncpg")
    try:
        return create_async_engine(parsed, pool_pre_ping=True)
    except Exception as exc:  # noqa: BLE001 — a missing driver, say
        raise LomoError.said("db_error.unusable_url", detail=str(exc)) from None


class DiskFull(LomoError):
    """The database's disk (or its size limit) is full: nothing of the failed transaction was kept."""


def explain_db_error(exc: BaseException, url: str) -> LomoError:
    """Turn a driver error into a sentence the creator can act on."""
    orig = getattr(exc, "orig", None) or exc
    msg = str(orig)
    if isinstance(orig, sqlite3.Error) or _is_sqlite(url):
        if "readonly" in msg or "read-only" in msg:
            return LomoError.said("db_error.read_only", where=_where(url))
        if "unable to open" in msg:
            return LomoError.said("db_error.cannot_open", where=_where(url))
        if "locked" in msg:
            return LomoError.said("db_error.locked", where=_where(url))
        if "disk is full" in msg or "database is full" in msg or ("disk I/O error" in msg and _out_of_room(url)):
            return DiskFull.said("db_error.disk_full", where=_where(url))
        if "not a database" in msg:
            return LomoError.said("db_error.not_lomo", where=_where(url))
        if "malformed" in msg or "corrupt" in msg:
            return LomoError.said("db_error.damaged", where=_where(url))
    elif isinstance(orig, (OSError, asyncio.TimeoutError)) or "Connect call failed" in msg:
        errno = getattr(orig, "errno", None)
        reason = os.strerror(errno) if errno else getattr(orig, "strerror", None)
        return LomoError.said("db_error.unreachable", where=_where(url),
                              reason=reason.lower() if reason else Said("db_error.no_answer"))
    if "No space left" in msg or "could not extend file" in msg:
        return DiskFull.said("db_error.disk_full", where=_where(url))
    return LomoError.said("db_error.other", where=_where(url),
                          detail=msg.splitlines()[0] if msg else type(exc).__name__)


def _out_of_room(url: str, least: int = 1 << 20) -> bool:
    """Whether the SQLite file's filesystem has less than LEAST bytes free (an I/O error there is ENOSPC)."""
    path = _sqlite_path(url)
    if path is None:
        return False
    try:
        return shutil.disk_usage(path.parent).free < least
    except OSError:
        return False


def storage_failure(exc: BaseException) -> bool:
    """Whether EXC is the database failing as storage (locked, full, damaged, unreachable) rather than a
    statement breaking a rule (an IntegrityError is the caller's to handle)."""
    orig = getattr(exc, "orig", None) or exc
    return isinstance(orig, sqlite3.OperationalError) or type(orig) is sqlite3.DatabaseError


def check_sqlite_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a file that is not an SQLite database or is shorter than its header
    says (truncated: a copy cut short, a full disk during a copy)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        return  # a new database
    except OSError:
        return  # SQLite says what is wrong (permissions…)
    if not header:
        return  # empty: SQLite makes it a database
    where = str(path)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise LomoError.said("db_error.not_sqlite", where=where)
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    header_valid = header[24:28] == header[92:96]  # the in-header size is valid when these two agree
    wal = Path(f"{path}-wal")
    log_pending = wal.exists() and wal.stat().st_size > 0  # a checkpoint may still be growing the file
    if header_valid and pages and size < pages * page_size and not log_pending:
        raise LomoError.said("db_error.truncated", where=where, size=size, expected=pages * page_size)


def describe_database(url: str) -> str:
    """Where the database is, for a message (a file path, or the URL without its password)."""
    return _where(url)


def _where(url: str) -> str:
    path = _sqlite_path(url)
    return str(path) if path else make_url(url).render_as_string(hide_password=True)


class LoopConnection:
    """An async face on a synchronous SQLite connection that runs on the event loop's own thread.

    SQLite answers in microseconds, so a statement costs less than a hop to a driver thread would.
    Waiting for another writer never blocks the loop: BEGIN IMMEDIATE is retried cooperatively.
    """

    def __init__(self, conn: Connection) -> None:
        self.sync = conn

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        return self.sync.execute(statement, parameters)

    async def exec_driver_sql(self, statement: str, parameters: Any = None) -> Any:
        return self.sync.exec_driver_sql(statement, parameters)

    async def run_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(self.sync, *args)


class Database:
    """The two doors into the database: `write()` (BEGIN IMMEDIATE) and `read()` (a snapshot).

    SQLite runs through the standard sqlite3 driver on the loop thread (see LoopConnection); any
    other URL runs through SQLAlchemy's async engine (asyncpg for PostgreSQL).
    """

    def __init__(self, url: str, sync_window: float = 0.0) -> None:
        self.url = url
        # the workspace (workspaces.id) the process using this database serves, once opened: views show only its
        # tasks (lomo_tui.workspace.scope); None shows every task
        self.workspace_id: str | None = None
        # Group commit (see `write`): how long a commit that nothing outside the database depends on may wait
        # for its fsync. 0 = every commit is fsynced before it returns.
        self.sync_window = max(0.0, sync_window)
        # write transactions by how they reached the disk, and background fsyncs of the log
        self.commits = {"synced": 0, "grouped": 0, "flushes": 0}
        self._unsynced_since: float | None = None  # monotonic time of the oldest commit not yet fsynced
        self._flush_timer: asyncio.TimerHandle | None = None
        self._writer_sync = "FULL"
        self.sqlite_path = _sqlite_path(url) if _is_sqlite(url) else None
        self.is_sqlite = _is_sqlite(url)
        self._write_lock: asyncio.Lock | None = None
        self._writer: Connection | None = None
        self._idle_readers: list[Connection] = []
        self._file_checked = False
        if self.is_sqlite:
            self.sync_engine = _sqlite_engine(url, busy_ms=0)  # writers: lock waits are cooperative
            self.read_engine = _sqlite_engine(url, busy_ms=READ_BUSY_MS)  # readers: rare, short waits
            self.engine: Any = self.sync_engine
        else:
            self.engine = create_engine(url)

    @asynccontextmanager
    async def write(self, *, durable: bool = True) -> AsyncIterator[Any]:
        """A write transaction. By default it is on disk (fsynced) when the block exits.

        durable=False is for commits nothing outside the database depends on yet (a read-only step's rows):
        with a sync window they are group-committed — safe from a process crash at once (they are in the
        OS's cache), fsynced within `sync_window` seconds or by the next durable commit, whichever comes
        first. Only a power cut inside that window can lose them, and only work that can be redone.
        On PostgreSQL that is `synchronous_commit = off` for the transaction, which makes the same promise.
        """
        if not self.is_sqlite:
            try:
                async with self.engine.begin() as conn:
                    if not durable and self.sync_window > 0:
                        await conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                    yield conn
            except (OperationalError, DBAPIError) as exc:
                raise explain_db_error(exc, self.url) from exc
            except (OSError, asyncio.TimeoutError) as exc:  # the server cannot be reached
                raise explain_db_error(exc, self.url) from None
            return
        if self._write_lock is None:
            self._write_lock = asyncio.Lock()
        # Writers of this process queue in order; only other processes are waited for by polling.
        if self._write_lock.locked():
            try:
                await asyncio.wait_for(self._write_lock.acquire(), BUSY_TIMEOUT_MS / 1000)
            except asyncio.TimeoutError:
                raise LomoError.said("db_error.busy", seconds=BUSY_TIMEOUT_MS // 1000, where=_where(self.url)) from None
        else:
            await self._write_lock.acquire()
        try:
            async with self._writer_transaction(self._may_group(durable)) as conn:
                yield conn
        finally:
            self._write_lock.release()

    async def serialise(self, conn: Any, key: int) -> None:
        """Inside a write transaction: wait until no other transaction holding KEY is open (so a check and the
        insert it guards are one step across processes). SQLite's BEGIN IMMEDIATE already serialises writers;
        PostgreSQL takes a transaction-scoped advisory lock."""
        if not self.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})

    def _may_group(self, durable: bool) -> bool:
        if durable or self.sync_window <= 0 or self.sqlite_path is None:
            return False
        return self._unsynced_since is None or time.monotonic() - self._unsynced_since < self.sync_window

    @asynccontextmanager
    async def _writer_transaction(self, grouped: bool) -> AsyncIterator[LoopConnection]:
        """A write transaction on this process's one writer connection (the write lock serialises them),
        kept open across transactions: no pool round trip per write."""
        if self._writer is None or self._writer.closed or self._writer.invalidated:
            self._writer = self._connect(self.sync_engine)
            self._writer_sync = "FULL"
        driver = self._writer.connection.driver_connection
        level = "NORMAL" if grouped else "FULL"
        if level != self._writer_sync:  # WAL + NORMAL: the commit is not fsynced; WAL + FULL: it is
            driver.execute(f"PRAGMA synchronous={level}")
            self._writer_sync = level
        before = driver.total_changes
        try:
            async with self._transaction(self._writer, "BEGIN IMMEDIATE") as conn:
                yield conn
        except BaseException as exc:
            # A connection a failure left inside a transaction (or that failed as storage: a full disk, damage)
            # is not reused: the next write opens a fresh one instead of meeting PendingRollbackError forever.
            if _failed_as_storage(exc) or not _clean(self._writer):
                self._discard_writer()
            raise
        if driver.total_changes == before:
            return  # nothing was written: nothing reached the log
        if grouped:
            self.commits["grouped"] += 1
            if self._unsynced_since is None:
                self._unsynced_since = time.monotonic()
                self._flush_timer = asyncio.get_running_loop().call_later(
                    self.sync_window, lambda: asyncio.ensure_future(self.flush()))
        else:
            # A FULL commit fsyncs the whole write-ahead log, so every grouped commit before it is on disk too.
            self.commits["synced"] += 1
            self._synced()

    @property
    def pending_sync(self) -> bool:
        """Whether a grouped commit is still waiting for its fsync."""
        return self._unsynced_since is not None

    def _synced(self) -> None:
        self._unsynced_since = None
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None

    async def flush(self) -> None:
        """fsync the write-ahead log now (off the loop thread): every grouped commit so far is on disk after."""
        if self._unsynced_since is None or self.sqlite_path is None:
            return
        self._synced()  # commits made while the fsync runs schedule their own flush
        try:
            await asyncio.to_thread(_fsync, Path(f"{self.sqlite_path}-wal"))
            self.commits["flushes"] += 1
        except OSError as exc:  # the next durable commit syncs the log anyway
            log.warning("could not fsync the database log: %s", exc)

    def _discard_writer(self) -> None:
        """Forget the writer connection after a failure: invalidated (its driver connection closed, whatever
        transaction it held rolled back by SQLite), never returned to the pool."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            writer.invalidate()
            writer.close()
        except Exception:  # noqa: BLE001 — it is being thrown away
            log.debug("discarding a failed writer connection", exc_info=True)

    def _drop_writer(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            finally:
                self._writer = None

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Any]:
        if not self.is_sqlite:
            try:
                async with self.engine.connect() as conn:
                    async with conn.begin():
                        yield conn
            except OperationalError as exc:
                raise explain_db_error(exc, self.url) from exc
            except (OSError, asyncio.TimeoutError) as exc:  # the server cannot be reached
                raise explain_db_error(exc, self.url) from None
            return
        conn = self._idle_readers.pop() if self._idle_readers else self._connect(self.read_engine)
        try:
            async with self._transaction(conn, "BEGIN") as loop_conn:
                yield loop_conn
        except BaseException as exc:
            if _failed_as_storage(exc) or not _clean(conn):
                conn.invalidate()  # a broken connection is not reused, not even by the pool
            conn.close()
            raise
        if len(self._idle_readers) < IDLE_READERS and not (conn.closed or conn.invalidated):
            self._idle_readers.append(conn)  # reads are frequent: skip the pool's checkout on the next one
        else:
            conn.close()

    def _connect(self, engine: Engine) -> Connection:
        if not self._file_checked and self.sqlite_path is not None:
            check_sqlite_file(self.sqlite_path)
            self._file_checked = True
        try:
            return engine.connect()
        except DBAPIError as exc:
            raise explain_db_error(exc, self.url) from None

    @asynccontextmanager
    async def _transaction(self, conn: Connection, begin: str) -> AsyncIterator[LoopConnection]:
        """BEGIN (waiting cooperatively for the lock), the body, COMMIT — or ROLLBACK when the body fails."""
        try:
            await _begin(conn, begin, self.url)
            try:
                yield LoopConnection(conn)
            except BaseException:
                _abandon(conn)
                raise
            try:
                _end(conn, commit=True)
            except (DBAPIError, sqlite3.DatabaseError) as exc:
                _abandon(conn)
                if storage_failure(exc):
                    raise explain_db_error(exc, self.url) from exc
                raise
        except (DBAPIError, sqlite3.DatabaseError) as exc:
            if storage_failure(exc):
                raise explain_db_error(exc, self.url) from exc
            raise

    async def close(self) -> None:
        if self.is_sqlite:
            if self._unsynced_since is not None and self.sqlite_path is not None:
                self._synced()
                _fsync(Path(f"{self.sqlite_path}-wal"))
            self._drop_writer()
            while self._idle_readers:
                self._idle_readers.pop().close()
            self.sync_engine.dispose()
            self.read_engine.dispose()
        else:
            await self.engine.dispose()

    async def integrity_ok(self) -> bool:
        if not self.is_sqlite:
            return True
        async with self.read() as conn:
            return (await conn.execute(text("PRAGMA integrity_check"))).scalar() == "ok"


async def _begin(conn: Connection, statement: str, url: str) -> None:
    """BEGIN, waiting cooperatively (never blocking the loop) while another writer holds the lock.

    Writers' connections have busy_timeout 0, so only this loop waits for the write lock; readers'
    connections keep SQLite's own short wait for the rare case that needs one (WAL recovery after a
    crash)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.0005
    driver = conn.connection.driver_connection
    while True:
        try:
            driver.execute(statement)  # straight to sqlite3: SQLAlchemy's statement machinery costs more than BEGIN
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() > deadline:
                raise explain_db_error(exc, url) from exc
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.02)


def _end(conn: Connection, *, commit: bool) -> None:
    """COMMIT or ROLLBACK the transaction `_begin` opened. SQLAlchemy's own bookkeeping is only involved when the
    body ran statements through it (it then holds a transaction of its own that must end too)."""
    if conn.in_transaction():
        conn.commit() if commit else conn.rollback()  # ends SQLAlchemy's transaction and the driver's
        return
    driver = conn.connection.driver_connection
    if driver.in_transaction:
        driver.commit() if commit else driver.rollback()


def _abandon(conn: Connection) -> None:
    """Roll back after a failure, never hiding it: a rollback that fails too leaves the connection unclean,
    and its owner discards it (see `_clean`)."""
    try:
        _end(conn, commit=False)
    except Exception:  # noqa: BLE001 — the original failure is the one to report
        log.debug("rollback after a failed transaction failed", exc_info=True)


def _failed_as_storage(exc: BaseException) -> bool:
    return isinstance(exc, DiskFull) or storage_failure(exc) or (
        exc.__cause__ is not None and storage_failure(exc.__cause__))


def _clean(conn: Connection | None) -> bool:
    """Whether CONN is fit for the next transaction: open, valid, in no transaction at either level."""
    if conn is None or conn.closed or conn.invalidated or conn.in_transaction():
        return False
    try:
        return not conn.connection.driver_connection.in_transaction
    except Exception:  # noqa: BLE001
        return False


def _fsync(path: Path) -> None:
    """Flush PATH's data to the disk (fsync works on the inode, whichever descriptor asks)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return  # checkpointed and removed: its frames are in the database file, which SQLite synced
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_sqlite(url: str) -> bool:
    try:
        return make_url(url).drivername.startswith("sqlite")
    except Exception:  # noqa: BLE001
        return False


def _sqlite_engine(url: str, busy_ms: int) -> Engine:
    """A synchronous pysqlite engine for URL (whatever async driver it names), tuned for the ledger."""
    parsed = make_url(url).set(drivername="sqlite+pysqlite")
    path = _sqlite_path(str(parsed))
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LomoError.said("db_error.no_folder", path=str(path.parent), detail=exc.strerror) from None
    engine = sa_create_engine(parsed, poolclass=QueuePool, pool_size=8, max_overflow=-1,
                              connect_args={"timeout": 0, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None  # we say BEGIN ourselves
        cursor = dbapi_connection.cursor()
        # Turning WAL on for a fresh file takes the write lock: concurrent first starts wait their turn for it.
        cursor.execute(f"PRAGMA busy_timeout={READ_BUSY_MS}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA secure_delete=ON")  # freed pages are zeroed: forgotten memories leave no trace (F4)
        cursor.close()

    return engine


_TEXT_CACHE: dict[str, Any] = {}


async def run(conn: Any, sql: str, params: dict[str, Any]) -> int:
    """Execute one plain SQL statement with :named parameters; return the affected row count.

    The ledger's hot path uses this: on SQLite it goes straight to the sqlite3 cursor (no statement
    building, no thread hop); elsewhere through SQLAlchemy's `text()` (compiled once, cached). JSON
    values must be passed already serialised.
    """
    if isinstance(conn, LoopConnection):
        return conn.sync.connection.driver_connection.execute(sql, params).rowcount
    statement = _TEXT_CACHE.get(sql)
    if statement is None:
        statement = _TEXT_CACHE[sql] = text(sql)
    return (await conn.execute(statement, params)).rowcount


class Record(dict):  # type: ignore[type-arg]
    """A row as a dict that also answers attribute access (row.title), like SQLAlchemy's Row."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


async def fetch(conn: Any, sql: str, params: dict[str, Any]) -> list[Record]:
    """Rows of one plain SQL query with :named parameters (the hot path's reads; see `run`).
    JSON columns come back as text."""
    if isinstance(conn, LoopConnection):
        cursor = conn.sync.connection.driver_connection.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [Record(zip(names, row)) for row in cursor.fetchall()]
    statement = _TEXT_CACHE.get(sql)
    if statement is None:
        statement = _TEXT_CACHE[sql] = text(sql)
    return [Record(row._mapping) for row in await conn.execute(statement, params)]
