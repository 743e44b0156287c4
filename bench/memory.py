"""Memory forgetting and recall (issue #14): does a forget take everything that depended on the forgotten
messages, and nothing else? How fast are recall and the forget cascade?

50 simulated creators, each in a database of their own. Each states 1–3 canary facts on different topics
(ORIGIN, then a REFINE carrying a second canary, then a CONFIRM), 1–10 unrelated memories, and sends the
canary messages to a task that finishes (an episodic summary) while the profile follows along. Then a
random subset is forgotten: an ORIGIN message (the refinement should survive on its own evidence), or a
whole memory (both canaries go). Printed:

  leakage                     canaries of forgotten evidence found afterwards in any memory version, summary (episodic or history),
                              profile, index row (FTS content or vocabulary), recall, or log line (goal 0)
  dependent-deletion recall   share of the versions whose text held a forgotten canary that were deleted (1.0)
  collateral deletions        versions deleted that held no forgotten canary and stood on no forgotten
                              message (goal 0)
  recall p95                  recall_for_step at 10,000 memories (goal < 10 ms); its CPU time too (what a
                              busy machine's preemption does not inflate)
  forget cascade p95          one forget, all four commits (small stores, and at 10,000 memories)

    python bench/memory.py                  # 50 creators, 10,000 memories
    python bench/memory.py --creators 10 --memories 2000 --json
    python bench/memory.py --recall-only    # recall at 10,000 memories only (seconds)
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import insert, select, text, update  # noqa: E402

from lomo_tui import memory  # noqa: E402
from lomo_tui.memory import service, store  # noqa: E402
from lomo_tui.memory.extract import fingerprint  # noqa: E402
from lomo_tui.ledger import Ledger  # noqa: E402
from lomo_tui.store import migrate  # noqa: E402
from lomo_tui.store import schema as s  # noqa: E402
from lomo_tui.store.engine import Database  # noqa: E402

TOPICS = {
    "colour": ("I always prefer {c} colours.", "Paired with {c} tones it feels softer overall.",
               "Yes, I still prefer those colours."),
    "typography": ("I always use a {c} font.", "Paired with {c} headings the font reads better.",
                   "Yes, still that font."),
    "format": ("I usually work in {c} format.", "Paired with {c} margins the format breathes.",
               "Yes, still that format."),
}
WORDS = ["otter", "lynx", "quokka", "ibex", "heron", "marten", "okapi", "tapir", "civet", "dingo"]


DEBUG = False


class LogTrap(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def canary(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}{rng.randrange(10**6):06d}"


async def template(root: Path) -> Path:
    path = root / "template.db"
    db = Database(f"sqlite:///{path}")
    await migrate.upgrade(db)
    await Ledger(db, 30).main_task_id()
    await db.close()
    return path


async def creator(n: int, root: Path, tpl: Path, rng: random.Random, trap: LogTrap) -> dict[str, Any]:
    path = root / f"creator{n}.db"
    shutil.copy(tpl, path)
    db = Database(f"sqlite:///{path}")
    ledger = Ledger(db, 30)
    try:
        main = await ledger.main_task_id()
        task = await ledger.create_task("Brand posters")

        async def say(words: str, to: str = main) -> str:
            message_id, _ = await ledger.deliver(to, words)
            await memory.record_creator_message(db, message_id, to, words)
            return message_id

        facts = []
        for topic in rng.sample(sorted(TOPICS), rng.randint(1, 3)):
            origin_line, refine_line, confirm_line = TOPICS[topic]
            c1, c2 = canary(rng), canary(rng)
            facts.append({"c1": c1, "c2": c2, "origin": await say(origin_line.format(c=c1), task),
                          "refine": await say(refine_line.format(c=c2), task), "confirm": await say(confirm_line)})
        for m in range(rng.randint(1, 10)):
            await say(f"I usually like motif{n}x{m} in my work.")
        async with db.write() as conn:
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task).values(status="done"))
        await service.summarise_finished(db)
        await summarise_history(db, task)  # the task's history summary segment quotes the canary messages too
        async with db.read() as conn:
            versions = {r.id: r for r in (await conn.execute(select(s.memory_versions))).all()}
            links = (await conn.execute(select(s.memory_evidence_links))).all()
            memory_of = {f["origin"]: next(versions[r.version_id].memory_id for r in links
                                           if r.evidence_id == f["origin"]) for f in facts}
            fact_ids = set(memory_of.values())
        # forget: an ORIGIN (the refinement stays) or a whole memory (both canaries go), about half of the facts
        gone_canaries, gone_messages, timings = [], set(), []
        for fact in facts:
            if rng.random() < 0.5:
                continue
            whole = rng.random() < 0.4
            started = time.perf_counter()
            if whole:
                await memory.forget(db, memory_ids=[memory_of[fact["origin"]]])
                gone_canaries += [fact["c1"], fact["c2"]]
                gone_messages |= {fact["origin"], fact["refine"], fact["confirm"]}
            else:
                await memory.forget(db, evidence_ids=[fact["origin"]])
                gone_canaries.append(fact["c1"])
                gone_messages.add(fact["origin"])
            timings.append(time.perf_counter() - started)
        leaks = await leakage(db, gone_canaries, task, trap)
        async with db.read() as conn:
            after = {r.id: r for r in (await conn.execute(select(s.memory_versions))).all()}
        dependent = {v for v, row in versions.items() if any(c in row.text for c in gone_canaries)}
        deleted = {v for v, row in after.items() if row.status == "forgotten"}
        stood_on = {r.version_id for r in links if r.evidence_id in gone_messages and r.role != "confirm"}
        collateral = {v for v in deleted if v not in dependent and v not in stood_on}
        unrelated_changed = sum(1 for v, row in versions.items() if row.memory_id not in fact_ids
                                and tuple(row) != tuple(after[v]))
        return {"leaks": leaks, "dependent": len(dependent), "deleted_dependent": len(dependent & deleted),
                "collateral": len(collateral) + unrelated_changed, "forget_s": timings}
    finally:
        await db.close()


async def summarise_history(db: Database, task_id: str) -> None:
    """TASK_ID's messages as its history holds them once read, summarised as one segment (issue 13, E3)."""
    from lomo_tui.context import summaries
    from lomo_tui.context.history import History

    async with db.write() as conn:
        rows = (await conn.execute(select(s.inbox).where(s.inbox.c.task_id == task_id).order_by(s.inbox.c.sent_at))).all()
        for n, row in enumerate(rows, 1):
            await conn.execute(insert(s.messages).values(task_id=task_id, step=n, role="user", content=row.text,
                                                         created_at=time.time()))
        history = History(task_id)
        await history.refresh(conn)
        span = history.verbatim()
        if span:
            await summaries.store(conn, task_id, span, summaries.extractive(span), "extractive", None)


