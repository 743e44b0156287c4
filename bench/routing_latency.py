"""Routing latency without the model: the deterministic check (`direct_target`) plus the Router's
retrieval (`main_context`: recent index, FTS5 search, file and memory mentions), with 100, 1,000 and
10,000 tasks in the database — and the size of the index the Router's prompt carries at each size.

Each size gets a fresh SQLite database (the real schema, migrations included) filled by bulk inserts:
tasks with realistic titles and goals in four languages (search_text filled as the product fills it),
one or two workspace objects bound to each task, and a few hundred route-memory rows. Then every
sample message (file mentions, old-task references, pronouns, new goals; en/zh/ja/ru) is routed
--rounds times, each in its own read transaction as the runtime does it. Model time is not included.

    python bench/routing_latency.py                   # 100 / 1,000 / 10,000 tasks
    python bench/routing_latency.py --sizes 100 50000 --rounds 20 --json

Goal: p95 < 20 ms at 10,000 tasks; prompt tokens flat. Tokens are counted with tiktoken (cl100k_base)
when it is installed and its encoding is cached, otherwise estimated as characters / 4.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from lomo_tui.router import hooks, index  # noqa: E402
from lomo_tui.store import migrate  # noqa: E402
from lomo_tui.store import schema as s  # noqa: E402
from lomo_tui.store.engine import Database  # noqa: E402

SUBJECTS = ["jazz night", "coffee shop opening", "autumn wedding", "robot mascot", "sushi menu", "yoga studio",
            "summer festival", "bakery", "skate park", "podcast", "lighthouse", "tea packaging", "city at night",
            "fox in the snow", "birthday party", "running shoes", "plant shop", "ice cream truck", "space station",
            "board game", "爵士之夜", "咖啡店", "茶叶礼盒", "外滩夜景", "中秋节", "夏祭り", "花火大会", "桜並木",
            "ラーメン店",
            "猫のスタンプ", "джазовый вечер", "утренний кофе", "пекарня", "маяк", "кот-сыщик"]
KINDS = [("poster series", "A series of {n} posters for the {x}", "posters/{slug}_{i}.png"),
         ("promo clip", "A {n}0 second promo clip about the {x}", "clips/{slug}_{i}.webp"),
         ("3D model", "A low-poly 3D model of the {x}", "models/{slug}_{i}.gltf"),
         ("storyboard", "A storyboard with {n} shots for the {x} ad", "boards/{slug}_{i}.md"),
         ("jingle", "A short jingle for the {x}", "audio/{slug}_{i}.wav"),
         ("logo", "A logo for the {x}", "logos/{slug}_{i}.png")]
MESSAGES = [
    "make the jazz night posters a bit warmer",
    "posters/jazz_night_17.png: bigger title",
    "the lighthouse model from last month: make the roof red",
    "make that one bluer",
    "hi there",
    "plan a full campaign for our new coffee brand: logo, packaging, posters and a 20s ad",
    "把那套爵士之夜的海报改蓝一点",
    "之前那个外滩夜景的视频，加一点雨",
    "夏祭りのポスターをもっと明るくして",
    "сделай постеры для джазового вечера потеплее",
    "generate an orange cat picture",
    "make the birthday banner more festive",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def token_counter() -> tuple[str, Callable[[str], int]]:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base")
        return "tiktoken cl100k_base", lambda text: len(encoding.encode(text))
    except Exception:  # noqa: BLE001 — not installed, or the encoding is not cached (no network)
        return "chars/4", lambda text: len(text) // 4


async def fill(db: Database, n: int, rng: random.Random) -> None:
    now = time.time()
    tasks, objects, links, memory = [], [], [], []
    for i in range(n):
        subject = SUBJECTS[i % len(SUBJECTS)]
        kind_name, goal, path = KINDS[(i // len(SUBJECTS)) % len(KINDS)]
        slug = "_".join(subject.split()) if subject.isascii() else f"item{i % 97}"
        title = f"{subject.title() if subject.isascii() else subject} {kind_name}" + (f" #{i}" if i >= 200 else "")
        text_goal = goal.format(n=rng.randint(2, 6), x=subject)
        age = rng.uniform(0, 400 * 86400)
        task_id = f"task-{i:08x}"
        tasks.append(dict(id=task_id, kind="persistent" if i % 3 else "lightweight",
                          status=rng.choice(["idle", "idle", "idle", "done", "waiting_gate", "stopped"]),
                          title=title, goal=text_goal, language="en", summary="", archived=i % 17 == 0,
                          search_text=index.search_text(title, text_goal), created_at=now - age, updated_at=now - age))
        for j in range(1 + i % 2):
            object_id = f"obj-{i:07x}{j}"
            objects.append(dict(id=object_id, path=path.format(slug=slug, i=i * 2 + j), kind="image", version=1,
                                hash="0" * 64, size=1, last_author="agent", created_at=now, updated_at=now))
            links.append(dict(task_id=task_id, object_id=object_id, role="output", updated_at=now - age))
    for k in range(min(300, n)):
        memory.append(dict(keywords=" ".join(index.search_text(tasks[k]["title"]).split()[:4]),
                           task_id=tasks[k]["id"], created_at=now - k))
    async with db.write() as conn:
        for table, rows in ((s.tasks, tasks), (s.objects, objects), (s.task_objects, links), (s.route_memory, memory)):
            for start in range(0, len(rows), 2000):
                await conn.execute(insert(table), rows[start:start + 2000])


async def measure(size: int, rounds: int, count: Callable[[str], int], folder: Path) -> dict[str, Any]:
    db = Database(f"sqlite:///{folder / f'routing-{size}.db'}")
    try:
        await migrate.upgrade(db)
        t0 = time.perf_counter()
        await fill(db, size, random.Random(size))
        seeded = time.perf_counter() - t0
        timings: list[float] = []
        direct: list[float] = []
        tokens: list[int] = []
        entries: list[int] = []
        for _ in range(2):  # warm-up: caches, statement compilation
            for message in MESSAGES:
                async with db.read() as conn:
                    await hooks.direct_target(conn, message)
                    await hooks.main_context(conn, None, [message])
        for _ in range(rounds):
            for message in MESSAGES:
                t1 = time.perf_counter()
                async with db.read() as conn:
                    await hooks.direct_target(conn, message)
                t2 = time.perf_counter()
                async with db.read() as conn:
                    sections, hints = await hooks.main_context(conn, None, [message])
                t3 = time.perf_counter()
                direct.append((t2 - t1) * 1000)
                timings.append((t3 - t1) * 1000)
                tokens.append(sum(count(x) for x in sections))
                entries.append(len(hints["task_index"]))
        return {"tasks": size, "seed_s": round(seeded, 2), "samples": len(timings),
                "p50_ms": round(statistics.median(timings), 2), "p95_ms": round(percentile(timings, 0.95), 2),
                "max_ms": round(max(timings), 2), "direct_p95_ms": round(percentile(direct, 0.95), 2),
                "prompt_tokens_mean": round(statistics.mean(tokens), 1), "prompt_tokens_max": max(tokens),
                "index_entries_max": max(entries)}
    finally:
        await db.close()


async def run(sizes: list[int], rounds: int) -> tuple[str, list[dict[str, Any]]]:
    counter_name, count = token_counter()
    out = []
    with tempfile.TemporaryDirectory(prefix="lomo-routing-latency-") as tmp:
        for size in sizes:
            out.append(await measure(size, rounds, count, Path(tmp)))
    return counter_name, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--rounds", type=int, default=10, help="passes over the sample messages per size")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    counter, rows = asyncio.run(run(args.sizes, args.rounds))
    if args.json:
        print(json.dumps({"tokens": counter, "rows": rows}, indent=1))
        return 0
    print(f"routing without the model: direct_target + main_context, {len(MESSAGES)} messages × {args.rounds} "
          f"rounds per size; prompt tokens by {counter}")
    header = ["tasks", "p50 ms", "p95 ms", "max ms", "direct p95 ms", "index entries", "prompt tokens (mean/max)"]
    table = [[f"{r['tasks']:,}", f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}", f"{r['max_ms']:.2f}",
              f"{r['direct_p95_ms']:.2f}", str(r["index_entries_max"]),
              f"{r['prompt_tokens_mean']:.0f} / {r['prompt_tokens_max']}"] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(header, *table, strict=True)]
    for row in [header, ["-" * w for w in widths], *table]:
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
