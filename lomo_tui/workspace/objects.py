"""Workspace objects in the database: identity, versions, who made them, who read which version.

Every file in the workspace folder is an object. A version is new only when the content hash changes.
Agent writes use optimistic concurrency against the file *on disk* at the moment of writing (H3);
creator edits (seen by the watcher, or noticed on disk at read/write time) leave a change notice for
each task that last read an older version (H2).
"""
from __future__ import annotations

import asyncio
import difflib
import fnmatch
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, text, update

from ..base.ids import new_id
from ..errors import Said
from ..store import schema as s
from ..store.engine import Database, fetch
from .errors import BinaryFile, FileTooLarge, WorkspaceError
from .files import apply_edits, decode_text, is_text, kind_for, read_text_limited, replace_if_unchanged, sample_file
from .paths import check_workspace_root, is_ignored, relative_name, resolve_in_workspace, safe_name
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

MAX_READ_BYTES = 2_000_000
SNAPSHOT_BYTES = 256_000


class Conflict(WorkspaceError):
    """The file moved on since the base version the agent named."""

    def __init__(self, path: str, base: int | None, current: int) -> None:
        self.said_as = Said("edit_merge.file_conflict", {"path": path, "base": base, "current": current})
        super().__init__(self.said_as.text("en"))
        self.current = current


@dataclass
class Seen:
    object_id: str
    path: str
    version: int
    hash: str
    new: bool
    size: int = 0


