"""The `lomo` command: the TUI by default, plus the headless surface of CONTRACTS §1.

Subcommands are registered from a table: each entry of `COMMANDS` is a module of this package with a
`register(add)` function, where `add(name, help, handler)` returns the subcommand's parser (the global
options and `--json` already on it) and HANDLER is `async def handler(settings, args) -> int`. A new
command is one module plus one name in `COMMANDS`.
"""
from __future__ import annotations

import argparse
import asyncio
import difflib
import importlib
import logging
import os
import re
import sys
from typing import Any, Awaitable, Callable, Iterator, Sequence

from .. import __version__
from ..errors import LomoError, Said, UsageError
from .wording import LomoHelpFormatter, error_line, helped

Handler = Callable[[Any, argparse.Namespace], Awaitable[int]]
AddCommand = Callable[[str, str, Handler], argparse.ArgumentParser]
COMMANDS: tuple[str, ...] = ("commands", "context", "memory", "stats")  # modules under lomo_tui.cli with register(add); e.g. add "context"
log = logging.getLogger("lomo.cli")


class LomoParser(argparse.ArgumentParser):
    """argparse without prefix guessing, whose errors name what was not understood and the nearest valid word,
    and whose help is worded in the creator's language (help texts are `[cli_help]` keys: cli.wording)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", LomoHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str | Said) -> None:  # type: ignore[override]
        """MESSAGE: argparse's own (English) or ours, worded in the creator's language."""
        found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message) if isinstance(message, str) \
            else None
        if found:
            word, choices = found.group(1), re.findall(r"'([^']*)'", found.group(2))
            nearest = difflib.get_close_matches(word, choices, n=1)
            what = "command" if self._is_top() else "choice"
            message = (Said(f"cli_error.unknown_{what}", {"word": word, "nearest": nearest[0]}) if nearest
                       else Said(f"cli_error.unknown_{what}_choose", {"word": word, "choices": ", ".join(choices)}))
        lang = cli_language()
        text = message.text(lang) if isinstance(message, Said) else error_line(message, lang)
        self.print_usage(sys.stderr)
        self.exit(2, Said("cli_help.error", {"prog": self.prog, "text": text}).text(lang) + "\n")

    def _is_top(self) -> bool:
        return self.prog == "lomo"


def _global(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """The global options; on subcommands they default to SUPPRESS so they never undo the top level's."""
    default = None if top else argparse.SUPPRESS
    parser.add_argument("--workspace", metavar="DIR", default=default, help=helped("workspace"))
    parser.add_argument("--db", metavar="URL", default=default, help=helped("db"))
    parser.add_argument("--model", metavar="NAME", default=default, help=helped("model"))


def build_parser() -> LomoParser:
    parser = LomoParser(prog="lomo", description=helped("lomo"))
    parser.add_argument("--version", action="version", version=f"lomo {__version__}")
    _global(parser, top=True)
    parser.add_argument("--run-once", nargs="?", const="", default=None, metavar="MESSAGE", help=helped("run_once"))
    parser.add_argument("--task", metavar="TASK_ID", help=helped("run_once_task"))
    parser.add_argument("--json", action="store_true", help=helped("json"))
    parser.add_argument("--max-wait", type=float, default=600.0, metavar="SECONDS", help=helped("max_wait"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=LomoParser)

    def add(name: str, help: str, handler: Handler) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        _global(p)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=helped("json"))
        p.set_defaults(handler=handler)
        return p

    for module in COMMANDS:
        importlib.import_module(f"{__package__}.{module}").register(add)
    return parser


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _parsers(child)


def cli_language() -> str:
    """The language of the CLI's own lines: the configured one, else the locale's (config.creator_language)."""
    from ..config import creator_language

    return creator_language()


def unknown_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> Said | None:
    """The first `--option` in ARGV that no command knows, with the nearest known one."""
    known = sorted({o for p in _parsers(parser) for a in p._actions for o in a.option_strings if o.startswith("--")})
    for token in argv:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if name.startswith("--") and len(name) > 2 and name not in known:
            nearest = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            return (Said("cli_error.unknown_option", {"name": name, "nearest": nearest[0]}) if nearest
                    else Said("cli_error.unknown_option_help", {"name": name}))
    return None


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: one line on stderr for every failure, quiet when the reader of stdout goes away."""
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()
    except BrokenPipeError:
        # `lomo inspect | head -1`: the reader left; send the rest of stdout nowhere and stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    sys.exit(code)


def _main(argv: list[str]) -> int:
    parser = build_parser()
    problem = unknown_option(parser, argv)
    if problem:
        parser.error(problem)
    args = parser.parse_args(argv)
    if args.run_once is None and args.task and args.command is None:
        parser.error(Said("cli_error.task_needs_run_once"))
    try:
        return dispatch(args)
    except UsageError as exc:
        print(f"lomo: {_redacted(exc.text(cli_language()))}", file=sys.stderr)
        return 2
    except LomoError as exc:
        print(f"lomo: {_redacted(exc.text(cli_language()))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 — the last door: one line for the creator, the detail in the log
        from ..models.base import ModelError

        logged = not isinstance(exc, ModelError) and bool(logging.getLogger().handlers)
        if logged:
            log.exception("lomo %s failed", args.command or "run")
        lang = cli_language()
        what = (exc.text(lang) if isinstance(exc, ModelError) else str(exc)) or type(exc).__name__
        if logged:
            what = Said("cli_error.details", {"text": what, "kind": type(exc).__name__, "path": _log_file()}).text(lang)
        print(f"lomo: {_redacted(what)}", file=sys.stderr)
        return 1


def _redacted(text: str) -> str:
    from ..redact import redact

    return redact(text)


def _log_file() -> str:
    from ..config import log_dir

    return str(log_dir() / "lomo.log")


def _settings(args: argparse.Namespace) -> Any:
    from ..config import load_settings

    return load_settings(workspace=args.workspace, db=args.db, model=args.model)


def _logging(settings: Any) -> None:
    from ..config import log_dir
    from ..redact import RedactingFilter

    try:
        directory = log_dir()
        directory.mkdir(parents=True, exist_ok=True)
        logging.basicConfig(filename=directory / "lomo.log", level=logging.INFO,
                            format="%(asctime)s %(process)d %(name)s %(levelname)s %(message)s")
    except OSError:
        logging.basicConfig(level=logging.WARNING)
    RedactingFilter.install(settings)


def dispatch(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings)
    if args.run_once is not None:
        from .commands import run_once

        message = read_message(args.run_once, allow_empty=True) if args.run_once == "-" else args.run_once
        return asyncio.run(run_once(settings, message, args.task, args.json, args.max_wait))
    if args.command is None:
        from ..tui import run_app

        return run_app(settings)
    return asyncio.run(args.handler(settings, args))


def read_message(text: str | None, *, allow_empty: bool = False) -> str:
    """A message from the command line, or from stdin when it is '-' or left out with stdin piped."""
    if text is None or text == "-":
        if text is None and sys.stdin.isatty():
            raise UsageError.said("cli_error.no_message_given")
        text = sys.stdin.read()
        text = text[:-1] if text.endswith("\n") else text
    if not text.strip() and not allow_empty:
        raise UsageError.said("cli_error.empty_message")
    return text
