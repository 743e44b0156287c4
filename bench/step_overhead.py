"""Per-step overhead of durable execution: Lomo's ledger vs LangGraph vs DBOS, on tmpfs and on disk.

A "durable step" is, for each system:

  ours        one step of a real Runtime turn: the model decision committed (a `lomo/replay` line with one
              `noop` read tool call) together with the call's `started` row (an idempotent call's `started`
              row shares the decision's commit), then the call's `done` row — two fenced write transactions
              (guard = epoch/owner check + lease renewal) plus the turn loop's reads. With the default
              group commit (`[runtime] sync_window`, 0.2 s) a step of reads only is not fsynced on the spot:
              its commits are safe from a process crash at once and reach the disk within the window or
              with the next commit that must be durable (anything but a read). The notes column counts
              the fsyncs per step (commits fsynced on the spot + background
              flushes of the log).
  ours-sync   the same with sync_window = 0: every commit is fsynced before it returns (synchronous=FULL
              throughout).
  ours-ledger the same fenced writes through the bare Ledger API (no turn loop, no model, no reads):
              shows how much of `ours` is the ledger and how much the turn loop around it.
  langgraph   one node invocation (an async node calling a no-op) checkpointed by AsyncSqliteSaver with
              durability="sync" (the checkpoint is written before the next node runs).
  dbos        one @DBOS.step (a no-op) inside a @DBOS.workflow, system database on SQLite in WAL mode.

All of them run on SQLite in WAL mode with synchronous=FULL (the SQLite/pysqlite default that LangGraph
and DBOS get; Lomo sets it explicitly, and drops to NORMAL only for group-committed transactions), each
run in a fresh database. µs per step = wall time of the
N-step run / N; startup (imports, migrations, DBOS launch, graph compile) is excluded, and each worker
does one untimed warm-up run first. The figure is the median over --runs runs.

Every backend runs in its own subprocess (one per backend × filesystem), so imports and global state
(DBOS is a process-wide singleton) do not leak between them. A backend that cannot be imported or
fails is reported with the reason; the others still run.

    python bench/step_overhead.py                 # all backends, tmpfs + disk, 200 steps, 5 runs
    python bench/step_overhead.py --only ours --steps 500 --runs 7 --fs tmpfs
    python bench/step_overhead.py --json          # one JSON document instead of the table
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import describe, eprint, fs_root, machine, median, spread, table

BACKENDS = ("ours", "ours-sync", "ours-ledger", "langgraph", "dbos")
OURS = ("ours", "ours-sync")
PEERS = ("langgraph", "dbos")
FILESYSTEMS = ("tmpfs", "disk")
WARMUP_STEPS = 20
GOAL_TMPFS_US = 1000.0
GOAL_RATIO = 2.0


# ---- workers (run inside a subprocess) ---------------------------------------------------------------------

def _fresh_dir(root: Path, name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"lomo-bench-{name}-", dir=root))


# ours: the real Runtime ------------------------------------------------------------------------------------

def _ours_runtime_bits() -> dict[str, Any]:
    from lomo_tui.config import load_settings
    from lomo_tui.runtime import scheduler, turns
    from lomo_tui.runtime.scheduler import Runtime
    from lomo_tui.tools.registry import Tool

    return {"load_settings": load_settings, "scheduler": scheduler, "turns": turns, "Runtime": Runtime, "Tool": Tool}


async def _noop_tool(ctx: Any) -> dict[str, Any]:
    return {"ok": True}


async def ours_sync_run(root: Path, steps: int) -> dict[str, Any]:
    return await ours_run(root, steps, sync_window="0")


async def ours_run(root: Path, steps: int, sync_window: str | None = None) -> dict[str, Any]:
    """One N-step turn through the real Runtime. Returns seconds for send→quiescent and for the turn itself."""
    bits = _ours_runtime_bits()
    # MAX_STEPS (40) guards against a spinning model; a benchmark turn is long on purpose.
    bits["turns"].MAX_STEPS = max(bits["turns"].MAX_STEPS, steps + 10)
    spans: list[float] = []

    base_runner = bits["turns"].TurnRunner

    class TimedTurnRunner(base_runner):  # type: ignore[misc, valid-type]
        async def run(self) -> str:
            t0 = time.perf_counter()
            try:
                return await super().run()
            finally:
                spans.append(time.perf_counter() - t0)

    bits["scheduler"].TurnRunner = TimedTurnRunner
    d = _fresh_dir(root, "ours")
    try:
        replay = d / "replay.jsonl"
        line = json.dumps({"content": None, "tool_calls": [{"name": "noop", "arguments": {}}]})
        replay.write_text((line + "\n") * steps, encoding="utf-8")  # then exhaustion: {"content": "done"}
        env = {"LOMO_REPLAY_FILE": str(replay), **({"LOMO_SYNC_WINDOW": sync_window} if sync_window else {})}
        settings = bits["load_settings"](workspace=str(d / "ws"), db=f"sqlite+aiosqlite:///{d / 'lomo.db'}",
                                         model="lomo/replay", env=env,
                                         config_path=d / "no-config.toml")
        rt = bits["Runtime"](settings)
        rt.registry.add(bits["Tool"]("noop", "Does nothing.", {"type": "object", "properties": {}, "required": []},
                                     "read", True, _noop_tool, kinds=("main", "lightweight", "persistent")))
        try:
            await rt.open()
            await rt.start()
            # A step inside a task (a persistent task's turn); the main thread adds routing context per step.
            task_id = await rt.ledger.create_task("bench")
            gc.collect()
            synced, flushes = rt.db.commits["synced"], rt.db.commits["flushes"]
            t0 = time.perf_counter()
            _, turn_id = await rt.send("go", task_id)
            quiescent = await rt.run_until_quiescent(max_wait=600)
            wall = time.perf_counter() - t0
            synced, flushes = rt.db.commits["synced"] - synced, rt.db.commits["flushes"] - flushes
            check = await _ours_check(rt, turn_id, steps)
        finally:
            await rt.close()
        if not quiescent or rt.errors or check:
            raise RuntimeError(f"ours: run did not finish cleanly: quiescent={quiescent} errors={rt.errors} {check}")
        return {"wall": wall, "turn": spans[-1] if spans else float("nan"), "fsynced_commits": synced,
                "background_fsyncs": flushes}
    finally:
        bits["scheduler"].TurnRunner = base_runner
        shutil.rmtree(d, ignore_errors=True)


async def _ours_check(rt: Any, turn_id: str, steps: int) -> str:
    """The run really made N fenced steps: N+1 decisions, N done calls each executed once, turn completed."""
    from sqlalchemy import func, select

    from lomo_tui.store import schema as s

    async with rt.db.read() as conn:
        turn = (await conn.execute(select(s.turns).where(s.turns.c.id == turn_id))).one()
        n_steps = (await conn.execute(select(func.count()).select_from(s.steps).where(
            s.steps.c.turn_id == turn_id))).scalar()
        calls = (await conn.execute(select(s.tool_calls.c.status, s.tool_calls.c.executions,
                                           s.tool_calls.c.started_at, s.tool_calls.c.finished_at).where(
            s.tool_calls.c.turn_id == turn_id))).all()
    problems = []
    if turn.status != "completed":
        problems.append(f"turn status {turn.status}")
    if n_steps != steps + 1:
        problems.append(f"{n_steps} decisions, expected {steps + 1}")
    done = [c for c in calls if c.status == "done" and c.executions == 1 and c.started_at and c.finished_at]
    if len(done) != steps or len(calls) != steps:
        problems.append(f"{len(done)}/{len(calls)} tool calls done, expected {steps}")
    return "; ".join(problems)


async def ours_ledger_run(root: Path, steps: int) -> dict[str, Any]:
    """The same N steps through the bare Ledger: commit_decision with the call started, finish_call (fenced)."""
    from lomo_tui.ledger import Ledger, StartedCall
    from lomo_tui.store import migrate
    from lomo_tui.store.engine import Database

    d = _fresh_dir(root, "ledger")
    db = Database(f"sqlite+aiosqlite:///{d / 'lomo.db'}", sync_window=0.2)
    try:
        await migrate.upgrade(db)
        ledger = Ledger(db, 30.0)
        task_id = await ledger.main_task_id()
        message_id, turn_id = await ledger.deliver(task_id, "go")
        claim = await ledger.claim(turn_id, f"bench:{os.getpid()}:0")
        assert claim is not None
        decision = {"content": None, "tool_calls": [{"name": "noop", "arguments": {}}]}
        started = [StartedCall(0, "noop", {}, "read")]
        record = {"purpose": "router", "model": "lomo/replay", "prompt_tokens": 0, "completion_tokens": 0,
                  "cached_tokens": 0, "cost": 0.0, "latency_ms": 0}
        gc.collect()
        t0 = time.perf_counter()
        for step in range(1, steps + 1):
            ok = await ledger.commit_decision(claim, step, decision, [message_id] if step == 1 else [], record,
                                              started=started)
            assert ok
            await ledger.finish_call(claim, step, 0, "done", {"ok": True}, ran=True, last_in_step=True,
                                     name="noop", tool_message='{"ok": true}', durable=False)
        await ledger.commit_decision(claim, steps + 1, {"content": "done", "tool_calls": []}, [], record,
                                     finish="idle")
        wall = time.perf_counter() - t0
        return {"wall": wall}
    finally:
        await db.close()
        shutil.rmtree(d, ignore_errors=True)


# langgraph -----------------------------------------------------------------------------------------------

def _noop() -> None:
    return None


async def langgraph_run(root: Path, steps: int) -> dict[str, Any]:
    """N node invocations of a self-looping graph, each checkpointed synchronously by AsyncSqliteSaver."""
    from typing import TypedDict

    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        i: int

    async def step(state: State) -> dict[str, int]:
        _noop()
        return {"i": state["i"] + 1}

    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda s: "step" if s["i"] < steps else END)

    d = _fresh_dir(root, "langgraph")
    try:
        path = d / "checkpoints.db"
        async with aiosqlite.connect(str(path)) as conn:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()  # creates the tables and turns WAL on
            graph = builder.compile(checkpointer=saver)
            config = {"configurable": {"thread_id": f"bench-{os.getpid()}"}, "recursion_limit": steps + 10}
            gc.collect()
            t0 = time.perf_counter()
            out = await graph.ainvoke({"i": 0}, config, durability="sync")
            wall = time.perf_counter() - t0
            async with conn.execute("PRAGMA journal_mode") as cur:
                mode = (await cur.fetchone())[0]
            async with conn.execute("SELECT count(*) FROM checkpoints") as cur:
                n_ckpt = (await cur.fetchone())[0]
        if out["i"] != steps or n_ckpt < steps:
            raise RuntimeError(f"langgraph: i={out['i']} checkpoints={n_ckpt}, expected ≥{steps}")
        return {"wall": wall, "journal_mode": mode, "checkpoints": n_ckpt}
    finally:
        shutil.rmtree(d, ignore_errors=True)


# dbos ----------------------------------------------------------------------------------------------------

_DBOS: dict[str, Any] = {}


def _dbos_setup() -> dict[str, Any]:
    if _DBOS:
        return _DBOS
    import logging

    from dbos import DBOS

    @DBOS.step()
    def noop_step(i: int) -> int:
        _noop()
        return i

    @DBOS.workflow()
    def steps_workflow(n: int) -> int:
        for i in range(n):
            noop_step(i)
        return n

    logging.getLogger("dbos").setLevel(logging.WARNING)
    _DBOS.update(DBOS=DBOS, workflow=steps_workflow)
    return _DBOS


def dbos_run_sync(root: Path, steps: int) -> dict[str, Any]:
    """N @DBOS.step calls inside one @DBOS.workflow; fresh SQLite system database in WAL per run."""
    import sqlite3

    bits = _dbos_setup()
    DBOS = bits["DBOS"]
    d = _fresh_dir(root, "dbos")
    path = d / "dbos.sqlite"
    try:
        # DBOS leaves SQLite in its default rollback journal; WAL is a property of the file, so set it first.
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
        DBOS(config={"name": "lomo-bench", "system_database_url": f"sqlite:///{path}", "log_level": "WARNING"})
        DBOS.launch()
        try:
            gc.collect()
            t0 = time.perf_counter()
            result = bits["workflow"](steps)
            wall = time.perf_counter() - t0
        finally:
            DBOS.destroy()
        with sqlite3.connect(path) as conn:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            n_ops = conn.execute("SELECT count(*) FROM operation_outputs").fetchone()[0]
        if result != steps or n_ops < steps:
            raise RuntimeError(f"dbos: result={result} step rows={n_ops}, expected {steps}")
        return {"wall": wall, "journal_mode": mode, "step_rows": n_ops}
    finally:
        shutil.rmtree(d, ignore_errors=True)


async def dbos_run(root: Path, steps: int) -> dict[str, Any]:
    # The workflow is synchronous (DBOS's primary API); run it off the loop so DBOS may use its own.
    return await asyncio.to_thread(dbos_run_sync, root, steps)


RUNNERS: dict[str, Callable[[Path, int], Any]] = {
    "ours": ours_run, "ours-sync": ours_sync_run, "ours-ledger": ours_ledger_run, "langgraph": langgraph_run, "dbos": dbos_run,
}


def worker(backend: str, fs: str, steps: int) -> int:
    """Subprocess body: answers one JSON line per command read from stdin ("warmup", "run", "quit")."""
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    root = fs_root(fs)
    runner = RUNNERS[backend]
    loop = asyncio.new_event_loop()
    _reply({"ready": True, "where": describe(root)})
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        try:
            n = min(WARMUP_STEPS, steps) if command == "warmup" else steps
            _reply({"ok": True, **loop.run_until_complete(runner(root, n))})
        except Exception as exc:  # noqa: BLE001 — the driver reports it and goes on
            import traceback

            traceback.print_exc()
            _reply({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
    loop.close()
    return 0


def _reply(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Worker:
    """A backend's subprocess, kept alive across rounds so that runs of all backends interleave."""

    def __init__(self, backend: str, fs: str, steps: int, timeout: float) -> None:
        import queue
        import threading

        self.backend, self.fs, self.timeout = backend, fs, timeout
        self.error: str | None = None
        self.where = ""
        self.runs: list[dict[str, Any]] = []
        self._stderr: list[str] = []
        env = dict(os.environ, PYTHONUNBUFFERED="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", backend, "--fs", fs, "--steps", str(steps)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self._lines: queue.Queue[str | None] = queue.Queue()

        def pump(stream: Any, sink: Any) -> None:
            for ln in stream:
                sink(ln)
            if stream is self.proc.stdout:
                self._lines.put(None)

        threading.Thread(target=pump, args=(self.proc.stdout, self._lines.put), daemon=True).start()
        threading.Thread(target=pump, args=(self.proc.stderr, self._stderr.append), daemon=True).start()
        hello = self._read()
        if hello is not None:
            self.where = hello.get("where", "")

    def _why(self, default: str) -> str:
        tail = [ln.rstrip() for ln in self._stderr if ln.strip()]
        why = tail[-1] if tail else default
        if "ModuleNotFoundError" in why or "ImportError" in why:
            why += "  (install the peers: pip install -e '.[bench]')"
        return why[:300]

    def _read(self) -> dict[str, Any] | None:
        import queue

        while True:
            try:
                line = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                self.error = f"no answer within {self.timeout:.0f} s"
                self.close()
                return None
            if line is None:
                self.proc.wait()
                self.error = self._why(f"worker exited with code {self.proc.returncode}")
                return None
            if line.startswith("{"):
                return json.loads(line)

    def ask(self, command: str) -> dict[str, Any] | None:
        if self.error:
            return None
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.error = self._why("worker is gone")
            return None
        answer = self._read()
        if answer is not None and not answer.get("ok", True):
            self.error = answer.get("error", "failed")
            if "ModuleNotFoundError" in self.error or "ImportError" in self.error:
                self.error += "  (install the peers: pip install -e '.[bench]')"
            self.close()
            return None
        return answer

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="durable steps per run (default 200)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per backend and filesystem (default 5)")
    parser.add_argument("--only", default=",".join(BACKENDS),
                        help=f"comma-separated backends: {', '.join(BACKENDS)} ('ours' also brings 'ours-ledger' "
                             "unless --no-ledger)")
    parser.add_argument("--no-ledger", action="store_true", help="skip the bare-ledger breakdown row")
    parser.add_argument("--fs", default=",".join(FILESYSTEMS), help="tmpfs, disk or both (default both)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per backend subprocess")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.runs < 1:
        parser.error("--steps and --runs must be at least 1")

    fss = [f.strip() for f in args.fs.split(",") if f.strip()]
    bad = [f for f in fss if f not in FILESYSTEMS]
    if bad:
        parser.error(f"unknown filesystem {bad[0]!r}; choose from {', '.join(FILESYSTEMS)}")
    if args.worker:
        return worker(args.worker, fss[0], args.steps)

    backends = [b.strip() for b in args.only.split(",") if b.strip()]
    bad = [b for b in backends if b not in BACKENDS]
    if bad:
        parser.error(f"unknown backend {bad[0]!r}; choose from {', '.join(BACKENDS)}")
    if "ours" in backends and not args.no_ledger and "ours-ledger" not in backends:
        backends.insert(backends.index("ours") + 1, "ours-ledger")
    if args.no_ledger and "ours-ledger" in backends:
        backends.remove("ours-ledger")

    load_before = os.getloadavg()
    results: list[dict[str, Any]] = []
    for fs in fss:
        # One live subprocess per backend; rounds interleave the backends so that load on a shared machine
        # hits all of them alike (the ratios are the robust part of the output).
        eprint(f"… {fs}: starting {', '.join(backends)}")
        workers = [Worker(b, fs, args.steps, args.timeout) for b in backends]
        t_start = {w.backend: time.perf_counter() for w in workers}
        for w in workers:
            w.ask("warmup")
        for r in range(args.runs):
            eprint(f"… {fs}: round {r + 1}/{args.runs}")
            for w in workers:
                answer = w.ask("run")
                if answer is not None:
                    w.runs.append(answer)
        for w in workers:
            w.close()
            res: dict[str, Any] = {"backend": w.backend, "fs": fs, "where": w.where,
                                   "elapsed_s": round(time.perf_counter() - t_start[w.backend], 1)}
            if w.error or not w.runs:
                res["error"] = w.error or "no runs"
                eprint(f"   {w.backend} on {fs} failed: {res['error']}")
            else:
                res["runs"] = w.runs
                per = [x["wall"] / args.steps * 1e6 for x in w.runs]
                res["us_per_step"] = per
                res["median_us"] = median(per)
                if w.backend in OURS:
                    res["fsyncs_per_step"] = median([(x["fsynced_commits"] + x["background_fsyncs"]) / args.steps
                                                     for x in w.runs])
                    turn = [x["turn"] / args.steps * 1e6 for x in w.runs]
                    res["turn_us_per_step"] = turn
                    res["turn_median_us"] = median(turn)
            results.append(res)
    load = (load_before, os.getloadavg())

    summary = _summarise(results, fss)
    summary_sync = _summarise(results, fss, "ours-sync")
    if args.json:
        print(json.dumps({"machine": machine(), "loadavg_1m": [load[0][0], load[1][0]], "steps": args.steps,
                          "runs": args.runs, "results": results, "summary": summary,
                          "summary_every_commit_fsynced": summary_sync}, indent=2))
        return 0
    _print(results, summary, fss, args.steps, args.runs)
    if any(s for s in summary_sync.values()):
        print("\nWith every commit fsynced (ours-sync, sync_window = 0):")
        _print_ratios(summary_sync, fss, "ours-sync")
    print(f"load average (1 min) before/after: {load[0][0]:.2f} / {load[1][0]:.2f} on {os.cpu_count()} CPUs"
          + ("  — the machine was busy: absolute figures are inflated, ratios less so"
             if max(load[0][0], load[1][0]) > 0.75 * (os.cpu_count() or 1) else ""))
    return 0


