"""Studio under load: 200 concurrent simulated jobs through the real runtime, tool path and studio service.

One persistent task gets one creator message. Its model (`lomo/replay`) answers step 1 with N `generate_image`
calls (default 200), so one durable step places N orders: each call passes the budget check, writes the job and
its charge, and submits to the embedded studio. Every call is deferred, so the turn then waits, holding no lease
and making no model request, until all N jobs have settled (D1/D2). While the jobs run, the embedded studio sends
6 events per job (running at 0 %, 20 %, 40 %, 60 %, 80 %, then done) to `Studio.on_event`. A progress event
updates the job row and publishes `job_progress`. A done event fetches the result, writes the artifact into the
workspace, records it, and publishes `job_done`. When the last job settles, the turn wakes, collects the N
results and asks the model again (that call comes after the window and is not counted).

What is measured, and how:

  events handled/s   the provider's event sink is wrapped (`provider.subscribe` list swapped for a timed wrapper
                     around `Studio.on_event`): events whose handler returned, divided by the time from the first
                     event emitted to the last one handled. Also emit→handled time per event (handlers run inline
                     in the job's task and wait their turn for the SQLite write lock).
  model calls        `model_calls` rows created between the first job's `created_at` and the last job's
                     `finished_at`. The goal is 0: progress and completion must never call the model.
  peak memory        VmHWM (peak RSS) of this process, from /proc/self/status (or ru_maxrss), against the RSS
                     after start; with --tracemalloc, the Python heap peak during the run as well.
  card update        time from the provider emitting the `done` event (taken in the sink wrapper) to the
                     `job_done` notice reaching a bus subscriber (`rt.bus.subscribe()`, as the TUI's cards do).
                     Both clocks are time.perf_counter() in the same process; the subscriber is an ordinary asyncio
                     task, so the figure includes the loop scheduling it.
  artifacts on disk  mtime of each job's artifact (written by atomic_write) minus the moment `send()` was called
                     and minus the first order; the simulated latency of an image is 3–6 s × the time scale.

    python bench/studio_load.py                      # 200 jobs, time scale 2 (jobs take 6–12 s), workspace on disk
    python bench/studio_load.py --fs tmpfs --jobs 500 --time-scale 0.05     # a burst: handling capacity
    python bench/studio_load.py --json
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import describe, fs_root, machine, report

EVENTS_PER_JOB = 6  # embedded studio: running 0.0, 4 progress ticks, done
GOAL_MODEL_CALLS = 0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if q < 100 else max(values)


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": pct(values, 50), "p95": pct(values, 95), "max": max(values, default=float("nan"))}


def proc_status() -> dict[str, int]:
    """VmRSS/VmHWM in KiB from /proc/self/status (VmHWM falls back to ru_maxrss)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    out.setdefault("VmHWM", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from sqlalchemy import text

    from lomo_tui.config import load_settings
    from lomo_tui.governance.budget import Budget
    from lomo_tui.runtime.scheduler import Runtime

    n = args.jobs
    d = Path(tempfile.mkdtemp(prefix="lomo-bench-studio-", dir=fs_root(args.fs)))
    try:
        replay = d / "replay.jsonl"
        call_args = [{"prompt": f"bench frame {i}", "seed": i + 1} for i in range(n)]
        if args.size:
            for a in call_args:
                a["size"] = args.size
        line0 = {"content": None, "tool_calls": [{"name": "generate_image", "arguments": a} for a in call_args]}
        replay.write_text(json.dumps(line0) + "\n", encoding="utf-8")  # then exhaustion: {"content": "done"}
        settings = load_settings(workspace=str(d / "ws"), db=f"sqlite+aiosqlite:///{d / 'lomo.db'}",
                                 model="lomo/replay", config_path=d / "no-config.toml",
                                 env={"LOMO_REPLAY_FILE": str(replay), "LOMO_TIME_SCALE": str(args.time_scale)})
        rt = Runtime(settings, watch=not args.no_watch)
        # The free allowance must not gate the batch (0.04 credits × N would pass the default daily cap).
        rt.budget = Budget(free_per_call=1_000.0, daily_free_cap=1e9, auto_daily_cap=1e9,
                           currency=rt.budget.currency)

        # ---- instrument the provider's event sink (the studio subscribed Studio.on_event at construction)
        provider = rt.studio.provider
        sinks = getattr(provider, "_sinks", None)
        if not isinstance(sinks, list) or not sinks:
            raise RuntimeError("the studio provider has no event sink list to instrument (provider._sinks)")
        handled: list[tuple[float, float, str]] = []  # (emitted, handled, status)
        done_emitted: dict[str, float] = {}  # provider job id → perf time the done event was emitted

        def timed(sink: Any) -> Any:
            async def wrapper(event: Any) -> None:
                t0 = time.perf_counter()
                if event.status == "done":
                    done_emitted.setdefault(event.provider_job_id, t0)
                try:
                    await sink(event)
                finally:
                    handled.append((t0, time.perf_counter(), event.status))
            return wrapper

        sinks[:] = [timed(sink) for sink in sinks]

        # ---- a bus subscriber, standing in for the TUI's job cards
        queue = rt.bus.subscribe(maxsize=10_000_000)
        cards: dict[str, float] = {}  # job id → perf time job_done reached the subscriber
        counts: dict[str, int] = {}
        turn_done: list[float] = []

        async def listen() -> None:
            while True:
                notice = await queue.get()
                t = time.perf_counter()
                counts[notice.type] = counts.get(notice.type, 0) + 1
                if notice.type == "job_done":
                    cards.setdefault(notice.data["job_id"], t)
                elif notice.type == "turn_completed":
                    turn_done.append(t)

        listener = asyncio.create_task(listen())
        try:
            await rt.open()
            await rt.start()
            task_id = await rt.ledger.create_task("studio load")
            gc.collect()
            mem_before = proc_status()
            if args.tracemalloc:
                tracemalloc.start()
            cpu0 = time.process_time()
            t_send_wall, t_send = time.time(), time.perf_counter()
            _, turn_id = await rt.send("make the batch", task_id)
            quiescent = await rt.run_until_quiescent(max_wait=args.timeout)
            wall = time.perf_counter() - t_send
            cpu = time.process_time() - cpu0
            await asyncio.sleep(0.05)  # let the subscriber drain
            heap_peak = tracemalloc.get_traced_memory()[1] if args.tracemalloc else None
            if args.tracemalloc:
                tracemalloc.stop()
            mem_after = proc_status()

            async with rt.db.read() as conn:
                jobs = (await conn.execute(text(
                    "SELECT id, provider_job_id, status, artifact_path, created_at, finished_at FROM jobs "
                    "WHERE task_id = :t"), {"t": task_id})).all()
                first_submit = min((j.created_at for j in jobs), default=None)
                last_done = max((j.finished_at for j in jobs if j.finished_at), default=None)
                in_window = (await conn.execute(text(
                    "SELECT count(*) FROM model_calls WHERE created_at >= :a AND created_at <= :b"),
                    {"a": first_submit or 0, "b": last_done or 0})).scalar()
                total_calls = (await conn.execute(text("SELECT count(*) FROM model_calls"))).scalar()
                turn_status = (await conn.execute(text("SELECT status FROM turns WHERE id = :t"),
                                                  {"t": turn_id})).scalar()
                last_submit = max((j.created_at for j in jobs), default=None)
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
            await rt.close()

        done_jobs = [j for j in jobs if j.status == "done"]
        mtimes = []
        for j in done_jobs:
            try:
                mtimes.append((settings.workspace / j.artifact_path).stat().st_mtime)
            except (OSError, TypeError):
                pass
        card_latency = [(cards[j.id] - done_emitted[j.provider_job_id]) * 1000
                        for j in done_jobs if j.id in cards and j.provider_job_id in done_emitted]
        progress = [(b - a) * 1000 for a, b, st in handled if st != "done"]
        completion = [(b - a) * 1000 for a, b, st in handled if st == "done"]
        span = (max(b for _, b, _ in handled) - min(a for a, _, _ in handled)) if handled else float("nan")
        problems = []
        if not quiescent:
            problems.append(f"not quiescent after {args.timeout:.0f} s")
        if len(jobs) != n or len(done_jobs) != n:
            problems.append(f"{len(done_jobs)}/{len(jobs)} jobs done, expected {n}")
        if len(mtimes) != len(done_jobs):
            problems.append(f"{len(done_jobs) - len(mtimes)} artifacts missing on disk")
        if len(card_latency) != n:
            problems.append(f"{len(card_latency)}/{n} completions reached the subscriber")
        if turn_status != "completed":
            problems.append(f"turn {turn_status}")
        if rt.errors:
            problems.append("; ".join(rt.errors[:3]))
        return {
            "jobs": n, "time_scale": args.time_scale, "size": args.size or "tool default (768x768)",
            "fs": args.fs, "where": describe(d), "watch": not args.no_watch, "wall_s": wall,
            "cpu_s": cpu, "problems": problems,
            "submit_span_s": (last_submit - first_submit) if first_submit else None,
            "events": {"handled": len(handled), "expected": n * EVENTS_PER_JOB, "span_s": span,
                       "per_s": len(handled) / span if span else float("nan"),
                       "progress_ms": summary(progress), "completion_ms": summary(completion)},
            "notices": counts,
            "model_calls": {"during_progress": in_window, "total": total_calls},
            "memory_kib": {"rss_before": mem_before.get("VmRSS"), "hwm_before": mem_before.get("VmHWM"),
                           "rss_after": mem_after.get("VmRSS"), "peak_rss": mem_after.get("VmHWM"),
                           "python_heap_peak": heap_peak / 1024 if heap_peak is not None else None},
            "card_update_ms": summary(card_latency),
            "artifacts": {"on_disk": len(mtimes),
                          "first_after_send_s": min(mtimes) - t_send_wall if mtimes else None,
                          "last_after_send_s": max(mtimes) - t_send_wall if mtimes else None,
                          "first_after_first_order_s": min(mtimes) - first_submit if mtimes and first_submit else None,
                          "last_after_first_order_s": max(mtimes) - first_submit if mtimes and first_submit else None},
            "turn_resumed_after_last_card_ms": ((turn_done[-1] - max(cards.values())) * 1000
                                                if turn_done and cards else None),
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _print(r: dict[str, Any]) -> None:
    ev, mem, card, art, mc = r["events"], r["memory_kib"], r["card_update_ms"], r["artifacts"], r["model_calls"]
    print(f"Studio load — {r['jobs']} concurrent image jobs, time scale {r['time_scale']} "
          f"(simulated 3–6 s × scale each), size {r['size']}, watcher {'on' if r['watch'] else 'off'} ({machine()})")
    print(f"  {r['fs']}: {r['where']}")
    print()

    def ms(s: dict[str, float]) -> str:
        return f"p50 {s['p50']:,.1f} ms, p95 {s['p95']:,.1f} ms, max {s['max']:,.1f} ms (n={s['n']})"

    print(f"run: {r['wall_s']:.1f} s from send() to quiescent, {r['cpu_s']:.1f} s CPU "
          f"({100 * r['cpu_s'] / r['wall_s']:.0f} % of one core); {r['jobs']} orders placed in "
          f"{r['submit_span_s']:.2f} s" if r["submit_span_s"] is not None else "run: no orders placed")
    print(f"events handled: {ev['handled']} of {ev['expected']} in {ev['span_s']:.2f} s = {ev['per_s']:,.0f} events/s")
    print(f"  emit→handled, progress:   {ms(ev['progress_ms'])}")
    print(f"  emit→handled, completion: {ms(ev['completion_ms'])}  (fetch + artifact write + record)")
    print(f"model calls while jobs were in progress: {mc['during_progress']} (total in the run: {mc['total']})")
    heap = (f", Python heap peak {mem['python_heap_peak'] / 1024:,.1f} MiB"
            if mem["python_heap_peak"] is not None else "")
    print(f"memory: peak RSS {mem['peak_rss'] / 1024:,.1f} MiB (RSS {mem['rss_before'] / 1024:,.1f} MiB after start, "
          f"{mem['rss_after'] / 1024:,.1f} MiB at the end; +{(mem['peak_rss'] - mem['rss_before']) / 1024:,.1f} MiB "
          f"over the start){heap}")
    print(f"completion event → card update: {ms(card)}")
    if art["on_disk"]:
        print(f"artifacts on disk: {art['on_disk']}; first {art['first_after_send_s']:.2f} s, last "
              f"{art['last_after_send_s']:.2f} s after send() (first {art['first_after_first_order_s']:.2f} s, last "
              f"{art['last_after_first_order_s']:.2f} s after the first order)")
    if r["turn_resumed_after_last_card_ms"] is not None:
        print(f"turn completed {r['turn_resumed_after_last_card_ms']:,.0f} ms after the last card update "
              "(wake-up, N results collected, one model call)")
    print("notices seen by the subscriber: " + ", ".join(f"{k} {v}" for k, v in sorted(r["notices"].items())))
    if r["problems"]:
        print("PROBLEMS: " + "; ".join(r["problems"]))
    print()
    ok = mc["during_progress"] == GOAL_MODEL_CALLS
    print(f"goal: {GOAL_MODEL_CALLS} model calls while jobs are in progress: {'met' if ok else 'MISSED'} "
          f"({mc['during_progress']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200, help="concurrent image jobs in one step (default 200)")
    parser.add_argument("--time-scale", type=float, default=2.0,
                        help="LOMO_TIME_SCALE: an image takes 3–6 s × this (default 2: a 15–20 s run)")
    parser.add_argument("--size", default=None, help="image size argument, e.g. 256x256 (default: the tool's 768x768)")
    parser.add_argument("--fs", default="disk", choices=("disk", "tmpfs"), help="where workspace and DB live")
    parser.add_argument("--no-watch", action="store_true", help="run the runtime without the workspace watcher")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace the Python heap peak (slower)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for quiescence")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.time_scale <= 0:
        parser.error("--jobs must be at least 1 and --time-scale positive")

    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return report("Studio load", lambda: asyncio.run(run(args)), _print, args.json)

if __name__ == "__main__":
    sys.exit(main())
