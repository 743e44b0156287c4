"""The creator's bytes when processes race: a real saving process, the real tools, real files."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from conftest import LomoEnv, async_wait_for
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.tools.registry import ToolContext, ToolError
from lomo_tui.workspace.errors import WorkspaceError
from lomo_tui.workspace.files import content_hash, replace_if_unchanged, settled_hash
from lomo_tui.workspace import files as files_module

# The creator: saves sequence 1, 2, 3 … alternating an editor's rename save and an in-place write.
# Before each save it looks at the file: if it shows a creator sequence older than its last save,
# that save was lost (overwritten by a write based on an older version).
CREATOR = r"""
import json, os, re, sys, time
path, stop = sys.argv[1], sys.argv[2]
seq_re = re.compile(r"creator (\d{6}) end")

def shown():
    try:
        with open(path, encoding="utf-8") as fh:
            found = seq_re.findall(fh.read())
    except FileNotFoundError:
        found = []
    return int(found[0]) if found else -1

last = saves = lost = glimpses = 0
while not os.path.exists(stop):
    if last and shown() < last:
        # An agent's replacement may show for an instant while it is checked and undone; a lost save
        # stays lost (every later agent write builds on the older text).
        deadline = time.monotonic() + 3.0
        while shown() < last and time.monotonic() < deadline:
            time.sleep(0.001)
        if shown() < last:
            lost += 1
        else:
            glimpses += 1
    last += 1
    body = f"creator {last:06d} end\n"
    if last % 2:
        tmp = path + f".{last}~"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(body)
        os.replace(tmp, path)
    else:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(body)
    saves += 1
    time.sleep(0.001 * (last % 4))  # a varied pace: some agent writes land between saves, some race them
