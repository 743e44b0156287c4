"""Small helpers shared by the benchmarks (not part of the package; standard library only)."""
from __future__ import annotations

import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

TMPFS_ROOT = Path("/dev/shm")


def mount_of(path: Path) -> tuple[str, str, str]:
    """(mount point, fs type, device) of the mount that holds PATH, from /proc/mounts."""
    path = Path(path).resolve()
    best = ("/", "?", "?")
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                device, point, fstype = parts[0], parts[1].replace("\\040", " "), parts[2]
                if (str(path) == point or str(path).startswith(point.rstrip("/") + "/")) and len(point) >= len(best[0]):
                    best = (point, fstype, device)
    except OSError:
        pass
    return best


def describe(path: Path) -> str:
    point, fstype, device = mount_of(path)
    return f"{path} ({fstype} on {device}, mounted at {point})"


def disk_root() -> Path:
    """A real-disk folder for the 'disk' runs: $LOMO_BENCH_DISK, else /tmp if it is not tmpfs, else /work, else ~."""
    env = os.environ.get("LOMO_BENCH_DISK")
    candidates = [Path(env)] if env else [Path("/tmp"), Path("/work"), Path.home()]
    for c in candidates:
        if c.is_dir() and os.access(c, os.W_OK) and mount_of(c)[1] not in ("tmpfs", "ramfs"):
            return c
    return candidates[0]


def fs_root(kind: str) -> Path:
    if kind == "tmpfs":
        if not TMPFS_ROOT.is_dir():
            raise RuntimeError("/dev/shm is not available on this machine")
        return TMPFS_ROOT
    return disk_root()


def creator_env(drop_prefixes: tuple[str, ...] = ("LOMO_",)) -> dict[str, str]:
    """This process's environment as a creator's shell would have it: without Lomo's variables and without
    PYTHONDONTWRITEBYTECODE (some sandboxes set it; a creator's Python writes its bytecode cache on the
    first run, so timing every run with a fresh compile of each module would measure the sandbox)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(drop_prefixes) and k != "PYTHONDONTWRITEBYTECODE"}


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):,.0f}–{max(values):,.0f}"


def machine() -> str:
    return (f"Python {platform.python_version()} on {platform.system()} {platform.release()}, "
            f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}")


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    def fmt(r: list[str]) -> str:
        last = len(r) - 1
        return "  ".join(str(c).rjust(w) if 0 < i < last else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip()
    line = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(header), line] + [fmt(r) for r in rows])


def eprint(*args: object) -> None:
    print(*args, file=sys.stderr, flush=True)


def report(title: str, work: Callable[[], dict[str, Any]], printer: Callable[[dict[str, Any]], None],
           as_json: bool) -> int:
    """Run WORK, print its figures (or one JSON document) with the machine's load; a benchmark never fails."""
    import json
    import traceback

    load_before = os.getloadavg()
    try:
        result = work()
    except Exception as exc:  # noqa: BLE001 — a benchmark reports, it does not fail
        traceback.print_exc()
        result = {"error": f"{type(exc).__name__}: {exc}"}
    load = (load_before, os.getloadavg())
    if as_json:
        print(json.dumps({"machine": machine(), "loadavg_1m": [load[0][0], load[1][0]], **result}, indent=2,
                         default=str))
        return 0
    if "error" in result:
        print(f"{title}: FAILED — {result['error']}")
        return 0
    printer(result)
    print(f"load average (1 min) before/after: {load[0][0]:.2f} / {load[1][0]:.2f} on {os.cpu_count()} CPUs"
          + ("  — the machine was busy: latencies are inflated"
             if max(load[0][0], load[1][0]) > 0.75 * (os.cpu_count() or 1) else ""))
    return 0
