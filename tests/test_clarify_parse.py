"""A message the router asks about (a clarify card) is parsed once: on arrival, not again when the creator's
choice delivers it to a task (issue #12). Real runtime, real SQLite, the offline planner `lomo/local`."""
from __future__ import annotations

import time

from conftest import LomoEnv
from sqlalchemy import select, update

import pytest

from lomo_tui.language import intent as reading
from lomo_tui.language import parsed
from lomo_tui.router import index
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


async def _task(rt: Runtime, title: str, goal: str, path: str, age: float) -> str:
    async with rt.db.write() as conn:
        task_id = await rt.ledger.create_task(title, kind="persistent", goal=goal, conn=conn)
        await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(
            updated_at=time.time() - age, created_at=time.time() - age))
        await index.refresh_search_text(conn, task_id)
    await rt.workspace.write(path, f"{path}\n", None, task_id, f"k-{task_id}")
    return task_id


@pytest.mark.parametrize("choice", ["send", "new"])
async def test_a_message_delivered_after_a_clarify_card_is_parsed_once(lomo: LomoEnv, choice: str) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"), watch=False)
    await rt.start()
    try:
        jazz = await _task(rt, "Jazz night poster series", "Four retro posters for the jazz night",
                           "posters/jazz_1.png", 360)
        await _task(rt, "Summer sale posters", "Three posters for the summer sale", "posters/sale_1.png", 180)
        parses, reads = parsed.PARSES, reading.READS
        await rt.send("change the posters")
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            [gate] = (await conn.execute(select(s.gates).where(s.gates.c.kind == "clarify"))).all()
        option = next(i for i, a in enumerate(gate.scope["actions"], 1)
                      if a.get("do") == choice and a.get("task_id", jazz) == jazz)
        await rt.resolve_gate(gate.id, approve=True, option=option, by="creator:test")
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            [(to, read)] = (await conn.execute(select(s.inbox.c.task_id, s.inbox.c.consumed_turn).where(
                s.inbox.c.text == "change the posters", s.inbox.c.source == "router"))).all()
        assert read and (to == jazz) == (choice == "send")  # the chosen (or new) task read it
        assert parsed.PARSES - parses == 1  # on arrival only: not again on its way to the chosen task
        assert reading.READS - reads == 1  # and no reader there read the words again
    finally:
        await rt.close()