class Workspace:
    """One workspace folder and its rows. `open()` gives it its identity (a `workspaces` row) before
    anything else touches the database; every query here is scoped by that id."""

    def __init__(self, root: Path, db: Database) -> None:
        self.root = root
        self.db = db
        self.id: str | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    def ensure(self) -> None:
        """Check the folder can be a workspace (creating it if missing); a `WorkspaceError` otherwise."""
        check_workspace_root(self.root)

    async def open(self) -> str:
        """Validate the folder, then find or register its `workspaces` row, and adopt the rows of a
        database from before workspaces had identity when their files are in this folder."""
        self.ensure()
        self.id = await register_workspace(self.db, self.root)
        return self.id

    def resolve(self, rel: str) -> tuple[Path, str]:
        path = resolve_in_workspace(self.root, rel)
        return path, relative_name(self.root, path)

    def _lock(self, rel: str) -> asyncio.Lock:
        return self._locks.setdefault(rel, asyncio.Lock())

    @property
    def scope(self) -> Any:
        """The WHERE clause for this workspace's live objects."""
        return (s.objects.c.workspace_id == self.id) & s.objects.c.deleted.is_(False)

    async def guard(self, conn: AsyncConnection) -> None:
        """Serialise this workspace's write transactions across processes. SQLite's BEGIN IMMEDIATE
        already does; on PostgreSQL a transaction-scoped advisory lock does the same."""
        if not self.db.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key(self.id or str(self.root))})

    # ---- recording versions --------------------------------------------------------------------
    async def _object(self, conn: AsyncConnection, rel: str) -> Any:
        return (await conn.execute(select(s.objects).where(self.scope, s.objects.c.path == rel))).first()

    async def record(self, conn: AsyncConnection, rel: str, digest: str, size: int, *, author: str,
                     task_id: str | None = None, key: str | None = None, content: str | None = None) -> Seen:
        """Record the file's current content as a version (no-op when the hash is unchanged).
        Call it inside `db.write()`; it takes the workspace's lock, so the next version number is
        decided by one process at a time."""
        await self.guard(conn)
        t = clock.now()
        row = await self._object(conn, rel)
        snapshot = content if content is not None and len(content) <= SNAPSHOT_BYTES else None
        if row is not None and row.hash == digest:
            return Seen(row.id, rel, row.version, digest, False, size)
        if row is None:
            object_id, version = new_id("obj"), 1
            await conn.execute(insert(s.objects).values(
                id=object_id, workspace_id=self.id, path=rel, kind=kind_for(Path(rel)), version=1, hash=digest,
                size=size, last_author=author, last_task_id=task_id, created_at=t, updated_at=t))
        else:
            object_id, version = row.id, row.version + 1
            await conn.execute(update(s.objects).where(s.objects.c.id == row.id).values(
                version=version, hash=digest, size=size, last_author=author, last_task_id=task_id, updated_at=t))
        await conn.execute(insert(s.object_versions).values(
            object_id=object_id, version=version, path=rel, hash=digest, size=size, author=author,
            task_id=task_id, idempotency_key=key, content=snapshot, created_at=t))
        if author == "creator" and row is not None:
            await self._notify(conn, object_id, rel, version, row.version)
        return Seen(object_id, rel, version, digest, True, size)

    async def _notify(self, conn: AsyncConnection, object_id: str, rel: str, version: int, previous: int) -> None:
        """Leave a change notice for every task whose last read is older than VERSION (H2)."""
        readers = (await conn.execute(select(s.task_objects).where(
            s.task_objects.c.object_id == object_id, s.task_objects.c.last_read_version < version))).all()
        if not readers:
            return
        summary = await self._change_summary(conn, object_id, rel, previous, version)
        for reader in readers:
            await conn.execute(insert(s.notices).values(
                task_id=reader.task_id, object_id=object_id, path=rel, from_version=reader.last_read_version,
                to_version=version, summary=summary, created_at=clock.now()))
            await conn.execute(insert(s.events).values(type="object_changed", at=clock.now(),
                                                       task_id=reader.task_id,
                                                       data={"path": rel, "version": version}))

    async def _change_summary(self, conn: AsyncConnection, object_id: str, rel: str, old: int, new: int) -> str:
        rows = {r.version: r.content for r in (await conn.execute(select(
            s.object_versions.c.version, s.object_versions.c.content).where(
            s.object_versions.c.object_id == object_id, s.object_versions.c.version.in_((old, new))))).all()}
        head = f"{rel} v{old} → v{new}"
        if rows.get(old) is None or rows.get(new) is None:
            return f"{head}: changed by the creator; re-read before continuing"
        return f"{head}: {describe_change(rows[old], rows[new])}; re-read before continuing"

    async def observe(self, rel: str, *, deleted: bool = False, moved_from: str | None = None) -> Seen | None:
        """The creator changed REL on disk (from the watcher): record it. The file is sampled after
        the workspace's lock is taken, so what is recorded is what is on disk now, never an older look
        (a write of another process in between is already recorded, and a sample equal to it is a no-op)."""
        if not safe_name(rel):
            return None
        path = self.root / rel
        async with self._lock(rel):
            async with self.db.write() as conn:
                await self.guard(conn)
                sample = None if not path.is_file() else await self._sample(path)
                if moved_from:
                    old = await self._object(conn, moved_from)
                    if old is not None:
                        await self._retire(conn, rel)  # a move onto an existing file replaces it
                        await conn.execute(update(s.objects).where(s.objects.c.id == old.id).values(
                            path=rel, updated_at=clock.now()))
                if sample is None:  # gone (whatever the watcher said): record the deletion
                    if await self._retire(conn, rel):
                        await conn.execute(insert(s.events).values(type="object_deleted", at=clock.now(),
                                                                   data={"path": rel}))
                    return None
                digest, size, text_ = sample
                return await self.record(conn, rel, digest, size, author="creator", content=text_)

    async def _retire(self, conn: AsyncConnection, rel: str, **values: Any) -> bool:
        """Mark the live object at REL deleted; whether there was one."""
        row = await self._object(conn, rel)
        if row is None:
            return False
        await conn.execute(update(s.objects).where(s.objects.c.id == row.id).values(
            deleted=True, updated_at=clock.now(), **values))
        return True

    async def index_new(self, entries: dict[str, str], chunk: int = 500) -> int:
        """Record files not known yet (first start) in large transactions, reusing the scan's hashes.
        Each chunk re-checks, under the workspace's lock, which paths another process indexed
        meanwhile, so a path never gets a second object. New objects concern no task yet, so they
        leave no notices."""
        def stat(rel: str) -> tuple[str, int, str | None]:
            path = self.root / rel
            size = path.stat().st_size
            text_ = path.read_text(encoding="utf-8", errors="replace") if size <= SNAPSHOT_BYTES and is_text(path) \
                else None
            return rel, size, text_

        rels = [r for r in entries if safe_name(r)]
        done = 0
        for start in range(0, len(rels), chunk):
            batch = [r for r in await asyncio.to_thread(lambda part: [_try(stat, r) for r in part],
                                                        rels[start:start + chunk]) if r is not None]
            async with self.db.write() as conn:
                await self.guard(conn)
                known = set((await conn.execute(select(s.objects.c.path).where(
                    self.scope, s.objects.c.path.in_([rel for rel, _, _ in batch])))).scalars())
                t = clock.now()
                objects, versions = [], []
                for rel, size, text_ in batch:
                    if rel in known:
                        continue
                    object_id = new_id("obj")
                    objects.append(dict(id=object_id, workspace_id=self.id, path=rel, kind=kind_for(Path(rel)),
                                        version=1, hash=entries[rel], size=size, deleted=False,
                                        last_author="creator", last_task_id=None, created_at=t, updated_at=t))
                    versions.append(dict(object_id=object_id, version=1, path=rel, hash=entries[rel], size=size,
                                         author="creator", task_id=None, idempotency_key=None, content=text_,
                                         created_at=t))
                if objects:
                    await conn.execute(insert(s.objects), objects)
                    await conn.execute(insert(s.object_versions), versions)
            done += len(objects)
        return done

    async def _sample(self, path: Path) -> tuple[str, int, str | None]:
        """(hash, size, text snapshot or None), all from one read of the file."""
        digest, size, data = await asyncio.to_thread(sample_file, path, SNAPSHOT_BYTES)
        return digest, size, decode_text(data) if data is not None else None

    async def index(self) -> int:
        """Record every file not yet known (first start, or files added while Lomo was closed)."""
        count = 0
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = relative_name(self.root, Path(dirpath)) if Path(dirpath) != self.root else ""
            dirnames[:] = [d for d in dirnames if not is_ignored(f"{rel_dir}/{d}".lstrip("/") + "/")]
            for name in filenames:
                rel = f"{rel_dir}/{name}".lstrip("/")
                if not is_ignored(rel):
                    if await self.observe(rel):
                        count += 1
        return count

    # ---- what tools call -------------------------------------------------------------------------
    async def read(self, rel: str, task_id: str) -> dict[str, Any]:
        path, rel = self.resolve(rel)
        if not path.is_file():
            raise WorkspaceError(f"{rel} does not exist in the workspace; list_files shows what is there")
        async with self._lock(rel):
            async with self.db.write() as conn:
                seen, data = await self._current_on_disk(conn, path, rel)
                if seen is None:
                    raise WorkspaceError(f"{rel} does not exist in the workspace; list_files shows what is there")
                await self.touch(conn, task_id, seen, read=True)
        if data is None and await asyncio.to_thread(is_text, path):
            raise FileTooLarge(rel, seen.size, MAX_READ_BYTES)
        text_ = decode_text(data) if data is not None else None
        content = text_ if text_ is not None else f"(binary {kind_for(path)} file, {seen.size} bytes)"
        return {"path": rel, "content": content, "version": seen.version}

    async def write(self, rel: str, content: str, base_version: int | None, task_id: str, key: str) -> dict[str, Any]:
        return await self.write_bytes(rel, content.encode("utf-8"), base_version, task_id, key, content=content)

    async def write_bytes(self, rel: str, data: bytes, base_version: int | None, task_id: str, key: str, *,
                          content: str | None = None) -> dict[str, Any]:
        """Create or replace REL with DATA (a rendered film, say) under the same version check as `write`;
        CONTENT is the text snapshot, when DATA is text."""
        path, rel = self.resolve(rel)
        async with self._lock(rel):
            done = await self._already(key)
            if done is not None:
                return done
            async with self.db.write() as conn:
                if (seen := await self._took_effect(conn, path, rel, data, content, base_version, task_id,
                                                    key)) is not None:
                    return {"path": rel, "version": seen.version}
                current, _ = await self._current_on_disk(conn, path, rel)
                if current is not None and base_version != current.version:
                    raise Conflict(rel, base_version, current.version)
                seen, conflict = await self._replace(conn, path, rel, data, content, current, base_version,
                                                     task_id, key)
            if conflict is not None:
                raise conflict
        return {"path": rel, "version": seen.version}

    async def edit(self, rel: str, edits: list[tuple[str, str]], base_version: int | None, task_id: str,
                   key: str) -> dict[str, Any]:
        path, rel = self.resolve(rel)
        if not path.is_file():
            raise WorkspaceError(f"{rel} does not exist; use write_file to create it")
        async with self._lock(rel):
            done = await self._already(key)
            if done is not None:
                return done
            async with self.db.write() as conn:
                current, data = await self._current_on_disk(conn, path, rel)
                if current is None or base_version != current.version:
                    raise Conflict(rel, base_version, current.version if current else 0)
                if data is None:
                    raise FileTooLarge(rel, current.size, MAX_READ_BYTES)
                text_ = decode_text(data)
                if text_ is None:
                    raise BinaryFile(rel)
                new_text = apply_edits(text_, edits)  # on exactly the bytes whose version was checked
                seen, conflict = await self._replace(conn, path, rel, new_text.encode("utf-8"), new_text, current,
                                                     base_version, task_id, key)
            if conflict is not None:
                raise conflict
        return {"path": rel, "version": seen.version}

    async def _took_effect(self, conn: AsyncConnection, path: Path, rel: str, data: bytes, content: str | None,
                           base_version: int | None, task_id: str, key: str) -> Seen | None:
        """This very write already replaced the file, but was never recorded (the process died, or its
        commit failed, in between): the disk holds exactly DATA over the recorded BASE_VERSION. Then it
        is recorded now, as the agent's, and is done — not a conflict with itself."""
        await self.guard(conn)
        row = await self._object(conn, rel)
        new_hash = hashlib.sha256(data).hexdigest()
        if row is None or row.version != base_version or row.hash == new_hash or not path.is_file():
            return None
        if (await asyncio.to_thread(sample_file, path, 0))[0] != new_hash:
            return None
        seen = await self.record(conn, rel, new_hash, len(data), author="agent", task_id=task_id, key=key,
                                 content=content)
        await self.touch(conn, task_id, seen, read=True, wrote=True)
        return seen

    async def _replace(self, conn: AsyncConnection, path: Path, rel: str, data: bytes, content: str | None,
                       current: Seen | None, base_version: int | None, task_id: str,
                       key: str) -> tuple[Seen, Conflict | None]:
        """Put DATA on disk only if the file is still CURRENT (one step: `replace_if_unchanged`),
        and record the outcome: the agent's version, or the creator's save that came in between
        (then a Conflict to raise once this transaction has committed)."""
        written = await asyncio.to_thread(replace_if_unchanged, path, data, current.hash if current else None)
        if written:
            seen = await self.record(conn, rel, hashlib.sha256(data).hexdigest(), len(data), author="agent",
                                     task_id=task_id, key=key, content=content)
            await self.touch(conn, task_id, seen, read=True, wrote=True)
            return seen, None
        newer, _ = await self._current_on_disk(conn, path, rel)
        if newer is None:
            await self._retire(conn, rel)
            return Seen("", rel, 0, "", False), Conflict(rel, base_version, 0)
        return newer, Conflict(rel, base_version, newer.version)

    async def append(self, rel: str, text_: str, task_id: str, key: str) -> dict[str, Any]:
        """Append TEXT (a log line, a note). Not idempotent: it writes with O_APPEND, so a creator's
        bytes are never replaced, but a retried call would append twice."""
        path, rel = self.resolve(rel)
        async with self._lock(rel):
            async with self.db.write() as conn:
                await self._current_on_disk(conn, path, rel)

                def work() -> None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    with open(path, "a", encoding="utf-8") as fh:
                        fh.write(text_)
                        fh.flush()
                        os.fsync(fh.fileno())

                await asyncio.to_thread(work)
                digest, size, snapshot = await self._sample(path)
                seen = await self.record(conn, rel, digest, size, author="agent", task_id=task_id, key=key,
                                         content=snapshot)
                await self.touch(conn, task_id, seen, read=True, wrote=True)
        return {"path": rel, "version": seen.version}

    async def _already(self, key: str) -> dict[str, Any] | None:
        """A write with this idempotency key already happened (a retried call): return its result."""
        async with self.db.read() as conn:
            row = (await conn.execute(select(s.object_versions.c.path, s.object_versions.c.version).where(
                s.object_versions.c.idempotency_key == key))).first()
        return {"path": row.path, "version": row.version} if row else None

    async def _current_on_disk(self, conn: AsyncConnection, path: Path, rel: str) -> tuple[Seen | None, bytes | None]:
        """The version of what is on disk right now, and its bytes (up to MAX_READ_BYTES) from the
        same read; a creator save the watcher has not reported yet becomes a new version first."""
        await self.guard(conn)
        if not path.exists():
            return None, None
        digest, size, data = await asyncio.to_thread(sample_file, path, MAX_READ_BYTES)
        text_ = decode_text(data) if data is not None and len(data) <= SNAPSHOT_BYTES else None
        return await self.record(conn, rel, digest, size, author="creator", content=text_), data

    @staticmethod
    async def touch(conn: AsyncConnection, task_id: str, seen: Seen, *, read: bool = False,
                     wrote: bool = False) -> None:
        t = clock.now()
        row = (await conn.execute(select(s.task_objects).where(
            s.task_objects.c.task_id == task_id, s.task_objects.c.object_id == seen.object_id))).first()
        values: dict[str, Any] = {"updated_at": t}
        if read:
            values["last_read_version"] = seen.version
        if wrote:
            values["last_written_version"] = seen.version
            values["role"] = "output"
        if row is None:
            await conn.execute(insert(s.task_objects).values(task_id=task_id, object_id=seen.object_id, **values))
        else:
            await conn.execute(update(s.task_objects).where(
                s.task_objects.c.task_id == task_id, s.task_objects.c.object_id == seen.object_id).values(**values))
        if read:
            await conn.execute(update(s.notices).where(
                s.notices.c.task_id == task_id, s.notices.c.object_id == seen.object_id,
                s.notices.c.status == "open", s.notices.c.to_version <= seen.version).values(status="seen"))

    async def delete(self, rel: str, task_id: str) -> dict[str, Any]:
        """Remove REL (after the creator approved it): the object is kept, marked deleted, with an event."""
        path, rel = self.resolve(rel)
        async with self._lock(rel):
            async with self.db.write() as conn:
                await self.guard(conn)
                await asyncio.to_thread(path.unlink, missing_ok=True)
                await self._retire(conn, rel, last_author="agent", last_task_id=task_id)
                await conn.execute(insert(s.events).values(type="object_deleted", at=clock.now(), task_id=task_id,
                                                           data={"path": rel, "by": "agent"}))
        return {"path": rel, "deleted": True}

    async def search(self, query: str, pattern: str = "*", limit: int = 50) -> list[dict[str, Any]]:
        """Lines of text files matching QUERY (case-insensitive), searched in a thread."""
        needle = query.lower()

        def scan() -> list[dict[str, Any]]:
            hits: list[dict[str, Any]] = []
            for dirpath, dirnames, filenames in os.walk(self.root):
                base = Path(dirpath)
                rel_dir = "" if base == self.root else relative_name(self.root, base)
                dirnames[:] = [d for d in dirnames if not is_ignored(f"{rel_dir}/{d}/".lstrip("/"))]
                for name in sorted(filenames):
                    rel = f"{rel_dir}/{name}".lstrip("/")
                    path = base / name
                    if is_ignored(rel) or not safe_name(rel) or not fnmatch.fnmatch(rel, pattern) or not is_text(path):
                        continue
                    try:
                        text = read_text_limited(path, MAX_READ_BYTES)
                    except WorkspaceError:
                        continue
                    for number, line in enumerate(text.splitlines(), 1):
                        if needle in line.lower():
                            hits.append({"path": rel, "line": number, "text": line.strip()[:200]})
                            if len(hits) >= limit:
                                return hits
            return hits

        return await asyncio.to_thread(scan)

    async def version_content(self, rel: str, version: int) -> str | None:
        """The text of REL at VERSION, when a snapshot was kept (text files up to SNAPSHOT_BYTES)."""
        async with self.db.read() as conn:
            return (await conn.execute(select(s.object_versions.c.content).join(
                s.objects, s.objects.c.id == s.object_versions.c.object_id).where(
                self.scope, s.objects.c.path == rel, s.object_versions.c.version == version))).scalar()

    async def last_read(self, rel: str, task_id: str) -> int | None:
        async with self.db.read() as conn:
            return (await conn.execute(select(s.task_objects.c.last_read_version).join(
                s.objects, s.objects.c.id == s.task_objects.c.object_id).where(
                self.scope, s.objects.c.path == rel, s.task_objects.c.task_id == task_id))).scalar()

    async def list(self, pattern: str = "*") -> list[dict[str, Any]]:
        async with self.db.read() as conn:
            rows = (await conn.execute(select(s.objects.c.path, s.objects.c.kind, s.objects.c.version,
                                              s.objects.c.size).where(self.scope).order_by(
                s.objects.c.path))).all()
        return [dict(r._mapping) for r in rows if fnmatch.fnmatch(r.path, pattern)]

    async def task_views(self, conn: AsyncConnection, task_id: str, limit: int = 8) -> dict[str, list[str]]:
        """What a planner needs to see of the workspace: this task's outputs, recent images, flows."""
        outputs = [r.path for r in await fetch(conn, TASK_OUTPUTS, {"task_id": task_id, "false": False,
                                                                     "limit": limit, "ws": self.id})]
        recent = await fetch(conn, RECENT_MEDIA, {"false": False, "limit": 4 * limit, "ws": self.id})
        return {"artifacts": list(outputs),
                "recent_images": [r.path for r in recent if r.kind == "image"][:limit],
                "flow_files": [r.path for r in recent if r.kind == "flow"][:limit]}

    async def open_notices(self, conn: AsyncConnection, task_id: str) -> list[str]:
        return [r.summary for r in await fetch(conn, OPEN_NOTICES, {"task_id": task_id})]

    async def count(self) -> int:
        async with self.db.read() as conn:
            return (await conn.execute(select(func.count()).select_from(s.objects).where(
                s.objects.c.workspace_id == self.id))).scalar() or 0


