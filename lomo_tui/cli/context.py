"""`lomo context [TASK_ID] [--json]`: the prompt a task's next step would send, without sending it
(CONTRACTS §7): its messages and tools, each layer's size, the budget, and what is cached."""
from __future__ import annotations

import argparse
import json
from typing import Any

from .wording import helped

HELP = helped("context")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", nargs="?", default=None, metavar="TASK_ID")


async def run(settings: Any, args: argparse.Namespace) -> int:
    from ..runtime.prompt_view import describe, render
    from ..runtime.scheduler import Runtime

    runtime = Runtime(settings, watch=False)
    try:
        await runtime.open()
        doc = await describe(runtime, args.task_id)
    finally:
        await runtime.close()
    if getattr(args, "json", False):
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from .main import cli_language

    print(render(doc, cli_language()))
    return 0


def register(add: Any) -> None:
    """`lomo context [TASK_ID] [--json]` (cli.main collects every module in COMMANDS)."""
    add_arguments(add("context", HELP, run))
