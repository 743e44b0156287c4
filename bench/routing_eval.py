"""Routing accuracy of the Main thread on the labelled set in tests/data/routing/ (DESIGN A4–A8).

Each conversation runs through the real runtime: a fresh SQLite database and workspace, its tasks seeded
through the ledger API (plus N filler tasks, so some targets are older than the 50 most recent), each
message sent with `Runtime.send` (no task id, as typed in the main thread), `run_until_quiescent`, then
where the message went is read back from the database:

  clarify      a clarify gate was opened (which task? / duplicate? / resume a stopped task?)
  lightweight  a new lightweight task got the message
  persistent   a new persistent task got the message
  followup     an existing task's inbox got the message ("direct" when no model call was made)
  answer       none of these: the main thread answered itself

A turn is correct when its outcome matches one of its `accept` entries. A pending clarify gate is then
answered as the item says (`choose`) or rejected, so the conversation goes on.

Task workers are not part of routing: their model calls get an immediate "noted" reply, so the figures
measure the Router (and the deterministic paths) only. `--model` picks the Router's model.

    python bench/routing_eval.py                       # lomo/local, every half
    python bench/routing_eval.py --split dev -v        # print every wrong turn
    python bench/routing_eval.py --split heldout --json
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "routing"
ROUTES = ("answer", "lightweight", "persistent", "followup", "clarify")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select, update  # noqa: E402

from lomo_tui.config import load_settings  # noqa: E402
from lomo_tui.runtime.reactions import resolve_gate  # noqa: E402
from lomo_tui.models import ModelReply, make_model  # noqa: E402
from lomo_tui.language import detect_language  # noqa: E402
from lomo_tui.router import index  # noqa: E402
from lomo_tui.runtime.scheduler import Runtime  # noqa: E402
from lomo_tui.store import schema as s  # noqa: E402
from lomo_tui.workspace.objects import Workspace  # noqa: E402


# ---- data -------------------------------------------------------------------------------------------
# the labelled halves, in the order they were written (tests/data/routing/README.md tells their story)
HALVES = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8",
          "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout14", "heldout15", "heldout16", "heldout17",
          "heldout18", "heldout19", "heldout20", "heldout21", "heldout22", "heldout23")


def load(split: str) -> list[dict[str, Any]]:
    names = list(HALVES) if split == "all" else [split]
    out = []
    for name in names:
        for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                conv = json.loads(line)
                conv["split"] = name
                out.append(conv)
    return out


def fillers() -> list[dict[str, Any]]:
    return json.loads((DATA / "filler.json").read_text(encoding="utf-8"))


class RoutingOnly:
    """The chosen model for the main thread; workers get an immediate reply (they are not being measured)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name

    async def complete(self, request: Any, on_token: Any = None) -> ModelReply:
        if request.hints.get("task_kind") == "main":
            return await self.inner.complete(request, on_token)
        return ModelReply(content="noted", model="eval/worker-stub")


# ---- one conversation ----------------------------------------------------------------------------------
@dataclass
class TurnResult:
    conv: str
    split: str
    n: int
    text: str
    accept: list[dict[str, Any]]
    tags: list[str]
    route: str
    task: str | None = None  # key (or "@k", or raw id) of the task that got the message
    reason: str | None = None
    direct: bool = False
    correct: bool = False
    gold: str = ""
    seconds: float = 0.0
    existing: bool = False  # the message went to a task that existed before this turn
    task_id: str | None = None  # the id of the task that got the message

    def row(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass
class Conversation:
    rt: Runtime
    ids: dict[str, str] = field(default_factory=dict)  # key -> task id
    keys: dict[str, str] = field(default_factory=dict)  # task id -> key


async def seed(rt: Runtime, conv: dict[str, Any], now: float) -> Conversation:
    state = Conversation(rt)
    specs = list(conv.get("tasks") or [])
    pool = fillers()
    for i in range(int(conv.get("filler") or 0)):
        item = dict(pool[i % len(pool)])
        item["key"] = f"filler-{i}"
        item["age_h"] = 48 + (i * 7919 % 432)  # 2–20 days, spread deterministically
        if i >= len(pool):
            item["title"] = f"{item['title']} ({i // len(pool) + 1})"
        specs.append(item)
    ws = rt.workspace
    async with rt.db.write() as conn:
        for spec in specs:
            language = spec.get("language") or detect_language(spec["title"])
            task_id = await rt.ledger.create_task(spec["title"], kind=spec.get("kind", "persistent"),
                                                  goal=spec.get("goal", ""), language=language, conn=conn)
            at = now - float(spec.get("age_h", 1)) * 3600
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
                status=spec.get("status", "idle"), archived=bool(spec.get("archived")), summary=spec.get("summary", ""),
                created_at=at, updated_at=at))
            await index.refresh_search_text(conn, task_id)
            for ref in spec.get("files") or []:
                rel, _, role = ref.partition(":")
                path = ws.root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                data = f"seed {rel}\n".encode()
                path.write_bytes(data)
                seen = await ws.record(conn, rel, hashlib.sha256(data).hexdigest(), len(data), author="agent",
                                       task_id=task_id)
                await Workspace.touch(conn, task_id, seen, read=True, wrote=role != "input")
            state.ids[spec["key"]] = task_id
            state.keys[task_id] = spec["key"]
    return state


