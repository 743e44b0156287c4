"""Ids: unique in practice across a long-lived database, and older short ids stay valid."""
from __future__ import annotations

import pytest

import asyncio
import json
import re

from sqlalchemy import String

from conftest import LomoEnv
from lomo_tui.base.ids import new_id
from lomo_tui.ledger import Ledger
from lomo_tui.store import migrate, schema
from lomo_tui.store.engine import Database

PREFIXES = ("task", "turn", "msg", "step", "gate", "auth", "obj", "job", "chg")
OLD_ID = "task-3f9a1c2b"  # the shape ids had before: 32 random bits
DONE = {"content": "done", "tool_calls": []}


def test_300_000_new_ids_never_collide_and_sort_in_the_order_they_were_made() -> None:
    ids = [new_id("obj") for _ in range(300_000)]  # 32 random bits collided ~10 times here
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"obj-[0-9a-hjkmnp-tv-z]{26}", i) for i in ids[:1000])
    assert ids[0][:14] <= ids[-1][:14]  # the leading digits are the time


def test_every_new_id_fits_the_columns_that_hold_ids() -> None:
    longest = max(len(new_id(prefix)) for prefix in PREFIXES)
    for table in schema.metadata.tables.values():
        for column in table.columns:
            if (column.name == "id" or column.name.endswith("_id")) and isinstance(column.type, String) \
                    and column.type.length:
                assert longest <= column.type.length, f"{table.name}.{column.name}"


@pytest.mark.slow
def test_a_task_with_an_old_short_id_and_one_with_a_new_id_both_receive_messages_named_to_them(
        lomo: LomoEnv) -> None:
    async def old_task() -> None:
        db = Database(lomo.db_url)
        try:
            await migrate.upgrade(db)
            await Ledger(db, 30).create_task("Made by an older Lomo", task_id=OLD_ID)
        finally:
            await db.close()
    asyncio.run(old_task())
    new_task = lomo.new_task("Made now")
    assert re.fullmatch(r"task-[0-9a-z]{26}", new_task)
    lomo.replay(DONE, DONE)
    for task in (OLD_ID, new_task):
        proc = lomo.run("--run-once", f"{task}: hello there")
        assert proc.returncode == 0, proc.stderr
    inbox = {m["task_id"]: m["text"] for m in lomo.inspect()["inbox"]}
    assert inbox[OLD_ID] == f"{OLD_ID}: hello there" and inbox[new_task] == f"{new_task}: hello there"
    stopped = lomo.run("task", "stop", OLD_ID, "--json")
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["id"] == OLD_ID, stopped.stderr