print(json.dumps({"saves": saves, "lost": lost, "glimpses": glimpses}))
"""


async def agent_writes(rt: Runtime, task: str, rel: str, seconds: float) -> dict[str, int]:
    """The agent reads and rewrites REL through the write_file / edit_file tools until SECONDS pass."""
    claim = SimpleNamespace(task_id=task)
    outcome = {"written": 0, "refused": 0}
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
        ctx = ToolContext(rt.tool_services(), claim, 1, n, f"race/{n}")  # type: ignore[arg-type]
        try:
            read = await rt.registry.get("read_file").fn(ctx, path=rel)
            if n % 2:
                await rt.registry.get("write_file").fn(ctx, path=rel, content=read["content"] + f"agent {n}\n",
                                                       base_version=read["version"])
            else:
                await rt.registry.get("edit_file").fn(ctx, path=rel, old=" end", new=f" end a{n}",
                                                      base_version=read["version"])
            outcome["written"] += 1
        except (WorkspaceError, ToolError):
            outcome["refused"] += 1
    return outcome


async def test_after_the_creator_saves_a_sequence_the_disk_never_shows_an_older_one(lomo: LomoEnv,
                                                                                      tmp_path: Path) -> None:
    target = lomo.workspace / "scene.md"
    target.write_text("creator 000000 end\n")
    stop = tmp_path / "stop"
    rt = Runtime(lomo.settings(), watch=True)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Scene")
        creator = subprocess.Popen([sys.executable, "-c", CREATOR, str(target), str(stop)], stdout=subprocess.PIPE,
                                   text=True)
        try:
            outcome = await agent_writes(rt, task, "scene.md", 3.0)
        finally:
            stop.write_text("")
            out, _ = creator.communicate(timeout=30)
    finally:
        await rt.close()
    result = json.loads(out)
    assert result["lost"] == 0, (result, outcome)
    assert result["saves"] > 100 and outcome["written"] > 0, (result, outcome)
    assert "creator" in target.read_text()
    assert not [p.name for p in lomo.workspace.iterdir() if p.name.startswith(".lomo-tmp-")]


def test_a_stale_replacement_gives_the_file_back_and_reports_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("base\n")
    base = content_hash(path)
    path.write_text("the creator's save\n")
    assert replace_if_unchanged(path, b"agent\n", base) is False
    assert path.read_text() == "the creator's save\n"
    assert replace_if_unchanged(path, b"agent\n", content_hash(path)) is True
    assert path.read_text() == "agent\n"
    assert replace_if_unchanged(path, b"again\n", None) is False  # "no file there" no longer holds
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_without_an_atomic_exchange_the_portable_path_keeps_the_same_promise(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files_module, "_RENAMEAT2", None)
    path = tmp_path / "notes.md"
    path.write_text("base\n")
    os.chmod(path, 0o640)
    base = content_hash(path)
    path.write_text("the creator's save\n")
    assert replace_if_unchanged(path, b"agent\n", base) is False
    assert path.read_text() == "the creator's save\n"
    assert replace_if_unchanged(path, b"agent\n", content_hash(path)) is True
    assert path.read_text() == "agent\n" and (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_a_file_still_open_for_writing_is_hashed_only_after_its_writer_closes_it(tmp_path: Path) -> None:
    path = tmp_path / "in-place.md"
    path.write_text("")
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "fh = open(sys.argv[1], 'w')\n"
        "print('open', flush=True)\n"
        "time.sleep(0.3)\n"
        "fh.write('the creator typed this'); fh.close()\n"), str(path)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "open"
    digest, settled = settled_hash(path)
    writer.wait(timeout=10)
    assert settled and digest == content_hash(path)  # the finished save was hashed, not the empty file


def test_a_file_a_writer_keeps_open_counts_as_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files_module, "SETTLE_SECONDS", 0.2)
    path = tmp_path / "held.md"
    path.write_text("base\n")
    base = content_hash(path)
    with open(path, "a"):  # an editor holding the file open for writing, nothing written yet
        assert replace_if_unchanged(path, b"agent\n", base) is False
    assert path.read_text() == "base\n"
    assert replace_if_unchanged(path, b"agent\n", base) is True  # closed: the write goes through


async def test_edit_file_on_a_file_the_creator_changed_after_the_check_is_a_conflict(lomo: LomoEnv,
                                                                                   monkeypatch) -> None:
    """The edit applies to the bytes whose version was checked; a save in between is a conflict."""
    target = lomo.workspace / "shot.md"
    target.write_text("## Shot 1\nA fox.\n")
    rt = Runtime(lomo.settings(), watch=False)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Shot")
        read = await rt.workspace.read("shot.md", task)
        real = files_module.replace_if_unchanged

        def creator_saves_first(path: Path, data: bytes, base: str | None) -> bool:
            path.write_text("## Shot 1\nThe creator rewrote it.\n")
            return real(path, data, base)

        monkeypatch.setattr("lomo_tui.workspace.objects.replace_if_unchanged", creator_saves_first)
        with pytest.raises(WorkspaceError, match="version 2"):
            await rt.workspace.edit("shot.md", [("A fox.", "A wolf.")], read["version"], task, "k1")
        assert target.read_text() == "## Shot 1\nThe creator rewrote it.\n"
        async with rt.db.read() as conn:
            authors = (await conn.execute(select(s.object_versions.c.author).order_by(
                s.object_versions.c.version))).scalars().all()
        assert authors == ["creator", "creator"]
    finally:
        await rt.close()


async def test_a_watcher_sample_taken_before_an_agent_write_is_never_recorded_after_it(lomo: LomoEnv) -> None:
    """observe() looks at the file only once it holds the lock, so a look older than the agent's
    recorded write cannot become the newest version (or a false creator version)."""
    (lomo.workspace / "note.md").write_text("the creator's first text\n")
    rt = Runtime(lomo.settings(), watch=False)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Note")
        read = await rt.workspace.read("note.md", task)
        async with rt.db.write() as conn:  # an agent write in flight holds the lock
            watcher = asyncio.create_task(rt.workspace.observe("note.md"))
            await async_wait_for(lambda: rt.db._write_lock._waiters, timeout=10, what="the watcher waiting")
            await asyncio.to_thread((lomo.workspace / "note.md").write_text, "the agent's text\n")
            seen = await rt.workspace.record(conn, "note.md", content_hash(lomo.workspace / "note.md"), 17,
                                             author="agent", task_id=task, key="k")
            assert seen.version == read["version"] + 1
        await watcher
        async with rt.db.read() as conn:
            rows = (await conn.execute(select(s.object_versions.c.version, s.object_versions.c.author).order_by(
                s.object_versions.c.version))).all()
            notices = (await conn.execute(select(func.count()).select_from(s.notices))).scalar()
    finally:
        await rt.close()
    assert [tuple(r) for r in rows] == [(1, "creator"), (2, "agent")] and notices == 0


@pytest.mark.slow
async def test_on_postgresql_appends_racing_another_processs_watcher_are_all_done_and_recorded_once(
        pg_lomo: LomoEnv, kill_on_exit) -> None:
    log = pg_lomo.workspace / "log.md"
    log.write_text("# log\n")
    rt = Runtime(pg_lomo.settings(), watch=False)
    await rt.open()
    worker = pg_lomo.popen("worker")  # its watcher records every change it sees
    kill_on_exit(worker)
    try:
        async def indexed() -> bool:
            async with rt.db.read() as conn:
                return bool((await conn.execute(select(func.count()).select_from(s.objects))).scalar())

        await async_wait_for(indexed, timeout=60, what="the worker indexing the workspace")
        task = await rt.ledger.create_task("Log")
        claim = SimpleNamespace(task_id=task)
        failures: list[str] = []
        lines: list[str] = []
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            n = len(lines) + 1
            try:
                await rt.registry.get("append_file").fn(ToolContext(rt.tool_services(), claim, 1, n, f"append/{n}"),  # type: ignore
                                                        path="log.md", text=f"line {n}\n")
            except Exception as exc:  # noqa: BLE001 — every failure is the defect under test
                failures.append(f"{type(exc).__name__}: {exc}"[:200])
            lines.append(f"line {n}\n")
        async with rt.db.read() as conn:
            keys = Counter((await conn.execute(select(s.object_versions.c.idempotency_key).where(
                s.object_versions.c.idempotency_key.like("append/%")))).scalars())
    finally:
        worker.terminate()
        worker.communicate(timeout=30)
        await rt.close()
    assert failures == []
    assert log.read_text() == "# log\n" + "".join(lines)
    assert len(keys) == len(lines) and set(keys.values()) == {1}


async def test_a_write_that_took_effect_before_its_record_was_lost_is_done_when_retried(lomo: LomoEnv) -> None:
    """The process died (or its commit failed) after the file was replaced: the retried call finds its
    own bytes over the version it named and records them as its write, not as a creator conflict."""
    (lomo.workspace / "brief.md").write_text("the creator's brief\n")
    rt = Runtime(lomo.settings(), watch=False)
    await rt.start()
    try:
        task = await rt.ledger.create_task("Brief")
        read = await rt.workspace.read("brief.md", task)
        (lomo.workspace / "brief.md").write_text("the agent's brief\n")  # the replacement that happened
        done = await rt.workspace.write("brief.md", "the agent's brief\n", read["version"], task, "turn/1/0")
        async with rt.db.read() as conn:
            rows = (await conn.execute(select(s.object_versions.c.version, s.object_versions.c.author,
                                              s.object_versions.c.idempotency_key).order_by(
                s.object_versions.c.version))).all()
    finally:
        await rt.close()
    assert done == {"path": "brief.md", "version": 2}
    assert [tuple(r) for r in rows] == [(1, "creator", None), (2, "agent", "turn/1/0")]