TASK_OUTPUTS = ("SELECT o.path FROM objects o JOIN task_objects t ON t.object_id = o.id WHERE t.task_id = :task_id "
                "AND t.role = 'output' AND o.deleted = :false AND o.workspace_id = :ws ORDER BY o.updated_at DESC LIMIT :limit")
RECENT_MEDIA = ("SELECT path, kind FROM objects WHERE kind IN ('image', 'flow') AND deleted = :false AND workspace_id = :ws "
                "ORDER BY updated_at DESC LIMIT :limit")
OPEN_NOTICES = "SELECT summary FROM notices WHERE task_id = :task_id AND status = 'open' ORDER BY id"


def _lock_key(name: str) -> int:
    """A PostgreSQL advisory lock key (signed 64-bit) for NAME."""
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:15], 16)


ADOPT_SAMPLE = 200
"""How many rows from before workspaces had identity are checked against the folder being opened."""


async def register_workspace(db: Database, root: Path) -> str:
    """The id of the workspace at ROOT (its real path), registering it on first use. Rows recorded
    before workspaces had identity (`workspace_id` NULL) go to the first workspace opened that holds
    any of their files; a folder holding none of them leaves them for the one that does."""
    real = os.path.realpath(root)
    async with db.read() as conn:  # the usual case reads only: a known folder, nothing left to adopt
        found = (await conn.execute(select(s.workspaces.c.id).where(s.workspaces.c.root == real))).scalar()
        orphans = (await conn.execute(select(s.objects.c.id).where(s.objects.c.workspace_id.is_(None)).limit(
            1))).first()
        if found is not None and orphans is None and await _unadopted_tasks(conn, found):
            orphans = True
    if found is not None and orphans is None:
        return found
    async with db.write() as conn:
        if not db.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key("lomo:workspaces")})
        found = (await conn.execute(select(s.workspaces.c.id).where(s.workspaces.c.root == real))).scalar()
        if found is None:
            found = new_id("ws")
            await conn.execute(insert(s.workspaces).values(id=found, root=real, created_at=clock.now()))
        orphans = (await conn.execute(select(s.objects.c.path).where(
            s.objects.c.workspace_id.is_(None)).order_by(s.objects.c.deleted, s.objects.c.updated_at.desc()).limit(
            ADOPT_SAMPLE))).scalars().all()
        if orphans and await asyncio.to_thread(lambda: any(os.path.lexists(os.path.join(real, p)) for p in orphans)):
            await conn.execute(update(s.objects).where(s.objects.c.workspace_id.is_(None)).values(workspace_id=found))
        await _adopt_tasks(conn, found)
    return found


