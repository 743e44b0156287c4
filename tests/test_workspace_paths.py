"""Paths stay inside the workspace; scratch files are ignored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lomo_tui.workspace.errors import InvalidPath, PathOutsideWorkspace, ReservedPath
from lomo_tui.workspace.paths import is_ignored, relative_name, resolve_in_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "shots").mkdir(parents=True)
    (root / "shots" / "one.md").write_text("one")
    (tmp_path / "secret.txt").write_text("not yours")
    return root


def test_plain_and_dotted_relative_paths_resolve_inside(workspace: Path) -> None:
    expected = workspace / "shots" / "one.md"
    assert resolve_in_workspace(workspace, "shots/one.md") == expected
    assert resolve_in_workspace(workspace, "./shots/one.md") == expected
    assert resolve_in_workspace(workspace, "shots/../shots/one.md") == expected
    assert resolve_in_workspace(workspace, "new/not-yet.md") == workspace / "new" / "not-yet.md"


def test_absolute_path_inside_the_workspace_is_accepted(workspace: Path) -> None:
    target = str(workspace / "shots" / "one.md")
    assert resolve_in_workspace(workspace, target) == workspace / "shots" / "one.md"


def test_dot_dot_traversal_is_refused(workspace: Path) -> None:
    for rel in ("../secret.txt", "shots/../../secret.txt", "..", "../ws/shots/one.md"):
        with pytest.raises(PathOutsideWorkspace, match="outside the workspace"):
            resolve_in_workspace(workspace, rel)


def test_absolute_path_outside_is_refused(workspace: Path) -> None:
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(workspace, str(workspace.parent / "secret.txt"))
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(workspace, "/etc/passwd")


def test_symlinked_file_leading_out_is_refused(workspace: Path) -> None:
    (workspace / "escape.txt").symlink_to(workspace.parent / "secret.txt")
    with pytest.raises(PathOutsideWorkspace, match="symbolic link"):
        resolve_in_workspace(workspace, "escape.txt")


def test_dangling_symlink_leading_out_is_refused(workspace: Path) -> None:
    (workspace / "later.txt").symlink_to(workspace.parent / "created-later.txt")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(workspace, "later.txt")


def test_symlinked_parent_folder_leading_out_is_refused(workspace: Path) -> None:
    outside = workspace.parent / "outside"
    outside.mkdir()
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(workspace, "linked/new.md")


def test_symlink_that_stays_inside_resolves_to_its_target(workspace: Path) -> None:
    (workspace / "alias.md").symlink_to(workspace / "shots" / "one.md")
    (workspace / "cuts").symlink_to(workspace / "shots", target_is_directory=True)
    assert resolve_in_workspace(workspace, "alias.md") == workspace / "shots" / "one.md"
    assert resolve_in_workspace(workspace, "cuts/one.md") == workspace / "shots" / "one.md"


def test_workspace_reached_through_a_symlinked_root(workspace: Path, tmp_path: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(workspace, target_is_directory=True)
    real = workspace / "shots" / "one.md"
    assert resolve_in_workspace(link, "shots/one.md") == real
    assert resolve_in_workspace(link, str(link / "shots" / "one.md")) == real


def test_nul_byte_and_empty_path_are_refused(workspace: Path) -> None:
    with pytest.raises(InvalidPath, match="NUL"):
        resolve_in_workspace(workspace, "shots/one.md\x00.png")
    with pytest.raises(InvalidPath, match="empty"):
        resolve_in_workspace(workspace, "")


def test_state_folder_is_reserved(workspace: Path) -> None:
    (workspace / ".lomo").mkdir()
    for rel in (".lomo/db.sqlite", "./.lomo", "shots/../.lomo/x", str(workspace / ".lomo" / "x")):
        with pytest.raises(ReservedPath, match=r"\.lomo/"):
            resolve_in_workspace(workspace, rel)


def test_symlink_into_state_folder_is_refused(workspace: Path) -> None:
    (workspace / ".lomo").mkdir()
    (workspace / "state").symlink_to(workspace / ".lomo", target_is_directory=True)
    with pytest.raises(ReservedPath):
        resolve_in_workspace(workspace, "state/db.sqlite")


def test_relative_name_is_posix_and_workspace_relative(workspace: Path, tmp_path: Path) -> None:
    assert relative_name(workspace, workspace / "shots" / "one.md") == "shots/one.md"
    assert relative_name(workspace, workspace) == "."
    assert relative_name(workspace, "./shots/one.md") == "shots/one.md"
    link = tmp_path / "ws-link"
    link.symlink_to(workspace, target_is_directory=True)
    assert relative_name(link, workspace / "shots" / "one.md") == "shots/one.md"
    with pytest.raises(PathOutsideWorkspace):
        relative_name(workspace, tmp_path / "secret.txt")
    with pytest.raises(PathOutsideWorkspace):
        relative_name(workspace, "../secret.txt")


@pytest.mark.parametrize(
    "rel",
    [
        ".lomo/db.sqlite", ".lomo", ".git/index", "sub/.git/HEAD", "node_modules/x/index.js",
        ".scene.md.swp", "shots/.scene.md.swo", ".scene.md.swx", "4913", "shots/5036",
        "scene.md~", "#scene.md#", ".#scene.md", "render.tmp", "RENDER.TMP",
        "scene.md___jb_tmp___", "scene.md___jb_old___", ".DS_Store", "shots/.DS_Store",
        ".goutputstream-ABC123", ".~lock.script.odt#", "~$script.docx", ".lomo-tmp-0a1b2c3d4e5f",
    ],
)
def test_editor_scratch_and_state_files_are_ignored(rel: str) -> None:
    assert is_ignored(rel)


@pytest.mark.parametrize(
    "rel",
    ["scene.md", "shots/shot-01.png", "4914", "2024", "swap.md", "notes.swp.md", "clip.swf",
     "lomo/notes.md", ".lomorc", "git/notes.md", "temp/notes.md", ".", ""],
)
def test_creator_files_are_not_ignored(rel: str) -> None:
    assert not is_ignored(rel)


def test_messages_tell_what_to_do(workspace: Path) -> None:
    with pytest.raises(PathOutsideWorkspace) as caught:
        resolve_in_workspace(workspace, "../secret.txt")
    message = str(caught.value)
    assert "'../secret.txt'" in message and "use a path inside" in message
    assert os.linesep not in message
