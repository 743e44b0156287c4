"""Workspaces have identity: one database, several folders, one object per file, bad folders refused."""
from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select, text

from conftest import LomoEnv
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import migrate
from lomo_tui.store import schema as s
from lomo_tui.store.engine import Database


def objects_of(doc: dict) -> dict[str, dict]:
    return {o["path"]: o for o in doc["objects"]}


def inspect_in(lomo: LomoEnv, folder: Path) -> dict:
    import json

    proc = lomo.run("--workspace", str(folder), "inspect", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_switching_workspaces_on_one_database_keeps_each_ones_files_versions_and_authors(lomo: LomoEnv,
                                                                                       tmp_path: Path) -> None:
    switch_workspaces(lomo, tmp_path)
    with __import__("sqlite3").connect(lomo.db_path) as conn:
        rows = Counter(path for (path,) in conn.execute("SELECT path FROM objects"))
        workspaces = conn.execute("SELECT COUNT(*) FROM workspaces").fetchone()[0]
    assert rows == {"story.md": 1, "poster.txt": 1, "elsewhere.md": 1} and workspaces == 2


@pytest.mark.slow
def test_on_postgresql_switching_workspaces_keeps_each_ones_files(pg_lomo: LomoEnv, tmp_path: Path) -> None:
    switch_workspaces(pg_lomo, tmp_path)


def switch_workspaces(lomo: LomoEnv, tmp_path: Path) -> None:
    """Run in A, then in B (same database), then in A again: each keeps its own files and history."""
    a, b = lomo.workspace, tmp_path / "other"
    b.mkdir()
    (a / "story.md").write_text("# Story\n")
    (a / "poster.txt").write_text("poster notes\n")
    (b / "elsewhere.md").write_text("another project\n")
    assert lomo.run("--run-once").returncode == 0
    (a / "story.md").write_text("# Story\n\nMore.\n")  # a second creator version of A's file
    assert lomo.run("--run-once").returncode == 0
    assert lomo.run("--workspace", str(b), "--run-once").returncode == 0
    assert lomo.run("--run-once").returncode == 0

    doc_a, doc_b = lomo.inspect(), inspect_in(lomo, b)
    assert len(doc_a["objects"]) == 2 and len(doc_b["objects"]) == 1  # one row per file
    in_a, in_b = objects_of(doc_a), objects_of(doc_b)
    assert sorted(in_a) == ["poster.txt", "story.md"] and sorted(in_b) == ["elsewhere.md"]
    assert not any(o["deleted"] for o in [*in_a.values(), *in_b.values()])
    assert in_a["story.md"]["version"] == 2 and in_a["story.md"]["last_author"] == "creator"


@pytest.mark.fresh_db
async def test_the_upgrade_merges_objects_that_share_a_path_keeping_versions_and_links(lomo: LomoEnv) -> None:
    await upgrade_with_duplicates(lomo.db_url)


@pytest.mark.slow
@pytest.mark.fresh_db
async def test_on_postgresql_the_upgrade_merges_objects_that_share_a_path(pg_lomo: LomoEnv) -> None:
    await upgrade_with_duplicates(pg_lomo.db_url)


async def upgrade_with_duplicates(url: str) -> None:
    """A database at 0008 with two live objects for one path (a task linked to the newer one) is
    upgraded: one object, the versions in time order, the link and the notice re-pointed."""
    db = Database(url)
    await migrate.upgrade(db, "0008")
    t = time.time()
    async with db.write() as conn:
        await conn.execute(text("INSERT INTO tasks (id, kind, status, title, epoch, created_at, updated_at) "
                                "VALUES ('t1', 'persistent', 'idle', 'T', 0, :t, :t)"), {"t": t})
        for oid, at, versions in (("o-old", t, [("h1", "creator"), ("h2", "agent")]),
                                  ("o-dup", t + 1, [("h2", "creator"), ("h3", "creator")])):
            await conn.execute(text(
                "INSERT INTO objects (id, path, kind, version, hash, size, deleted, last_author, created_at, "
                "updated_at) VALUES (:id, 'a.md', 'document', :v, :h, 1, false, :a, :t, :t)"),
                {"id": oid, "v": len(versions), "h": versions[-1][0], "a": versions[-1][1], "t": at})
            for n, (digest, author) in enumerate(versions, 1):
                await conn.execute(text(
                    "INSERT INTO object_versions (object_id, version, path, hash, size, author, created_at) "
                    "VALUES (:id, :v, 'a.md', :h, 1, :a, :t)"), {"id": oid, "v": n, "h": digest, "a": author,
                                                                  "t": at + n / 10})
        await conn.execute(text("INSERT INTO task_objects (task_id, object_id, last_read_version, role, updated_at) "
                                "VALUES ('t1', 'o-dup', 1, 'ref', :t)"), {"t": t})
        await conn.execute(text("INSERT INTO notices (task_id, object_id, path, from_version, to_version, summary, "
                                "created_at) VALUES ('t1', 'o-dup', 'a.md', 1, 2, 'changed', :t)"), {"t": t})
    await migrate.upgrade(db)
    async with db.read() as conn:
        objects = (await conn.execute(select(s.objects))).all()
        versions = (await conn.execute(select(s.object_versions.c.version, s.object_versions.c.hash,
                                              s.object_versions.c.author).order_by(s.object_versions.c.version))).all()
        link = (await conn.execute(select(s.task_objects))).one()
        notice = (await conn.execute(select(s.notices))).one()
    await db.close()
    assert [(o.id, o.version, o.hash) for o in objects] == [("o-old", 3, "h3")]
    assert [tuple(v) for v in versions] == [(1, "h1", "creator"), (2, "h2", "agent"), (3, "h3", "creator")]
    assert (link.object_id, link.last_read_version) == ("o-old", 2)  # o-dup v1 held h2, now v2
    assert (notice.object_id, notice.from_version, notice.to_version) == ("o-old", 2, 3)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["a file", "under /proc", "read-only"])