def _unadopted(workspace_id: str) -> Any:
    """Tasks from before tasks had a workspace (0017) that have a file in WORKSPACE_ID."""
    bound = select(s.task_objects.c.task_id).join(s.objects, s.objects.c.id == s.task_objects.c.object_id).where(
        s.objects.c.workspace_id == workspace_id)
    return (s.tasks.c.workspace_id.is_(None)) & (s.tasks.c.kind != "main") & s.tasks.c.id.in_(bound)


async def _unadopted_tasks(conn: Any, workspace_id: str) -> bool:
    return (await conn.execute(select(s.tasks.c.id).where(_unadopted(workspace_id)).limit(1))).first() is not None


async def _adopt_tasks(conn: Any, workspace_id: str) -> None:
    """Tasks from before 0017 belong to the workspace that holds their files; one with no file stays unscoped
    (seen from every folder, as before)."""
    await conn.execute(update(s.tasks).where(_unadopted(workspace_id)).values(workspace_id=workspace_id))


def _try(fn: Any, rel: str) -> Any:
    """FN(REL), or None when the file vanished or cannot be read meanwhile."""
    try:
        return fn(rel)
    except OSError:
        return None


def describe_change(old: str, new: str) -> str:
    """A short human account of what changed between two texts ("shot 2 changed", "3 lines added")."""
    headings, added, removed = change_parts(old, new)
    if headings:
        return ", ".join(f"{h!r} changed" for h in headings)
    return f"{added} line(s) added, {removed} removed"


def change_parts(old: str, new: str) -> tuple[list[str], int, int]:
    """(the headings of the sections that changed (at most three), lines added, lines removed)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    changed_headings: list[str] = []
    heading = ""
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    added = removed = 0
    marks: set[int] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed += i2 - i1
        added += j2 - j1
        marks.update(range(j1, max(j2, j1 + 1)))
    for index, line in enumerate(new_lines + [""]):
        if line.lstrip().startswith("#"):
            heading = line.lstrip("# ").strip()
        if index in marks and heading and heading not in changed_headings:
            changed_headings.append(heading)
    return changed_headings[:3], added, removed
