"""Context per step: today's window (the last 200 messages verbatim) versus the layered assembly.

For persistent tasks of 10, 100 and 1,000 revisions (each revision: the creator's message, a write_file
call with its result, and a reply; every tenth also reads a 40,000-character style guide) the script builds the next steps' prompts both ways and prints:

  tokens/step   estimated prompt tokens (lomo_tui.context.tokens), mean and max over the measured steps
  build p50/p95 time to read what changed and assemble one step's prompt (ms); a step that writes a
                summary segment is among them. cpu p95: the same in process CPU time (a busy machine's
                scheduling stalls left out)
  prefix kept   characters of prompt unchanged from the previous step's start, as a share of the prompt

Then, unless --no-cache: a 50-step task through litellm against the Anthropic-style loopback server
(tests/anthropic_stub.py, a prompt cache that behaves like the provider's): cache-read tokens as a share of
prompt tokens, from the usage fields the runtime records.

Goals (issue 13): flat tokens within the budget (≤ 16 K for lomo/local), build p95 < 5 ms at 1,000
revisions, prefix kept ≥ 90 %, cache-read share ≥ 80 %.

    python bench/context.py                  # everything (about a minute)
    python bench/context.py --sizes 10 100 --steps 10 --no-cache
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from lomo_tui.config import load_settings  # noqa: E402
from lomo_tui.context import summaries  # noqa: E402
from lomo_tui.context.history import as_chat  # noqa: E402
from lomo_tui.context.tokens import message_tokens, tools_tokens  # noqa: E402
from lomo_tui.runtime.context import TurnContext  # noqa: E402
from lomo_tui.runtime.scheduler import Runtime  # noqa: E402
from lomo_tui.store.engine import fetch, run  # noqa: E402

OLD_LIMIT = 200
INSERT = ("INSERT INTO messages (task_id, turn_id, step, role, content, tool_calls, tool_call_id, name, created_at) "
          "VALUES (:task, :turn, :step, :role, :content, :calls, :call_id, :name, :at)")
GUIDE = "".join(f"{i}. Teal #2a9d8f and cream #f4e9d8 only; lettering by hand; no red anywhere.\n"
                for i in range(500))  # about 40,000 characters
BODY = "Poster {k}: the morning light over the pastry counter, steam from the cups, hand lettering. " * 3


class BenchContext(TurnContext):
    """The runtime's TurnContext, writing its summary segments as a claimed turn would (no fence here)."""

    async def _summarise(self, span: list[Any]) -> Any:
        async with self.rt.db.write(durable=False) as conn:
            return await summaries.store(conn, self.task_id, span, summaries.extractive(span), "extractive", None)


class OldWindow:
    """Today's window before this change: the last 200 messages, verbatim, kept incrementally."""

    def __init__(self, task_id: str) -> None:
        self.task_id, self.last, self.messages = task_id, 0, []

    async def refresh(self, conn: Any) -> list[dict[str, Any]]:
        rows = await fetch(conn, "SELECT * FROM messages WHERE task_id = :t AND id > :a ORDER BY id",
                           {"t": self.task_id, "a": self.last})
        if rows:
            self.last = rows[-1].id
            self.messages.extend(as_chat(r, 10 ** 9) for r in rows)
            del self.messages[:-OLD_LIMIT]
        out = list(self.messages)
        while out and out[0]["role"] == "tool":
            out.pop(0)
        return out


