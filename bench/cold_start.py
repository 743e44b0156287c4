"""Cold start of the headless path: wall time of `lomo --run-once "hello" --json --model lomo/local`.

Each run is a fresh process on a temporary workspace, database and XDG folders (nothing from the user's
own config or data is read). The database is created by a first, separately reported run (it applies
the migrations); the timed runs then start on an up-to-date database, as a creator's second launch does.
The figure is the median over --runs runs, against the goal of < 1.0 s.

It also proves that the offline path imports neither litellm nor textual: a subprocess runs the same
CLI entry point in-process, then lists every loaded module whose top-level package is litellm or textual
(the list must be empty), and `python -X importtime` shows where the import time goes.

    python bench/cold_start.py                # 7 runs
    python bench/cold_start.py --runs 11 --json
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import creator_env, describe, machine, median, spread, table

GOAL_S = 1.0
FORBIDDEN = ("litellm", "textual")

# Runs the CLI's real entry point in this process, then reports what got imported.
PROBE = r"""
import json, sys
sys.argv = ["lomo"] + json.loads(sys.argv[1])
code = 0
try:
    from lomo_tui.cli.main import main
    main()
except SystemExit as exc:
    code = exc.code
mods = sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)
sys.stderr.write("\nLOMO-PROBE " + json.dumps({"code": code, "forbidden": mods, "modules": len(sys.modules)}) + "\n")
""".replace("FORBIDDEN", repr(FORBIDDEN))


def lomo_command() -> list[str]:
    exe = shutil.which("lomo")
    return [exe] if exe else [sys.executable, "-m", "lomo_tui"]


class Sandbox:
    """A temporary home for one benchmark: workspace, database, XDG folders, clean environment."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lomo-cold-"))
        self.env = creator_env()
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            path = self.root / name.lower()
            path.mkdir()
            self.env[name] = str(path)
        self.env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # harmless if litellm stays unimported, as it should
        self.args = ["--workspace", str(self.root / "workspace"), "--db",
                     f"sqlite+aiosqlite:///{self.root / 'lomo.db'}", "--model", "lomo/local",
                     "--run-once", "hello", "--json"]

    def run(self, argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=120, check=False)
        return time.perf_counter() - t0, proc

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def check_report(proc: subprocess.CompletedProcess[str]) -> str:
    """'' if the run printed a quiescent JSON report with a reply, else what went wrong."""
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return f"stdout is not JSON: {proc.stdout[:200]!r}"
    if not report.get("quiescent"):
        return "report says not quiescent"
    replies = [r for t in report.get("tasks", []) for r in t.get("replies", [])]
    if not replies:
        return "no reply in the report"
    return ""


def import_breakdown(stderr: str, top: int = 10) -> tuple[list[tuple[str, float]], float]:
    """Import self-time summed per package (lomo_tui split by subpackage), from `-X importtime` (s)."""
    per: dict[str, float] = {}
    total = 0.0
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        self_us, name = int(parts[0]), parts[2].strip()
        bits = name.split(".")
        key = ".".join(bits[:2]) if bits[0] == "lomo_tui" and len(bits) > 1 else bits[0]
        per[key] = per.get(key, 0.0) + self_us / 1e6
        total += self_us / 1e6
    return sorted(per.items(), key=lambda kv: -kv[1])[:top], total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed warm-database runs (default 7, at least 5 "
                                                            "recommended)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    cmd = lomo_command()
    out: dict[str, Any] = {"machine": machine(), "command": cmd + ["…"], "goal_s": GOAL_S}
    box = Sandbox()
    try:
        out["where"] = describe(box.root)
        # Floor: the interpreter alone, and the interpreter plus the CLI module (no run).
        floors = []
        for _ in range(3):
            floors.append(box.run([sys.executable, "-c", "pass"])[0])
        out["python_startup_s"] = median(floors)

        first, proc = box.run(cmd + box.args)
        out["first_run_s"] = first
        problem = check_report(proc)
        if problem:
            out["error"] = f"first run failed: {problem}"
        times = []
        for _ in range(args.runs if not problem else 0):
            dt, proc = box.run(cmd + box.args)
            problem = check_report(proc)
            if problem:
                out["error"] = f"a timed run failed: {problem}"
                break
            times.append(dt)
        out["runs_s"] = times
        out["median_s"] = median(times) if times else None
        out["goal_met"] = bool(times) and median(times) < GOAL_S

        # Proof: the same entry point in-process, then the loaded-module list.
        _, proc = box.run([sys.executable, "-c", PROBE, json.dumps(box.args)])
        probe_line = [ln for ln in proc.stderr.splitlines() if ln.startswith("LOMO-PROBE ")]
        if probe_line:
            probe = json.loads(probe_line[-1][len("LOMO-PROBE "):])
            out["probe"] = probe
            out["no_forbidden_imports"] = probe["code"] in (0, None) and not probe["forbidden"]
        else:
            out["probe"] = {"error": (proc.stderr or proc.stdout).strip()[-300:]}
            out["no_forbidden_imports"] = False

        # Where the import time goes (and a second proof: no litellm/textual line in -X importtime).
        _, proc = box.run([sys.executable, "-X", "importtime", "-c", PROBE, json.dumps(box.args)])
        hits = sorted({ln.split("|")[-1].strip() for ln in proc.stderr.splitlines()
                       if ln.startswith("import time:") and ln.split("|")[-1].strip().split(".")[0] in FORBIDDEN})
        breakdown, total = import_breakdown(proc.stderr)
        out["importtime"] = {"forbidden": hits, "total_s": total, "top": breakdown}
    finally:
        box.close()

    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    _print(out)
    return 0


def _print(out: dict[str, Any]) -> None:
    print(f"Cold start of `{' '.join(out['command'])}` ({out['machine']})")
    print(f"  sandbox: {out.get('where', '?')}")
    if "error" in out:
        print(f"  ERROR: {out['error']}")
    rows = [["python -c pass (floor)", f"{out['python_startup_s'] * 1000:,.0f} ms", ""],
            ["first run (creates the DB, migrations)", f"{out['first_run_s'] * 1000:,.0f} ms", ""]]
    if out.get("runs_s"):
        ms = [t * 1000 for t in out["runs_s"]]
        rows.append([f"warm DB, median of {len(ms)}", f"{out['median_s'] * 1000:,.0f} ms", f"range {spread(ms)} ms"])
    print(table(rows, ["run", "wall", ""]))
    if out.get("median_s") is not None:
        print(f"goal < {GOAL_S:.1f} s: {'met' if out['goal_met'] else 'MISSED'} ({out['median_s']:.3f} s)")
    probe = out.get("probe", {})
    if "forbidden" in probe:
        if out["no_forbidden_imports"]:
            verdict = "neither litellm nor textual was imported"
        elif probe["forbidden"]:
            verdict = f"IMPORTED: {', '.join(probe['forbidden'][:10])}"
        else:
            verdict = f"the run exited with code {probe['code']}, so the check proves nothing"
        print(f"import check (in-process run of the CLI, {probe['modules']} modules loaded): {verdict}")
    else:
        print(f"import check FAILED to run: {probe.get('error')}")
    imp = out.get("importtime", {})
    if imp:
        print(f"-X importtime: {imp['total_s'] * 1000:,.0f} ms of imports; litellm/textual lines: "
              f"{', '.join(imp['forbidden']) or 'none'}")
        print("  import self-time by package: " +
              ", ".join(f"{name} {sec * 1000:,.0f} ms" for name, sec in imp["top"]))


if __name__ == "__main__":
    sys.exit(main())
