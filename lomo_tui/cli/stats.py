"""`lomo stats [--task TASK_ID] [--since WHEN] [--json]`: collaboration metrics from the ledgers (DESIGN J5,
CONTRACTS §7). The computation is the read model `lomo_tui.metrics`; this is its command."""
from __future__ import annotations

import argparse
import json
from typing import Any

from .wording import helped

HELP = helped("stats")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", metavar="TASK_ID", default=None, help=helped("stats_task"))
    parser.add_argument("--since", metavar="WHEN", default=None,
                        help=helped("stats_since"))


async def run(settings: Any, args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from .. import metrics
    from ..context.usage import cache_usage, render_cache
    from ..errors import UnknownId
    from ..store import migrate
    from ..store import schema as s
    from ..store.engine import Database

    since = metrics.parse_since(args.since) if args.since is not None else None
    db = Database(settings.db_url)
    try:
        await migrate.upgrade(db)
        async with db.read() as conn:
            if args.task is not None and (await conn.execute(select(s.tasks.c.id).where(
                    s.tasks.c.id == args.task))).first() is None:
                raise UnknownId.said("cli_error.no_task", id=args.task)
            doc = await metrics.compute(conn, task_id=args.task, since=since)
            doc["cache"] = await cache_usage(conn, args.task, since)  # prompt-cache tokens (E1)
    finally:
        await db.close()
    if getattr(args, "json", False):
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from .main import cli_language

    lang = cli_language()
    cache = render_cache(doc["cache"], lang)
    print(metrics.render(doc, lang) + ("\n" + cache if cache else ""))
    return 0


def register(add: Any) -> None:
    """`lomo stats` (cli.main collects every module in COMMANDS)."""
    add_arguments(add("stats", HELP, run))
