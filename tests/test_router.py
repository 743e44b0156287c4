"""Main thread and Router: deterministic routes (A4), clarify gates and route memory (A5), a bounded
index with search for older tasks (A6), duplicate goals (A7), unavailable targets (A8), no authority (A9).

Real runtime, real SQLite; the Router's decisions come from `lomo/replay` lines (or `lomo/local`)."""
from __future__ import annotations

import json
import time

import pytest

from conftest import LomoEnv
from sqlalchemy import func, insert, select, update

from lomo_tui.router import hooks, index
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

MAIN = "main"


def call(name: str, **arguments) -> dict:
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


async def started(lomo: LomoEnv, *lines: dict, model: str = "lomo/replay") -> Runtime:
    lomo.replay(*lines)
    rt = Runtime(lomo.settings(model=model), watch=False)
    await rt.start()
    return rt


async def inbox_of(rt: Runtime, task_id: str) -> list[str]:
    async with rt.db.read() as conn:
        return list((await conn.execute(select(s.inbox.c.text).where(s.inbox.c.task_id == task_id).order_by(
            s.inbox.c.sent_at))).scalars())


async def clarify_gates(rt: Runtime) -> list:
    async with rt.db.read() as conn:
        return list((await conn.execute(select(s.gates).where(s.gates.c.kind == "clarify").order_by(
            s.gates.c.created_at))).all())


async def router_calls(rt: Runtime) -> int:
    async with rt.db.read() as conn:
        return (await conn.execute(select(func.count()).select_from(s.model_calls).where(
            s.model_calls.c.purpose == "router"))).scalar()


async def bind(rt: Runtime, task_id: str, rel: str, key: str) -> None:
    """A real file the task wrote (task_objects role output)."""
    await rt.workspace.write(rel, f"{rel}\n", None, task_id, key)


async def make_task(rt: Runtime, title: str, goal: str = "", *, kind: str = "persistent", status: str | None = None,
                    archived: bool = False, age: float = 0.0) -> str:
    async with rt.db.write() as conn:
        task_id = await rt.ledger.create_task(title, kind=kind, goal=goal, conn=conn)
        values: dict = {"archived": archived}
        if status:
            values["status"] = status
        if age:
            values.update(updated_at=time.time() - age, created_at=time.time() - age)
        await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(**values))
        await index.refresh_search_text(conn, task_id)
    return task_id


# ---- A4: deterministic routes --------------------------------------------------------------------------------------
async def test_file_bound_to_one_task_and_a_task_id_go_straight_there(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        posters = await make_task(rt, "Jazz posters")
        clip = await make_task(rt, "Cat clip")
        await bind(rt, posters, "posters/jazz_1.md", "k1")
        await bind(rt, clip, "clips/cat.md", "k2")
        await rt.send("make jazz_1.md a bit warmer")
        await rt.send("posters/jazz_1.md: bigger title")
        await rt.send(f"{clip}: slower please")
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, posters) == ["make jazz_1.md a bit warmer", "posters/jazz_1.md: bigger title"]
        assert await inbox_of(rt, clip) == [f"{clip}: slower please"]
        assert await inbox_of(rt, MAIN) == []
        assert await router_calls(rt) == 0  # no Router call at all
    finally:
        await rt.close()


async def test_unusable_or_shared_file_targets_are_not_chosen_silently(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        stopped = await make_task(rt, "Old posters", status="stopped")
        a, b = await make_task(rt, "Moodboard"), await make_task(rt, "Hero banner")
        await bind(rt, stopped, "old.md", "k1")
        await bind(rt, a, "brand/palette.md", "k2")
        async with rt.db.write() as conn:  # the banner reads the palette too
            obj = (await conn.execute(select(s.objects.c.id).where(s.objects.c.path == "brand/palette.md"))).scalar()
            await conn.execute(insert(s.task_objects).values(task_id=b, object_id=obj, role="input",
                                                             updated_at=time.time()))
        async with rt.db.read() as conn:
            assert await hooks.direct_target(conn, "old.md: warmer") is None
            assert await hooks.direct_target(conn, "palette.md: more muted greens") is None
            _, hints = await hooks.main_context(conn, None, ["palette.md: more muted greens"])
        assert sorted(hints["mentions"]["files"]["palette.md"]) == sorted([a, b])
        assert {e["id"] for e in hints["task_index"] if e["file_match"]} == {a, b}
    finally:
        await rt.close()


# ---- A5: clarify, then route memory --------------------------------------------------------------------------------
async def test_clarify_routes_after_the_creators_choice_and_is_remembered(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        home = await make_task(rt, "Birthday banner for home")
        office = await make_task(rt, "Birthday banner for the office")
        lomo.replay(call("clarify", task_ids=[home, office], question="Which banner?"))
        text = "make the birthday banner more festive"
        await rt.send(text)
        assert await rt.run_until_quiescent(30)
        [gate] = await clarify_gates(rt)
        assert gate.status == "pending" and gate.task_id == MAIN
        labels = [o["label"] for o in gate.options]
        assert len(labels) == 3 and "office" in labels[1] and labels[2] == "A new task"
        assert await inbox_of(rt, office) == []
        await rt.resolve_gate(gate.id, approve=True, option=2, by="creator:test")
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, office) == [text]  # the creator's own words (A10)
        assert await inbox_of(rt, home) == []
        assert await router_calls(rt) == 1  # the choice needed no second model call
        # The same request later goes straight to the chosen task (no model call), and so does a near-repeat.
        await rt.send(text)
        await rt.send("make the birthday banner more festive please")
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, office) == [text, text, "make the birthday banner more festive please"]
        assert await router_calls(rt) == 1
        async with rt.db.read() as conn:  # A9: a clarify answer authorises nothing
            assert (await conn.execute(select(func.count()).select_from(s.authorisations))).scalar() == 0
    finally:
        await rt.close()