def test_a_workspace_that_cannot_be_used_is_refused_before_anything_is_delivered(lomo: LomoEnv, tmp_path: Path,
                                                                               kind: str) -> None:
    if kind == "a file":
        bad = tmp_path / "plain.txt"
        bad.write_text("not a folder")
    elif kind == "under /proc":
        bad = Path("/proc/self/lomo-ws")
    else:
        bad = tmp_path / "locked"
        bad.mkdir()
        _make_read_only(bad)
    try:
        for argv in (("send", "a picture of a cat"), ("--run-once", "a picture of a cat"), ("worker",)):
            proc = lomo.run("--workspace", str(bad), *argv)
            assert proc.returncode == 1, proc.stderr
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and "cannot be used" in lines[0] and "--workspace" in lines[0], proc.stderr
    finally:
        if kind == "read-only":
            _undo_read_only(bad)
    doc = lomo.inspect()  # the default workspace: nothing was delivered, nothing ran or was charged
    assert doc["inbox"] == [] and doc["turns"] == [] and doc["charges"] == []


def _make_read_only(folder: Path) -> None:
    if os.geteuid() == 0:  # root writes through permission bits; the immutable attribute stops it
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o500)


def _undo_read_only(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o700)


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_rest_is_indexed(lomo: LomoEnv) -> None:
    (lomo.workspace / "good.md").write_text("fine\n")
    bad = os.path.join(os.fsencode(lomo.workspace), b"caf\xe9-\xff.md")
    with open(bad, "wb") as fh:
        fh.write(b"latin-1 name\n")
    proc = lomo.run("--run-once")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(objects_of(lomo.inspect())) == ["good.md"]
    assert os.path.exists(bad)  # skipped, untouched


async def test_two_runtimes_starting_together_on_one_database_index_each_file_once(lomo: LomoEnv) -> None:
    for n in range(60):
        (lomo.workspace / f"shot-{n}.md").write_text(f"shot {n}\n")
    first = Runtime(lomo.settings(), watch=False)
    await first.open()  # the schema exists; both then start (scan, reconcile, index) at once
    second = Runtime(lomo.settings(), watch=False)
    try:
        await asyncio.gather(first.start(), second.start())
        async with first.db.read() as conn:
            counts = Counter((await conn.execute(select(s.objects.c.path).where(
                s.objects.c.deleted.is_(False)))).scalars())
    finally:
        await asyncio.gather(first.close(), second.close())
    assert len(counts) == 60 and set(counts.values()) == {1}
