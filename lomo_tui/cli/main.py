"""The `lomo` command: the TUI by default, plus the headless surface of CONTRACTS §1."""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import time
from typing import Any, Sequence

from .. import __version__
from ..errors import LomoError
from . import memory as memory_cli

COMMANDS = ("worker", "inspect", "task", "gates", "approve", "reject", "send", "withdraw", "memory")


def _global(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """The global options; on subcommands they default to SUPPRESS so they never undo the top level's."""
    default = None if top else argparse.SUPPRESS
    parser.add_argument("--workspace", metavar="DIR", default=default, help="workspace folder (env LOMO_WORKSPACE)")
    parser.add_argument("--db", metavar="URL", default=default, help="SQLAlchemy async URL (env LOMO_DB_URL)")
    parser.add_argument("--model", metavar="NAME", default=default,
                        help="model name (env LOMO_MODEL; default lomo/local)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lomo", description="Lomo — a creative agent in your terminal. With no command, opens the TUI.")
    parser.add_argument("--version", action="version", version=f"lomo {__version__}")
    _global(parser, top=True)
    parser.add_argument("--run-once", nargs="?", const="", default=None, metavar="MESSAGE",
                        help="deliver MESSAGE (optional), run until quiescent, print a report, exit")
    parser.add_argument("--task", metavar="TASK_ID", help="with --run-once: deliver straight to this task's inbox")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--max-wait", type=float, default=600.0, metavar="SECONDS",
                        help="with --run-once: longest wait for embedded studio jobs (default 600)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        _global(p)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
        return p

    add("worker", "run the runtime headless until SIGTERM/SIGINT")
    add("inspect", "print the state document")
    task = add("task", "create or control tasks")
    task_sub = task.add_subparsers(dest="task_command", metavar="ACTION", required=True)
    for name, help in (("new", "create a persistent task"), ("stop", "stop a task"), ("pause", "pause a task"),
                       ("resume", "resume a paused task"), ("promote", "make a one-shot task persistent"),
                       ("archive", "archive a task"), ("unarchive", "bring an archived task back"),
                       ("autonomy", "how much a task may do without asking: ask | plan | auto"),
                       ("list", "list tasks")):
        p = task_sub.add_parser(name, help=help)
        _global(p)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
        if name == "new":
            p.add_argument("title")
            p.add_argument("--brief", default="")
        elif name != "list":
            p.add_argument("task_id")
        if name == "autonomy":
            p.add_argument("level", choices=("ask", "plan", "auto"))
    add("gates", "list pending gates")
    for name in ("approve", "reject"):
        p = add(name, f"{name} a pending gate")
        p.add_argument("gate_id")
        if name == "approve":
            p.add_argument("--option", type=int, default=None, help="which option (1-based)")
    p = add("send", "deliver a message (to Main, or --task) for a running TUI or worker to pick up")
    p.add_argument("message")
    p.add_argument("--task", metavar="TASK_ID", default=argparse.SUPPRESS)
    p = add("withdraw", "withdraw (or replace) a message not yet read by its task")
    p.add_argument("message_id")
    p.add_argument("--replace", metavar="TEXT", default=None)
    memory_cli.add_parser(add, _global)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.run_once is None and args.task and args.command is None:
        build_parser().error("--task needs --run-once")
    try:
        code = dispatch(args)
    except LomoError as exc:
        print(f"lomo: {exc}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


def _settings(args: argparse.Namespace) -> Any:
    from ..config import load_settings

    return load_settings(workspace=args.workspace, db=args.db, model=args.model)


def _logging() -> None:
    from ..config import log_dir

    try:
        directory = log_dir()
        directory.mkdir(parents=True, exist_ok=True)
        logging.basicConfig(filename=directory / "lomo.log", level=logging.INFO,
                            format="%(asctime)s %(process)d %(name)s %(levelname)s %(message)s")
    except OSError:
        logging.basicConfig(level=logging.WARNING)


def dispatch(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging()
    if args.run_once is not None:
        return asyncio.run(run_once(settings, args.run_once, args.task, args.json, args.max_wait))
    if args.command is None:
        from ..tui import run_app

        return run_app(settings)
    handler = {"worker": worker, "inspect": inspect, "task": task_command, "gates": gates, "approve": resolve,
               "reject": resolve, "send": send, "withdraw": withdraw, "memory": memory_cli.run}[args.command]
    return asyncio.run(handler(settings, args))


def _runtime(settings: Any, watch: bool = False) -> Any:
    from ..runtime.scheduler import Runtime

    return Runtime(settings, watch=watch)


async def run_once(settings: Any, message: str, task_id: str | None, as_json: bool, max_wait: float) -> int:
    from .state import render_report, run_report

    runtime = _runtime(settings)
    since = time.time()
    try:
        await runtime.open()
        if message or task_id:
            if task_id and not message:
                raise LomoError("--task needs a MESSAGE to deliver")
            await runtime.send(message, task_id)
        quiescent = await runtime.run_until_quiescent(max_wait)
        report = await run_report(runtime.db, since, runtime.errors, quiescent)
    finally:
        await runtime.close()
    print(json.dumps(report, ensure_ascii=False, indent=2) if as_json else render_report(report))
    for error in runtime.errors:
        print(f"lomo: {error}", file=sys.stderr)
    return 1 if runtime.errors else 0


async def worker(settings: Any, args: argparse.Namespace) -> int:
    runtime = _runtime(settings, watch=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        print(f"lomo worker {runtime.owner} on {settings.db_url.split('@')[-1]}", file=sys.stderr, flush=True)
        await runtime.serve(stop)
    finally:
        await runtime.close()
    return 0


async def inspect(settings: Any, args: argparse.Namespace) -> int:
    from .state import state_document

    runtime = _runtime(settings)
    try:
        await runtime.open()
        doc = await state_document(runtime.db)
    finally:
        await runtime.close()
    print(json.dumps(doc, ensure_ascii=False, indent=2 if not args.json else None))
    return 0


async def task_command(settings: Any, args: argparse.Namespace) -> int:
    from ..store.engine import Database
    from ..store import migrate
    from ..runtime.ledger import Ledger

    db = Database(settings.db_url)
    try:
        await migrate.upgrade(db)
        ledger = Ledger(db, settings.lease_seconds)
        await ledger.main_task_id()
        if args.task_command == "new":
            task_id = await ledger.create_task(args.title, kind="persistent", brief=args.brief)
            print(json.dumps({"id": task_id}) if args.json else task_id)
        elif args.task_command == "list":
            from .state import state_document

            tasks = [t for t in (await state_document(db))["tasks"] if t["kind"] != "lightweight"]
            if args.json:
                print(json.dumps(tasks, ensure_ascii=False))
            for t in [] if args.json else tasks:
                print(f"{t['id']}  {t['status']:<14} {t['title']}")
        elif args.task_command == "autonomy":
            from ..governance.budget import set_autonomy

            async with db.write() as conn:
                await set_autonomy(conn, args.task_id, args.level, by="creator:cli")
            print(json.dumps({"id": args.task_id, "autonomy": args.level}) if args.json
                  else f"autonomy of {args.task_id}: {args.level}")
        else:
            await ledger.control(args.task_id, args.task_command)
            print(json.dumps({"id": args.task_id, "action": args.task_command}) if args.json
                  else f"{args.task_command}: {args.task_id}")
    finally:
        await db.close()
    return 0


async def gates(settings: Any, args: argparse.Namespace) -> int:
    from ..governance.gates import pending_gates
    from ..store import migrate
    from ..store.engine import Database

    db = Database(settings.db_url)
    try:
        await migrate.upgrade(db)
        rows = await pending_gates(db)
    finally:
        await db.close()
    if args.json:
        print(json.dumps([{"id": g.id, "task_id": g.task_id, "kind": g.kind, "status": g.status,
                           "question": g.question, "options": g.options, "scope": g.scope,
                           "continues": g.continues} for g in rows], ensure_ascii=False))
    elif not rows:
        print("No gates are waiting for you.")
    for g in [] if args.json else rows:
        print(f"{g.id}  [{g.kind}] {g.question}")
        for i, option in enumerate(g.options or [], 1):
            consequence = f" — {option['consequence']}" if option.get("consequence") else ""
            print(f"    {i}. {option['label']}{consequence}")
    return 0


async def resolve(settings: Any, args: argparse.Namespace) -> int:
    runtime = _runtime(settings)
    try:
        await runtime.open()
        approve = args.command == "approve"
        gate = await runtime.resolve_gate(args.gate_id, approve=approve, option=getattr(args, "option", None),
                                          by=f"creator:cli:{args.command}")
    finally:
        await runtime.close()
    word = "approved" if approve else "rejected"
    print(json.dumps({"id": gate.id, "status": gate.status}) if args.json else f"{word}: {gate.id} — {gate.question}")
    return 0


async def send(settings: Any, args: argparse.Namespace) -> int:
    runtime = _runtime(settings)
    try:
        await runtime.open()
        message_id, _ = await runtime.send(args.message, getattr(args, "task", None))
    finally:
        await runtime.close()
    print(json.dumps({"id": message_id}) if getattr(args, "json", False) else message_id)
    return 0


async def withdraw(settings: Any, args: argparse.Namespace) -> int:
    runtime = _runtime(settings)
    try:
        await runtime.open()
        new = await runtime.ledger.withdraw(args.message_id, args.replace)
    finally:
        await runtime.close()
    print(json.dumps({"withdrawn": args.message_id, "replacement": new}) if args.json
          else f"withdrawn: {args.message_id}" + (f" (replaced by {new})" if new else ""))
    return 0
