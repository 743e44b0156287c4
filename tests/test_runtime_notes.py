"""A note the runtime writes to the model (a held call has run after its card was answered) is the runtime's,
not the creator's: stored as a `system` message, it never reaches the summaries' "the creator said", the
memory's creator words or the creator's stream — and the model still reads it in place."""
from __future__ import annotations

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.context.history import History
from lomo_tui.context.summaries import extractive
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.views import load_stream


async def test_a_held_calls_note_is_the_runtimes_not_the_creators(lomo: LomoEnv) -> None:
    lomo.replay(
        {"content": None, "tool_calls": [{"name": "generate_image", "arguments": {"prompt": "a jazz poster"}}]},
        {"content": "the poster is made", "tool_calls": []})
    rt = Runtime(lomo.settings())
    rt.budget = type(rt.budget)(free_per_call=0.0, daily_free_cap=0.0)  # the paid call waits on its card
    await rt.start()
    try:
        task = await rt.ledger.create_task("Jazz night")
        await rt.send("a jazz poster", task)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
        await rt.resolve_gate(gate.id, approve=True, option=1)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            notes = (await conn.execute(select(s.messages).where(
                s.messages.c.task_id == task, s.messages.c.name == s.RUNTIME_NOTE))).all()
            history = History(task)
            await history.refresh(conn)
        page = await load_stream(rt.db, task)
    finally:
        await rt.close()
    [note] = notes
    assert note.role == "system" and note.content.startswith("[Lomo runtime] generate_image")
    [entry] = [e for e in history.recent if e.name == s.RUNTIME_NOTE]
    assert entry.role == "system" and entry.chat == {"role": "user", "content": note.content}  # read in place
    said = extractive(history.recent).split("The creator said:")[1].split("\n\n")[0]
    assert "a jazz poster" in said and "[Lomo runtime" not in said
    assert [i.text for i in page.items if i.kind == "user"] == ["a jazz poster"]
    assert not any("[Lomo runtime" in i.text for i in page.items)
