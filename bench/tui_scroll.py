"""TUI history scrolling: 10,000 messages in the stream, time per scroll key and to first show them.

Drives the app headless (Textual's pilot) on the "history" state the TUI tests use (tests/tui_apps):
boot until the stream shows, then --keys presses of page-up and one end, with animation off so the
figure is the work, not the smooth-scroll. The goal is < 150 ms per key on a quiet 2-core machine.

    python bench/tui_scroll.py            # 3 runs
    python bench/tui_scroll.py --runs 5 --json
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT / "tests"), str(ROOT)]
from _common import machine, median, spread, table  # noqa: E402

GOAL_MS = 150.0


async def one_run(keys: int) -> tuple[float, float]:
    from lomo_tui.tui.widgets.stream import StreamView
    from tui_apps.states import make_app, until_ready

    with tempfile.TemporaryDirectory(prefix="lomo-scroll-") as root:
        app = make_app(Path(root), "history")
        started = time.monotonic()
        async with app.run_test(size=(120, 36)) as pilot:
            await until_ready(pilot)
            boot = time.monotonic() - started
            app.screen.query_one(StreamView).focus()
            app.animation_level = "none"
            t0 = time.monotonic()
            for _ in range(keys):
                await pilot.press("pageup")
            await pilot.press("end")
            await pilot.pause()
            per_key = (time.monotonic() - t0) / (keys + 1)
    return boot, per_key * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [asyncio.run(one_run(args.keys)) for _ in range(args.runs)]
    boots, keys = [r[0] for r in results], [r[1] for r in results]
    figures = {"machine": machine(), "runs": args.runs, "boot_s": median(boots), "ms_per_key": median(keys),
               "goal_ms_per_key": GOAL_MS, "ratio_to_goal": median(keys) / GOAL_MS}
    if args.json:
        print(json.dumps(figures))
        return
    print(f"TUI scroll, 10,000 messages — {figures['machine']}")
    print(table([["show 10,000 messages", f"{median(boots):.2f} s", f"{min(boots):.2f}–{max(boots):.2f} s"],
                 ["per scroll key", f"{median(keys):.0f} ms", spread(keys) + " ms"]], ["", "median", "spread"]))
    print(f"per key vs the {GOAL_MS:.0f} ms goal: {median(keys) / GOAL_MS:.2f}×")


if __name__ == "__main__":
    main()
