"""Confining paths to the workspace folder, and naming the files nobody should index."""

from __future__ import annotations

import errno
import os
import posixpath
import re
from pathlib import Path

from lomo_tui.errors import Phrase, Said
from lomo_tui.workspace.errors import InvalidPath, PathOutsideWorkspace, ReservedPath


def _said(key: str, /) -> Phrase:
    return Phrase(Said(f"workspace_error.{key}"))

STATE_DIR = ".lomo"
"""The workspace's own state folder: never a workspace file."""

ATOMIC_TEMP_PREFIX = ".lomo-tmp-"
"""Names of `atomic_write`'s temporary files start with this."""

IGNORED_DIRS = frozenset({STATE_DIR, ".git", ".hg", ".svn", "__pycache__", "node_modules"})

_SCRATCH_NAME = re.compile(
    r"""
      ^\..*\.sw[a-px]$          # vim swap and probe files: .name.swp / .swo / … / .swx
    | ~$                        # backups: name~
    | ^\#.*\#$                  # emacs auto-save: #name#
    | ^\.\#                     # emacs lock: .#name
    | \.tmp$                    # generic temporary files
    | ___jb_(tmp|old)___$       # JetBrains safe write
    | ^\.DS_Store$              # macOS Finder
    | ^\.goutputstream-         # GNOME safe write
    | \.kate-swp$               # Kate swap
    | ^\.~lock\..*\#$           # LibreOffice lock
    | ^~\$                      # Microsoft Office owner file
    """
    + "| ^" + re.escape(ATOMIC_TEMP_PREFIX),
    re.VERBOSE | re.IGNORECASE,
)


def _is_vim_write_probe(name: str) -> bool:
    """vim checks a folder is writable by creating ``4913`` (then 5036, 5159, … if taken)."""
    if not (name.isascii() and name.isdigit()):
        return False
    n = int(name)
    return n >= 4913 and (n - 4913) % 123 == 0


def is_ignored(rel: str) -> bool:
    """Whether the watcher and indexer skip this workspace-relative path (file or folder)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts:
        return False
    if any(part in IGNORED_DIRS for part in parts):
        return True
    name = parts[-1]
    return bool(_SCRATCH_NAME.search(name)) or _is_vim_write_probe(name)


def _real_root(root: Path) -> Path:
    return Path(os.path.realpath(root))


def resolve_in_workspace(root: Path, rel: str | os.PathLike[str]) -> Path:
    """Resolve `rel` (relative, or absolute inside `root`) to a real path inside the workspace.

    Symlinks are followed and the result must still lie under `root`: a `..` that climbs out,
    an absolute path elsewhere, a symlinked file or folder leading out, a NUL byte, or a path
    into the state folder `.lomo/` raises a `WorkspaceError`. The returned path is fully
    resolved, so later operations act on what was checked.
    """
    text = os.fspath(rel)
    if not text:
        raise InvalidPath(text, _said("path_empty"))
    if "\x00" in text:
        raise InvalidPath(text, _said("path_nul"))
    real_root = _real_root(root)
    if os.path.isabs(text):
        candidate = Path(os.path.normpath(text))
    else:
        inner = posixpath.normpath(text)
        if inner == ".." or inner.startswith("../"):
            raise PathOutsideWorkspace(text, _said("climbs_out"))
        candidate = real_root / inner
        _refuse_state_dir(text, inner)
    resolved = Path(os.path.realpath(candidate))
    if not resolved.is_relative_to(real_root):
        how = _said("symlink_out") if candidate.is_relative_to(real_root) else ""
        raise PathOutsideWorkspace(text, how)
    _refuse_state_dir(text, resolved.relative_to(real_root).as_posix())
    return resolved


def _refuse_state_dir(shown: str, inner: str) -> None:
    if inner.split("/", 1)[0].casefold() == STATE_DIR:
        raise ReservedPath(shown)


def relative_name(root: Path, path: str | os.PathLike[str]) -> str:
    """The workspace-relative, posix-style name of `path` (``"."`` for the root itself)."""
    p = Path(path)
    if not p.is_absolute():
        name = posixpath.normpath(p.as_posix())
        if name == ".." or name.startswith("../"):
            raise PathOutsideWorkspace(str(path), _said("climbs_out"))
        return name
    normal = Path(os.path.normpath(p))
    for base in (Path(os.path.abspath(root)), _real_root(root)):
        if normal.is_relative_to(base):
            return normal.relative_to(base).as_posix()
    raise PathOutsideWorkspace(str(path))


SYSTEM_ROOTS = ("/proc", "/sys", "/dev")
"""Kernel file systems: never a workspace."""


def safe_name(rel: str) -> bool:
    """Whether a workspace-relative name can be stored and shown: valid UTF-8. A name the OS gave
    with undecodable bytes (surrogate escapes) is skipped by the indexer and the watcher."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(rel: str) -> str:
    """A name that may hold undecodable bytes, printable (\\xNN for each bad byte)."""
    return os.fsencode(rel).decode("utf-8", errors="backslashreplace")


def check_workspace_root(root: Path) -> None:
    """Make sure ROOT can be a workspace folder, creating it when missing: not a file, not a kernel
    file system, writable. Raises `WorkspaceUnusable` with one line saying what to do."""
    from lomo_tui.workspace.errors import WorkspaceUnusable

    shown = str(root)
    try:
        real = os.path.realpath(root)
    except (OSError, ValueError):
        raise WorkspaceUnusable(shown, "its path cannot be resolved") from None
    for top in SYSTEM_ROOTS:
        if real == top or real.startswith(top + "/"):
            raise WorkspaceUnusable(shown, f"it is under {top}, a system folder")
    if os.path.lexists(real) and not os.path.isdir(real):
        raise WorkspaceUnusable(shown, "it is a file, not a folder")
    try:
        os.makedirs(real, exist_ok=True)
        probe = os.path.join(real, f"{ATOMIC_TEMP_PREFIX}probe-{os.getpid()}")
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.unlink(probe)
    except OSError as exc:
        reason = "it cannot be written" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) \
            else f"it cannot be used ({exc.strerror or exc})"
        raise WorkspaceUnusable(shown, reason) from None