async def add_revision(rt: Runtime, task: str, k: int) -> None:
    turn = f"turn-b{k:05d}"
    call = json.dumps([{"name": "write_file", "arguments": {"path": f"drafts/{k}.md", "content": BODY.format(k=k),
                                                             "base_version": None}}])
    rows = [("user", f"Revision {k}: make poster {k} bolder, logo top left.", None, None, None),
            ("assistant", None, call, None, None),
            ("tool", json.dumps({"path": f"drafts/{k}.md", "version": 1}), None, f"{turn}/1/0", "write_file"),
            ("assistant", f"Draft {k} written.", None, None, None)]
    if k % 10 == 5:  # now and then a long read (a style guide, a log): the window's heavy guests
        read = json.dumps([{"name": "read_file", "arguments": {"path": "guide.md", "limit": 100000}}])
        result = json.dumps({"path": "guide.md", "content": GUIDE, "version": 1})
        rows[1:1] = [("assistant", None, read, None, None), ("tool", result, None, f"{turn}/0/0", "read_file")]
    async with rt.db.write(durable=False) as conn:
        for role, content, calls, call_id, name in rows:
            await run(conn, INSERT, dict(task=task, turn=turn, step=1, role=role, content=content, calls=calls,
                                         call_id=call_id, name=name, at=time.time()))


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on prefix equality (str slices compare at C speed)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


async def measure(size: int, steps: int, workdir: Path) -> dict[str, Any]:
    settings = load_settings(workspace=str(workdir / f"ws{size}"), db=f"sqlite+aiosqlite:///{workdir}/c{size}.db",
                             model="lomo/replay", env={"LOMO_REPLAY_FILE": str(workdir / "none.jsonl")},
                             config_path=workdir / "none.toml")
    rt = Runtime(settings, watch=False)
    await rt.open()
    task = await rt.ledger.create_task("Café posters")
    await rt.ledger.deliver(task, "Make a poster series for the café — always teal and cream.")
    for k in range(size):
        await add_revision(rt, task, k)
    new, old = BenchContext(rt, task), OldWindow(task)
    results: dict[str, dict[str, list[float]]] = {"today": {"tokens": [], "ms": [], "cpu": [], "kept": []},
                                                  "layered": {"tokens": [], "ms": [], "cpu": [], "kept": []}}
    previous: dict[str, str] = {}
    tools = rt.registry.visible("persistent")
    tool_cost = tools_tokens([t.schema() for t in tools])
    for step in range(steps + 1):
        async with rt.db.read() as conn:
            [row] = await fetch(conn, "SELECT * FROM tasks WHERE id = :t", {"t": task})
            extra, hints = await rt.context_extras(conn, row)
        started, cpu = time.perf_counter(), time.process_time()
        async with rt.db.read() as conn:
            history = await old.refresh(conn)
        messages = [{"role": "system", "content": "rules"}] + history + [{"role": "system", "content": "\n".join(extra)}]
        old_ms, old_cpu = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
        started, cpu = time.perf_counter(), time.process_time()
        async with rt.db.read() as conn:
            await new.refresh(conn, row)
        prompt = await new.build(row, extra, hints, [])
        new_ms, new_cpu = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
        for name, msgs, ms, cpu_ms, cost in (
                ("today", messages, old_ms, old_cpu, tool_cost),
                ("layered", prompt.messages, new_ms, new_cpu, tools_tokens(prompt.tool_schemas()))):
            text = json.dumps(msgs, ensure_ascii=False)
            if step:  # step 0 is the first build on an existing history (summaries are caught up there)
                results[name]["tokens"].append(sum(message_tokens(m) for m in msgs) + cost)
                results[name]["ms"].append(ms)
                results[name]["cpu"].append(cpu_ms)
                results[name]["kept"].append(common_prefix(previous[name], text) / len(text))
            previous[name] = text
        await add_revision(rt, task, size + step)
    budget = prompt.budget.tokens
    await rt.close()
    return {"size": size, "budget": budget, **{name: {
        "tokens_mean": statistics.mean(r["tokens"]), "tokens_max": max(r["tokens"]),
        "build_p95_ms": sorted(r["ms"])[int(0.95 * (len(r["ms"]) - 1))],
        "build_p50_ms": statistics.median(r["ms"]),
        "build_cpu_p95_ms": sorted(r["cpu"])[int(0.95 * (len(r["cpu"]) - 1))],
        "prefix_kept": statistics.mean(r["kept"])} for name, r in results.items()}}


