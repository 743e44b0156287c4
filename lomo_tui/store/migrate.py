"""Schema migrations (Alembic), applied automatically at start.

Alembic is imported only when the database is not already at HEAD, so a normal start costs one query.
"""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .engine import Database

HEAD = "0012"
MIGRATIONS = Path(__file__).with_name("migrations")


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


async def upgrade(db: Database, target: str = "head") -> None:
    """Bring the schema to TARGET (default head); a no-op when it is there already."""
    if target == "head" and await current_revision(db) == HEAD:
        return
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))

    def run(sync_conn) -> None:  # type: ignore[no-untyped-def]
        cfg.attributes["connection"] = sync_conn
        command.upgrade(cfg, target)

    async with db.write() as conn:
        await conn.run_sync(run)