async def snapshot(rt: Runtime) -> dict[str, Any]:
    async with rt.db.read() as conn:
        tasks = {r.id: r.kind for r in (await conn.execute(select(s.tasks.c.id, s.tasks.c.kind))).all()}
        inbox = set((await conn.execute(select(s.inbox.c.id))).scalars())
        gates = set((await conn.execute(select(s.gates.c.id))).scalars())
        calls = (await conn.execute(select(func.count()).select_from(s.model_calls).where(
            s.model_calls.c.purpose == "router"))).scalar()
    return {"tasks": tasks, "inbox": inbox, "gates": gates, "calls": calls}


async def outcome(rt: Runtime, before: dict[str, Any]) -> tuple[str, str | None, str | None, bool, Any]:
    """(route, task id, reason, direct, pending clarify gate) of the turn since BEFORE."""
    after = await snapshot(rt)
    direct = after["calls"] == before["calls"]
    async with rt.db.read() as conn:
        gates = [g for g in (await conn.execute(select(s.gates).where(
            s.gates.c.id.in_(after["gates"] - before["gates"])))).all() if g.kind == "clarify"]
        inbox = (await conn.execute(select(s.inbox.c.task_id).where(
            s.inbox.c.id.in_(after["inbox"] - before["inbox"])).order_by(s.inbox.c.sent_at))).scalars().all()
    if gates:
        gate = gates[0]
        return "clarify", None, (gate.scope or {}).get("route"), direct, gate
    new = [t for t in after["tasks"] if t not in before["tasks"]]
    for task_id in new:
        if task_id in inbox:
            return after["tasks"][task_id], task_id, None, direct, None
    existing = [t for t in inbox if t in before["tasks"] and before["tasks"][t] != "main"]
    if existing:
        return "followup", existing[0], None, direct, None
    return "answer", None, None, direct, None


def matches(entry: dict[str, Any], route: str, task_id: str | None, reason: str | None, direct: bool,
            state: Conversation, created: dict[int, str]) -> bool:
    if entry["route"] != route:
        return False
    if entry.get("reason") and entry["reason"] != reason:
        return False
    if route == "followup":
        key = entry.get("task")
        want = created.get(int(key[1:])) if key and key.startswith("@") else state.ids.get(key or "")
        if want is None or want != task_id:
            return False
        if entry.get("direct") and not direct:
            return False
    return True


