"""File primitives for the workspace: atomic writes, hashing, kinds, text sniffing, exact edits.

Every function here raises only `WorkspaceError` subclasses, never a bare `OSError`.
"""

from __future__ import annotations

import codecs
import ctypes
import errno
import fcntl
import hashlib
import io
import json
import os
import secrets
import signal
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from itertools import pairwise
from pathlib import Path
from typing import Any, BinaryIO

from lomo_tui.errors import Phrase, Said
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
    WorkspaceIOError,
    WorkspacePermissionError,
)
from lomo_tui.workspace.paths import ATOMIC_TEMP_PREFIX

SNIFF_BYTES = 8192
FLOW_SNIFF_LIMIT = 4 * 1024 * 1024
"""A `.json` file larger than this is not opened to look for the flow marker."""

_KINDS_BY_SUFFIX: dict[str, str] = {
    **dict.fromkeys(
        (".md", ".markdown", ".txt", ".json", ".yaml", ".yml", ".toml", ".csv", ".tsv",
         ".html", ".htm", ".xml", ".rst", ".org", ".srt", ".vtt", ".fountain"),
        "document",
    ),
    **dict.fromkeys(
        (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".svg"), "image"
    ),
    **dict.fromkeys((".mp4", ".webm", ".mov", ".mkv", ".avi", ".m4v"), "video"),
    **dict.fromkeys((".gltf", ".glb", ".obj", ".stl", ".fbx", ".ply", ".usdz"), "3d"),
    **dict.fromkeys((".wav", ".mp3", ".ogg", ".flac", ".m4a", ".aac", ".opus"), "audio"),
}


def _error(path: Path, action: str, exc: OSError) -> WorkspaceError:
    """Translate an `OSError` into a `WorkspaceError` that says what to do."""
    shown = str(path)
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        return WorkspacePermissionError(shown, action)
    if code == errno.EROFS:
        return WorkspacePermissionError(shown, action, _said("read_only"))
    if code == errno.ENOENT:
        return NoSuchFile(shown)
    if code == errno.EISDIR:
        return NotAFile(shown)
    if code in (errno.ENOTDIR, errno.EEXIST):
        return WorkspaceIOError(shown, action, _said("folder_is_file"), _said("hint_other_path"))
    if code in (errno.ENOSPC, errno.EDQUOT):
        return WorkspaceIOError(shown, action, _said("disk_full"), _said("hint_free_space"))
    return WorkspaceIOError(shown, action, exc.strerror or str(exc), _said("hint_check_file"))


def _said(key: str, /) -> Phrase:
    return Phrase(Said(f"workspace_error.{key}"))


