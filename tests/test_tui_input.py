"""The composer and keys: nothing typed is lost, and every key does what it says (issue 12 §1, §3).

Real runtime (workers on where a reply matters, off where a message must stay unread), real keys
through the pilot; synchronisation by `wait_until`, never by sleeps.
"""
from __future__ import annotations

import pytest

import asyncio

from textual import events

from lomo_tui.errors import LomoError
from lomo_tui.store import schema as s
from lomo_tui.tui.screens.confirm import ConfirmScreen
from lomo_tui.tui.screens.task import TaskScreen
from lomo_tui.tui.widgets.card import TaskCard
from lomo_tui.tui.widgets.composer import Composer, ComposerInput
from lomo_tui.tui.widgets.gates import GateList
from lomo_tui.tui.widgets.stream import MessageRow, StreamView
from tui_apps.live import booted, live_app, notifications, rows, type_text, wait_until
from tui_apps.states import make_app, until_ready

SIZE = (120, 36)


def composer(app) -> Composer:
    return app.screen.query_one(Composer)


def card_for(app, task_id):
    return next((c for c in app.screen.query(TaskCard) if c.task_id == task_id), None)


# ---- §1a: typed before the runtime is ready --------------------------------------------------------------
async def test_a_message_typed_before_the_runtime_is_ready_is_queued_then_sent(tmp_path):
    release = asyncio.Event()

    async def slow_start(rt) -> None:
        await release.wait()

    app = live_app(tmp_path, seed=slow_start)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: composer(app).input.has_focus, what="the composer")
        await type_text(pilot, "a fox at dawn")
        await pilot.press("enter")
        assert not app.booted
        assert composer(app).input.value == "" and composer(app).has_class("-queued")
        queued = [r for r in app.screen.query(MessageRow) if r.item.kind == "queued"]
        assert [r.item.text for r in queued] == ["a fox at dawn"]
        release.set()
        await booted(pilot)
        sent = await wait_until(pilot, lambda: rows(app, s.inbox, s.inbox.c.text == "a fox at dawn"),
                                what="the queued message delivered")
        assert sent[0].task_id == app.session.main_id
        await wait_until(pilot, lambda: not [r for r in app.screen.query(MessageRow) if r.item.kind == "queued"],
                         what="the queued row to leave")
        assert not composer(app).has_class("-queued")


async def test_when_the_runtime_cannot_start_what_was_typed_stays_and_the_reason_is_said(tmp_path):
    release = asyncio.Event()

    async def broken_start(rt) -> None:
        await release.wait()
        raise LomoError("the workspace /nope is not writable")

    app = live_app(tmp_path, seed=broken_start)
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: composer(app).input.has_focus, what="the composer")
        await type_text(pilot, "first idea")
        await pilot.press("enter")
        release.set()
        await wait_until(pilot, lambda: app.boot_error, what="the start-up error")
        await wait_until(pilot, lambda: composer(app).input.value == "first idea", what="the text given back")
        await type_text(pilot, " and more")
        await pilot.press("enter")
        assert composer(app).input.value == "first idea and more"
        messages = [m for _, m in seen]
        assert any("not writable" in m and "kept" in m for m in messages)
        assert not any("still starting" in m for m in messages)


# ---- §1b: several lines, long pastes, long messages ------------------------------------------------------
async def test_the_composer_takes_several_lines_and_enter_sends_them_all(tmp_path):
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await type_text(pilot, "line one")
        await pilot.press("ctrl+j")
        await type_text(pilot, "line two")
        await pilot.press("enter")
        sent = await wait_until(pilot, lambda: rows(app, s.inbox), what="the message")
        assert sent[0].text == "line one\nline two"


@pytest.mark.slow
async def test_a_long_paste_is_a_chip_sent_whole_and_collapsed_in_the_stream(tmp_path):
    brief = "\n".join(f"{n:03d}. The poster shows the band from the side, lit in gold and deep navy." for n in
                      range(400))
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        field = app.screen.query_one(ComposerInput)
        await type_text(pilot, "brief:")
        field.post_message(events.Paste(brief))
        await wait_until(pilot, lambda: "[pasted 400 lines]" in field.text, what="the paste chip")
        assert field.text == "brief:[pasted 400 lines]"
        await pilot.press("enter")
        sent = await wait_until(pilot, lambda: rows(app, s.inbox), what="the message")
        assert sent[0].text == "brief:" + brief  # every line, nothing cut
        stream = app.screen.query_one(StreamView)
        row = await wait_until(pilot, lambda: next((w for w in stream.rows.values()
                                                    if isinstance(w, MessageRow) and w.item.text.startswith("brief")),
                                                   None), what="the message in the stream")
        shown = str(row.render())
        assert "399. The poster" not in shown and "400 lines" in shown and "show all" in shown
        row.focus()
        await pilot.press("enter")
        assert "399. The poster" in str(row.render())


