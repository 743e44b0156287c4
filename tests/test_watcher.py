"""The workspace watcher on a real folder with a real watchfiles watcher (no mocks).

Synchronisation: after the action under test, each test writes a marker file and collects
batches until the marker's change arrives (with a deadline). Events are delivered in order, so
everything the action caused has arrived by then, and anything extra would show.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lomo_tui.workspace.watcher import FileChange, WorkspaceWatcher, scan_tree

DEADLINE_S = 5.0
PROBE = "_probe.txt"
MARKER_PREFIX = "_marker"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Recorder:
    """Collects the watcher's batches and waits for marker files to show up in them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.batches: asyncio.Queue[list[FileChange]] = asyncio.Queue()
        self._markers = 0

    async def pump(self, watcher: WorkspaceWatcher, stop: asyncio.Event) -> None:
        async for batch in watcher.changes(stop):
            self.batches.put_nowait(batch)

    async def _collect_until(self, rel: str) -> list[FileChange]:
        seen: list[FileChange] = []
        while not any(c.rel == rel for c in seen):
            seen += await self.batches.get()
        return seen

    async def wait_ready(self) -> None:
        """Write a probe until the watcher reports it: the OS watch is then in place."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE_S
        for attempt in range(1_000_000):
            await asyncio.sleep(0)  # let the pump start; the probe, not this, confirms it
            (self.root / PROBE).write_text(str(attempt))
            try:
                await asyncio.wait_for(self._collect_until(PROBE), 0.2)
                return
            except TimeoutError:
                if loop.time() > deadline:
                    raise

    async def changes(self) -> list[FileChange]:
        """Every change reported before a fresh marker file, leaving out probes and markers."""
        self._markers += 1
        marker = f"{MARKER_PREFIX}{self._markers}.txt"
        (self.root / marker).write_text(marker)
        seen = await asyncio.wait_for(self._collect_until(marker), DEADLINE_S)
        return [c for c in seen if c.rel != PROBE and not c.rel.startswith(MARKER_PREFIX)]


@asynccontextmanager
async def watching(root: Path, **options: Any) -> AsyncIterator[Recorder]:
    watcher = WorkspaceWatcher(root, **options)
    watcher.initial_scan()
    recorder = Recorder(watcher.root)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.pump(watcher, stop))
    try:
        await recorder.wait_ready()
        yield recorder
    finally:
        stop.set()
        await asyncio.wait_for(task, DEADLINE_S)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "scene.md").write_text("v1")
    return workspace


async def test_vim_style_save_is_one_modification_of_the_original(root: Path) -> None:
    async with watching(root) as watch:
        swap = root / ".scene.md.swp"
        swap.write_bytes(b"vim swap")
        temp = root / "4913"
        temp.write_text("v2")
        os.replace(temp, root / "scene.md")
        swap.unlink()
        assert await watch.changes() == [FileChange("scene.md", "modified", hash=sha("v2"))]


async def test_save_through_a_backup_rename_is_one_modification(root: Path) -> None:
    async with watching(root) as watch:
        os.rename(root / "scene.md", root / "scene.md~")
        (root / "scene.md").write_text("v2")
        (root / "scene.md~").unlink()
        assert await watch.changes() == [FileChange("scene.md", "modified", hash=sha("v2"))]


async def test_in_place_save(root: Path) -> None:
    async with watching(root) as watch:
        (root / "scene.md").write_text("v2")
        assert await watch.changes() == [FileChange("scene.md", "modified", hash=sha("v2"))]


async def test_burst_of_writes_is_one_change_with_the_final_content(root: Path) -> None:
    async with watching(root) as watch:
        for i in range(20):
            (root / "scene.md").write_text(f"draft {i}")
        assert await watch.changes() == [FileChange("scene.md", "modified", hash=sha("draft 19"))]


async def test_touch_without_new_content_is_not_a_change(root: Path) -> None:
    async with watching(root) as watch:
        (root / "scene.md").write_text("v1")
        os.utime(root / "scene.md")
        assert await watch.changes() == []


async def test_new_file_written_twice_is_one_addition(root: Path) -> None:
    async with watching(root) as watch:
        (root / "shot.md").write_text("first")
        (root / "shot.md").write_text("second")
        assert await watch.changes() == [FileChange("shot.md", "added", hash=sha("second"))]


async def test_delete(root: Path) -> None:
    async with watching(root) as watch:
        (root / "scene.md").unlink()
        assert await watch.changes() == [FileChange("scene.md", "deleted")]


async def test_rename_is_a_move(root: Path) -> None:
    async with watching(root) as watch:
        os.rename(root / "scene.md", root / "opening.md")
        assert await watch.changes() == [
            FileChange("opening.md", "moved", old_rel="scene.md", hash=sha("v1"))
        ]


async def test_renaming_a_folder_moves_every_file_in_it(root: Path) -> None:
    (root / "shots").mkdir()
    (root / "shots" / "a.md").write_text("a")
    (root / "shots" / "b.md").write_text("b")
    async with watching(root) as watch:
        os.rename(root / "shots", root / "takes")
        assert await watch.changes() == [
            FileChange("takes/a.md", "moved", old_rel="shots/a.md", hash=sha("a")),
            FileChange("takes/b.md", "moved", old_rel="shots/b.md", hash=sha("b")),
        ]


async def test_files_in_a_new_folder_are_added(root: Path) -> None:
    async with watching(root) as watch:
        (root / "cuts" / "act1").mkdir(parents=True)
        (root / "cuts" / "act1" / "edl.txt").write_text("edl")
        assert await watch.changes() == [FileChange("cuts/act1/edl.txt", "added", hash=sha("edl"))]


async def test_state_git_and_scratch_files_are_ignored(root: Path) -> None:
    async with watching(root) as watch:
        for folder in (".lomo", ".git", ".git/objects"):
            (root / folder).mkdir()
        (root / ".lomo" / "lomo.db").write_bytes(b"sqlite")
        (root / ".git" / "objects" / "ab").write_bytes(b"blob")
        (root / ".scene.md.swp").write_bytes(b"swap")
        (root / "scene.md~").write_text("backup")
        (root / "export.tmp").write_text("partial")
        assert await watch.changes() == []


async def test_polling_sees_two_saves_within_one_second(root: Path) -> None:
    async with watching(root, force_polling=True, poll_delay_ms=50) as watch:
        (root / "scene.md").write_text("v2")
        assert await watch.changes() == [FileChange("scene.md", "modified", hash=sha("v2"))]
        (root / "scene.md").write_text("v3")
        assert await watch.changes() == [FileChange("scene.md", "modified", hash=sha("v3"))]
        os.rename(root / "scene.md", root / "opening.md")
        assert await watch.changes() == [
            FileChange("opening.md", "moved", old_rel="scene.md", hash=sha("v3"))
        ]
        (root / ".lomo").mkdir()
        (root / ".lomo" / "lomo.db").write_bytes(b"db")
        (root / "opening.md").unlink()
        assert await watch.changes() == [FileChange("opening.md", "deleted")]


def test_initial_scan_skips_ignored_files_and_symlinks(root: Path, tmp_path: Path) -> None:
    (root / "shots").mkdir()
    (root / "shots" / "a.png").write_bytes(b"\x89PNG")
    (root / ".lomo").mkdir()
    (root / ".lomo" / "lomo.db").write_bytes(b"db")
    (root / ".scene.md.swp").write_bytes(b"swap")
    (root / "alias.md").symlink_to(root / "scene.md")
    (root / "outside").symlink_to(tmp_path, target_is_directory=True)
    hashes = WorkspaceWatcher(root).initial_scan()
    assert hashes == {"scene.md": sha("v1"), "shots/a.png": hashlib.sha256(b"\x89PNG").hexdigest()}


def test_rescan_reuses_known_hashes_when_size_and_mtime_match(root: Path) -> None:
    an_hour_ago = time.time() - 3600
    os.utime(root / "scene.md", (an_hour_ago, an_hour_ago))
    remembered = {rel: replace(s, hash="remembered") for rel, s in scan_tree(root).items()}
    assert WorkspaceWatcher(root).initial_scan(remembered) == {"scene.md": "remembered"}
    (root / "scene.md").write_text("v2, longer")
    assert WorkspaceWatcher(root).initial_scan(remembered) == {"scene.md": sha("v2, longer")}


def test_rescan_rehashes_a_recently_modified_file_even_if_its_stamp_matches(root: Path) -> None:
    # Two same-size writes within the file system's timestamp granularity look identical.
    remembered = {rel: replace(s, hash="stale") for rel, s in scan_tree(root).items()}
    assert WorkspaceWatcher(root).initial_scan(remembered) == {"scene.md": sha("v1")}


async def test_a_file_whose_name_is_not_utf8_is_not_reported_and_the_rest_still_is(root: Path) -> None:
    bad = os.path.join(os.fsencode(root), b"caf\xe9.md")
    with open(bad, "wb") as fh:
        fh.write(b"before")
    assert set(scan_tree(root)) == {"scene.md"}
    async with watching(root) as rec:
        with open(bad, "wb") as fh:
            fh.write(b"after")
        (root / "scene.md").write_text("v2")
        assert await rec.changes() == [FileChange("scene.md", "modified", hash=sha("v2"))]