@contextmanager
def _open_regular(path: Path, action: str) -> Iterator[io.BufferedReader]:
    """Open a regular file for reading (a FIFO or device would block or never end)."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise NotAFile(str(path))
        if not stat.S_ISREG(mode):
            raise NotAFile(str(path), _said("a_special_file"))
        with open(path, "rb") as f:
            yield f
    except OSError as exc:
        raise _error(path, action, exc) from exc


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so readers see the old file or the new one, never a mix.

    Writes a temp file (an ignored ``.lomo-tmp-…`` name) in the same folder, fsyncs it, keeps
    the existing file's permission bits, renames it over `path` and fsyncs the folder. Missing
    parent folders are created. On failure the temp file is removed and the original is intact.
    Pass a resolved path (`paths.resolve_in_workspace`): a symlink at `path` is replaced.
    """
    temp = _staged(path, data)
    try:
        os.replace(temp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise _error(path, "write", exc) from exc
        raise
    _fsync_dir(path.parent)


def _staged(path: Path, data: bytes) -> str:
    """DATA in a fsynced temp file beside PATH, with PATH's permission bits (removed again on failure)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = _create_temp(path.parent)
    except OSError as exc:
        raise _error(path, "write", exc) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            _keep_mode(path, f.fileno())
            os.fsync(f.fileno())
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise _error(path, "write", exc) from exc
        raise
    return temp


def replace_if_unchanged(path: Path, data: bytes, base_hash: str | None) -> bool:
    """Put `data` at `path` only if what it replaces hashes to `base_hash` (None: no file there).

    The check and the replacement are one step, so a creator's save that lands after the caller
    read the file is never overwritten. Returns False, with the creator's newest content at `path`
    and nothing written, when the file changed. On Linux the new file is exchanged with the old one
    atomically (``renameat2(RENAME_EXCHANGE)``); the file swapped out is hashed once no process has
    it open for writing (`settled_hash`: an in-place save under way into it is waited for), and when
    it is not the base it is swapped back, repeating while saves keep landing, until what comes out
    is what was last put in. Elsewhere (or on a file system without the exchange) the old file is
    moved aside, checked, and the new one linked in without replacing: a save during that instant
    wins, and the path is briefly absent. A reader may glimpse `data` while it is checked and undone.
    A writer still holding the old file open after `SETTLE_SECONDS` counts as a change (conflict).
    Not covered: such a writer where leases are unavailable (another file system or OS, a file
    owned by someone else), which is hashed as it stands.
    """
    temp = _staged(path, data)
    try:
        if base_hash is None:
            written = _link_new(temp, path)
        elif _exchange_supported(path.parent):
            try:
                written = _exchange_in(temp, path, base_hash, hashlib.sha256(data).hexdigest())
            except _ExchangeUnsupported:
                written = _move_aside_in(temp, path, base_hash)
        else:
            written = _move_aside_in(temp, path, base_hash)
    except OSError as exc:
        raise _error(path, "write", exc) from exc
    finally:
        with suppress(OSError):
            os.unlink(temp)
    _fsync_dir(path.parent)
    return written


def _link_new(temp: Path, path: Path) -> bool:
    """Create `path` from `temp` unless something is there already."""
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    return True


def _identity(path: Path) -> tuple[int, str]:
    """(inode, settled content hash) of what is at `path` now."""
    return os.lstat(path).st_ino, settled_hash(path)[0]


SETTLE_SECONDS = 2.0
"""How long `settled_hash` waits for a writer that has the file open to close it."""


def settled_hash(path: Path, wait: float | None = None) -> tuple[str, bool]:
    """SHA-256 of the file once no process has it open for writing, so the bytes hashed are final;
    and False with it when a writer still had it open after WAIT seconds (its bytes may change yet).

    Used on a file just swapped out of the workspace (its name is private): a creator's in-place
    save that opened it before the swap is either finished (and seen here) or still holding it open
    (and waited for). On Linux a read lease proves nobody has it open for writing (`fcntl`
    F_SETLEASE F_RDLCK fails while a writer does); where leases are unavailable (another file
    system, another OS, a file owned by someone else) it is a plain hash.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _error(path, "read", exc) from exc
    leased = "unsupported"
    try:
        leased = _lease_when_no_writer(fd, SETTLE_SECONDS if wait is None else wait)
        with open(fd, "rb", closefd=False) as f:
            return hashlib.file_digest(f, "sha256").hexdigest(), leased != "busy"
    finally:
        if leased == "leased":
            with suppress(OSError):
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        os.close(fd)


def _lease_when_no_writer(fd: int, wait: float) -> str:
    """Take a read lease on FD, waiting up to WAIT seconds while a writer has the file open:
    "leased", "busy" (the writer stayed), or "unsupported" (no leases here: a plain hash it is)."""
    if not hasattr(fcntl, "F_SETLEASE"):
        return "unsupported"
    with suppress(OSError, AttributeError):  # a lease break must not be SIGIO (which would end the process)
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            return "leased"
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EBUSY):
                return "unsupported"
            if time.monotonic() >= deadline:
                return "busy"
        time.sleep(0.001)


