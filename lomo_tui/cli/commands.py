"""The built-in subcommands (CONTRACTS §1, §7): worker, inspect, task …, gates, approve, reject, send, withdraw."""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any, AsyncIterator
from contextlib import asynccontextmanager

from ..errors import LomoError, Said, UnknownId
from .. import clock
from .main import cli_language
from .wording import helped

TASK_ACTIONS = ("new", "stop", "pause", "resume", "promote", "archive", "unarchive", "autonomy", "goal", "list",
                "show", "export")  # each worded by the catalogue's cli_help.task_NAME


def register(add: Any) -> None:
    add("worker", helped("worker"), worker)
    add("inspect", helped("inspect"), inspect)
    task = add("task", helped("task"), task_command)
    task_sub = task.add_subparsers(dest="task_command", metavar="ACTION", required=True,
                                   parser_class=type(task))
    for name in TASK_ACTIONS:
        help = helped(f"task_{name}")
        p = task_sub.add_parser(name, help=help, description=help)
        from .main import _global

        _global(p)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=helped("json"))
        if name == "new":
            p.add_argument("title")
            p.add_argument("--brief", default="")
        elif name != "list":
            p.add_argument("task_id")
        if name == "autonomy":
            p.add_argument("level", choices=("ask", "plan", "auto"))
        if name == "goal":
            p.add_argument("goal", help=helped("goal_goal"))
            p.add_argument("--brief", default=None, help=helped("goal_brief"))
            p.add_argument("--why", default="", help=helped("goal_why"))
        if name == "export":
            p.add_argument("--format", choices=("md", "html"), default="md", help=helped("export_format"))
            p.add_argument("--output", "-o", metavar="FILE", default=None,
                           help=helped("export_output"))
    add("gates", helped("gates"), gates)
    for name in ("approve", "reject"):
        p = add(name, helped(name), resolve)
        p.add_argument("gate_id")
        if name == "approve":
            p.add_argument("--option", type=int, default=None, help=helped("approve_option"))
    p = add("send", helped("send"), send)
    p.add_argument("message", nargs="?", default=None, help=helped("send_message"))
    p.add_argument("--task", metavar="TASK_ID", default=argparse.SUPPRESS)
    p.add_argument("--wait", nargs="?", type=float, const=600.0, default=None, metavar="SECONDS",
                   help=helped("send_wait"))
    p = add("withdraw", helped("withdraw"), withdraw)
    p.add_argument("message_id")
    p.add_argument("--replace", metavar="TEXT", default=None)


def _runtime(settings: Any, watch: bool = False) -> Any:
    from ..runtime.scheduler import Runtime

    return Runtime(settings, watch=watch)


@asynccontextmanager
async def _database(settings: Any) -> AsyncIterator[Any]:
    """The migrated database, without the runtime (for commands that only read or write rows)."""
    from ..store import migrate
    from ..store.engine import Database

    db = Database(settings.db_url)
    try:
        await migrate.upgrade(db)
        yield db
    finally:
        await db.close()


def message(key: str, lang: str, **fields: Any) -> str:
    """The catalogue's KEY in LANG (imported on use: registering the commands stays cheap)."""
    from ..language import message as worded

    return worded(key, lang, **fields)


def task_lines(tasks: list[dict[str, Any]], lang: str) -> list[str]:
    """`lomo task list` for a person: id, status and title, the status and the main thread's title in LANG
    (`[wording] status_*`, `main_title`; a status the catalogue does not word stays as it is), padded by cells."""
    from ..language import template
    from .wording import _width

    def status(raw: str) -> str:
        try:
            return template(f"wording.status_{raw}", lang)
        except KeyError:
            return raw

    one_shot = "  " + message("cli.one_shot", lang)
    lines = []
    for t in tasks:
        worded = status(t["status"])
        title = template("wording.main_title", lang) if t["kind"] == "main" and t["title"] == "Main" else t["title"]
        mark = one_shot if t["kind"] == "lightweight" else ""
        lines.append(f"{t['id']}  {worded}{' ' * max(1, 15 - _width(worded))}{title}{mark}")
    return lines


def _print_json(value: Any, indent: int | None = None) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=indent))


async def run_once(settings: Any, message: str, task_id: str | None, as_json: bool, max_wait: float) -> int:
    from .state import render_report, run_report

    runtime = _runtime(settings)
    since = clock.now()
    try:
        await runtime.open()
        if message or task_id:
            if task_id and not message:
                raise LomoError.said("cli_error.task_needs_message")
            await runtime.send(message, task_id)
        quiescent = await runtime.run_until_quiescent(max_wait)
        report = await run_report(runtime.db, since, runtime.errors, quiescent)
    finally:
        await runtime.close()
    if as_json:
        _print_json(report, indent=2)
    else:
        print(render_report(report, cli_language()))
    from ..redact import redact

    for error in runtime.errors:
        print(f"lomo: {redact(error)}", file=sys.stderr)
    return 1 if runtime.errors else 0