@pytest.mark.slow
def test_clarify_through_the_cli_approve_path(lomo: LomoEnv) -> None:
    lomo.replay({"content": "ok", "tool_calls": []})
    a, b = lomo.new_task("Jazz posters"), lomo.new_task("Cafe posters")
    lomo.replay(call("clarify", task_ids=[a, b]))
    proc = lomo.run("--run-once", "warmer posters please")
    assert proc.returncode == 0, proc.stderr
    [gate] = [g for g in lomo.inspect()["gates"] if g["kind"] == "clarify"]
    assert gate["status"] == "pending"
    proc = lomo.run("approve", gate["id"], "--option", "1")
    assert proc.returncode == 0, proc.stderr
    proc = lomo.run("--run-once")
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    assert [m["text"] for m in state["inbox"] if m["task_id"] == a] == ["warmer posters please"]
    assert not [m for m in state["inbox"] if m["task_id"] == b]


async def test_rejected_clarify_delivers_nothing(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        a, b = await make_task(rt, "A"), await make_task(rt, "B")
        lomo.replay(call("clarify", task_ids=[a, b]))
        await rt.send("the thing, bluer")
        assert await rt.run_until_quiescent(30)
        [gate] = await clarify_gates(rt)
        await rt.resolve_gate(gate.id, approve=False)
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, a) == [] and await inbox_of(rt, b) == []
        async with rt.db.read() as conn:
            turn = (await conn.execute(select(s.turns).where(s.turns.c.id == gate.turn_id))).one()
            tasks = (await conn.execute(select(func.count()).select_from(s.tasks))).scalar()
        assert turn.status == "completed" and turn.model_calls == 1 and tasks == 3
    finally:
        await rt.close()