async def cache_share(steps: int, workdir: Path) -> dict[str, Any]:
    from anthropic_stub import AnthropicStub, text
    from lomo_tui.context.usage import cache_usage

    with AnthropicStub() as stub:
        stub.enqueue(*[text(f"Noted revision {k}.") for k in range(steps)])
        settings = load_settings(workspace=str(workdir / "wsc"), db=f"sqlite+aiosqlite:///{workdir}/cache.db",
                                 model="anthropic/claude-sonnet-4-5", env={}, config_path=workdir / "none.toml")
        settings.file = {"providers": {"anthropic": {"api_base": stub.base_url, "api_key": "sk-bench", "timeout": 10}}}
        rt = Runtime(settings, watch=False)
        await rt.start()
        try:
            task = await rt.ledger.create_task("Café posters")
            for k in range(steps):
                await rt.send(f"Revision {k}: keep the teal and cream; make poster {k} bolder, add steam over the "
                              "cups and hand-lettered prices, logo top left.", task)
                await rt.run_until_quiescent(60)
            async with rt.db.read() as conn:
                usage = await cache_usage(conn, task)
        finally:
            await rt.close()
    return usage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000], help="revisions before measuring")
    parser.add_argument("--steps", type=int, default=20, help="measured steps per size (default 20)")
    parser.add_argument("--cache-steps", type=int, default=50, help="steps of the cache run (default 50)")
    parser.add_argument("--no-cache", action="store_true", help="skip the litellm + Anthropic-style server run")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    args = parser.parse_args(argv)
    os.environ.setdefault("LOMO_TIME_SCALE", "0.01")
    with tempfile.TemporaryDirectory(prefix="lomo-bench-context-") as tmp:
        workdir = Path(tmp)
        (workdir / "none.jsonl").write_text("")
        rows = [asyncio.run(measure(size, args.steps, workdir)) for size in args.sizes]
        cache = None if args.no_cache else asyncio.run(cache_share(args.cache_steps, workdir))
    if args.json:
        print(json.dumps({"sizes": rows, "cache": cache}, indent=2))
        return 0
    print(f"Context per step — {args.steps} measured steps per size (Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs)\n")
    print(f"{'revisions':>9}  {'assembly':<8} {'tokens/step mean':>16} {'max':>7} {'budget':>7} "
          f"{'build p50':>10} {'build p95':>10} {'cpu p95':>8} {'prefix kept':>11}")
    for row in rows:
        for name in ("today", "layered"):
            r = row[name]
            print(f"{row['size']:>9}  {name:<8} {r['tokens_mean']:>16,.0f} {r['tokens_max']:>7,} {row['budget']:>7,} "
                  f"{r['build_p50_ms']:>8.2f}ms {r['build_p95_ms']:>8.2f}ms {r['build_cpu_p95_ms']:>6.2f}ms {r['prefix_kept']:>10.1%}")
    if cache is not None:
        share = cache["cache_read_share"]
        print(f"\nAnthropic-style server, {args.cache_steps} steps: {cache['cache_read_tokens']:,} of "
              f"{cache['prompt_tokens']:,} prompt tokens read from the cache ({share:.1%}); "
              f"{cache['cache_write_tokens']:,} written; {cache['calls']} calls")
    layered = {row["size"]: row["layered"] for row in rows}
    biggest = max(layered)
    print(f"\nload average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"goals: tokens ≤ budget: {'met' if all(r['layered']['tokens_max'] <= r['budget'] for r in rows) else 'missed'}"
          f"; build p95 < 5 ms at {biggest}: {'met' if layered[biggest]['build_p95_ms'] < 5 else 'missed'}"
          f"; prefix kept ≥ 90 %: {'met' if all(r['prefix_kept'] >= 0.9 for r in layered.values()) else 'missed'}"
          + (f"; cache-read share ≥ 80 %: {'met' if (cache['cache_read_share'] or 0) >= 0.8 else 'missed'}"
             if cache else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