async def run_conversation(conv: dict[str, Any], model: str, root: Path,
                           observe: Any = None) -> list[TurnResult]:
    """The turns of CONV, routed; OBSERVE(turn, result, gold task ids), if given, sees each one as it is read."""
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOMO_")}
    env.update(XDG_CONFIG_HOME=str(root / "cfg"), XDG_DATA_HOME=str(root / "data"), XDG_STATE_HOME=str(root / "state"),
               XDG_CACHE_HOME=str(root / "cache"), LOMO_TIME_SCALE="0.01")
    settings = load_settings(workspace=str(workspace), db=f"sqlite+aiosqlite:///{root / 'lomo.db'}", model=model,
                             env=env, config_path=root / "cfg" / "config.toml")
    settings.lease_seconds = 5.0
    rt = Runtime(settings, model=RoutingOnly(make_model(settings, lambda: _zero())), watch=False)
    results: list[TurnResult] = []
    try:
        await rt.open()
        state = await seed(rt, conv, time.time())
        await rt.start()
        created: dict[int, str] = {}
        for n, turn in enumerate(conv["turns"]):
            before = await snapshot(rt)
            t0 = time.perf_counter()
            await rt.send(turn["text"])
            await rt.run_until_quiescent(60)
            route, task_id, reason, direct, gate = await outcome(rt, before)
            if route in ("lightweight", "persistent") and task_id:
                created[n] = task_id
                state.keys[task_id] = f"@{n}"
            ok = any(matches(e, route, task_id, reason, direct, state, created) for e in turn["accept"])
            routes = [e["route"] for e in turn["accept"]]
            result = TurnResult(conv["conv"], conv["split"], n, turn["text"], turn["accept"], turn.get("tags", []),
                                route, state.keys.get(task_id or "", task_id), reason, direct, ok,
                                route if ok else routes[0], time.perf_counter() - t0,
                                existing=route == "followup", task_id=task_id)
            results.append(result)
            if observe is not None:
                # the task the message is for: a follow-up's, or the one a card about that task is answered with
                # (a stopped target, a repeated goal); an ambiguous message is for no one task
                gold = {created.get(int(k[1:])) if k.startswith("@") else state.ids.get(k)
                        for e in turn["accept"] if e["route"] == "followup" and (k := e.get("task") or "")}
                if chosen(turn) and any(e["route"] == "clarify" and e.get("reason") in ("unavailable", "duplicate")
                                        for e in turn["accept"]):
                    gold.add(state.ids.get(chosen(turn)))
                observe(turn, result, gold - {None})
            if gate is not None:
                await answer_gate(rt, gate, chosen(turn), state)
    finally:
        await rt.close()
    return results


def chosen(turn: dict[str, Any]) -> str | None:
    """The option the creator picks on this turn's clarify card: the turn's `choose`, or one written on its
    clarify outcome (`{"route": "clarify", "choose": …}`, as heldout22 and heldout23 write it)."""
    return turn.get("choose") or next((e["choose"] for e in turn["accept"] if e.get("choose")), None)


async def answer_gate(rt: Runtime, gate: Any, choose: str | None, state: Conversation) -> None:
    actions = (gate.scope or {}).get("actions") or []
    want = state.ids.get(choose or "")
    option = next((i for i, a in enumerate(actions, 1) if want and a.get("task_id") == want), None)
    resolved = await resolve_gate(rt.db, gate.id, approve=option is not None, option=option, by="creator:eval")
    await rt.poke(resolved.turn_id)
    await rt.run_until_quiescent(60)


async def _zero() -> int:
    return 0


# ---- metrics ------------------------------------------------------------------------------------------------
def metrics(results: list[TurnResult]) -> dict[str, Any]:
    n = len(results)
    if not n:
        return {"turns": 0}
    correct = sum(r.correct for r in results)
    # Per class: a prediction counts for its class only when it is right (a follow-up to the wrong task
    # is a false positive of "followup" and a false negative of the gold class).
    tp, fp, fn = Counter(), Counter(), Counter()
    confusion: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        predicted = r.route if r.correct or r.route != "followup" or r.gold != "followup" else "followup✗"
        confusion[r.gold][predicted] += 1
        if r.correct:
            tp[r.route] += 1
        else:
            fp[r.route] += 1
            fn[r.gold] += 1
    f1 = {}
    for route in ROUTES:
        p = tp[route] / (tp[route] + fp[route]) if tp[route] + fp[route] else 0.0
        rec = tp[route] / (tp[route] + fn[route]) if tp[route] + fn[route] else 0.0
        if tp[route] + fp[route] + fn[route]:
            f1[route] = 2 * p * rec / (p + rec) if p + rec else 0.0
    wrong_attach = [r for r in results if r.route == "followup" and not r.correct]
    wants_existing = [r for r in results if any(e["route"] == "followup" for e in r.accept)]
    duplicates = [r for r in results if r.route in ("lightweight", "persistent") and not r.correct
                  and any(e["route"] == "followup" for e in r.accept)]
    asked = [r for r in results if r.route == "clarify"]
    over = [r for r in asked if not r.correct]
    must_ask = [r for r in results if all(e["route"] == "clarify" for e in r.accept)]
    under = [r for r in must_ask if r.route != "clarify"]
    direct_expected = [r for r in results if any(e.get("direct") for e in r.accept)]
    by_lang: dict[str, list[bool]] = defaultdict(list)
    by_tag: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        lang = next((t for t in r.tags if t in ("en", "zh", "ja", "ru")), "?")
        by_lang[lang].append(r.correct)
        for tag in r.tags:
            if tag not in ("en", "zh", "ja", "ru"):
                by_tag[tag].append(r.correct)
    seconds = sorted(r.seconds for r in results)
    return {
        "turns": n,
        "accuracy": correct / n,
        "macro_f1": sum(f1.values()) / len(f1) if f1 else 0.0,
        "f1": f1,
        "confusion": {gold: dict(row) for gold, row in confusion.items()},
        "wrong_attach_rate": len(wrong_attach) / n,
        "wrong_attach": len(wrong_attach),
        "duplicate_task_rate": len(duplicates) / max(len(wants_existing), 1),
        "duplicate_tasks": len(duplicates),
        "turns_meant_for_existing": len(wants_existing),
        "over_ask_rate": len(over) / n,
        "over_ask": len(over),
        "under_ask_rate": len(under) / max(len(must_ask), 1),
        "under_ask": len(under),
        "must_ask": len(must_ask),
        "direct_routed": sum(1 for r in results if r.direct and r.route == "followup"),
        "direct_expected": len(direct_expected),
        "direct_expected_hit": sum(1 for r in direct_expected if r.direct and r.correct),
        "by_language": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_lang.items())},
        "by_tag": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_tag.items())},
        "seconds_per_turn_p50": seconds[len(seconds) // 2],
    }


