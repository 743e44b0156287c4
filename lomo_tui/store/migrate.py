"""Schema migrations (Alembic), applied automatically at start.

Alembic is imported only when the database is not already at HEAD, so a normal start costs one query.

Several processes may start at once on one database (`lomo worker &` on each machine), and any of them may
be killed mid-upgrade. So the upgrade is a series of steps, one revision each, and every step is one write
transaction that takes the database's migration lock first (SQLite: BEGIN IMMEDIATE, the file's one write
lock; PostgreSQL: a transaction-scoped advisory lock), re-reads the revision under that lock, runs the next
revision's DDL and bumps `alembic_version`, then commits. A process that waited for the lock finds the work
done; a process killed inside a step leaves the previous revision intact, and the next start redoes the step.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from ..errors import LomoError
from ..faults import Faults
from .engine import Database, describe_database

HEAD = "0018"
MIGRATIONS = Path(__file__).with_name("migrations")
# pg_advisory_xact_lock key of the schema upgrade: any fixed 64-bit number, the same in every Lomo ("lomo")
ADVISORY_LOCK_KEY = 0x6C6F6D6F


async def current_revision(db: Database) -> str | None:
    try:
        async with db.read() as conn:
            return (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()
    except SQLAlchemyError:
        return None
    except Exception as exc:  # noqa: BLE001 — a missing table surfaces as LomoError on SQLite
        if "alembic_version" in str(exc):
            return None
        raise


async def upgrade(db: Database, target: str = "head", faults: Faults | None = None) -> None:
    """Bring the schema to TARGET (default head); a no-op when it is there already.

    FAULTS (default: from LOMO_FAULTS) is reached at `during_migration` after each revision's DDL ran and
    before its transaction commits."""
    if target == "head" and await current_revision(db) == HEAD:
        return
    faults = faults if faults is not None else Faults(os.environ.get("LOMO_FAULTS", ""))
    while True:
        async with db.write() as conn:
            finished = await conn.run_sync(_one_revision, db, target, faults)
        if finished:
            return


@lru_cache(maxsize=1)
def _scripts() -> Any:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS))


def _one_revision(sync_conn: Any, db: Database, target: str, faults: Faults) -> bool:
    """Under the migration lock: apply the next revision toward TARGET in this transaction. True when the
    schema is at TARGET (nothing left to do)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.util import CommandError

    if not sync_conn.in_transaction():
        sync_conn.begin()  # SQLite: the driver's BEGIN IMMEDIATE is open; tell SQLAlchemy (and so Alembic) so
    if not db.is_sqlite:
        sync_conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
    scripts = _scripts()
    context = MigrationContext.configure(sync_conn, opts={"transactional_ddl": True})
    current = context.get_current_revision()  # re-read under the lock
    wanted = scripts.get_revision(target).revision
    if current is not None:
        try:
            scripts.get_revision(current)
        except CommandError:
            raise LomoError.said("db_error.newer", where=describe_database(db.url), current=current,
                                 head=HEAD) from None
    if current == wanted:
        return True
    path = list(scripts.iterate_revisions(wanted, current))  # newest first, down to just above CURRENT
    if not path or path[-1].down_revision != current:
        return True  # TARGET is older than the database: nothing to upgrade
    step = path[-1].revision
    _run_step(sync_conn, scripts, step)
    faults.hit("during_migration")
    return step == wanted


def _run_step(sync_conn: Any, scripts: Any, step: str) -> None:
    """Apply revision STEP on SYNC_CONN, inside the caller's transaction (Alembic neither begins nor commits).

    What `alembic.command.upgrade` does, on the one ScriptDirectory loaded per process: `command.upgrade`
    re-reads an env.py and compiles every revision file again on each call, which made a fresh database's
    first start cost a second of CPU."""
    from alembic.config import Config
    from alembic.runtime.environment import EnvironmentContext

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with EnvironmentContext(cfg, scripts, fn=lambda rev, _context: scripts._upgrade_revs(step, rev),
                            destination_rev=step) as env:
        env.configure(connection=sync_conn, target_metadata=None, render_as_batch=True, transactional_ddl=True)
        with env.begin_transaction():
            env.run_migrations()
