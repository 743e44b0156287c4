"""Snapshots of every screen (K5): main empty and busy (cards in every state), gate inbox, workspace tree
with a changed file, task view, 80×24, each theme, help. The scenes live in `tui_apps.states.SCENES`
(seeded through the real ledger in a temp dir, workers off, clocks frozen); `screenshots/make.py`
draws the same scenes into `screenshots/`.

After an intended change: `pytest tests/test_tui_snapshots.py --snapshot-update` and
`python screenshots/make.py`.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from pytest_textual_snapshot import SVGImageExtension

from tui_apps.states import SCENES, Scene

# Keep the SVGs in tests/snapshots/ (syrupy's default is tests/__snapshots__/).
SVGImageExtension.dirname = classmethod(  # type: ignore[method-assign]
    lambda cls, *, test_location: str(Path(test_location.filepath).parent / "snapshots"))


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_screen(snap_compare, tmp_path, scene: Scene):
    assert snap_compare(scene.app(tmp_path), terminal_size=scene.size, run_before=scene.before)