async def leakage(db: Database, canaries: list[str], other_task: str, trap: LogTrap) -> int:
    if not canaries:
        return 0
    async with db.read() as conn:
        haystacks = [r.text for r in (await conn.execute(select(s.memory_versions.c.text))).all()]
        haystacks += [r.text for r in (await conn.execute(select(s.memory_summaries.c.text))).all()]
        haystacks += [r.text for r in (await conn.execute(select(s.memory_profiles.c.text))).all()]
        haystacks += [r.text for r in (await conn.execute(select(s.context_summaries.c.text))).all()]
        haystacks += [r[0] for r in (await conn.execute(text("SELECT search_text FROM memory_fts"))).all()]
        await conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, memory_fts, 'row')")
        haystacks += [r[0] for r in (await conn.exec_driver_sql("SELECT term FROM temp.v")).all()]
    haystacks.append(await memory.profile_snapshot(db))
    for c in canaries:
        haystacks += [r.text for r in await memory.recall_for_step(db, other_task, c, limit=10)]
    haystacks += trap.lines
    blob = "\n".join(haystacks).casefold()
    if DEBUG:
        for h in haystacks:
            for c in canaries:
                if c.casefold() in (h or "").casefold():
                    print("LEAK", c, repr(h)[:300], file=sys.stderr)
    return sum(blob.count(c.casefold()) for c in canaries)


async def fill(db: Database, count: int, rng: random.Random) -> list[str]:
    """COUNT memories written straight through the store, one transaction per 1,000 (the figure is recall's)."""
    t = time.time()
    ids = []
    for start in range(0, count, 1000):  # rows as extraction writes them, in bulk
        rows: dict[str, list[dict[str, Any]]] = {"evidence": [], "memories": [], "versions": [], "links": [],
                                                 "derivations": [], "fts": []}
        for n in range(start, min(count, start + 1000)):
            evidence_id, memory_id, version_id = f"msg-{n:06d}", f"mem-{n:06d}", f"mv-{n:06d}"
            words = f"I usually like {rng.choice(WORDS)} {canary(rng)} motif{n % 500} palettes."
            keys = store.search_text(words)
            rows["evidence"].append(dict(id=evidence_id, task_id="main", source="creator", text=words,
                                         language="en", eligible=True, extract_status="done", attempts=1,
                                         created_at=t))
            rows["memories"].append(dict(id=memory_id, kind="preference", scope="creator", stated=True,
                                         topic="", created_at=t, updated_at=t))
            rows["versions"].append(dict(id=version_id, memory_id=memory_id, version=1, status="active",
                                         text=words, search_text=keys, fingerprint=fingerprint(words),
                                         valid_from=t, created_at=t))
            rows["links"].append(dict(version_id=version_id, evidence_id=evidence_id, role="origin",
                                      created_at=t))
            rows["derivations"].append(dict(target_kind="version", target_id=version_id, source_kind="evidence",
                                            source_id=evidence_id, created_at=t))
            rows["fts"].append({"v": version_id, "t": keys})
            ids.append(evidence_id)
        async with db.write() as conn:
            for table, key in ((s.memory_evidence, "evidence"), (s.memories, "memories"),
                               (s.memory_versions, "versions"), (s.memory_evidence_links, "links"),
                               (s.memory_derivations, "derivations")):
                await conn.execute(insert(table), rows[key])
            await conn.execute(text("INSERT INTO memory_fts(version_id, search_text) VALUES (:v, :t)"), rows["fts"])
    return ids


