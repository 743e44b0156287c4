"""Pilot flows against the real runtime (workers on, `lomo/local` or `lomo/replay`, LOMO_TIME_SCALE=0.01).

Synchronisation is by `wait_until(pilot, predicate)`, never by bare sleeps.
"""
from __future__ import annotations

import pytest


from lomo_tui.store import schema as s
from lomo_tui.tui.screens.help import HelpScreen
from lomo_tui.tui.screens.prompt import PromptScreen
from lomo_tui.tui.screens.task import TaskScreen
from lomo_tui.tui.widgets.card import TaskCard
from lomo_tui.tui.widgets.gates import GateList
from lomo_tui.tui.widgets.stream import PAGE, StreamView
from lomo_tui.tui.widgets.task_parts import InboxList
from lomo_tui.tui.widgets.tree import WorkspaceTree
from tui_apps.live import booted, count, live_app, notifications, rows, type_text, wait_until
from tui_apps.states import make_app, until_ready

SIZE = (120, 36)


def card_for(app, task_id=None, title=None):
    for card in app.screen.query(TaskCard):
        if card.card is not None and (card.task_id == task_id or card.card.title == title):
            return card
    return None


async def test_a_message_on_main_becomes_an_inline_task_card(tmp_path):
    app = live_app(tmp_path, replies=[
        {"content": None, "tool_calls": [{"name": "create_task",
                                          "arguments": {"title": "Cat picture", "kind": "lightweight"}}]},
        {"content": "Here is your cat.", "tool_calls": []},
    ])
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await type_text(pilot, "a cat picture please")
        await pilot.press("enter")
        card = await wait_until(pilot, lambda: card_for(app, title="Cat picture"), what="the task card")
        await wait_until(pilot, lambda: card.card.state == "done", what="the card to show done")
        assert card.card.kind == "lightweight"
        assert "Here is your cat." in card.card.reply
        stream = app.screen.query_one(StreamView)
        assert stream.keys[0].startswith("m:") and stream.keys[-1] == f"c:{card.task_id}"


async def test_approving_a_gate_takes_one_key_and_the_gate_leaves_the_inbox(tmp_path):
    app = live_app(tmp_path, replies=[
        {"content": None, "tool_calls": [{"name": "ask_user", "arguments": {
            "question": "Which palette?", "options": ["Warm", "Cool"]}}]},
        {"content": "Going with Cool.", "tool_calls": []},
    ])
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        task_id = await app.session.create_task("Flyer")
        await app.session.send("make a flyer", task_id)
        gates = app.screen.query_one(GateList)
        await wait_until(pilot, lambda: gates.option_count == 1, what="the gate in the inbox")
        await pilot.press("ctrl+g")
        await pilot.press("2")
        gate = (await rows(app, s.gates))[0]
        assert gate.status == "approved"
        assert gate.resolution["label"] == "Cool" and gate.resolved_by.startswith("creator:tui")
        await wait_until(pilot, lambda: gates.option_count == 0, what="the gate to leave the inbox")
        await wait_until(pilot, lambda: (card_for(app, task_id) or 0) and "Going with Cool." in
                         card_for(app, task_id).card.reply, what="the task to go on after the answer")


@pytest.mark.slow
async def test_reply_in_a_task_view_goes_to_that_task_by_id_without_the_router(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        task_id = await app.session.create_task("Poster")
        app.live.schedule()
        card = await wait_until(pilot, lambda: card_for(app, task_id), what="the card")
        card.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded, what="task view")
        await type_text(pilot, "make it blue")
        await pilot.press("enter")
        inbox = await wait_until(pilot, lambda: rows(app, s.inbox, s.inbox.c.text == "make it blue"),
                                 what="the inbox row")
        assert inbox[0].task_id == task_id
        stream = app.screen.query_one("#task-stream", StreamView)
        await wait_until(pilot, lambda: any(w.has_class("-assistant") for w in stream.rows.values()),
                         what="the task's reply in its view")
        main_id = app.session.main_id
        assert await count(app, s.model_calls, s.model_calls.c.task_id == main_id) == 0
        assert await count(app, s.model_calls, s.model_calls.c.purpose == "router") == 0


