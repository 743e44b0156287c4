"""What validating a step's result costs (DESIGN J4): milliseconds to inspect one file of each kind.

Renders one file of each kind the embedded studio makes (PNG, MP4, GIF, WAV, glTF) plus a Markdown file, then
times `tasks.verify.inspect` on each (median of --runs, after one warm-up that pays the imports). Prints
figures; always exits 0 (2 on bad usage).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lomo_tui.studio.render import render_audio, render_clip, render_image, render_mesh  # noqa: E402
from lomo_tui.tasks import verify  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed inspections per file (default 20)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    root = Path(tempfile.mkdtemp(prefix="lomo-verify-"))
    files = {
        "poster.png": render_image("a jazz poster", seed=1, size=(768, 768), inputs=[]),
        "clip.mp4": render_clip("rain", seed=1, seconds=5.0, size=(480, 270), inputs=[], fmt="mp4"),
        "clip.gif": render_clip("rain", seed=1, seconds=5.0, size=(480, 270), inputs=[], fmt="gif"),
        "rain.wav": render_audio("rain", seed=1, seconds=3.0),
        "vase.gltf": render_mesh("vase", seed=1),
        "storyboard.md": ("# Storyboard\n\n" + "## Shot\nwide, dusk\n\n" * 40).encode(),
    }
    print(f"{'file':<15} {'bytes':>9} {'kind':<9} {'ms (median)':>12}")
    for name, data in files.items():
        (root / name).write_bytes(data)
        facts = verify.inspect(root, name)  # warm-up: imports, codecs
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            verify.inspect(root, name)
            times.append((time.perf_counter() - start) * 1000)
        print(f"{name:<15} {len(data):>9,} {facts.kind or facts.error:<9} {statistics.median(times):>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