async def recall_times(db: Database, rng: random.Random, n: int = 300, cpu: list[float] | None = None) -> list[float]:
    """N recalls for a step's query (wall milliseconds each; CPU milliseconds into CPU, which a busy machine's
    preemption does not inflate), as the context builder makes them."""
    out = []
    for _ in range(n):
        query = f"poster with {rng.choice(WORDS)} motif{rng.randrange(500)} colours"
        started, spent = time.perf_counter(), time.thread_time()
        await memory.recall_for_step(db, "main", query, limit=5, timeout=5)
        out.append((time.perf_counter() - started) * 1000)
        if cpu is not None:
            cpu.append((time.thread_time() - spent) * 1000)
    return out


async def large(root: Path, tpl: Path, count: int, rng: random.Random, *, forgets: int = 20,
                recalls: int = 300) -> dict[str, float]:
    """Recall and forget at COUNT memories."""
    path = root / "large.db"
    shutil.copy(tpl, path)
    db = Database(f"sqlite:///{path}")
    try:
        ids = await fill(db, count, rng)
        async with db.read() as conn:
            active = (await conn.execute(select(s.memory_versions.c.id).where(
                s.memory_versions.c.status == "active"))).all()
        recall_cpu: list[float] = []
        recall_ms = await recall_times(db, rng, recalls, recall_cpu)
        forget_ms = []
        for evidence_id in rng.sample(ids, forgets):
            started = time.perf_counter()
            await memory.forget(db, evidence_ids=[evidence_id])
            forget_ms.append((time.perf_counter() - started) * 1000)
        return {"memories": len(active), "recall_p50_ms": statistics.median(recall_ms),
                "recall_p95_ms": p95(recall_ms), "recall_cpu_p95_ms": p95(recall_cpu), "forget_p95_ms": p95(forget_ms) if forget_ms else float("nan"),
                "forget_p50_ms": statistics.median(forget_ms) if forget_ms else float("nan")}
    finally:
        await db.close()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))] if ordered else float("nan")


async def main(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    trap = LogTrap()
    logging.getLogger("lomo").addHandler(trap)
    logging.getLogger("lomo").setLevel(logging.DEBUG)
    root = Path(tempfile.mkdtemp(prefix="lomo-bench-memory-", dir=args.dir))
    try:
        tpl = await template(root)
        if args.recall_only:
            big = await large(root, tpl, args.memories, rng, forgets=0, recalls=args.recalls)
            return {"recall_at": big["memories"], "recall_p50_ms": round(big["recall_p50_ms"], 3),
                    "recall_p95_ms": round(big["recall_p95_ms"], 3),
                    "recall_cpu_p95_ms": round(big["recall_cpu_p95_ms"], 3), "load_1min": round(os.getloadavg()[0], 2)}
        runs = [await creator(n, root, tpl, rng, trap) for n in range(args.creators)]
        big = await large(root, tpl, args.memories, rng, recalls=args.recalls)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    dependent = sum(r["dependent"] for r in runs)
    forget_ms = [x * 1000 for r in runs for x in r["forget_s"]]
    return {"creators": args.creators, "forgets": len(forget_ms),
            "leakage": sum(r["leaks"] for r in runs),
            "dependent_deletion_recall": round(sum(r["deleted_dependent"] for r in runs) / dependent, 4)
            if dependent else None,
            "collateral_deletions": sum(r["collateral"] for r in runs),
            "forget_cascade_p95_ms": round(p95(forget_ms), 2),
            "recall_at": big["memories"], "recall_p50_ms": round(big["recall_p50_ms"], 3),
            "recall_p95_ms": round(big["recall_p95_ms"], 3), "recall_cpu_p95_ms": round(big["recall_cpu_p95_ms"], 3),
            "forget_cascade_p95_ms_at_scale": round(big["forget_p95_ms"], 2),
            "load_1min": round(os.getloadavg()[0], 2)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--creators", type=int, default=50)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None,
                        help="where the databases go (default tmpfs: the figures are not fsync-bound)")
    parser.add_argument("--debug", action="store_true", help="print each leak found")
    parser.add_argument("--recalls", type=int, default=300, help="recalls measured at --memories")
    parser.add_argument("--recall-only", action="store_true", help="only the recall figure at --memories")
    args = parser.parse_args()
    DEBUG = args.debug
    out = asyncio.run(main(args))
    if args.json:
        print(json.dumps(out))
    else:
        goals = {"leakage": "goal 0", "dependent_deletion_recall": "goal 1.0", "collateral_deletions": "goal 0",
                 "recall_p95_ms": "goal < 10 ms"}
        for key, value in out.items():
            print(f"{key:34} {value}" + (f"   ({goals[key]})" if key in goals else ""))
