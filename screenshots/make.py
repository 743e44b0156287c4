"""Draw the screenshots in this folder from the same scenes the snapshot tests compare.

    python screenshots/make.py            # every scene
    python screenshots/make.py main-busy  # some of them

Each scene (tests/tui_apps/states.py: SCENES) seeds a fresh database in a temporary folder through the
real runtime API, opens the app headless at the scene's size, runs its keys, and saves an SVG named
after the scene. The frames are deterministic: workers off, clocks frozen, fixed ids.
"""
from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from tui_apps.states import SCENES, Scene  # noqa: E402


async def draw(scene: Scene, tmp: Path) -> Path:
    app = scene.app(tmp)
    async with app.run_test(size=scene.size) as pilot:
        await scene.before(pilot)
        svg = app.export_screenshot(title=f"Lomo — {scene.name}")
    out = HERE / f"{scene.name}.svg"
    out.write_text(svg, encoding="utf-8")
    return out


def main(names: list[str]) -> int:
    chosen = [s for s in SCENES if not names or s.name in names]
    unknown = set(names) - {s.name for s in SCENES}
    if unknown:
        print(f"unknown scene(s): {', '.join(sorted(unknown))}; scenes: {', '.join(s.name for s in SCENES)}")
        return 2
    for scene in chosen:
        with tempfile.TemporaryDirectory(prefix="lomo-shot-") as tmp:
            print(asyncio.run(draw(scene, Path(tmp))).relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
