"""The memory view's backend (issue #14 §6, F3): edit is a new version on REFINE evidence, confirm adds CONFIRM
evidence without a version, the forget preview names what goes. Real runtime, real SQLite (no workers)."""
from __future__ import annotations

import pytest
from sqlalchemy import select, text

from conftest import LomoEnv
from lomo_tui import memory
from lomo_tui.errors import LomoError, UnknownId
from lomo_tui.memory import actions
from lomo_tui.memory.listing import memory_rows
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


_MIGRATED: dict[str, bytes] = {}


@pytest.fixture
async def rt(lomo: LomoEnv):
    if "db" in _MIGRATED:  # migrating once per module keeps the tests fast
        lomo.db_path.write_bytes(_MIGRATED["db"])
    runtime = Runtime(lomo.settings(model="lomo/local"))
    await runtime.open()
    if "db" not in _MIGRATED:
        await runtime.close()
        _MIGRATED["db"] = lomo.db_path.read_bytes()
        runtime = Runtime(lomo.settings(model="lomo/local"))
        await runtime.open()
    yield runtime
    await runtime.close()


async def remembered(rt: Runtime, words: str) -> tuple[str, str]:
    """(message id, memory id) of a lasting statement the creator sent."""
    message_id, _ = await rt.send(words, None)
    async with rt.db.read() as conn:
        rows = [r for r in await memory_rows(conn) if any(e["message_id"] == message_id for e in r["evidence"])]
    assert rows, f"nothing remembered from {words!r}"
    return message_id, rows[0]["id"]


async def versions(rt: Runtime, memory_id: str) -> list[dict]:
    async with rt.db.read() as conn:
        return await memory_rows(conn, every_version=True, memory_id=memory_id)


async def fts_ids(rt: Runtime) -> list[str]:
    async with rt.db.read() as conn:
        return sorted(r[0] for r in (await conn.execute(text("SELECT version_id FROM memory_fts"))).all())


async def test_an_edit_is_a_new_version_on_refine_evidence_and_the_old_one_is_superseded(rt: Runtime):
    origin, memory_id = await remembered(rt, "I usually like muted, low-saturation colours.")
    done = await actions.edit_memory(rt.db, memory_id, "I usually like muted colours with one cream accent.")
    assert done["version"] == 2 and not done["unchanged"]
    v1, v2 = await versions(rt, memory_id)
    assert (v1["status"], v2["status"]) == ("superseded", "active")
    assert v2["text"] == "I usually like muted colours with one cream accent."
    assert v2["evidence"] == [{"message_id": origin, "role": "origin"},
                              {"message_id": done["evidence"], "role": "refine"}]
    async with rt.db.read() as conn:
        evidence = (await conn.execute(select(s.memory_evidence).where(
            s.memory_evidence.c.id == done["evidence"]))).one()
    assert evidence.text == v2["text"] and evidence.source == "creator" and evidence.extract_status == "skipped"
    assert await fts_ids(rt) == sorted(r["version_id"] for r in await rt_active(rt))
    assert "cream accent" in await memory.profile_snapshot(rt.db)
    assert "low-saturation" not in await memory.profile_snapshot(rt.db)


async def rt_active(rt: Runtime) -> list[dict]:
    async with rt.db.read() as conn:
        return await memory_rows(conn)


async def test_forgetting_the_message_an_edited_memory_came_from_takes_the_edit_too(rt: Runtime):
    origin, memory_id = await remembered(rt, "I always prefer kobaltblue posters.")
    await actions.edit_memory(rt.db, memory_id, "I always prefer kobaltblue posters, matte paper.")
    await memory.forget(rt.db, evidence_ids=[origin])
    assert [v["status"] for v in await versions(rt, memory_id)][:2] == ["forgotten", "forgotten"]
    assert not [r for r in await rt_active(rt) if "kobaltblue" in r["text"]]


async def test_unchanged_or_empty_edits_change_nothing(rt: Runtime):
    _, memory_id = await remembered(rt, "I usually like wide margins.")
    same = await actions.edit_memory(rt.db, memory_id, "  I usually like   wide margins. ")
    assert same["unchanged"] and len(await versions(rt, memory_id)) == 1
    with pytest.raises(LomoError, match="forget it instead"):
        await actions.edit_memory(rt.db, memory_id, "   ")
    with pytest.raises(UnknownId):
        await actions.edit_memory(rt.db, "mem-nope", "x")


async def test_a_confirmation_adds_confirm_evidence_and_no_version(rt: Runtime):
    origin, memory_id = await remembered(rt, "I usually like serif titles.")
    done = await actions.confirm_memory(rt.db, memory_id)
    [v1] = await versions(rt, memory_id)
    assert v1["status"] == "active" and v1["version"] == 1 == done["version"]
    assert v1["evidence"] == [{"message_id": origin, "role": "origin"},
                              {"message_id": done["evidence"], "role": "confirm"}]
    async with rt.db.read() as conn:
        row = (await conn.execute(select(s.memory_evidence.c.text).where(
            s.memory_evidence.c.id == done["evidence"]))).scalar()
    assert row == actions.CONFIRMED_TEXT and "serif" not in row  # the confirmation copies no memory text


async def test_an_edited_inference_becomes_stated_and_a_forgotten_memory_cannot_be_edited(rt: Runtime):
    for subject in ("a cat", "a city", "a robot"):
        await rt.send(f"make {subject} in cyberpunk style", None)
    [inferred] = [r for r in await rt_active(rt) if not r["stated"]]
    await actions.edit_memory(rt.db, inferred["id"], "I like cyberpunk style for illustrations.")
    [now] = [r for r in await rt_active(rt) if r["id"] == inferred["id"]]
    assert now["stated"] and now["version"] == 2
    await memory.forget(rt.db, memory_ids=[inferred["id"]])
    with pytest.raises(LomoError, match="forgotten"):
        await actions.confirm_memory(rt.db, inferred["id"])


async def test_entries_carry_each_versions_sources_with_the_creators_words(rt: Runtime):
    origin, memory_id = await remembered(rt, "I usually like muted colours.")
    task_id = await rt.ledger.create_task("Poster")
    await rt.send("Never put text over faces.", task_id)
    await actions.edit_memory(rt.db, memory_id, "I usually like muted colours, never neon.")
    async with rt.db.read() as conn:
        entries = await actions.memory_entries(conn)
    first = entries[0]
    assert first.id == memory_id and first.version == 2 and first.stated and first.scope_title is None
    sources = first.sources[first.version_id]
    assert [(x.role, x.text) for x in sources] == [("origin", "I usually like muted colours."),
                                                   ("refine", "I usually like muted colours, never neon.")]
    assert sources[0].message_id == origin and sources[0].task_title is None and sources[0].main
    rule = next(e for e in entries if e.kind == "constraint")
    assert rule.sources[rule.version_id][0].task_title == "Poster"


async def test_the_forget_preview_lists_the_versions_and_the_profile(rt: Runtime):
    _, memory_id = await remembered(rt, "I usually like muted colours.")
    await actions.edit_memory(rt.db, memory_id, "I usually like muted colours, never neon.")
    async with rt.db.read() as conn:
        preview = await actions.forget_preview(conn, memory_id)
    assert preview["versions"] == [(1, "superseded", "I usually like muted colours."),
                                   (2, "active", "I usually like muted colours, never neon.")]
    assert preview["profile"] is True and preview["summaries"] == 0 and preview["contexts"] == 0
    await memory.forget(rt.db, memory_ids=[memory_id])
    async with rt.db.read() as conn:
        with pytest.raises(UnknownId):
            await actions.forget_preview(conn, memory_id)
