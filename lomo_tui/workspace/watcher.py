"""Watching the workspace folder: batches of file changes the creator (or anyone) made.

`WorkspaceWatcher` turns the raw events of `watchfiles.awatch` (or, when polling, a periodic
rescan) into changes by comparing the folder as it is now with a cache of content hashes:

- ignored paths (`paths.is_ignored`: ``.lomo/``, ``.git/``, editor scratch files) never show;
- several writes of one file in one batch give one change, and a "modified" whose content hash
  equals the last one seen is dropped, so watchfiles' repeated yields for one save give one
  version;
- an editor that saves by writing a temp file and renaming it over the original (vim, sed -i,
  JetBrains…) gives one "modified" of the original;
- a deleted path and an added path with the same content in one batch give one "moved";
- symbolic links are not followed: a linked file is seen under its real name only.
- a file whose name is not UTF-8 is skipped (one log line); when watchfiles gives up on a batch
  because of one, the folder is rescanned so the rest of that batch is still reported.

Known gaps: a file written between `initial_scan` and the start of watching is not reported
(the caller reconciles its records against the scan on start-up); a writer that pauses longer
than `step_ms` mid-file shows its partial content as a version before the final one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import stat
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from lomo_tui.workspace.errors import WorkspaceError
from lomo_tui.workspace.files import content_hash
from lomo_tui.workspace.paths import is_ignored, safe_name, shown_name

if TYPE_CHECKING:
    from watchfiles import Change

log = logging.getLogger("lomo.workspace")
_reported: set[str] = set()


def _storable(rel: str) -> bool:
    """Whether REL can be recorded: a name that is not UTF-8 is skipped, with one log line."""
    if safe_name(rel):
        return True
    if rel not in _reported:
        _reported.add(rel)
        log.warning("skipping %s: its name is not UTF-8; rename it to see it in Lomo", shown_name(rel))
    return False

ChangeKind = Literal["added", "modified", "deleted", "moved"]

RACY_WINDOW_NS = 2_000_000_000
"""A file modified this recently is re-hashed on rescan even if size and mtime match: a second
write within the file system's timestamp granularity could leave both unchanged."""


class StopEvent(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class FileChange:
    rel: str
    """Workspace-relative posix path (the new name, for a move)."""
    change: ChangeKind
    old_rel: str | None = None
    """The previous name, for a move."""
    hash: str | None = None
    """SHA-256 of the content now; None for a deletion."""


@dataclass(frozen=True)
class FileStamp:
    """What the watcher last saw of a file; size and mtime let a rescan skip re-hashing."""

    size: int
    mtime_ns: int
    hash: str


def scan_tree(
    root: Path, under: str = "", known: Mapping[str, FileStamp] | None = None
) -> dict[str, FileStamp]:
    """Stamp every regular, non-ignored file below ``root/under``, without following links.

    A file whose size and mtime match its entry in `known` (and was last modified more than
    `RACY_WINDOW_NS` ago) keeps that hash unread. A file that cannot be read, or changes while
    being hashed, keeps its `known` stamp; unreadable folders are skipped.
    """
    known = known or {}
    trust_before = time.time_ns() - RACY_WINDOW_NS
    found: dict[str, FileStamp] = {}
    pending = [under]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(root / folder))
        except OSError:
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if is_ignored(rel) or not _storable(rel):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    previous = known.get(rel)
                    if stamp := _stamp(Path(entry.path), st, previous, trust_before) or previous:
                        found[rel] = stamp
            except OSError:
                continue
    return found


def _stamp(
    path: Path, st: os.stat_result, previous: FileStamp | None = None, trust_before: int = 0
) -> FileStamp | None:
    """The file's stamp: `previous` if size and mtime still match it and that mtime is older
    than `trust_before`, else freshly hashed; None if it cannot be read or changes meanwhile."""
    same = previous and (previous.size, previous.mtime_ns) == (st.st_size, st.st_mtime_ns)
    if same and st.st_mtime_ns < trust_before:
        return previous
    try:
        digest = content_hash(path)
        after = os.lstat(path)
    except (WorkspaceError, OSError):
        return None
    if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
        return None  # still being written: the next write brings another look
    return FileStamp(st.st_size, st.st_mtime_ns, digest)


def _undecodable_name(exc: BaseException) -> bool:
    """Whether EXC (or one inside an exception group) is watchfiles failing on a non-UTF-8 name."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        return any(_undecodable_name(e) for e in inner)
    return "decode path" in str(exc)


def _wants_polling(force_polling: bool | None) -> bool:
    """watchfiles' rule: explicit choice, else ``WATCHFILES_FORCE_POLLING``, else WSL 2."""
    if force_polling is not None:
        return force_polling
    if env := os.getenv("WATCHFILES_FORCE_POLLING"):
        return env.lower() not in {"false", "disable", "disabled"}
    uname = platform.uname()
    return uname.system == "Linux" and "microsoft-standard" in uname.release.lower()