def _exchange_in(temp: Path, path: Path, base_hash: str, new_hash: str) -> bool:
    put = (os.lstat(temp).st_ino, new_hash)
    try:
        _exchange(temp, path)
    except FileNotFoundError:
        return False  # the file was removed since it was read
    if not stat.S_ISREG(os.lstat(temp).st_mode):  # a folder or a link took its place: give it back
        _exchange(temp, path)
        return False
    if settled_hash(temp) == (base_hash, True):
        return True
    # A save landed: put the creator's file back. Each exchange returns what was at `path` just before;
    # if that is not what we last put there, a newer save arrived meanwhile, so exchange again.
    for _ in range(1000):
        before = _identity(temp)
        try:
            _exchange(temp, path)
        except FileNotFoundError:
            return False  # removed meanwhile: the creator's last act was deleting it
        if _identity(temp) == put:
            return False
        put = before
    raise OSError(errno.EBUSY, "the file keeps changing")


def _move_aside_in(temp: Path, path: Path, base_hash: str) -> bool:
    """The portable equivalent: move the old file aside, check it, link the new (or the old) one in
    without replacing whatever a save put there meanwhile."""
    aside = temp.with_name(temp.name + "-old")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return False
    try:
        if settled_hash(aside) == (base_hash, True):
            return _link_new(temp, path)
        _link_new(aside, path)
        return False
    finally:
        with suppress(OSError):
            os.unlink(aside)


AT_FDCWD = -100
RENAME_EXCHANGE = 2
_no_exchange: set[int] = set()  # devices whose file system refused the exchange


def _renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _renameat2()


def _exchange_supported(folder: Path) -> bool:
    if _RENAMEAT2 is None:
        return False
    try:
        return os.stat(folder).st_dev not in _no_exchange
    except OSError:
        return True


def _exchange(a: Path, b: Path) -> None:
    """Atomically swap the directory entries `a` and `b` (both must exist)."""
    if _RENAMEAT2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        _no_exchange.add(os.stat(a.parent).st_dev)
        raise _ExchangeUnsupported()
    raise OSError(code, os.strerror(code), str(b))


class _ExchangeUnsupported(OSError):
    """The file system cannot exchange names; the portable path is taken instead."""


def _create_temp(folder: Path) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temp = folder / f"{ATOMIC_TEMP_PREFIX}{secrets.token_hex(6)}"
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue


def _keep_mode(path: Path, fd: int) -> None:
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    os.fchmod(fd, mode)


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable; some file systems cannot fsync a folder, which is fine."""
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def content_hash(path: Path) -> str:
    """SHA-256 of the file's bytes, hex; streamed, so a large file is never held in memory."""
    with _open_regular(path, "read") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def sample_file(path: Path, keep_bytes: int) -> tuple[str, int, bytes | None]:
    """(SHA-256, size, bytes) of the file from one read: the bytes only when it is at most
    `keep_bytes` long, so the hash always describes exactly the bytes returned."""
    with _open_regular(path, "read") as f:
        try:
            data = f.read(keep_bytes + 1)
            if len(data) <= keep_bytes:
                return hashlib.sha256(data).hexdigest(), len(data), data
            digest, size = hashlib.sha256(data), len(data)
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
        except OSError as exc:
            raise _error(path, "read", exc) from exc
        return digest.hexdigest(), size, None


