"""`lomo memory list|show|forget` (CONTRACTS §7): what Lomo remembers about the creator, and forgetting it."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from ..errors import LomoError, UnknownId
from .wording import helped


def add_parser(add: Callable[[str, str], argparse.ArgumentParser],
               add_global: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register `memory` with the top-level parser's ADD (and each action with the global options)."""
    memory = add("memory", helped("memory"))
    actions = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)

    def action(name: str, help: str) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help)
        add_global(p)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=helped("json"))
        return p

    action("list", helped("memory_list")).add_argument(
        "--all", action="store_true", help=helped("memory_list_all"))
    action("show", helped("memory_show")).add_argument("id", metavar="ID")
    forget = action("forget", helped("memory_forget"))
    forget.add_argument("id", metavar="ID", nargs="?", help=helped("forget_id"))
    forget.add_argument("--query", metavar="TEXT", help=helped("forget_query"))
    forget.add_argument("--yes", action="store_true", help=helped("forget_yes"))


async def run(settings: Any, args: argparse.Namespace) -> int:
    from ..memory.forget import complete_pending, settle_gates
    from ..store import migrate
    from ..store.engine import Database

    db = Database(settings.db_url)
    try:
        await migrate.upgrade(db)
        await settle_gates(db)
        await complete_pending(db)  # a cascade an earlier process left half done is finished first
        return await {"list": _list, "show": _show, "forget": _forget}[args.memory_command](db, args)
    finally:
        await db.close()


def _say(key: str, **fields: Any) -> str:
    """`cli_memory.KEY` in the creator's language (imported on use: registering the command stays cheap)."""
    from ..language import message
    from .main import cli_language

    return message(f"cli_memory.{key}", cli_language(), **fields)


def _word(name: str) -> str:
    """A stored id ("superseded", "preference", "origin") in the creator's language (`memory_words.NAME`), else
    as stored."""
    from ..language import template
    from .main import cli_language

    try:
        return template(f"memory_words.{name}", cli_language())
    except KeyError:
        return name.partition("_")[2] or name


def _body(row: dict[str, Any]) -> str:
    return row["text"] if row["status"] != "forgotten" and row["text"] else _say("forgotten_text")


def _line(row: dict[str, Any]) -> str:
    return _say("line", id=row["id"], version=row["version"], kind=_word(f"kind_{row['kind']}"),
                scope=_word(f"scope_{row['scope']}"), said=_word("stated" if row["stated"] else "inferred"),
                status=_word(f"status_{row['status']}"), body=_body(row))


async def _list(db: Any, args: argparse.Namespace) -> int:
    from ..memory.listing import memory_rows

    async with db.read() as conn:
        rows = await memory_rows(conn, every_version=args.all)
    if getattr(args, "json", False):
        print(json.dumps(rows, ensure_ascii=False))
    elif not rows:
        print(_say("none"))
    for row in [] if getattr(args, "json", False) else rows:
        print(_line(row))
    return 0


async def _show(db: Any, args: argparse.Namespace) -> int:
    from ..memory.listing import memory_rows

    async with db.read() as conn:
        versions = await memory_rows(conn, every_version=True, memory_id=args.id)
    if not versions:
        raise UnknownId.said("cli_error.no_memory", id=args.id)
    current = next((v for v in reversed(versions) if v["status"] == "active"), versions[-1])
    doc = dict(current, versions=versions)
    if getattr(args, "json", False):
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    print(_line(current))
    for v in versions:
        sources = _say("sources_and").join(_say("source", role=_word(f"role_{e['role']}"), id=e["message_id"])
                                           for e in v["evidence"]) or _say("no_sources")
        print(_say("version_line", version=v["version"], status=_word(f"status_{v['status']}"), body=_body(v),
                   sources=sources))
    return 0


async def _forget(db: Any, args: argparse.Namespace) -> int:
    from ..memory.forget import forget, match_query
    from ..memory.listing import memory_rows
    from ..store import schema as s
    from sqlalchemy import select

    if bool(args.id) == bool(args.query):
        print("lomo: " + _say("needs_target"), file=sys.stderr)
        return 2
    memory_ids: list[str] = []
    evidence_ids: list[str] = []
    async with db.read() as conn:
        if args.query:
            memory_ids = list(dict.fromkeys(r.memory_id for r in await match_query(conn, args.query)))
            if not memory_ids:
                raise LomoError.said("cli_error.no_memory_query", query=args.query)
        elif (await conn.execute(select(s.memories.c.id).where(s.memories.c.id == args.id))).first():
            memory_ids = [args.id]
        elif (await conn.execute(select(s.memory_evidence.c.id).where(s.memory_evidence.c.id == args.id))).first():
            evidence_ids = [args.id]
        else:
            raise UnknownId.said("cli_error.no_memory_or_message", id=args.id)
        going = [r for m in memory_ids for r in await memory_rows(conn, memory_id=m)]
    if not args.yes and not _confirmed(going, evidence_ids):
        return 2
    result = await forget(db, memory_ids=memory_ids, evidence_ids=evidence_ids)
    if getattr(args, "json", False):
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(_say("forgotten", ids=", ".join(result["forgotten"]) or _say("forgotten_none")))
        if result["rebuilt"]:
            print(_say("rebuilt", ids=", ".join(result["rebuilt"])))
    return 0


def _confirmed(going: list[dict[str, Any]], evidence_ids: list[str]) -> bool:
    """Ask on a terminal; without one, refuse (the creator's explicit action authorises forgetting)."""
    if not sys.stdin.isatty():
        print("lomo: " + _say("no_terminal"), file=sys.stderr)
        return False
    for row in going:
        print(f"  {_line(row)}")
    what = (_say("what_one") if len(going) == 1 else _say("what_n", n=len(going))) if going else \
        _say("what_message", id=evidence_ids[0])
    answer = input(_say("ask", what=what)).strip().casefold()
    if answer not in {word.strip().casefold() for word in _say("yes").split("\n") if word.strip()}:
        print(_say("kept"))
        return False
    return True


def register(add: Any) -> None:
    """`lomo memory list|show|forget` (cli.main collects every module in COMMANDS)."""
    from .main import _global

    add_parser(lambda name, help: add(name, help, run), _global)
