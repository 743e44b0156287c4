"""Atomic writes, hashing, kinds, text sniffing and exact-snippet edits on real files."""

from __future__ import annotations

import hashlib
import os
import stat
import tracemalloc
from pathlib import Path

import pytest
from PIL import Image

from lomo_tui.workspace.errors import (
    BinaryFile,
    EditError,
    EditsOverlap,
    FileTooLarge,
    NoSuchFile,
    NotAFile,
    SnippetNotFound,
    SnippetNotUnique,
    WorkspaceError,
)
from lomo_tui.workspace.files import (
    apply_edits,
    atomic_write,
    content_hash,
    find_unique,
    is_text,
    kind_for,
    read_text_limited,
)


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "shots" / "one.md"
    atomic_write(target, b"first")
    atomic_write(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["one.md"]


def test_atomic_write_keeps_the_files_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_bytes(b"echo one\n")
    target.chmod(0o751)
    atomic_write(target, b"echo two\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.read_bytes() == b"echo two\n"


def test_atomic_write_new_file_follows_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.md", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o640


def test_atomic_write_failure_leaves_original_and_no_temp(tmp_path: Path) -> None:
    # Renaming a file over a folder fails even for root.
    (tmp_path / "scene.md").mkdir()
    (tmp_path / "keep.md").write_text("untouched")
    with pytest.raises(NotAFile, match=r"scene\.md' is a folder"):
        atomic_write(tmp_path / "scene.md", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.md", "scene.md"]
    assert (tmp_path / "scene.md").is_dir()


def test_atomic_write_under_a_file_explains_the_problem(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("a file, not a folder")
    with pytest.raises(WorkspaceError, match="is a file, not a folder; choose another path"):
        atomic_write(tmp_path / "notes" / "idea.md", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]


def test_large_file_is_hashed_in_chunks(tmp_path: Path) -> None:
    big = tmp_path / "take.mov"
    block = os.urandom(1 << 20)
    expected = hashlib.sha256()
    with open(big, "wb") as f:
        for _ in range(50):
            f.write(block)
            expected.update(block)
    del block
    tracemalloc.start()
    try:
        digest = content_hash(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest == expected.hexdigest()
    assert peak < 2 * (1 << 20), f"hashing held {peak} bytes at once"


def test_hash_of_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(NoSuchFile, match="does not exist"):
        content_hash(tmp_path / "gone.png")
    with pytest.raises(NotAFile, match="is a folder"):
        content_hash(tmp_path)


def test_binary_and_text_detection(tmp_path: Path) -> None:
    text = tmp_path / "story.md"
    text.write_text("狐狸在黎明 — a fox at dawn\n" * 1000, encoding="utf-8")
    png = tmp_path / "frame.png"
    Image.new("RGB", (4, 4), "red").save(png)
    latin1 = tmp_path / "old.txt"
    latin1.write_bytes("café".encode("latin-1"))
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    assert is_text(text) and is_text(empty)
    assert not is_text(png) and not is_text(latin1)


def test_multibyte_character_cut_at_the_sniff_boundary_is_still_text(tmp_path: Path) -> None:
    path = tmp_path / "cut.md"
    path.write_bytes(b"a" * 8191 + "é".encode() + b"more")
    assert is_text(path)


def test_read_text_limited(tmp_path: Path) -> None:
    doc = tmp_path / "script.md"
    doc.write_bytes(b"line one\r\nline two\n")
    assert read_text_limited(doc, 100) == "line one\r\nline two\n"
    with pytest.raises(FileTooLarge, match="over the 10 bytes limit"):
        read_text_limited(doc, 10)
    png = tmp_path / "frame.png"
    Image.new("RGB", (4, 4), "red").save(png)
    with pytest.raises(BinaryFile, match="binary file"):
        read_text_limited(png, 1 << 20)
    with pytest.raises(NotAFile):
        read_text_limited(tmp_path, 100)


def test_read_text_refuses_a_fifo_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile, match="special file"):
        read_text_limited(fifo, 100)


def _animated(path: Path, frames: int) -> Path:
    images = [Image.new("RGB", (8, 8), c) for c in ("red", "blue", "green")[:frames]]
    images[0].save(path, save_all=True, append_images=images[1:], duration=100, loop=0)
    return path


def test_kinds(tmp_path: Path) -> None:
    flow_json = tmp_path / "pipeline.json"
    flow_json.write_text('{"edges": [], "lomo_flow": 1, "nodes": []}')
    plain_json = tmp_path / "settings.json"
    plain_json.write_text('{"note": "mentions \\"lomo_flow\\" but is not one"}')
    cases = {
        "story.md": "document", "notes.TXT": "document", "cast.yaml": "document",
        "a.flow.json": "flow", "frame.PNG": "image", "still.jpg": "image",
        "clip.mp4": "video", "clip.webm": "video", "prop.glb": "3d", "prop.obj": "3d",
        "theme.wav": "audio", "theme.flac": "audio", "archive.zip": "other", "Makefile": "other",
    }
    for name, kind in cases.items():
        assert kind_for(tmp_path / name) == kind, name
    assert kind_for(flow_json) == "flow"
    assert kind_for(plain_json) == "document"


def test_animated_gif_and_webp_are_video_still_ones_images(tmp_path: Path) -> None:
    assert kind_for(_animated(tmp_path / "clip.gif", 3)) == "video"
    assert kind_for(_animated(tmp_path / "clip.webp", 3)) == "video"
    assert kind_for(_animated(tmp_path / "still.gif", 1)) == "image"
    assert kind_for(_animated(tmp_path / "still.webp", 1)) == "image"


STORY = "Shot 1: a fox.\nShot 2: the fox runs.\nShot 3: dawn.\n"


def test_valid_edits_all_apply() -> None:
    edited = apply_edits(STORY, [("Shot 3: dawn.", "Shot 3: dusk."), ("a fox", "a red fox")])
    assert edited == "Shot 1: a red fox.\nShot 2: the fox runs.\nShot 3: dusk.\n"


def test_missing_snippet_applies_nothing() -> None:
    with pytest.raises(SnippetNotFound) as caught:
        apply_edits(STORY, [("a fox", "a red fox"), ("Shot 4", "Shot 5")])
    assert caught.value.edit_no == 2
    assert str(caught.value).startswith("Edit 2: the text to replace ('Shot 4') was not found")


def test_duplicated_snippet_says_how_many_matches() -> None:
    with pytest.raises(SnippetNotUnique) as caught:
        apply_edits(STORY, [("a fox", "a red fox"), ("fox", "wolf")])
    assert (caught.value.edit_no, caught.value.count) == (2, 2)
    assert "occurs 2 times" in str(caught.value)


def test_overlapping_occurrences_count_as_not_unique() -> None:
    with pytest.raises(SnippetNotUnique) as caught:
        find_unique("aaa", "aa")
    assert caught.value.count == 2


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(EditsOverlap, match="Edits 1 and 2"):
        apply_edits(STORY, [("Shot 2: the fox", "Shot 2: a fox"), ("fox runs", "fox sleeps")])
    with pytest.raises(EditsOverlap):
        apply_edits(STORY, [("Shot 3", "S3"), ("Shot 3", "S3")])


def test_adjacent_edits_and_empty_snippet() -> None:
    assert apply_edits("abcd", [("ab", "X"), ("cd", "Y")]) == "XY"
    assert apply_edits("abcd", []) == "abcd"
    with pytest.raises(EditError, match="no text to replace"):
        apply_edits("abcd", [("", "x")])


def test_edits_match_the_original_text_not_intermediate_results() -> None:
    # The second edit's snippet only exists after the first: it must not match.
    with pytest.raises(SnippetNotFound):
        apply_edits("one two", [("one", "three"), ("three two", "x")])
    assert apply_edits("one two", [("one", "two"), ("two", "one")]) == "two one"
