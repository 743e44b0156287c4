"""Chaos campaign: many Lomo processes on one database, killed, frozen and faulted at random; then the ledger's
invariants, counted.

For --seconds, against one database (a fresh SQLite file, or the empty database --db names):
  * `lomo worker` processes (--workers of them, respawned when they die; some with LOMO_FAULTS) and now and then
    a `lomo --run-once MESSAGE` (some with LOMO_FAULTS), all with the offline model `lomo/local`;
  * the creator, from the CLI: `lomo send MESSAGE --json` (picture, clip, sum and file requests; the printed id
    is the acknowledgement) and `lomo approve` of pending gates (`lomo gates --json`);
  * editor-style saves of the workspace's draft files (rename saves and in-place writes alternating), each
    carrying an increasing creator sequence number, while a reader thread checks that once the creator's
    sequence M was seen, an older one never shows again;
  * random SIGKILL and SIGSTOP (continued 1–3 s later) of the running processes.
Then every process is continued and killed, and clean `lomo --run-once` runs follow until nothing is left to do
(or --quiesce-seconds pass). The figures come from `lomo inspect --json` and the database; every one should be 0
(integrity "ok").

    python bench/chaos.py --seconds 60                       # SQLite in a temporary folder
    python bench/chaos.py --seconds 60 --db postgresql+asyncpg://lomo@127.0.0.1:5432/chaos   # an empty database
    python bench/chaos.py --seconds 20 --json                # the figures as one JSON object (last line)
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MESSAGES = ("a picture of a cat", "a picture of a red fox in the snow", "what is 12*7?", "a 5-second clip of a dog",
            "add a line saying hello to draft-1.md", "a poster of a jazz night", "a picture of a lighthouse")
FAULTS = ("after_decision_commit:crash", "after_tool_started:crash", "after_tool_effect:crash",
          "after_tool_done:crash", "after_gen_submit:crash", "before_wakeup:drop", "after_tool_started:stop@2")
DRAFTS = ("draft-1.md", "draft-2.md", "draft-3.md")
END_EVENTS = {"job_done", "job_failed", "job_expired", "job_cancelled"}
IN_FLIGHT = {"submitting", "queued", "running"}


class Campaign:
    def __init__(self, args: argparse.Namespace, root: Path) -> None:
        self.args, self.root = args, root
        self.rng = random.Random(args.seed)
        self.workspace = root / "ws"
        self.workspace.mkdir()
        self.db_url = args.db or f"sqlite:///{root / 'lomo.db'}"
        self.env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                        LOMO_TIME_SCALE="0.05", LOMO_LEASE_SECONDS="3", LOMO_WATCHDOG_SECONDS="1",
                        XDG_CONFIG_HOME=str(root / "cfg"), XDG_DATA_HOME=str(root / "data"),
                        XDG_STATE_HOME=str(root / "state"), XDG_CACHE_HOME=str(root / "cache"))
        for key in ("LOMO_FAULTS", "LOMO_MODEL", "LOMO_DB_URL", "LOMO_WORKSPACE"):
            self.env.pop(key, None)
        self.workers: list[subprocess.Popen[str]] = []
        self.others: list[tuple[str, subprocess.Popen[str]]] = []  # (kind, process) of short-lived commands
        self.stopped: dict[int, float] = {}  # pid -> when to continue it
        self.acked: list[str] = []
        self.counts: Counter[str] = Counter()
        self.seq = 0
        self.highest: dict[str, int] = {name: 0 for name in DRAFTS}
        self.saves_lost = 0
        self._watching = True
        for name in DRAFTS:
            (self.workspace / name).write_text(f"# {name}\ncreator seq 0\n")

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "lomo_tui", "--workspace", str(self.workspace), "--db", self.db_url,
                "--model", "lomo/local", *args]

    def spawn(self, *args: str, faults: str | None = None, talks: bool = False) -> subprocess.Popen[str]:
        """Start `lomo ARGS`; TALKS: its (short) stdout is read when it ends, else it goes nowhere."""
        env = dict(self.env, LOMO_FAULTS=faults) if faults else self.env
        self.counts["faulted processes" if faults else "clean processes"] += 1
        out = subprocess.PIPE if talks else subprocess.DEVNULL
        return subprocess.Popen(self.argv(*args), env=env, stdout=out, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)

    def maybe_faults(self) -> str | None:
        return self.rng.choice(FAULTS) if self.rng.random() < 0.3 else None

    # ---- the creator's saves, and the reader that checks them ---------------------------------------------------
    def save(self) -> None:
        name = self.rng.choice(DRAFTS)
        self.seq += 1
        path = self.workspace / name
        text = f"# {name}\ncreator seq {self.seq}\n"
        if self.seq % 2:
            temp = path.with_name(f".{name}.swp")
            temp.write_text(text)
            os.replace(temp, path)
        else:
            with open(path, "r+", encoding="utf-8") as fh:
                fh.write(text)
                fh.truncate()
        self.counts["saves"] += 1

    def watch(self) -> None:
        while self._watching:
            for name in DRAFTS:
                try:
                    lines = (self.workspace / name).read_text(encoding="utf-8").splitlines()
                except (OSError, UnicodeDecodeError):
                    continue
                seqs = [int(line.split()[-1]) for line in lines if line.startswith("creator seq ")
                        and line.split()[-1].isdigit()]
                if not seqs:
                    continue
                if max(seqs) < self.highest[name]:
                    self.saves_lost += 1
                self.highest[name] = max(self.highest[name], max(seqs))
            time.sleep(0.02)

    # ---- the campaign ----------------------------------------------------------------------------------------------
    def tick(self) -> None:
        rng, now = self.rng, time.monotonic()
        for pid, until in list(self.stopped.items()):
            if now >= until:
                _signal(pid, signal.SIGCONT)
                del self.stopped[pid]
        self.workers = [w for w in self.workers if w.poll() is None]
        while len(self.workers) < self.args.workers:
            self.workers.append(self.spawn("worker", faults=self.maybe_faults()))
        self.collect()
        busy = sum(1 for kind, _ in self.others if kind == "run-once")
        if busy < 2 and rng.random() < 0.15:
            self.others.append(("run-once", self.spawn("--run-once", rng.choice(MESSAGES), "--max-wait", "20",
                                                       faults=self.maybe_faults())))
        if rng.random() < 0.3:
            self.others.append(("send", self.spawn("send", rng.choice(MESSAGES), "--json", talks=True)))
        if rng.random() < 0.15:
            self.others.append(("gates", self.spawn("gates", "--json", talks=True)))
        if rng.random() < 0.5:
            self.save()
        victims = [p for p in self.workers + [p for _, p in self.others] if p.poll() is None and p.pid not in
                   self.stopped]
        if victims and rng.random() < 0.08:
            _signal(rng.choice(victims).pid, signal.SIGKILL)
            self.counts["sigkill"] += 1
        elif victims and rng.random() < 0.05:
            victim = rng.choice(victims)
            _signal(victim.pid, signal.SIGSTOP)
            self.stopped[victim.pid] = now + rng.uniform(1, 3)
            self.counts["sigstop"] += 1

    def collect(self) -> None:
        """Read what finished commands said: acknowledged sends, gates to approve."""
        current, self.others = self.others, []
        for kind, proc in current:
            if proc.poll() is None:
                self.others.append((kind, proc))
                continue
            out, _ = proc.communicate()
            if proc.returncode != 0 or not out:
                continue
            if kind == "send":
                self.acked.append(json.loads(out)["id"])
            elif kind == "gates":
                pending = [g for g in json.loads(out) if g.get("status") == "pending"]
                if pending:
                    gate = self.rng.choice(pending)
                    self.others.append(("approve", self.spawn("approve", gate["id"], "--option", "1", talks=True)))
                    self.counts["approvals"] += 1

    def run(self) -> None:
        watcher = threading.Thread(target=self.watch, daemon=True)
        watcher.start()
        deadline = time.monotonic() + self.args.seconds
        try:
            while time.monotonic() < deadline:
                self.tick()
                time.sleep(0.2)
        finally:
            self.end_chaos()
        self.quiesce()
        self._watching = False
        watcher.join(timeout=5)

    def end_chaos(self) -> None:
        procs = self.workers + [p for _, p in self.others]
        for proc in procs:
            _signal(proc.pid, signal.SIGCONT)
        for proc in procs:
            if proc.poll() is None:
                _signal(proc.pid, signal.SIGKILL)
            proc.wait()
        self.collect()
        self.workers, self.others, self.stopped = [], [], {}

    def quiesce(self) -> None:
        deadline = time.monotonic() + self.args.quiesce_seconds
        self.runs_to_quiesce, self.left_over = 0, ""
        while time.monotonic() < deadline:
            self.runs_to_quiesce += 1
            subprocess.run(self.argv("--run-once", "--max-wait", "30"), env=self.env, capture_output=True,
                           timeout=300)
            self.left_over = _work_left(self.inspect())
            if not self.left_over:
                return

    def inspect(self) -> dict[str, Any]:
        proc = subprocess.run(self.argv("inspect", "--json"), env=self.env, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"chaos: lomo inspect failed: {proc.stderr.strip()}")
        return json.loads(proc.stdout)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _work_left(state: dict[str, Any]) -> str:
    """What is still to do ("" when nothing): turns queued or running, messages pending, jobs in flight."""
    left = Counter(f"turn {t['status']}" for t in state["turns"] if t["status"] in ("queued", "running"))
    waiting = {t["task_id"] for t in state["turns"] if t["status"] == "waiting"}  # for a gate or a job: not stuck
    left.update(f"message {m['status']}" for m in state["inbox"] if m["status"] == "pending"
                and m["task_id"] not in waiting)
    left.update(f"job {j['status']}" for j in state["jobs"] if j["status"] in IN_FLIGHT)
    return ", ".join(f"{n} {what}" for what, n in sorted(left.items()))


def _duplicates(values: list[Any]) -> int:
    return sum(n - 1 for value, n in Counter(values).items() if value is not None and n > 1)


async def _database_figures(url: str) -> dict[str, Any]:
    from sqlalchemy import text

    from lomo_tui.store.engine import Database

    db = Database(url)
    try:
        async with db.read() as conn:
            auths = (await conn.execute(text(
                "SELECT gate_id, COUNT(*) FROM authorisations WHERE gate_id IS NOT NULL GROUP BY gate_id "
                "HAVING COUNT(*) > 1"))).all()
            versions = (await conn.execute(text(
                "SELECT object_id, version, hash FROM object_versions ORDER BY object_id, version"))).all()
            paths = (await conn.execute(text("SELECT path, COUNT(*) FROM objects GROUP BY path "
                                             "HAVING COUNT(*) > 1"))).all()
        seen: dict[str, set[str]] = {}
        repeats = 0
        for object_id, _version, digest in versions:
            earlier = seen.setdefault(object_id, set())
            repeats += digest in earlier
            earlier.add(digest)
        return {"authorisations beyond one per approved gate": sum(n - 1 for _, n in auths),
                "versions repeating an older hash": repeats,
                "duplicate object rows": sum(n - 1 for _, n in paths),
                "integrity check": "ok" if await db.integrity_ok() else "FAILED"}
    finally:
        await db.close()


def figures(campaign: Campaign, state: dict[str, Any]) -> dict[str, Any]:
    from lomo_tui.config import load_settings
    from lomo_tui.governance.budget import Budget

    cap = Budget.from_config(load_settings(env=campaign.env).section("budget")).daily_free_cap
    approved = sum(1 for g in state["gates"] if g["status"] == "approved")
    charged = sum(c["amount"] for c in state["charges"] if c.get("status") not in ("refunded",))
    consumed = Counter(m["id"] for m in state["inbox"] if m["status"] == "consumed")
    inbox_ids = {m["id"] for m in state["inbox"]}
    ends = Counter(e.get("job_id") for e in state["events"] if e["type"] in END_EVENTS and e.get("job_id"))
    out: dict[str, Any] = {
        "duplicate jobs per key": _duplicates([j["idempotency_key"] for j in state["jobs"]]),
        "double charges": _duplicates([c["idempotency_key"] for c in state["charges"]]),
        "charges over the cap without approval": round(max(0.0, charged - cap) if approved == 0 else 0.0, 4),
        "non-idempotent calls run twice": sum(1 for c in state["tool_calls"] if (c["executions"] or 0) > 1
                                              and c.get("side_effect") != "read"),
        "acknowledged messages lost": sum(1 for i in campaign.acked if i not in inbox_ids),
        "messages consumed twice": sum(n - 1 for n in consumed.values() if n > 1),
        "creator saves lost": campaign.saves_lost,
        "jobs with two end states": sum(1 for n in ends.values() if n > 1),
        "stuck turns": sum(1 for t in state["turns"] if t["status"] in ("queued", "running")),
        "messages left pending": sum(1 for m in state["inbox"] if m["status"] == "pending" and m["task_id"] not in
                                     {t["task_id"] for t in state["turns"] if t["status"] == "waiting"}),
    }
    out.update(asyncio.run(_database_figures(campaign.db_url)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the chaos lasts (default 60)")
    parser.add_argument("--db", help="an empty database URL (default: a fresh SQLite file in a temporary folder)")
    parser.add_argument("--workers", type=int, default=2, help="lomo worker processes kept running (default 2)")
    parser.add_argument("--quiesce-seconds", type=float, default=180.0, help="longest clean-up by run-once")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line at the end")
    parser.add_argument("--keep", metavar="DIR", help="run in DIR (a new folder) and keep it (workspace, database)")
    args = parser.parse_args()
    if args.keep:
        Path(args.keep).mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="lomo-chaos-") as scratch:
        campaign = Campaign(args, Path(args.keep or scratch))
        started = time.monotonic()
        campaign.run()
        state = campaign.inspect()
        result = figures(campaign, state)
        activity = dict(campaign.counts, acknowledged=len(campaign.acked), tasks=len(state["tasks"]),
                        turns=len(state["turns"]), jobs=len(state["jobs"]), charges=len(state["charges"]),
                        runs_to_quiesce=campaign.runs_to_quiesce, seconds=round(time.monotonic() - started, 1))
        backend = "postgresql" if args.db and args.db.startswith("postgres") else "sqlite"
        print(f"chaos on {backend}: " + ", ".join(f"{k} {v}" for k, v in activity.items()))
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"  {key:<{width}}  {value}")
        if campaign.left_over:
            print(f"  (still to do after {args.quiesce_seconds:.0f} s of clean runs: {campaign.left_over})")
        if args.json:
            print(json.dumps({"backend": backend, "activity": activity, "figures": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