def decode_text(data: bytes) -> str | None:
    """The UTF-8 text of DATA, or None when it is binary (a NUL byte, or not UTF-8)."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def kind_for(path: Path) -> str:
    """One of document, flow, image, video, 3d, audio, other.

    Mostly by suffix. A ``*.flow.json`` file, or a JSON file whose top-level object has a
    ``"lomo_flow"`` key, is a flow. An animated GIF or WebP is a video (the studio writes clips
    that way); a still one is an image.
    """
    name = path.name.lower()
    if name.endswith(".flow.json"):
        return "flow"
    suffix = path.suffix.lower()
    if suffix == ".json" and _has_flow_marker(path):
        return "flow"
    if suffix in (".gif", ".webp") and _is_animated(path):
        return "video"
    return _KINDS_BY_SUFFIX.get(suffix, "other")


def _has_flow_marker(path: Path) -> bool:
    try:
        if path.stat().st_size > FLOW_SNIFF_LIMIT:
            return False
        data = path.read_bytes()
        if b'"lomo_flow"' not in data:
            return False
        obj = json.loads(data)
    except (OSError, ValueError):
        return False
    return isinstance(obj, dict) and "lomo_flow" in obj


def _is_animated(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(21)
            if head[:4] == b"RIFF" and head[8:16] == b"WEBPVP8X":
                return len(head) == 21 and bool(head[20] & 0x02)
            if head[:3] == b"GIF":
                f.seek(0)
                return _gif_has_two_frames(f)
    except OSError:
        pass
    return False


def _gif_has_two_frames(f: BinaryIO) -> bool:
    """Walk GIF blocks until a second image descriptor (or the end)."""
    header = f.read(13)
    if len(header) < 13:
        return False
    if header[10] & 0x80:
        f.seek(3 * (2 << (header[10] & 7)), os.SEEK_CUR)
    frames = 0
    while block := f.read(1):
        if block == b"\x2c":
            frames += 1
            if frames == 2:
                return True
            descriptor = f.read(9)
            if len(descriptor) < 9:
                return False
            if descriptor[8] & 0x80:
                f.seek(3 * (2 << (descriptor[8] & 7)), os.SEEK_CUR)
            f.read(1)  # LZW minimum code size
        elif block == b"\x21":
            f.read(1)  # extension label
        else:
            return False  # trailer, or not a GIF after all
        _skip_sub_blocks(f)
    return False


def _skip_sub_blocks(f: BinaryIO) -> None:
    while (size := f.read(1)) and size[0]:
        f.seek(size[0], os.SEEK_CUR)


def is_text(path: Path) -> bool:
    """Whether the file looks like UTF-8 text: no NUL and valid UTF-8 in its first 8 KB."""
    with _open_regular(path, "read") as f:
        head = f.read(SNIFF_BYTES)
        whole = len(head) < SNIFF_BYTES or not f.read(1)
    if b"\x00" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=whole)
    except UnicodeDecodeError:
        return False
    return True


def read_text_limited(path: Path, max_bytes: int) -> str:
    """The file's UTF-8 text, exactly as stored (line endings kept).

    Raises `FileTooLarge` over `max_bytes`, `BinaryFile` when it is not UTF-8 text.
    """
    with _open_regular(path, "read") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise FileTooLarge(str(path), size, max_bytes)
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(str(path), len(data), max_bytes)
    if b"\x00" in data:
        raise BinaryFile(str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BinaryFile(str(path)) from exc


def find_unique(text: str, old: str, edit_no: int = 1) -> int:
    """Index of the only occurrence of `old` in `text` (overlapping occurrences count)."""
    if not old:
        raise EditError(
            f"Edit {edit_no} has no text to replace, so no edit was applied; quote the exact "
            "text to change."
        )
    first = text.find(old)
    if first < 0:
        raise SnippetNotFound(edit_no, old)
    if text.find(old, first + 1) >= 0:
        raise SnippetNotUnique(edit_no, old, _count_overlapping(text, old))
    return first


def _count_overlapping(text: str, old: str) -> int:
    count, at = 0, text.find(old)
    while at >= 0:
        count, at = count + 1, text.find(old, at + 1)
    return count


def apply_edits(text: str, edits: Sequence[tuple[str, str]]) -> str:
    """Replace each `old` with its `new`, all or nothing.

    Each `old` must occur exactly once in the original `text`, and no two edits may overlap;
    otherwise an `EditError` names the edit and nothing is applied.
    """
    spans = sorted(
        (find_unique(text, old, no), no, old, new) for no, (old, new) in enumerate(edits, 1)
    )
    for (start_a, no_a, old_a, _), (start_b, no_b, _, _) in pairwise(spans):
        if start_a + len(old_a) > start_b:
            raise EditsOverlap(*sorted((no_a, no_b)))
    pieces, at = [], 0
    for start, _, old, new in spans:
        pieces += [text[at:start], new]
        at = start + len(old)
    pieces.append(text[at:])
    return "".join(pieces)
