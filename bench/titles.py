"""The titles the offline Router gives new tasks, for reading (issue: titles that read well in en/zh/ja/ru).

For every turn of the labelled (non-blind) routing sets whose preferred outcome creates a task, it prints the
message and the `create_task` title the Router gives it:

- by default through the real runtime, as bench/routing_eval.py drives it (seeded tasks, earlier turns), the
  title read off the main thread's `create_task` tool call — or "(routed: …)" where the Router did not create;
- with --quick, from the message alone (`route` with no tasks in view): seconds instead of minutes.

    python bench/titles.py --quick                 # every split, message → title
    python bench/titles.py --split dev --lang ja   # one split, one language
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import routing_eval as ev  # noqa: E402
from lomo_tui.models import ModelReply  # noqa: E402
from lomo_tui.models.base import ModelRequest  # noqa: E402

# The opened halves only: heldout5, heldout7 and heldout23 are blind sets, never read here.
SPLITS = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout6", "heldout8", "heldout9", "heldout10",
          "heldout11", "heldout12", "heldout13", "heldout14", "heldout15", "heldout16", "heldout17", "heldout18",
          "heldout19", "heldout20", "heldout21", "heldout22")
CREATES = ("lightweight", "persistent")
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
         for n in ("create_task", "send_to_task", "clarify")]


def turns(split: str) -> list[tuple[dict[str, Any], int, dict[str, Any]]]:
    """(conversation, turn number, turn) of every turn of SPLIT whose preferred outcome creates a task."""
    return [(conv, n, turn) for conv in ev.load(split) for n, turn in enumerate(conv["turns"])
            if turn["accept"][0]["route"] in CREATES]


def quick_title(text: str) -> str:
    """The title `route` gives TEXT with no task in view ("(routed: …)" when it does not create one)."""
    from lomo_tui.models.local_router import route

    reply = route(ModelRequest(messages=[{"role": "user", "content": text}], tools=TOOLS, hints={"tasks": []}))
    call = reply.tool_calls[0] if reply.tool_calls else None
    if call is not None and call.name == "create_task":
        return call.arguments["title"]
    return f"(routed: {call.name if call else 'answer'})"


class Recorder(ev.RoutingOnly):
    """The eval's model wrapper, also keeping the main thread's create_task titles in order."""

    seen: list[tuple[str, str]] = []  # (message, title or "(routed: …)")

    async def complete(self, request: Any, on_token: Any = None) -> ModelReply:
        reply = await super().complete(request, on_token)
        if request.hints.get("task_kind") == "main":
            message = next((m.get("content") or "" for m in reversed(request.messages) if m.get("role") == "user"), "")
            call = reply.tool_calls[0] if reply.tool_calls else None
            if call is not None and call.name in ("create_task", "clarify"):
                title = call.arguments.get("title") or call.arguments.get("new_title") or ""
                Recorder.seen.append((message, title if call.name == "create_task" else f"(clarify) {title}"))
            elif call is not None:
                Recorder.seen.append((message, f"(routed: {call.name})"))
        return reply


async def runtime_titles(split: str) -> dict[tuple[str, int], str]:
    """(conversation, turn) → the title the Router gave it in the real runtime, for the turns that create."""
    ev.RoutingOnly = Recorder  # run_conversation builds its model wrapper by this name
    out: dict[tuple[str, int], str] = {}
    with tempfile.TemporaryDirectory(prefix="lomo-titles-") as tmp:
        for i, conv in enumerate(ev.load(split)):
            if not any(t["accept"][0]["route"] in CREATES for t in conv["turns"]):
                continue

            def observe(turn: dict[str, Any], result: Any, gold: set[str]) -> None:
                said = [title for message, title in Recorder.seen if message.strip() == turn["text"].strip()]
                out[(conv["conv"], result.n)] = said[-1] if said else f"(routed: {result.route})"
                Recorder.seen.clear()

            await ev.run_conversation(conv, "lomo/local", Path(tmp) / f"c{i}", observe)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", choices=SPLITS, help="only this split (repeatable)")
    parser.add_argument("--lang", choices=("en", "zh", "ja", "ru"), help="only turns tagged with this language")
    parser.add_argument("--quick", action="store_true", help="from the message alone, not through the runtime")
    args = parser.parse_args(argv)
    for split in args.split or SPLITS:
        got = {} if args.quick else asyncio.run(runtime_titles(split))
        print(f"== {split} ==")
        for conv, n, turn in turns(split):
            if args.lang and args.lang not in turn.get("tags", []):
                continue
            title = quick_title(turn["text"]) if args.quick else got.get((conv["conv"], n), "?")
            print(f"{turn['accept'][0]['route'][:5]}  {turn['text']}\n       → {title}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
