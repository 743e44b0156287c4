"""TUI start-up and responsiveness: time to first paint, keystroke-to-echo latency, idle RSS and CPU.

Each run starts `lomo` (the TUI) as a fresh process on a pseudo-terminal of 120×36 that this script
plays the terminal for: it reads everything the app writes and answers the two questions a real
terminal answers at start-up (device attributes, so textual-image's graphics probe ends at once, and
the cell size). Temporary workspace, database and XDG folders: nothing of the user's is read.

- first paint: from spawning the process to the first frame on the terminal (the composer's "Main").
- runtime ready: until the header shows the state read from the database (its "today" figure).
- keystroke→echo: one character written to the terminal until it comes back in the app's output
  (median and worst of --keys keystrokes, typed 100 ms apart once the app is idle).
- idle: RSS of the process, and its CPU use over --idle seconds of doing nothing, measured once it
  has settled (with a remote model, after its client library finished loading in the background).

The first run creates the database (migrations) and is reported apart; the timed runs start on an
up-to-date database, as a creator's second launch does. `--model` adds a remote model (default
openai/gpt-4o-mini; no request is made: the client library only loads in the background).

    python bench/tui_startup.py                 # 5 runs, lomo/local and a remote model
    python bench/tui_startup.py --runs 9 --json
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import creator_env, machine, median, table  # noqa: E402

GOAL_PAINT_S = 0.6
COLS, ROWS, CELL_W, CELL_H = 120, 36, 10, 20
DA1 = (b"\x1b[c", b"\x1b[0c")
ECHO = "ж"  # never part of an escape sequence


class Terminal:
    """A pseudo-terminal that records what the app writes (with times) and answers start-up queries."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, COLS * CELL_W, ROWS * CELL_H))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.output = bytearray()
        self.chunks: list[tuple[float, int]] = []  # (time, offset after the chunk)

    def pump(self, timeout: float) -> bool:
        """Read for up to TIMEOUT seconds (returns after the first chunk). False when the app has gone."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return self.proc.poll() is None
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        if not data:
            return False
        tail = bytes(self.output[-16:]) + data
        self.output += data
        self.chunks.append((time.perf_counter(), len(self.output)))
        if any(q in tail for q in DA1):
            os.write(self.master, b"\x1b[?62;22c")  # a VT220-class terminal without Sixel
        if b"\x1b[16t" in tail:
            os.write(self.master, f"\x1b[6;{CELL_H};{CELL_W}t".encode())
        return True

    def wait_for(self, needle: bytes, timeout: float, start: int = 0) -> float | None:
        """Seconds since spawn when NEEDLE first appeared after offset START, or None."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            found = self.output.find(needle, start)
            if found >= 0:
                return next(t for t, end in self.chunks if end > found) - self.started
            if not self.pump(min(0.05, deadline - time.perf_counter())):
                return None
        return None

    def drain(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self.pump(deadline - time.perf_counter())

    def type(self, text: str) -> float | None:
        """Write TEXT; seconds until it shows in the output."""
        start = len(self.output)
        sent = time.perf_counter()
        os.write(self.master, text.encode())
        while time.perf_counter() - sent < 5:
            if self.output.find(text.encode(), start) >= 0:
                return time.perf_counter() - sent
            if not self.pump(0.05):
                return None
        return None

    def stats(self) -> dict[str, float]:
        pid = self.proc.pid
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            rss = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return {"rss_mb": rss / 1024, "cpu_s": (int(fields[11]) + int(fields[12])) / ticks}

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.write(self.master, b"\x11")  # Ctrl+Q
            except OSError:
                pass
            deadline = time.perf_counter() + 10
            while self.proc.poll() is None and time.perf_counter() < deadline:
                self.pump(0.05)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def settle(term: Terminal, quiet_pct: float = 5.0, limit: float = 30.0) -> float:
    """Wait until the app is quiet (a remote model's client library loads in the background first)."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        before = term.stats()["cpu_s"]
        term.drain(0.5)
        if 100 * (term.stats()["cpu_s"] - before) / 0.5 < quiet_pct:
            break
    return time.perf_counter() - term.started


def lomo_command() -> list[str]:
    return [sys.executable, "-m", "lomo_tui"]


def run_once(home: Path, model: str, keys: int, idle: float) -> dict[str, Any]:
    env = creator_env(("LOMO_", "XDG_", "TMUX"))
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_STATE_HOME=str(home / "state"), XDG_CACHE_HOME=str(home / "cache"), TERM="xterm-256color",
               COLORTERM="truecolor", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    command = [*lomo_command(), "--workspace", str(home / "ws"), "--db", f"sqlite+aiosqlite:///{home / 'lomo.db'}",
               "--model", model]
    term = Terminal(command, env)
    out: dict[str, Any] = {"model": model}
    try:
        out["first_paint_s"] = term.wait_for(b"Main", 30)
        out["runtime_ready_s"] = term.wait_for(b"today", 30)
        term.drain(1.0)
        latencies = []
        for _ in range(keys):
            latency = term.type(ECHO)
            if latency is not None:
                latencies.append(latency)
            term.drain(0.1)
        out["echo_ms_median"] = median(latencies) * 1000 if latencies else None
        out["echo_ms_max"] = max(latencies) * 1000 if latencies else None
        out["settled_s"] = settle(term)
        before = term.stats()
        term.drain(idle)
        after = term.stats()
        out["idle_rss_mb"] = after["rss_mb"]
        out["idle_cpu_pct"] = 100 * (after["cpu_s"] - before["cpu_s"]) / idle
    finally:
        term.close()
    return out


def fmt(value: Any, unit: str = "", scale: float = 1.0, digits: int = 0) -> str:
    return "—" if value is None else f"{value * scale:,.{digits}f}{unit}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=20, help="keystrokes timed per run")
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of idle CPU measured per run")
    parser.add_argument("--model", action="append", default=None,
                        help="models to time (repeatable; default lomo/local and openai/gpt-4o-mini)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    models = args.model or ["lomo/local", "openai/gpt-4o-mini"]
    load_before = os.getloadavg()[0]
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="lomo-bench-tui-") as tmp:
        home = Path(tmp)
        first = run_once(home, models[0], keys=0, idle=0.5)
        for model in models:
            results[model] = [run_once(home, model, args.keys, args.idle) for _ in range(args.runs)]
    load = f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    if args.json:
        print(json.dumps({"machine": machine(), "load": load, "first_run": first, "runs": results}, indent=2))
        return 0
    print(f"lomo TUI start-up, {args.runs} runs per model, {COLS}×{ROWS} pty — {machine()}; {load}")
    print(f"first run (creates the database): first paint {fmt(first['first_paint_s'], ' ms', 1000)}, "
          f"runtime ready {fmt(first['runtime_ready_s'], ' ms', 1000)}\n")
    rows = []
    for model, runs in results.items():
        def med(key: str, runs: list[dict[str, Any]] = runs) -> float | None:
            values = [r[key] for r in runs if r.get(key) is not None]
            return median(values) if values else None

        worst_echo = max((r["echo_ms_max"] for r in runs if r.get("echo_ms_max") is not None), default=None)
        rows.append([model, fmt(med("first_paint_s"), " ms", 1000), fmt(med("runtime_ready_s"), " ms", 1000),
                     fmt(med("echo_ms_median"), " ms", digits=1), fmt(worst_echo, " ms", digits=1),
                     fmt(med("idle_rss_mb"), " MB", digits=0), fmt(med("idle_cpu_pct"), " %", digits=1)])
    print(table(rows, ["model", "first paint", "runtime ready", "key→echo", "worst echo", "idle RSS",
                       "idle CPU"]))
    paint = [r["first_paint_s"] for runs in results.values() for r in runs if r.get("first_paint_s") is not None]
    if paint:
        verdict = "meets" if max(paint) < GOAL_PAINT_S else "misses"
        print(f"\nfirst paint: median {median(paint) * 1000:,.0f} ms, worst {max(paint) * 1000:,.0f} ms — "
              f"{verdict} the goal of < {GOAL_PAINT_S * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