def _by(results: list[dict[str, Any]], backend: str, fs: str) -> dict[str, Any] | None:
    for r in results:
        if r["backend"] == backend and r["fs"] == fs and "error" not in r:
            return r
    return None


def _summarise(results: list[dict[str, Any]], fss: list[str], variant: str = "ours") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fs in fss:
        ours = _by(results, variant, fs)
        entry: dict[str, Any] = {}
        if ours:
            entry["ours_us"] = ours["median_us"]
            for peer in PEERS:
                p = _by(results, peer, fs)
                if p:
                    entry[f"{peer}_ratio"] = p["median_us"] / ours["median_us"]
                elif any(r["backend"] == peer and r["fs"] == fs for r in results):
                    entry[f"{peer}_ratio"] = None  # asked for, but it failed
        out[fs] = entry
    return out


def _print(results: list[dict[str, Any]], summary: dict[str, Any], fss: list[str], steps: int, runs: int) -> None:
    print(f"Durable step overhead — {steps} steps per run, median of {runs} runs ({machine()})")
    wheres = {r["fs"]: r["where"] for r in results if "where" in r}
    for fs in fss:
        if fs in wheres:
            print(f"  {fs}: {wheres[fs]}")
    print()
    rows = []
    for r in results:
        if "error" in r:
            rows.append([r["backend"], r["fs"], "FAILED", "", "", r["error"][:100]])
            continue
        note = ""
        if r["backend"] in OURS:
            note = f"turn only: {r['turn_median_us']:,.0f} µs/step; fsyncs/step {r['fsyncs_per_step']:.2f}"
        elif "journal_mode" in r["runs"][0]:
            note = f"journal_mode={r['runs'][0]['journal_mode']}"
        rows.append([r["backend"], r["fs"], f"{r['median_us']:,.0f}", spread(r["us_per_step"]),
                     f"{r['elapsed_s']:.0f} s", note])
    print(table(rows, ["backend", "fs", "µs/step (median)", "range", "wall", "notes"]))
    print()
    _print_ratios(summary, fss, "ours")


