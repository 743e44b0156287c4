"""The shared workspace through the runtime: real files, the real watcher, optimistic concurrency."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import select

from conftest import LomoEnv, async_wait_for
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

STORYBOARD = "# Storyboard\n\n## Shot 1\nA fox wakes.\n\n## Shot 2\nThe fox runs.\n"


def call(name: str, **arguments) -> dict:
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


DONE = {"content": "done", "tool_calls": []}


async def run_task(rt: Runtime, task: str, text: str) -> dict:
    """Send TEXT to TASK, run until quiet, and return the task's tool calls (by seq order)."""
    await rt.send(text, task)
    assert await rt.run_until_quiescent(30)
    async with rt.db.read() as conn:
        rows = (await conn.execute(select(s.tool_calls).join(s.turns, s.turns.c.id == s.tool_calls.c.turn_id).where(
            s.turns.c.task_id == task).order_by(s.tool_calls.c.started_at))).all()
    return {f"{r.name}#{i}": r for i, r in enumerate(rows)}


async def notices(rt: Runtime, task: str) -> list[str]:
    async with rt.db.read() as conn:
        return await rt.workspace.open_notices(conn, task)


async def versions(rt: Runtime, path: str) -> list[tuple[int, str]]:
    async with rt.db.read() as conn:
        return [(r.version, r.author) for r in (await conn.execute(select(s.object_versions).join(
            s.objects, s.objects.c.id == s.object_versions.c.object_id).where(s.objects.c.path == path).order_by(
            s.object_versions.c.version))).all()]


@pytest.fixture
async def live(lomo: LomoEnv):
    (lomo.workspace / "storyboard.md").write_text(STORYBOARD)
    rt = Runtime(lomo.settings(), watch=True)
    await rt.start()
    yield lomo, rt
    await rt.close()


async def test_vim_style_save_leaves_a_notice_for_the_task_that_read_it(live) -> None:
    lomo, rt = live
    lomo.replay(call("read_file", path="storyboard.md"), DONE)
    task = await rt.ledger.create_task("Storyboard")
    await run_task(rt, task, "read the storyboard")
    # vim: swap file, write-test file, new content to a temp name, rename over the original
    (lomo.workspace / ".storyboard.md.swp").write_bytes(b"swap")
    (lomo.workspace / "4913").write_text("")
    os.unlink(lomo.workspace / "4913")
    tmp = lomo.workspace / "storyboard.md~tmp"
    tmp.write_text(STORYBOARD.replace("The fox runs.", "The fox runs into the snow."))
    os.replace(tmp, lomo.workspace / "storyboard.md")
    found = await async_wait_for(lambda: notices(rt, task), timeout=10, what="a change notice")
    assert found == ["storyboard.md v1 → v2: 'Shot 2' changed; re-read before continuing"]
    assert await versions(rt, "storyboard.md") == [(1, "creator"), (2, "creator")]
    async with rt.db.read() as conn:
        task_row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
        extra, _ = await rt.context_extras(conn, task_row)
        turns = (await conn.execute(select(s.turns.c.status).where(s.turns.c.task_id == task))).scalars().all()
    assert any("Shot 2" in section for section in extra)  # in the task's next model context
    assert list(turns) == ["completed"]  # the edit did not wake the agent


async def test_agent_write_on_a_stale_version_is_refused_and_the_creators_bytes_survive(live) -> None:
    lomo, rt = live
    lomo.replay(call("read_file", path="storyboard.md"), DONE,
                call("write_file", path="storyboard.md", content="agent rewrite\n", base_version=1), DONE)
    task = await rt.ledger.create_task("Storyboard")
    await run_task(rt, task, "read it")
    creator = STORYBOARD + "\n## Shot 3\nThe creator adds a shot.\n"
    (lomo.workspace / "storyboard.md").write_text(creator)  # not yet seen by the watcher, perhaps
    calls = await run_task(rt, task, "now rewrite it")
    write = [c for k, c in calls.items() if k.startswith("write_file")][0]
    assert write.status == "failed" and "version 2" in write.result["error"]
    assert (lomo.workspace / "storyboard.md").read_text() == creator