# ---- A7: duplicate goals -------------------------------------------------------------------------------------------
async def test_duplicate_persistent_goal_asks_first(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        jazz = await make_task(rt, "Jazz night poster series", "A series of 4 retro posters for the jazz night")
        lomo.replay(call("create_task", title="Jazz posters", kind="persistent",
                         goal="a series of retro posters for the jazz night"),
                    {"content": "noted", "tool_calls": []},  # the new task's worker
                    call("create_task", title="Jazz posters", kind="persistent", goal="retro jazz posters", force=True))
        await rt.send("make a series of retro posters for the jazz night")
        assert await rt.run_until_quiescent(30)
        [gate] = await clarify_gates(rt)
        assert gate.scope["route"] == "duplicate" and "Jazz night poster series" in gate.question
        assert [a["do"] for a in gate.scope["actions"]] == ["send", "new"]
        await rt.resolve_gate(gate.id, approve=True, option=2)  # "A new task"
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            new = (await conn.execute(select(s.tasks).where(s.tasks.c.kind == "persistent",
                                                            s.tasks.c.id != jazz))).one()
        assert new.title == "Jazz posters" and new.search_text and new.source_inbox
        assert await inbox_of(rt, new.id) == ["make a series of retro posters for the jazz night"]
        # force=True (the creator already chose): no second question.
        await rt.send("yes, a separate jazz poster series please")
        assert await rt.run_until_quiescent(30)
        assert len(await clarify_gates(rt)) == 1
        async with rt.db.read() as conn:
            assert (await conn.execute(select(func.count()).where(s.tasks.c.kind == "persistent"))).scalar() == 3
    finally:
        await rt.close()


# ---- A8: a target that cannot take the message ---------------------------------------------------------------------
async def test_stopped_target_offers_resume_new_or_cancel(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        stopped = await make_task(rt, "Dragon boat posters", status="stopped")
        lomo.replay(call("send_to_task", task_id=stopped))
        await rt.send("add a dragon boat to the posters")
        assert await rt.run_until_quiescent(30)
        [gate] = await clarify_gates(rt)
        assert gate.scope["route"] == "unavailable" and "stopped" in gate.question
        assert [a["do"] for a in gate.scope["actions"]] == ["resume", "new", "cancel"]
        assert await inbox_of(rt, stopped) == []
        await rt.resolve_gate(gate.id, approve=True, option=1)
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, stopped) == ["add a dragon boat to the posters"]
        async with rt.db.read() as conn:
            status = (await conn.execute(select(s.tasks.c.status).where(s.tasks.c.id == stopped))).scalar()
        assert status != "stopped"
    finally:
        await rt.close()


async def test_archived_and_missing_targets_ask_and_cancel_cleanly(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        archived = await make_task(rt, "New year card", archived=True)
        lomo.replay(call("send_to_task", task_id=archived), call("send_to_task", task_id="task-00000000"))
        await rt.send("make the card gold")
        assert await rt.run_until_quiescent(30)
        await rt.send("and the other one too")
        first, = await clarify_gates(rt)
        assert "archived" in first.question
        await rt.resolve_gate(first.id, approve=True, option=3)  # Cancel
        assert await rt.run_until_quiescent(30)
        _, second = await clarify_gates(rt)
        assert second.scope["route"] == "missing" and [a["do"] for a in second.scope["actions"]] == ["new", "cancel"]
        await rt.resolve_gate(second.id, approve=True, option=1)  # a new task
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, archived) == []
        async with rt.db.read() as conn:
            made = (await conn.execute(select(s.tasks.c.id).where(
                s.tasks.c.kind != "main", s.tasks.c.id != archived))).scalars().all()
        assert len(made) == 1 and await inbox_of(rt, made[0]) == ["and the other one too"]
    finally:
        await rt.close()


# ---- A6: a bounded index, search for older tasks -------------------------------------------------------------------
async def seed_many(rt: Runtime, n: int, *, start: int = 0) -> None:
    now = time.time()
    rows = []
    for i in range(start, start + n):
        title = f"Filler project {i} about topic {i % 97}"
        rows.append({"id": f"task-f{i:07x}", "kind": "persistent", "status": "idle", "title": title,
                     "goal": "A long goal that keeps going " * 12, "language": "en", "summary": "summary " * 40,
                     "search_text": index.search_text(title, "A long goal"), "created_at": now - 86400 - i,
                     "updated_at": now - 86400 + i})
    async with rt.db.write() as conn:
        await conn.execute(insert(s.tasks), rows)


async def test_index_stays_bounded_and_search_finds_an_old_task(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        old = await make_task(rt, "Lighthouse 3D model", "A low-poly 3D lighthouse for the harbour scene",
                              age=90 * 86400)
        message = ["the lighthouse model from last month: make the roof red"]
        sizes: list[int] = []
        for start, count in ((0, 60), (60, 540)):
            await seed_many(rt, count, start=start)
            async with rt.db.read() as conn:
                sections, hints = await hooks.main_context(conn, None, message)
            sizes.append(len(sections[0]))
            recent = [e for e in hints["task_index"] if not e["retrieved"]]
            found = [e for e in hints["task_index"] if e["retrieved"]]
            assert len(recent) == index.RECENT and old not in [e["id"] for e in recent]
            assert found and found[0]["id"] == old and found[0]["score"] == 1.0
            assert len(hints["task_index"]) <= index.RECENT + index.RETRIEVED + index.MENTIONED
            assert all(len(e["goal"]) <= index.GOAL_CHARS and len(e["summary"]) <= index.SUMMARY_CHARS
                       for e in hints["task_index"])
        assert sizes[1] <= sizes[0] * 1.1 and sizes[1] < 8000
    finally:
        await rt.close()


# ---- lomo/local end to end -----------------------------------------------------------------------------------------
async def test_lomo_local_routes_a_short_conversation(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"), watch=False)
    await rt.start()
    try:
        async def main_replies() -> list:
            async with rt.db.read() as conn:
                return list((await conn.execute(select(s.messages.c.content, s.messages.c.tool_calls).where(
                    s.messages.c.task_id == MAIN, s.messages.c.role == "assistant").order_by(
                    s.messages.c.id))).all())

        await rt.send("你好")
        assert await rt.run_until_quiescent(60)
        assert "你好" in (await main_replies())[-1].content
        await rt.send("make a series of four retro posters for a jazz night")
        assert await rt.run_until_quiescent(60)
        [call_] = (await main_replies())[-1].tool_calls
        assert call_["name"] == "create_task" and call_["arguments"]["kind"] == "persistent"
        await rt.send("把那套海报改得暖一点")
        assert await rt.run_until_quiescent(60)
        [call_] = (await main_replies())[-1].tool_calls
        async with rt.db.read() as conn:
            posters = (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.kind == "persistent"))).scalar()
        assert call_ == {"name": "send_to_task", "arguments": {"task_id": posters}}
        assert "把那套海报改得暖一点" in await inbox_of(rt, posters)
    finally:
        await rt.close()


def test_eval_outcomes_parse(lomo: LomoEnv) -> None:
    """The labelled set is well formed: every follow-up names a seeded task or an earlier turn's new task."""
    from pathlib import Path

    data = Path(__file__).parent / "data" / "routing"
    turns = 0
    for name in ("dev", "heldout"):
        for line in (data / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            conv = json.loads(line)
            keys = {t["key"] for t in conv.get("tasks", [])}
            for n, turn in enumerate(conv["turns"]):
                turns += 1
                for entry in turn["accept"]:
                    assert entry["route"] in ("answer", "lightweight", "persistent", "followup", "clarify")
                    if entry["route"] == "followup":
                        key = entry["task"]
                        assert key in keys or (key.startswith("@") and int(key[1:]) < n), (conv["conv"], n)
    assert turns >= 150


async def test_a_pending_clarify_card_does_not_hold_up_the_conversation(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/replay"))
    await rt.start()
    try:
        a = await rt.ledger.create_task("Home banner")
        b = await rt.ledger.create_task("Office banner")
        lomo.replay(call("clarify", task_ids=[a, b]), {"content": "It is 3 o'clock.", "tool_calls": []})
        await rt.send("make the banner bigger")
        assert await rt.run_until_quiescent(30)
        [gate] = await clarify_gates(rt)
        assert gate.status == "pending"
        await rt.send("what time is it?")  # answered while the card still waits
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            replies = (await conn.execute(select(s.messages.c.content).where(
                s.messages.c.role == "assistant", s.messages.c.content.is_not(None)))).scalars().all()
        assert "It is 3 o'clock." in replies
        await rt.resolve_gate(gate.id, approve=True, option=2)
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            delivered = (await conn.execute(select(s.inbox.c.text).where(s.inbox.c.task_id == b))).scalars().all()
        assert list(delivered) == ["make the banner bigger"]
    finally:
        await rt.close()


# ---- lomo/local's Router on its own: generic words, revisions, bundles, dates ----------------------------------------
def local_route(text: str, *tasks: dict, missing: tuple[str, ...] = ()) -> tuple[str, object]:
    """lomo/local's decision for TEXT typed in the main thread with TASKS in the index (most recent first;
    each {"title", "goal"?, "files"?, "age_h"?}) and MISSING the files it names that the workspace lacks.
    ("create_task", kind) | ("send_to_task", task title) | ("clarify", [titles]) | ("answer", text)."""
    from datetime import datetime

    from lomo_tui.models.base import ModelRequest
    from lomo_tui.models.local_router import route

    now = time.time()
    entries = [{"id": f"task-{n:08x}", "title": t["title"], "goal": t.get("goal", ""), "status": "idle",
                "kind": "persistent", "files": t.get("files", []), "recency": n,
                "updated_at": now - t.get("age_h", 5) * 3600} for n, t in enumerate(tasks)]
    tools = [{"type": "function", "function": {"name": n}} for n in ("create_task", "send_to_task", "clarify")]
    reply = route(ModelRequest(messages=[{"role": "user", "content": text}], tools=tools, purpose="router",
                               hints={"task_index": entries, "now": datetime.now().isoformat(),
                                      "mentions": {"missing_files": list(missing)}}))
    if not reply.tool_calls:
        return "answer", reply.content
    call_ = reply.tool_calls[0]
    titles = {e["id"]: e["title"] for e in entries}
    if call_.name == "create_task":
        return "create_task", call_.arguments["kind"]
    if call_.name == "send_to_task":
        return "send_to_task", titles[call_.arguments["task_id"]]
    return "clarify", [titles[i] for i in call_.arguments["task_ids"]]


JAZZ_RU = {"title": "Серия постеров для джазового вечера", "goal": "Три ретро-постера для джазового вечера"}
MENU_RU = {"title": "Меню для кофейни", "goal": "Новое меню для кофейни «Зерно»"}
JAZZ = {"title": "Jazz night poster series", "goal": "Four retro posters for the jazz night"}
MENU = {"title": "Noodle bar menu", "goal": "Menu board for the Slurp noodle bar"}


def test_a_shared_generic_word_alone_does_not_attach_a_new_goal() -> None:
    assert local_route("сделай серию открыток для свадьбы", JAZZ_RU, MENU_RU) == ("create_task", "persistent")
    assert local_route("I need a series of wedding invitations for our venue", JAZZ, MENU) == \
        ("create_task", "persistent")
    assert local_route("poster series for the climbing gym opening", JAZZ, MENU) == ("create_task", "persistent")


def test_a_generic_word_still_points_at_the_one_task_that_has_it_when_the_message_refers_back() -> None:
    logo = {"title": "Bakery logo", "goal": "A logo for the Crumb bakery"}  # an image task too
    logo_ru = {"title": "Логотип для кофейни", "goal": "Логотип для кофейни «Зерно»"}
    assert local_route("make the poster warmer", JAZZ, logo) == ("send_to_task", JAZZ["title"])
    assert local_route("постер сделай потеплее", JAZZ_RU, logo_ru) == ("send_to_task", JAZZ_RU["title"])
    assert local_route("那套海报再暖一点", {"title": "爵士之夜海报", "goal": "一套复古海报"},
                       {"title": "咖啡店标志", "goal": "咖啡店的logo"}) == ("send_to_task", "爵士之夜海报")
    bakery = {"title": "Bakery poster", "goal": "A poster for the Crumb bakery"}
    assert local_route("make the poster warmer", JAZZ, bakery)[0] == "clarify"  # two tasks have posters
    assert local_route("make the jazz poster warmer", JAZZ, bakery) == ("send_to_task", JAZZ["title"])


def test_a_generic_word_does_not_attach_a_message_about_something_else() -> None:
    pet = {"title": "Pet food packaging", "goal": "Packaging for the Happy Paws pet food"}
    for text in ("能把茶叶包装的颜色改深一点吗？", "make the tea packaging a darker green",
                 "the coffee packaging needs a darker green"):
        assert local_route(text, pet, JAZZ)[0] == "clarify", text  # no tea/coffee task: ask, with "new task"
    assert local_route("make the packaging a darker green", pet, JAZZ) == ("send_to_task", pet["title"])


def test_an_edit_of_a_clip_goes_to_the_clip_being_worked_on_not_to_a_new_task() -> None:
    talk = {"title": "Interview video", "goal": "Edit the founder interview video", "files": ["clips/talk.mp4"],
            "age_h": 0.1}
    pasta = {"title": "Recipe video for the pasta channel", "files": ["clips/pasta.mp4"], "age_h": 6}
    assert local_route("shorten the clip to 8 seconds", talk, pasta) == ("send_to_task", talk["title"])
    assert local_route("сократи ролик до 8 секунд", talk, pasta) == ("send_to_task", talk["title"])
    assert local_route("把视频剪短到十秒", talk, pasta) == ("send_to_task", talk["title"])
    assert local_route("trim the pasta video to 12 seconds", talk, pasta) == ("send_to_task", pasta["title"])


def test_a_date_put_on_a_piece_is_an_edit_not_a_question() -> None:
    fair = {"title": "Афиша книжной ярмарки", "goal": "Афиша для книжной ярмарки"}
    tea = {"title": "茶馆海报", "goal": "街角茶馆的海报"}
    assert local_route("поставь дату на афишу ярмарки", fair, tea) == ("send_to_task", fair["title"])
    assert local_route("茶馆海报上印上开业日期", fair, tea) == ("send_to_task", tea["title"])
    assert local_route("какое сегодня число?", fair, tea)[0] == "answer"


def test_a_kit_of_several_deliverables_is_a_persistent_task() -> None:
    for text in ("a kit for my pottery studio: logo, business card and banner", "一式：logo、名片、海报，给茶馆用",
                 "логотип, визитку и меню для пекарни", "花屋さんのセット：ロゴ、名刺、チラシ"):
        assert local_route(text) == ("create_task", "persistent"), text


async def test_file_names_in_any_script_route_directly(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        tea = await make_task(rt, "茶馆海报")
        club = await make_task(rt, "Постер для книжного клуба")
        natsu = await make_task(rt, "夏のポスター")
        await bind(rt, tea, "posters/海报_1.md", "k1")
        await bind(rt, club, "постер_клуб.md", "k2")
        await bind(rt, natsu, "ポスター_夏.md", "k3")
        async with rt.db.read() as conn:
            assert await hooks.direct_target(conn, "海报_1.md 再亮一点") == tea
            assert await hooks.direct_target(conn, "把海报_1.md的标题放大") == tea  # the name runs into the sentence
            assert await hooks.direct_target(conn, "постер_клуб.md: сделай фон темнее") == club
            assert await hooks.direct_target(conn, "このポスター_夏.mdの色を変えて") == natsu
            _, hints = await hooks.main_context(conn, None, ["把海报_1.md的标题放大"])
        assert hints["mentions"]["files"] == {"海报_1.md": [tea]}
    finally:
        await rt.close()


# ---- simple turns stay with the main thread; missing files ask (A1, A5, A8) ------------------------------------------
CAT = {"title": "Cat clip", "goal": "5 second clip of a cat chasing a laser", "files": ["clips/cat.webp"], "age_h": 0.1}
FESTIVAL = {"title": "Poster series: harbour film festival", "goal": "a poster series for the harbour film festival",
            "age_h": 0.01}


def test_courtesy_and_information_questions_right_after_a_new_task_are_answered() -> None:
    for text in ("thanks!", "looks great", "nice work on the cat clip, thank you", "ok", "good night",
                 "how long does a film festival usually last?", "how do I change the theme of the app?",
                 "do cats really like lasers?", "不错，很好看", "短片一般多长比较合适？", "いいですね、完璧です",
                 "桜はいつ咲きますか？", "спасибо, супер", "какой длины обычно трейлер?"):
        assert local_route(text, FESTIVAL, CAT)[0] == "answer", text
    # … but not when they carry an instruction, or ask for a change
    assert local_route("great, now make the festival posters more moody", FESTIVAL, CAT) == \
        ("send_to_task", FESTIVAL["title"])
    assert local_route("can you make the cat clip slower?", FESTIVAL, CAT) == ("send_to_task", CAT["title"])
    assert local_route("猫咪短片能剪短一点吗？", FESTIVAL, {**CAT, "title": "猫咪短片"}) == ("send_to_task", "猫咪短片")


def test_a_file_the_workspace_lacks_is_asked_about_not_guessed() -> None:
    jazz = {"title": "Jazz night posters", "goal": "Four retro posters", "files": ["posters/jazz_1.png"]}
    for text, name in (("make jazz_5.png warmer", "jazz_5.png"), ("hero.jpg を明るくして", "hero.jpg"),
                       ("в logo_v3.png убери фон", "logo_v3.png"), ("animate cat.png", "cat.png")):
        route, options = local_route(text, jazz, CAT, missing=(name,))
        assert route == "clarify", text
    assert local_route("make jazz_5.png warmer", jazz, CAT, missing=("jazz_5.png",))[1][0] == jazz["title"]
    # a file the message asks to write is no missing object
    assert local_route("export the jazz posters as jazz_print.pdf", jazz, CAT, missing=("jazz_print.pdf",)) == \
        ("send_to_task", jazz["title"])
    assert local_route("write a shot list in shotlist.md for a 20 second ad", jazz, CAT,
                       missing=("shotlist.md",))[0] == "create_task"


def test_the_deliverable_a_message_names_breaks_a_tie_on_its_subject() -> None:
    posters = {"title": "火锅店开业海报", "goal": "蜀香火锅店开业的三张海报"}
    menu = {"title": "火锅店菜单", "goal": "火锅店的新菜单排版"}
    assert local_route("火锅店那几张海报的字体太小了", menu, posters) == ("send_to_task", posters["title"])
    assert local_route("火锅店的菜单换个字体", posters, menu) == ("send_to_task", menu["title"])


def test_a_request_about_another_subject_is_new_work_even_when_it_shares_words() -> None:
    market = {"title": "Summer night market posters", "goal": "Three posters for the summer night market",
              "age_h": 700}
    salon = {"title": "美容院のオープン告知", "goal": "美容院のオープン告知バナー", "age_h": 650}
    assert local_route("posters for the summer camp, three please", market, salon) == ("create_task", "persistent")
    assert local_route("カフェのオープン告知ポスターを3枚", market, salon) == ("create_task", "persistent")
    assert local_route("more posters for the summer night market, two this time", market, salon) == \
        ("send_to_task", market["title"])


def test_words_a_message_only_brings_in_do_not_point_at_a_task() -> None:
    owl = {"title": "Owl mascot for the library", "goal": "A friendly owl mascot for the reading week"}
    cover = {"title": "Sci-fi book cover", "goal": "Cover for the novel Glass Orbit"}
    assert local_route("the owl should hold a book", cover, owl) == ("send_to_task", owl["title"])
    assert local_route("the book cover needs a bigger title", owl, cover) == ("send_to_task", cover["title"])


def test_a_subject_named_in_another_language_finds_the_task() -> None:
    light = {"title": "Lighthouse calendar 2025", "goal": "Twelve-month calendar with lighthouse photos"}
    bgm = {"title": "ゲームのBGM", "goal": "パズルゲームの明るいBGM"}
    assert local_route("灯台のカレンダーの表紙をもっと明るくして", bgm, light) == ("send_to_task", light["title"])
    assert local_route("в календаре с маяками поменяй шрифт", bgm, light) == ("send_to_task", light["title"])


async def test_missing_files_reach_the_router_and_its_card_says_so(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        jazz = await make_task(rt, "Jazz night posters")
        await bind(rt, jazz, "posters/jazz_1.md", "k1")
        async with rt.db.read() as conn:
            sections, hints = await hooks.main_context(conn, None, ["make jazz_5.md and jazz_1.md warmer"])
        assert hints["mentions"]["missing_files"] == ["jazz_5.md"] and "jazz_5.md" in sections[-1]
        # the model's word is not enough: a file the message does not name, or one that exists, makes an
        # ordinary "which task?" card
        lomo.replay(call("clarify", task_ids=[jazz], missing_files=["jazz_1.md"]),
                    call("clarify", task_ids=[jazz], missing_files=["jazz_7.md"]))
        await rt.send("make it warmer")
        assert await rt.run_until_quiescent(30)
        await rt.send("jazz_7.md: warmer")
        assert await rt.run_until_quiescent(30)
        first, second = await clarify_gates(rt)
        assert first.scope["route"] == "ambiguous"
        assert second.scope["route"] == "missing" and "jazz_7.md" in second.question
        assert [a["do"] for a in second.scope["actions"]] == ["send", "new", "cancel"]
        await rt.resolve_gate(second.id, approve=True, option=1)  # send it anyway
        assert await rt.run_until_quiescent(30)
        assert await inbox_of(rt, jazz) == ["jazz_7.md: warmer"]
    finally:
        await rt.close()


async def test_lomo_local_asks_about_a_missing_file_and_answers_thanks(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"), watch=False)
    await rt.start()
    try:
        jazz = await make_task(rt, "Jazz night posters", "Four retro posters for the jazz night")
        await bind(rt, jazz, "posters/jazz_1.md", "k1")
        await rt.send("make jazz_5.md warmer")
        assert await rt.run_until_quiescent(60)
        [gate] = await clarify_gates(rt)
        assert gate.scope["route"] == "missing" and gate.scope["actions"][0]["task_id"] == jazz
        await rt.send("a poster series for the harbour film festival, four posters")
        assert await rt.run_until_quiescent(60)
        await rt.send("thanks, looks great")
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            made = (await conn.execute(select(s.tasks.c.id).where(
                s.tasks.c.kind == "persistent", s.tasks.c.id != jazz))).scalars().all()
        assert await inbox_of(rt, jazz) == [] and len(made) == 1
        assert await inbox_of(rt, made[0]) == ["a poster series for the harbour film festival, four posters"]
    finally:
        await rt.close()


async def test_search_finds_an_old_task_written_in_another_language(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        hotpot = await make_task(rt, "火锅店开业海报", "蜀香火锅店开业的三张海报", age=60 * 86400)
        await seed_many(rt, 30)
        async with rt.db.read() as conn:
            found = [row.id for row, _ in await index.search(conn, "hotpot posters from last month")]
        assert hotpot in found
    finally:
        await rt.close()


OWL_NOW = {"title": "Owl reading by candlelight", "goal": "draw an owl reading by candlelight", "age_h": 0.05}
JAZZ_NIGHT = {"title": "Jazz night poster", "goal": "Poster for the Blue Note jazz night", "age_h": 4}


def test_a_pronoun_right_after_a_one_shot_goes_to_it_not_to_a_task_sharing_one_word() -> None:
    owl = ("send_to_task", OWL_NOW["title"])
    assert local_route("same but at night", OWL_NOW, JAZZ_NIGHT) == owl  # "night" is in the jazz title
    assert local_route("redo it in blue", OWL_NOW, JAZZ_NIGHT) == owl  # "Blue Note" is in the jazz goal
    # naming the other task still reaches it
    assert local_route("make the jazz night poster darker", OWL_NOW, JAZZ_NIGHT) == ("send_to_task", JAZZ_NIGHT["title"])
    assert local_route("put it on the jazz poster too", OWL_NOW, JAZZ_NIGHT) == ("send_to_task", JAZZ_NIGHT["title"])
    # nothing was just made: the shared word decides as before
    assert local_route("same but at night", dict(OWL_NOW, age_h=6), JAZZ_NIGHT) == \
        ("send_to_task", JAZZ_NIGHT["title"])


def test_making_a_one_shot_over_again_is_a_follow_up_not_a_new_one_shot() -> None:
    owl = ("send_to_task", OWL_NOW["title"])
    for text in ("make a version in orange", "draw it with a hat", "now make a bigger one"):
        assert local_route(text, OWL_NOW, JAZZ_NIGHT) == owl, text
    fox = {"title": "戴眼镜的狐狸", "goal": "画一只戴眼镜的狐狸", "age_h": 0.05}
    assert local_route("画成水彩风格", fox, JAZZ_NIGHT) == ("send_to_task", fox["title"])
    fox_ru = {"title": "Лиса в шарфе", "goal": "нарисуй лису в шарфе", "age_h": 0.05}
    assert local_route("нарисуй её в шляпе", fox_ru, JAZZ_NIGHT) == ("send_to_task", fox_ru["title"])
    pen = {"title": "本を読むペンギン", "goal": "本を読むペンギンのイラストを描いて", "age_h": 0.05}
    assert local_route("それを水彩で描いて", pen, JAZZ_NIGHT) == ("send_to_task", pen["title"])
    # a new piece is still new
    assert local_route("draw a fox in a scarf", OWL_NOW, JAZZ_NIGHT) == ("create_task", "lightweight")
    assert local_route("make a poster for the bake sale", OWL_NOW, JAZZ_NIGHT)[0] == "create_task"


def test_praise_and_small_talk_right_after_a_one_shot_are_answered() -> None:
    for text in ("this is so cute", "I love owls", "かわいい！", "какая милота", "I'm so tired today"):
        assert local_route(text, OWL_NOW, JAZZ_NIGHT)[0] == "answer", text



def test_a_list_is_a_bundle_only_when_it_lists_pieces() -> None:
    cases = {
        "a short whoosh sound, 2 seconds, playful": "lightweight",  # one piece and its attributes
        "a single 3D teapot, matte white, soft studio light": "lightweight",
        "make a logo, a business card and a banner for the bakery": "persistent",  # several pieces
        "カフェ向けに、ロゴ・名刺・封筒のキットを作って": "persistent",
    }
    for text, kind in cases.items():
        assert local_route(text) == ("create_task", kind), text


# ---- mechanisms, not phrasings (issue #12 §5) --------------------------------------------------------------
POSTERS_A = {"title": "Jazz night poster series", "goal": "Four retro posters for the jazz night",
             "files": ["posters/jazz_1.png"], "age_h": 0.1}  # both worked on a moment ago
POSTERS_B = {"title": "Summer sale posters", "goal": "Three posters for the summer sale",
             "files": ["posters/sale_1.png"], "age_h": 0.05}


@pytest.mark.parametrize("text", ["change the posters", "把海报改一下", "ポスターを変えて", "поменяй постеры"])
def test_two_close_candidates_are_asked_about_not_given_to_the_newest(text: str) -> None:
    route_, titles = local_route(text, POSTERS_B, POSTERS_A)
    assert route_ == "clarify" and set(titles) == {POSTERS_A["title"], POSTERS_B["title"]}


@pytest.mark.parametrize("text", ["next: poster series for the bakery opening",
                                  "then poster series for the bakery opening",
                                  "接下来：面包店开业的海报系列"])
def test_a_new_goal_introduced_with_then_or_next_is_not_attached(text: str) -> None:
    assert local_route(text, POSTERS_A) == ("create_task", "persistent")


def test_the_file_name_a_creator_asked_for_is_that_task_s() -> None:
    perfume = {"title": "Perfume", "goal": "make perfume.png", "age_h": 0.02}
    other = {"title": "Perfume ad clip", "goal": "a clip for the perfume launch", "age_h": 0.01}
    assert local_route("make perfume.png", other, missing=("perfume.png",)) == ("create_task", "lightweight")
    assert local_route("make perfume.png warmer", other, perfume, missing=("perfume.png",)) == \
        ("send_to_task", "Perfume")


def test_no_good_candidate_asks_instead_of_handing_the_newest_task_the_message() -> None:
    cat = {"title": "Cat clip", "goal": "a short clip of a cat", "files": ["clips/cat.gif"], "age_h": 0.05}
    logo = {"title": "Bakery logo", "goal": "a logo for the bakery", "files": ["logo.png"], "age_h": 30}
    route_, _ = local_route("make the song louder", cat, logo)
    assert route_ == "clarify"


async def test_search_finds_an_old_task_by_a_word_of_its_file_names_and_by_a_hiragana_name(lomo: LomoEnv) -> None:
    """"remember the awang sign?": the task wrote signs/awang.png, its title is 招牌 — file names are searched too;
    「ごいしくん」 in a goal is found though keywords read hiragana as grammar."""
    import hashlib

    from lomo_tui.workspace.objects import Workspace

    rt = await started(lomo)
    try:
        sign = await make_task(rt, "招牌", "「阿旺鹹酥雞」的攤位招牌", kind="lightweight", status="done", age=60 * 86400)
        mascot = await make_task(rt, "クラブのマスコット", "囲碁クラブのマスコット「ごいしくん」", age=70 * 86400)
        decoy = await make_task(rt, "Awning photos", "Photos of the shop awning", age=50 * 86400)
        async with rt.db.write() as conn:
            for task_id, rel in ((sign, "signs/awang.png"), (decoy, "photos/awning_1.png")):
                data = f"seed {rel}\n".encode()
                (rt.workspace.root / rel).parent.mkdir(parents=True, exist_ok=True)
                (rt.workspace.root / rel).write_bytes(data)
                seen = await rt.workspace.record(conn, rel, hashlib.sha256(data).hexdigest(), len(data),
                                                 author="agent", task_id=task_id)
                await Workspace.touch(conn, task_id, seen, read=True, wrote=True)
        await seed_many(rt, 30)
        async with rt.db.read() as conn:
            by_file = [row.id for row in await index.by_file_names(conn, "remember the awang sign from ages ago?")]
            entries = await index.build(conn, ["remember the awang sign from ages ago? need an english line on it"])
            named = [row.id for row, _ in await index.search(conn, "ごいしくん、覚えてる？帽子をかぶせたバージョンがほしい")]
        assert by_file == [sign]  # a whole word of the name: "awning_1.png" holds "awning", not "awang"
        assert sign in [e.id for e in entries if e.retrieved]
        assert mascot in named
    finally:
        await rt.close()


async def test_search_finds_a_latin_lettered_task_by_its_name_in_katakana(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        poster = await make_task(rt, "Olivetti Lettera poster", "Illustrated poster of an Olivetti Lettera 32",
                                 kind="lightweight", status="done", age=60 * 86400)
        await seed_many(rt, 30)
        async with rt.db.read() as conn:
            found = [row.id for row, _ in await index.search(conn, "昔のオリベッティのポスター、覚えてますか？")]
        assert poster in found
    finally:
        await rt.close()


async def test_a_message_that_says_a_whole_title_and_works_on_it_routes_directly(lomo: LomoEnv) -> None:
    rt = await started(lomo)
    try:
        catalog = await make_task(rt, "輪島塗 商品カタログ")
        swim = await make_task(rt, "Видео с заплыва")
        menu = await make_task(rt, "Pizzeria menu")
        await make_task(rt, "Poster")  # a kind of piece, not one task's name
        async with rt.db.read() as conn:
            assert await hooks.direct_target(conn, "輪島塗 商品カタログ、写真をもう少し明るく") == catalog
            assert await hooks.direct_target(conn, "Видео с заплыва — продолжай, и добавь титры") == swim
            assert await hooks.direct_target(conn, "pizzeria menu: bigger prices") == menu
            # a question about it, new work in its name and a file no task has are the Router's to weigh
            assert await hooks.direct_target(conn, "what font is the pizzeria menu in?") is None
            assert await hooks.direct_target(conn, "a new pizzeria menu for the summer") is None
            assert await hooks.direct_target(conn, "use photo_42.jpg as the background of the pizzeria menu") is None
            assert await hooks.direct_target(conn, "the poster: bigger title") is None
    finally:
        await rt.close()