@pytest.mark.slow
async def test_withdraw_and_replace_an_unread_inbox_message(tmp_path):
    # Workers off: the paused task's messages stay unread whatever the scheduler does.
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        first = (await rows(app, s.inbox, s.inbox.c.task_id == "task-story"))[0].id
        second, _ = await app.session.send("second idea", "task-story")
        await app.open_task("task-story")
        inbox = app.screen.query_one(InboxList)
        await wait_until(pilot, lambda: inbox.option_count == 2, what="two inbox messages")
        inbox.focus()
        inbox.highlighted = 0
        await pilot.press("w")
        await wait_until(pilot, lambda: rows(app, s.inbox, s.inbox.c.id == first, s.inbox.c.status == "withdrawn"),
                         what="the first message withdrawn")
        await wait_until(pilot, lambda: inbox.items[first].status == "withdrawn", what="the inbox to say so")
        inbox.highlighted = 1
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), what="the replace dialog")
        app.screen.query_one("#prompt-input").value = ""
        await type_text(pilot, "better idea")
        await pilot.press("enter")
        new = await wait_until(pilot, lambda: rows(app, s.inbox, s.inbox.c.replaces == second), what="replacement")
        assert new[0].text == "better idea" and new[0].task_id == "task-story" and new[0].status == "pending"
        assert (await rows(app, s.inbox, s.inbox.c.id == second))[0].status == "withdrawn"