async def test_agent_writes_are_its_versions_and_notify_nobody(live) -> None:
    lomo, rt = live
    lomo.replay(call("read_file", path="storyboard.md"), DONE,
                call("edit_file", path="storyboard.md", old="A fox wakes.", new="A fox yawns.", base_version=1), DONE)
    reader = await rt.ledger.create_task("Reader")
    writer = await rt.ledger.create_task("Writer")
    await run_task(rt, writer, "read")
    await run_task(rt, writer, "edit")
    await rt.send("x", reader)  # unrelated task that never read the file
    await rt.run_until_quiescent(10)
    (lomo.workspace / "marker.md").write_text("later")  # once the watcher has seen this, it saw the edit too
    await async_wait_for(lambda: versions(rt, "marker.md"), timeout=10, what="the watcher to catch up")
    assert await versions(rt, "storyboard.md") == [(1, "creator"), (2, "agent")]
    assert await notices(rt, writer) == [] and await notices(rt, reader) == []
    assert "A fox yawns." in (lomo.workspace / "storyboard.md").read_text()


async def test_edit_file_needs_an_exact_unique_snippet_and_applies_all_or_nothing(live) -> None:
    lomo, rt = live
    lomo.replay(call("read_file", path="storyboard.md"),
                call("edit_file", path="storyboard.md", old="The wolf", new="x", base_version=1),
                call("edit_file", path="storyboard.md", old="fox", new="cat", base_version=1),
                call("edit_file", path="storyboard.md", base_version=1,
                     edits=[{"old": "A fox wakes.", "new": "A cat wakes."}, {"old": "missing", "new": "y"}]),
                call("edit_file", path="storyboard.md", base_version=1,
                     edits=[{"old": "A fox wakes.", "new": "A cat wakes."}, {"old": "The fox runs.", "new": "It runs."}]),
                DONE)
    task = await rt.ledger.create_task("Edits")
    calls = list((await run_task(rt, task, "edit")).values())
    missing, duplicated, partial, valid = calls[1:]
    assert missing.status == "failed" and "not found" in missing.result["error"].lower()
    assert duplicated.status == "failed" and "2" in duplicated.result["error"]
    assert partial.status == "failed"
    assert valid.status == "done" and valid.result["version"] == 2
    text = (lomo.workspace / "storyboard.md").read_text()
    assert "A cat wakes." in text and "It runs." in text and "The fox runs." not in text


async def test_paths_outside_the_workspace_are_refused(live, tmp_path: Path) -> None:
    lomo, rt = live
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (lomo.workspace / "link.txt").symlink_to(outside)
    lomo.replay(call("read_file", path="../secret.txt"), call("read_file", path=str(outside)),
                call("read_file", path="link.txt"),
                call("write_file", path="../../evil.md", content="x", base_version=None), DONE)
    task = await rt.ledger.create_task("Escape")
    calls = list((await run_task(rt, task, "try")).values())
    assert [c.status for c in calls] == ["failed"] * 4
    assert all("workspace" in c.result["error"] for c in calls)
    assert outside.read_text() == "secret" and not (tmp_path.parent / "evil.md").exists()


async def test_binary_and_huge_files_are_handled_without_blocking(live) -> None:
    lomo, rt = live
    (lomo.workspace / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(4096))
    with open(lomo.workspace / "huge.txt", "wb") as fh:
        fh.write(b"a" * (50 * 1024 * 1024))
    lomo.replay(call("read_file", path="photo.png"), call("read_file", path="huge.txt"), DONE)
    task = await rt.ledger.create_task("Files")
    photo, huge = list((await run_task(rt, task, "read")).values())
    assert photo.status == "done" and "binary" in photo.result["content"]
    assert huge.status == "failed" and "MB" in huge.result["error"]
    await async_wait_for(lambda: versions(rt, "huge.txt"), timeout=20, what="the 50 MB file to be versioned")