class WorkspaceWatcher:
    """Yields batches of `FileChange` for a workspace folder; see the module docstring."""

    def __init__(
        self,
        root: Path,
        *,
        step_ms: int = 30,
        debounce_ms: int = 400,
        force_polling: bool | None = None,
        poll_delay_ms: int = 300,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._prefix = str(self.root) + os.sep
        self._step_ms, self._debounce_ms = step_ms, debounce_ms
        self.polling = _wants_polling(force_polling)
        self._poll_delay_ms = poll_delay_ms
        self._stamps: dict[str, FileStamp] | None = None

    @property
    def stamps(self) -> Mapping[str, FileStamp]:
        """The current view of the folder (empty before the first scan); save it to pass as
        `known` next time."""
        return self._stamps or {}

    def initial_scan(self, known: Mapping[str, FileStamp] | None = None) -> dict[str, str]:
        """Scan the folder, seed the hash cache and return ``{rel: hash}``.

        Pass the stamps saved last time as `known` to skip re-hashing unchanged files.
        Blocking: from async code, run it with `asyncio.to_thread`.
        """
        self._stamps = scan_tree(self.root, known=known)
        return {rel: s.hash for rel, s in self._stamps.items()}

    async def changes(self, stop_event: StopEvent | None = None) -> AsyncIterator[list[FileChange]]:
        """Yield non-empty batches of changes until `stop_event` is set.

        Scans first (in a thread) if `initial_scan` has not run; stat and hashing run in a
        thread. Native OS events by default; with polling, a rescan every `poll_delay_ms`.
        """
        if self._stamps is None:
            await asyncio.to_thread(self.initial_scan)
        source = self._poll(stop_event) if self.polling else self._events(stop_event)
        async for seen in source:
            if batch := self._apply(seen):
                yield batch

    async def _events(self, stop: StopEvent | None) -> AsyncIterator[dict[str, FileStamp | None]]:
        from watchfiles import awatch  # (and anyio) loaded when a workspace is watched, not by a run-once

        while True:
            try:
                async for raw in awatch(
                    self.root,
                    watch_filter=self._keep,
                    step=self._step_ms,
                    debounce=self._debounce_ms,
                    stop_event=stop,
                    force_polling=False,
                    ignore_permission_denied=True,
                ):
                    touched = {self._rel(path) for _, path in raw}
                    yield await asyncio.to_thread(self._observe, touched)
                return
            except Exception as exc:  # noqa: BLE001 — only the undecodable-name failure is handled
                if not _undecodable_name(exc) or (stop and stop.is_set()):
                    raise
            # watchfiles gives up on a batch naming a file that is not UTF-8: rescan (that file is
            # skipped) so nothing else in that batch is missed, and watch again
            fresh = await asyncio.to_thread(scan_tree, self.root, "", self.stamps)
            yield dict.fromkeys(self.stamps) | fresh

    async def _poll(self, stop: StopEvent | None) -> AsyncIterator[dict[str, FileStamp | None]]:
        """Rescan with size + mtime in nanoseconds (watchfiles' poller compares whole seconds
        of mtime, so it misses a second save within the same second)."""
        while not (stop and stop.is_set()):
            fresh = await asyncio.to_thread(scan_tree, self.root, "", self.stamps)
            yield dict.fromkeys(self.stamps) | fresh
            deadline = time.monotonic() + self._poll_delay_ms / 1000
            while time.monotonic() < deadline and not (stop and stop.is_set()):
                await asyncio.sleep(self._step_ms / 1000)

    def _rel(self, path: str) -> str:
        return path[len(self._prefix):].replace(os.sep, "/")

    def _keep(self, _change: Change, path: str) -> bool:
        return path.startswith(self._prefix) and not is_ignored(self._rel(path)) and _storable(self._rel(path))

    def _observe(self, touched: Iterable[str]) -> dict[str, FileStamp | None]:
        """The state now of each touched path: a stamp, or None where no file is.

        A touched folder stands for everything under it, before and now. Paths that could not
        be read consistently are left out (unchanged).
        """
        stamps = self.stamps
        seen: dict[str, FileStamp | None] = {}
        for rel in touched:
            try:
                st = os.lstat(self.root / rel)
            except (FileNotFoundError, NotADirectoryError):
                st = None
            except OSError:
                continue
            if st and stat.S_ISREG(st.st_mode):
                if stamp := _stamp(self.root / rel, st):
                    seen[rel] = stamp
                continue
            if rel in stamps:
                seen[rel] = None
            else:
                prefix = rel + "/"
                seen.update({known: None for known in stamps if known.startswith(prefix)})
            if st and stat.S_ISDIR(st.st_mode):
                seen.update(scan_tree(self.root, rel, stamps))
        return seen

    def _apply(self, seen: Mapping[str, FileStamp | None]) -> list[FileChange]:
        """Compare with the cache, update it, and name the changes (moves paired up)."""
        stamps = self._stamps if self._stamps is not None else {}
        added: dict[str, str] = {}
        deleted: dict[str, str] = {}
        changes: list[FileChange] = []
        for rel, stamp in sorted(seen.items()):
            before = stamps.get(rel)
            if stamp is None:
                if before:
                    deleted[rel] = before.hash
                    del stamps[rel]
                continue
            stamps[rel] = stamp
            if before is None:
                added[rel] = stamp.hash
            elif before.hash != stamp.hash:
                changes.append(FileChange(rel, "modified", hash=stamp.hash))
        changes += _pair_moves(deleted, added)
        self._stamps = stamps
        return sorted(changes, key=lambda c: c.rel)


def _pair_moves(deleted: dict[str, str], added: dict[str, str]) -> list[FileChange]:
    """Turn deleted+added pairs with equal content into moves (same file name first)."""
    gone_by_hash: dict[str, list[str]] = {}
    for rel, digest in deleted.items():
        gone_by_hash.setdefault(digest, []).append(rel)
    changes: list[FileChange] = []
    for rel, digest in added.items():
        candidates = gone_by_hash.get(digest)
        if not candidates:
            changes.append(FileChange(rel, "added", hash=digest))
            continue
        name = rel.rsplit("/", 1)[-1]
        old = next((c for c in candidates if c.rsplit("/", 1)[-1] == name), candidates[0])
        candidates.remove(old)
        changes.append(FileChange(rel, "moved", old_rel=old, hash=digest))
    moved_from = {c.old_rel for c in changes}
    changes += [FileChange(rel, "deleted") for rel in deleted if rel not in moved_from]
    return changes