async def test_a_file_changed_on_disk_shows_its_version_and_mark(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await wait_until(pilot, app.session.runtime.live.ready.is_set, what="the workspace watcher")
        tree = app.screen.query_one(WorkspaceTree)
        idea = app.workspace_root / "idea.md"
        idea.write_text("# Idea\n\nA fox at dawn.\n", encoding="utf-8")
        await wait_until(pilot, lambda: "v1" in (tree.label_text("idea.md") or ""), what="idea.md v1 in the tree")
        idea.write_text("# Idea\n\nA fox at dusk.\n", encoding="utf-8")
        label = await wait_until(pilot, lambda: "✎ you" in (tree.label_text("idea.md") or "") and
                                 tree.label_text("idea.md"), what="the changed-by-you mark")
        assert "v2" in label


@pytest.mark.slow
async def test_ten_thousand_messages_stay_windowed_while_scrolling(tmp_path):
    """Only a page of the history is mounted, and scrolling does not mount more until asked (ctrl+u).
    How fast it scrolls is measured in bench/, not asserted here."""
    app = make_app(tmp_path, "history")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        stream = app.screen.query_one(StreamView)
        assert stream.mounted_rows == PAGE and stream.earlier == 10_000 - PAGE
        stream.focus()
        app.animation_level = "none"
        for _ in range(20):
            await pilot.press("pageup")
        await pilot.press("end")
        await pilot.pause()
        assert stream.mounted_rows == PAGE and stream.earlier == 10_000 - PAGE
        await pilot.press("ctrl+u")
        await wait_until(pilot, lambda: stream.mounted_rows == 2 * PAGE, what="an earlier page")
        assert stream.earlier == 10_000 - 2 * PAGE


async def test_an_error_is_a_notification_that_says_what_to_do(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        seen = notifications(app)
        task_id = await app.session.create_task("Old idea")
        await app.session.control(task_id, "stop")
        await app.open_task(task_id)
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded, what="task view")
        await type_text(pilot, "one more thing")
        await pilot.press("enter")
        await wait_until(pilot, lambda: seen, what="a notification")
        title, message = seen[0]
        assert title == "Could not send the message" and "stopped" in message and "resume" in message
        assert app.is_running and "Traceback" not in message


async def test_card_keys_pause_and_resume_a_task(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        task_id = await app.session.create_task("Trailer")
        app.live.schedule()
        card = await wait_until(pilot, lambda: card_for(app, task_id), what="the card")
        card.focus()
        await pilot.press("p")
        await wait_until(pilot, lambda: card.card.state == "paused", what="paused")
        assert (await rows(app, s.tasks, s.tasks.c.id == task_id))[0].status == "paused"
        await pilot.press("p")
        await wait_until(pilot, lambda: card.card.state != "paused", what="resumed")


@pytest.mark.slow
async def test_palette_approves_the_next_gate(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await pilot.press("ctrl+p")
        await type_text(pilot, "approve next gate")
        await wait_until(pilot, lambda: app.screen.query("CommandList Option") or
                         app.screen.query_one("CommandList").option_count, what="a palette hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: rows(app, s.gates, s.gates.c.status == "approved"), what="an approved gate")
        gates = app.screen_stack[0].query_one(GateList)
        await wait_until(pilot, lambda: gates.option_count == 1, what="one gate left")


async def test_keys_come_from_config_and_unknown_ones_are_reported(tmp_path):
    app = make_app(tmp_path, "empty", keys={"app.help": "f2", "app.nothing": "f3"})
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help on f2")
        assert any("app.nothing" in message for _, message in seen)


async def test_an_idle_app_does_no_work(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await wait_until(pilot, app.session.runtime.live.ready.is_set, what="the workspace watcher")
        await pilot.pause(0.3)
        notices, refreshes = app.live.notices, app.live.refreshes
        await pilot.pause(1.0)
        assert (app.live.notices, app.live.refreshes) == (notices, refreshes)


async def test_a_database_that_cannot_open_is_a_notification_not_a_crash(tmp_path):
    from lomo_tui.config import Settings
    from lomo_tui.tui.app import LomoApp

    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    settings = Settings(workspace=tmp_path / "ws", db_url=f"sqlite+aiosqlite:///{blocker}/sub/lomo.db",
                        model="lomo/local", file={})
    app = LomoApp(settings, config_dir=tmp_path / "config", images="off")
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.boot_error, what="the start-up error")
        assert any(title == "Lomo could not start" and "--db" in message for title, message in seen)
        assert app.is_running


async def test_palette_offers_every_command(tmp_path):
    from lomo_tui.tui.commands import LomoCommands

    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        provider = LomoCommands(app.screen)
        await provider.startup()
        texts = [text for text, _, _ in provider.commands()]
        for wanted in ("New task…", "Approve next gate", "Pause all tasks", "Open task: Poster series",
                       "Switch model: lomo/local", "Switch theme: lomo-light", "Open file: storyboard.md"):
            assert wanted in texts, wanted


async def test_card_actions_work_with_the_mouse(tmp_path):
    from lomo_tui.tui.widgets.card import CardActions

    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        card = card_for(app, "task-story")
        card.scroll_visible(animate=False)
        await pilot.pause()
        actions = card.query_one(CardActions)
        x = str(actions.render()).index("resume")
        await pilot.click(actions, offset=(x + 1, 0))
        await wait_until(pilot, lambda: rows(app, s.tasks, s.tasks.c.id == "task-story", s.tasks.c.status != "paused"),
                         what="the task resumed by a click")


async def test_an_archived_task_comes_back_from_the_palette(tmp_path):
    from lomo_tui.tui.commands import LomoCommands

    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await app.session.archive("task-story")
        provider = LomoCommands(app.screen)
        await provider.startup()
        [(text, callback, _)] = [c for c in provider.commands() if c[0].startswith("Unarchive task:")]
        assert "Open task: " + text.split(": ", 1)[1] not in [c[0] for c in provider.commands()]
        await callback()
        await wait_until(pilot, lambda: rows(app, s.tasks, s.tasks.c.id == "task-story", s.tasks.c.archived.is_(False)),
                         what="the task unarchived")


async def test_a_theme_chosen_in_the_palette_is_remembered(tmp_path):
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        app.action_switch_theme("lomo-light")
        assert app.theme == "lomo-light"
    again = make_app(tmp_path, "empty")
    assert again.requested_theme == "lomo-light"