def _print_ratios(summary: dict[str, Any], fss: list[str], name: str) -> None:
    for fs in fss:
        s = summary.get(fs, {})
        if "ours_us" not in s:
            continue
        parts = [f"{name} {s['ours_us']:,.0f} µs/step"]
        for peer in PEERS:
            if s.get(f"{peer}_ratio") is not None:
                r = s[f"{peer}_ratio"]
                parts.append(f"{peer}/{name} = {r:.2f} ({name} {r:.2f}× faster)" if r >= 1
                             else f"{peer}/{name} = {r:.2f} ({name} {1 / r:.1f}× slower)")
            elif f"{peer}_ratio" in s:
                parts.append(f"{peer}: failed, no ratio")
        print(f"{fs:>5}: " + ", ".join(parts))
    s = summary.get("tmpfs", {})
    if "ours_us" in s:
        ok = s["ours_us"] <= GOAL_TMPFS_US
        print(f"goal ≤ {GOAL_TMPFS_US:,.0f} µs/step on tmpfs: {'met' if ok else 'MISSED'} ({s['ours_us']:,.0f} µs)")
    for fs in fss:
        s = summary.get(fs, {})
        for peer in PEERS:
            if s.get(f"{peer}_ratio") is not None:
                ratio = s[f"{peer}_ratio"]
                print(f"goal ≥ {GOAL_RATIO:.0f}× faster than {peer} on {fs}: "
                      f"{'met' if ratio >= GOAL_RATIO else 'MISSED'} ({ratio:.2f}×)")


if __name__ == "__main__":
    sys.exit(main())