# ---- §1c: keys on a focused card ---------------------------------------------------------------------------
async def test_typing_yes_on_a_focused_card_types_in_the_input_and_stops_nothing(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        card = card_for(app, "task-trailer")
        card.focus()
        await pilot.pause()
        assert composer(app).has_class("-away")  # the input says the keys are elsewhere
        from lomo_tui.tui.widgets.card import CardActions

        assert "other letters type in the input" in str(card.query_one(CardActions).render())  # and the card
        await type_text(pilot, "yes")
        assert composer(app).input.value == "yes" and composer(app).input.has_focus
        assert not composer(app).has_class("-away")
        task = (await rows(app, s.tasks, s.tasks.c.id == "task-trailer"))[0]
        assert task.status != "stopped"


@pytest.mark.slow
async def test_stop_on_a_card_asks_first_and_a_stray_key_does_not_confirm(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        card = card_for(app, "task-trailer")
        card.focus()
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("y", "s", "enter")  # Enter on the highlighted Cancel
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the dialog to close")
        assert (await rows(app, s.tasks, s.tasks.c.id == "task-trailer"))[0].status != "stopped"
        card.focus()
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: rows(app, s.tasks, s.tasks.c.id == "task-trailer",
                                             s.tasks.c.status == "stopped"), what="the task stopped")


async def test_archive_on_a_card_asks_first_and_cancel_keeps_the_task(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        card = card_for(app, "task-cat")
        card.focus()
        await pilot.press("delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("a", "enter")  # a stray letter, then Enter on the highlighted Cancel
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the dialog to close")
        assert not (await rows(app, s.tasks, s.tasks.c.id == "task-cat"))[0].archived
        card.focus()
        await pilot.press("delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: rows(app, s.tasks, s.tasks.c.id == "task-cat", s.tasks.c.archived.is_(True)),
                         what="the task archived")


@pytest.mark.slow
async def test_rejecting_a_gate_asks_first(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await pilot.press("ctrl+g")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("escape")
        assert not await rows(app, s.gates, s.gates.c.status == "rejected")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("right", "enter")
        await wait_until(pilot, lambda: rows(app, s.gates, s.gates.c.status == "rejected"), what="a rejected gate")


# ---- §3: gates in the task view; the next gate after an answer --------------------------------------------
@pytest.mark.slow
async def test_the_task_view_shows_its_gates_and_answers_them_with_the_inbox_keys(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await app.open_task("task-flyer")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded, what="task view")
        gates = app.screen.query_one("#task-gates", GateList)
        await wait_until(pilot, lambda: gates.option_count == 1, what="the task's gate")
        assert list(gates.gates.values())[0].question == "Which palette for the flyer?"
        await pilot.press("ctrl+g")
        assert gates.has_focus
        await pilot.press("2")
        gate = await wait_until(pilot, lambda: rows(app, s.gates, s.gates.c.task_id == "task-flyer",
                                                    s.gates.c.status == "approved"), what="the gate answered")
        assert gate[0].resolution["label"] == "Red and cream"


async def test_after_answering_a_gate_the_selection_moves_to_the_next_one(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        from lomo_tui.governance.gates import open_gate

        async with app.session.db.write() as conn:
            await open_gate(conn, task_id="task-album", kind="question", question="Which font?",
                            options=[{"label": "Serif"}, {"label": "Sans"}], dedupe_key="seed-font")
        app.live.schedule(everything=True)
        gates = app.screen.query_one(GateList)
        await wait_until(pilot, lambda: gates.option_count == 3, what="three gates")
        await pilot.press("ctrl+g", "down")
        second = gates.highlighted_gate
        await pilot.press("a")
        await wait_until(pilot, lambda: gates.option_count == 2, what="the answered gate to leave")
        assert gates.highlighted == 1 and gates.highlighted_gate.question == "Which font?"
        assert second.question != "Which font?"


@pytest.mark.slow
async def test_letters_typed_on_the_tree_or_a_gate_go_to_the_input_but_their_keys_still_work(tmp_path):
    from lomo_tui.tui.screens.preview import PreviewScreen
    from lomo_tui.tui.widgets.tree import WorkspaceTree

    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        app.screen.query_one(WorkspaceTree).focus()
        await type_text(pilot, "hi")
        assert composer(app).input.value == "hi"
        app.screen.query_one(GateList).focus()
        await pilot.press("x")
        assert composer(app).input.value == "hix"
        tree = app.screen.query_one(WorkspaceTree)
        tree.focus()
        await pilot.press("end", "space")  # its own keys are its own (the last file opens)
        await wait_until(pilot, lambda: isinstance(app.screen, PreviewScreen), what="a preview from the tree")


async def test_esc_in_the_composer_goes_back_to_talking_to_main(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        card = card_for(app, "task-trailer")
        card.focus()
        await pilot.press("r")
        assert composer(app).task_id == "task-trailer" and composer(app).input.has_focus
        await pilot.press("escape")
        assert composer(app).task_id is None and composer(app).target_title == "Main"


async def test_a_workspace_that_cannot_be_made_keeps_the_message_and_says_why(tmp_path):
    from lomo_tui.config import Settings
    from lomo_tui.tui.app import LomoApp
    from tui_apps.live import notifications

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    settings = Settings(workspace=blocker / "ws", db_url=f"sqlite+aiosqlite:///{tmp_path / 'lomo.db'}",
                        model="lomo/local", file={})
    app = LomoApp(settings, config_dir=tmp_path / "config", images="off")
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.boot_error, what="the start-up error")
        await wait_until(pilot, lambda: composer(app).input.has_focus, what="the composer")
        await type_text(pilot, "a fox")
        await pilot.press("enter")
        assert composer(app).input.value == "a fox"
        assert any("workspace folder" in m and "kept" in m for _, m in seen)
    assert not (tmp_path / "lomo.db").exists()  # nothing was opened, nothing delivered