async def worker(settings: Any, args: argparse.Namespace) -> int:
    runtime = _runtime(settings, watch=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        runtime.workspace.ensure()  # a folder that cannot be a workspace: one line, before the banner
        print(message("cli_more.worker", cli_language(), owner=runtime.owner, db=settings.db_url.split('@')[-1]),
              file=sys.stderr, flush=True)
        await runtime.serve(stop)
    finally:
        await runtime.close()
    return 0


async def inspect(settings: Any, args: argparse.Namespace) -> int:
    from .state import state_document

    runtime = _runtime(settings)
    try:
        await runtime.open()
        doc = await state_document(runtime.db, runtime.workspace.id)
    finally:
        await runtime.close()
    _print_json(doc, indent=2 if not args.json else None)
    return 0


async def task_command(settings: Any, args: argparse.Namespace) -> int:
    from ..runtime.reactions import reacting_ledger

    async with _database(settings) as db:
        ledger = reacting_ledger(db, settings.lease_seconds, settings.time_scale)
        await ledger.main_task_id()
        if args.task_command == "new":
            from pathlib import Path

            from ..workspace.objects import register_workspace

            ledger.workspace_id = await register_workspace(db, Path(settings.workspace))  # it belongs there
            task_id = await ledger.create_task(args.title, kind="persistent", brief=args.brief)
            print(json.dumps({"id": task_id}) if args.json else task_id)
        elif args.task_command == "list":
            from .state import state_document

            tasks = (await state_document(db))["tasks"]
            if args.json:
                _print_json(tasks)
            for line in [] if args.json else task_lines(tasks, cli_language()):
                print(line)
        elif args.task_command == "show":
            from .state import render_task, task_document

            doc = await task_document(db, args.task_id)
            _print_json(doc, indent=2) if args.json else print(render_task(doc, cli_language()))
        elif args.task_command == "export":
            from .export import export_task

            await export_task(db, settings, args.task_id, args.format, args.output)
        elif args.task_command == "goal":
            await _change_goal(db, args)
        elif args.task_command == "autonomy":
            from ..governance.budget import set_autonomy

            async with db.write() as conn:
                await set_autonomy(conn, args.task_id, args.level, by="creator:cli")
            print(json.dumps({"id": args.task_id, "autonomy": args.level}) if args.json
                  else message("cli.autonomy_set", cli_language(), id=args.task_id, level=args.level))
        else:
            await ledger.control(args.task_id, args.task_command)
            print(json.dumps({"id": args.task_id, "action": args.task_command}) if args.json
                  else message(f"cli_more.task_{args.task_command}", cli_language(), id=args.task_id))
    return 0


async def _change_goal(db: Any, args: argparse.Namespace) -> None:
    """`lomo task goal`: a goal version by the creator; the runtime marks the plan and queues its rebuild."""
    from ..runtime.remedy import change_goal

    goal = None if args.goal == "-" else args.goal.strip()
    if goal == "" or (goal is None and args.brief is None):
        raise LomoError.said("cli_error.no_goal")
    async with db.write() as conn:
        try:
            done = await change_goal(conn, args.task_id, goal=goal, brief=args.brief, who="creator:cli",
                                     why=args.why.strip() or Said("goal_why.creator_changed"))
        except LookupError:
            raise UnknownId.said("cli_error.no_task", id=args.task_id) from None
    said = done.pop("said", None)
    if args.json:
        _print_json(done)
    elif done["version"] is None:
        print(message("cli.goal_unchanged", cli_language(), id=args.task_id))
    else:
        lang = cli_language()
        print(message("cli.goal_changed", lang, id=args.task_id, version=done["version"], action=done["action"],
                      reason=said.text(lang) if said is not None else done["reason"]))


async def gates(settings: Any, args: argparse.Namespace) -> int:
    from ..governance.gates import pending_gates

    async with _database(settings) as db:
        rows = await pending_gates(db)
    if args.json:
        _print_json([{"id": g.id, "task_id": g.task_id, "kind": g.kind, "status": g.status,
                      "question": g.question, "options": g.options, "scope": g.scope,
                      "continues": g.continues} for g in rows])
    elif not rows:
        print(message("cli.no_gates", cli_language()))
    from .state import label

    for g in [] if args.json else rows:
        print(f"{g.id}  [{label('gate.kind_' + g.kind, g.kind, cli_language())}] {g.question}")
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
    said = message("cli.approved" if approve else "cli.rejected", cli_language(), id=gate.id, question=gate.question)
    print(json.dumps({"id": gate.id, "status": gate.status}) if args.json else said)
    return 0


async def send(settings: Any, args: argparse.Namespace) -> int:
    from .main import read_message

    text = read_message(args.message)
    runtime = _runtime(settings)
    try:
        await runtime.open()
        since = clock.now()
        message_id, _ = await runtime.send(text, getattr(args, "task", None))
    finally:
        await runtime.close()
    as_json = getattr(args, "json", False)
    if args.wait is None:
        print(json.dumps({"id": message_id}) if as_json else message_id)
        return 0
    from .state import render_reply, wait_for_reply

    async with _database(settings) as db:
        reply = await wait_for_reply(db, message_id, since, args.wait)
    if as_json:
        _print_json(reply, indent=2)
    else:
        print(render_reply(reply, cli_language()))
    if not reply["settled"]:
        raise LomoError.said("cli_error.no_reply", seconds=f"{args.wait:g}")
    return 1 if reply["failed"] else 0


async def withdraw(settings: Any, args: argparse.Namespace) -> int:
    runtime = _runtime(settings)
    try:
        await runtime.open()
        new = await runtime.ledger.withdraw(args.message_id, args.replace)
    finally:
        await runtime.close()
    print(json.dumps({"withdrawn": args.message_id, "replacement": new}) if args.json
          else message("cli.withdrawn", cli_language(), id=args.message_id)
          + (message("cli.replaced_by", cli_language(), id=new) if new else ""))
    return 0