async def test_delete_and_rename_are_recorded_with_identity_kept(live) -> None:
    lomo, rt = live
    (lomo.workspace / "a.md").write_text("alpha\n")
    await async_wait_for(lambda: versions(rt, "a.md"), timeout=10)
    async with rt.db.read() as conn:
        first_id = (await conn.execute(select(s.objects.c.id).where(s.objects.c.path == "a.md"))).scalar()
    os.rename(lomo.workspace / "a.md", lomo.workspace / "b.md")

    async def moved() -> bool:
        async with rt.db.read() as conn:
            return (await conn.execute(select(s.objects.c.id).where(s.objects.c.path == "b.md"))).scalar() == first_id

    await async_wait_for(moved, timeout=10, what="the rename")
    os.unlink(lomo.workspace / "b.md")

    async def deleted() -> bool:
        async with rt.db.read() as conn:
            return bool((await conn.execute(select(s.objects.c.deleted).where(s.objects.c.id == first_id))).scalar())

    await async_wait_for(deleted, timeout=10, what="the delete")


async def test_flow_nodes_the_creator_changed_are_refused_others_merge(live) -> None:
    lomo, rt = live
    flow = {"lomo_flow": 1, "nodes": [{"id": "a", "type": "prompt", "params": {"text": "fox"}},
                                      {"id": "b", "type": "generate_image", "params": {"size": "square"}}],
            "edges": [{"from": "a.text", "to": "b.prompt"}]}
    path = lomo.workspace / "shots.flow.json"
    path.write_text(json.dumps(flow))
    lomo.replay(call("read_flow", path="shots.flow.json"), DONE,
                call("edit_flow_nodes", path="shots.flow.json", base_version=1, edits={"a": {"text": "wolf"}}),
                call("edit_flow_nodes", path="shots.flow.json", base_version=1, edits={"b": {"size": "wide"}}),
                call("read_flow", path="shots.flow.json"), DONE)
    task = await rt.ledger.create_task("Flow")
    await run_task(rt, task, "read the flow")
    flow["nodes"][0]["params"]["text"] = "fox at dawn"  # the creator edits node a
    path.write_text(json.dumps(flow))
    calls = list((await run_task(rt, task, "edit")).values())
    conflict, merge, reread = calls[1:]
    assert conflict.status == "failed" and "a changed since" in conflict.result["error"]
    assert merge.status == "done" and "a changed" in merge.result["notice"]
    saved = json.loads(path.read_text())
    assert [n["params"] for n in saved["nodes"]] == [{"text": "fox at dawn"}, {"size": "wide"}]
    assert reread.status == "done" and reread.result["version"] == 3


async def test_edits_made_while_lomo_was_closed_are_noticed_at_start(lomo: LomoEnv) -> None:
    (lomo.workspace / "storyboard.md").write_text(STORYBOARD)
    lomo.replay(call("read_file", path="storyboard.md"), DONE)
    rt = Runtime(lomo.settings(), watch=False)
    await rt.start()
    task = await rt.ledger.create_task("Storyboard")
    await run_task(rt, task, "read")
    await rt.close()
    (lomo.workspace / "storyboard.md").write_text(STORYBOARD.replace("Shot 1\nA fox wakes.", "Shot 1\nA fox sleeps."))
    rt = Runtime(lomo.settings(), watch=False)
    await rt.start()
    try:
        assert await notices(rt, task) == ["storyboard.md v1 → v2: 'Shot 1' changed; re-read before continuing"]
    finally:
        await rt.close()


async def test_search_files_finds_lines_in_text_files_only(live) -> None:
    lomo, rt = live
    (lomo.workspace / "notes").mkdir()
    (lomo.workspace / "notes" / "ideas.md").write_text("a fox at dawn\nA FOX at dusk\nno match\n")
    (lomo.workspace / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\nfox\x00\x00")
    (lomo.workspace / ".lomo" / "secret.md").write_text("fox in the state folder")
    lomo.replay(call("search_files", query="fox"), call("search_files", query="fox", pattern="*.txt"), DONE)
    task = await rt.ledger.create_task("Search")
    found, none = list((await run_task(rt, task, "find the fox")).values())
    assert sorted((m["path"], m["line"]) for m in found.result["matches"]) == [
        ("notes/ideas.md", 1), ("notes/ideas.md", 2), ("storyboard.md", 4), ("storyboard.md", 7)]
    assert none.result["matches"] == []