def report(name: str, m: dict[str, Any]) -> str:
    if not m.get("turns"):
        return f"{name}: no turns"
    lines = [f"== {name}: {m['turns']} turns ==",
             f"accuracy            {m['accuracy']:.1%}",
             f"macro-F1            {m['macro_f1']:.3f}   " + "  ".join(f"{k} {v:.2f}" for k, v in m["f1"].items()),
             f"wrong-attach        {m['wrong_attach_rate']:.1%} ({m['wrong_attach']} of {m['turns']} turns)",
             f"duplicate tasks     {m['duplicate_task_rate']:.1%} ({m['duplicate_tasks']} of "
             f"{m['turns_meant_for_existing']} turns meant for an existing task)",
             f"over-ask            {m['over_ask_rate']:.1%} ({m['over_ask']} of {m['turns']} turns)",
             f"under-ask           {m['under_ask_rate']:.1%} ({m['under_ask']} of {m['must_ask']} turns that must ask)",
             f"direct (no model)   {m['direct_routed']} follow-ups; expected-direct hit {m['direct_expected_hit']}/"
             f"{m['direct_expected']}",
             "by language         " + "  ".join(f"{k} {v}" for k, v in m["by_language"].items()),
             "by tag              " + "  ".join(f"{k} {v}" for k, v in m["by_tag"].items()),
             "confusion (rows gold, columns outcome; followup✗ = wrong task):"]
    cols = list(ROUTES) + ["followup✗"]
    width = max(len(c) for c in cols) + 1
    lines.append(" " * 12 + "".join(c.rjust(width) for c in cols))
    for gold in ROUTES:
        row = m["confusion"].get(gold, {})
        lines.append(gold.ljust(12) + "".join(str(row.get(c, 0)).rjust(width) for c in cols))
    return "\n".join(lines)


async def evaluate(split: str = "all", model: str = "lomo/local", convs: list[str] | None = None
                   ) -> list[TurnResult]:
    results: list[TurnResult] = []
    with tempfile.TemporaryDirectory(prefix="lomo-routing-") as tmp:
        for i, conv in enumerate(load(split)):
            if convs and conv["conv"] not in convs:
                continue
            results.extend(await run_conversation(conv, model, Path(tmp) / f"c{i}"))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="lomo/local")
    parser.add_argument("--split", default="all", choices=(*HALVES, "all"))
    parser.add_argument("--conv", action="append", help="only this conversation (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every wrong turn")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = asyncio.run(evaluate(args.split, args.model, args.conv))
    splits = HALVES
    halves = [h for h in splits if any(r.split == h for r in results)] if args.split == "all" else [args.split]
    out = {half: metrics([r for r in results if r.split == half]) for half in halves}
    if args.json:
        print(json.dumps({"model": args.model, "metrics": out, "turns": [r.row() for r in results]},
                         ensure_ascii=False, indent=1))
        return 0
    print(f"model {args.model}; {len(results)} turns in {time.perf_counter() - started:.1f}s")
    for half in halves:
        print(report(half, out[half]))
        if args.verbose:
            for r in results:
                if r.split == half and not r.correct:
                    want = " | ".join(f"{e['route']}:{e.get('task', '')}" for e in r.accept)
                    got = f"{r.route}:{r.task or ''}" + (f" ({r.reason})" if r.reason else "")
                    print(f"  ✗ {r.conv}#{r.n} {r.text!r}\n      want {want}; got {got}{' direct' if r.direct else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
