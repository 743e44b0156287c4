"""Errors and feedback in the TUI (issue 12 §2, §6): a failed turn shows on its message with what to
do, a missing API key is said at start, the header names the workspace."""
from __future__ import annotations

import pytest

from pathlib import Path

from lomo_tui.config import Settings
from lomo_tui.store import schema as s
from lomo_tui.tui.fmt import compact_path
from lomo_tui.tui.keycheck import missing_key
from lomo_tui.tui.widgets.header import HeaderBar
from lomo_tui.tui.widgets.stream import MessageRow, StreamView
from tui_apps.live import booted, live_app, notifications, rows, type_text, wait_until
from tui_apps.states import make_app

SIZE = (120, 36)


def errors_in(app) -> list[MessageRow]:
    stream = app.screen.query_one(StreamView)
    return [w for w in stream.rows.values() if isinstance(w, MessageRow) and w.item.kind == "error"]


async def test_a_model_error_on_main_shows_on_its_message_with_what_to_do_and_a_retry(tmp_path):
    app = live_app(tmp_path, replies=[{"content": 5, "tool_calls": []}])  # the model answers nonsense
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        [row] = await wait_until(pilot, lambda: errors_in(app), what="the error in the stream")
        shown = str(row.render())
        assert "✗" in shown and "retry" in shown and "Send your message again" in shown
        assert row.item.detail == "hello"  # the error sits on the message it concerns
        stream = app.screen.query_one(StreamView)
        assert stream.keys.index(row.item.key) > stream.keys.index(next(k for k, w in stream.rows.items()
                                                                       if getattr(w, "item", None) is not None
                                                                       and w.item.text == "hello"))
        toasts = [(t, m) for t, m in seen if t == "Lomo could not answer"]
        assert toasts and not any("resume it with p" in m for _, m in toasts)
        row.focus()
        await pilot.press("enter")  # the retry key
        await wait_until(pilot, lambda: count_hello(app), what="the retried message")


async def count_hello(app) -> bool:
    return len(await rows(app, s.inbox, s.inbox.c.text == "hello")) == 2


def test_a_missing_api_key_is_found_from_the_environment_and_config_without_litellm():
    plain = Settings(workspace=Path("/tmp/w"), db_url="sqlite://", model="openai/gpt-4o", file={})
    assert missing_key("openai/gpt-4o", plain, {}) == "OPENAI_API_KEY"
    assert missing_key("openai/gpt-4o", plain, {"OPENAI_API_KEY": "sk-x"}) is None
    configured = Settings(workspace=Path("/tmp/w"), db_url="sqlite://", model="openai/gpt-4o",
                          file={"providers": {"openai": {"api_key": "sk-x"}}})
    assert missing_key("openai/gpt-4o", configured, {}) is None
    assert missing_key("claude-3-5-sonnet", plain, {}) == "ANTHROPIC_API_KEY"
    assert missing_key("ollama_chat/llama3", plain, {}) is None and missing_key("lomo/local", plain, {}) is None


async def test_the_header_says_the_key_is_missing_and_shows_the_workspace_path(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app = make_app(tmp_path, "empty")
    app.session.model_name = "openai/gpt-4o"
    async with app.run_test(size=SIZE) as pilot:
        header = await wait_until(pilot, lambda: app.screen.query(HeaderBar) and app.screen.query_one(HeaderBar),
                                  what="the header")
        line = await wait_until(pilot, lambda: "no API key" in header.render().plain and header.render().plain,
                                what="the missing key in the header")
        assert "no API key: set OPENAI_API_KEY" in line
        assert compact_path(app.workspace_root, 34, app.path_home) in line and "│ ws │" not in line


def test_the_workspace_path_is_shortened_keeping_the_last_folder():
    home = Path("/home/ana")
    assert compact_path("/home/ana/jazz", home=home) == "~/jazz"
    assert compact_path("/home/ana/clients/2026/blue-door/jazz-night", 24, home=home) == "~/…/blue-door/jazz-night"
    assert compact_path("/srv/a/b/c/d/e/final-folder-name", 20, home=home).endswith("/final-folder-name")


# ---- routed follow-ups, B4, truthful cards ------------------------------------------------------------
def routed_rows(app) -> list[MessageRow]:
    stream = app.screen_stack[0].query_one(StreamView)
    return [w for w in stream.rows.values() if isinstance(w, MessageRow) and w.item.kind == "routed"]


async def test_a_routed_follow_up_says_where_it_went_and_not_this_task_offers_the_choice(tmp_path):
    app = live_app(tmp_path, replies=[
        {"content": None, "tool_calls": [{"name": "send_to_task", "arguments": {"task_id": "task-poster"}}]}])
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        ledger = app.session.runtime.ledger
        await ledger.create_task("Poster series", task_id="task-poster")
        await ledger.create_task("Jazz flyer", task_id="task-flyer")
        await ledger.control("task-poster", "pause")  # it keeps the message unread
        await type_text(pilot, "make the posters warmer")
        await pilot.press("enter")
        [row] = await wait_until(pilot, lambda: routed_rows(app), what="the routed line")
        shown = str(row.render())
        assert "→ sent to Poster series" in shown and "not this task" in shown
        row.action_not_this()
        gate = await wait_until(pilot, lambda: rows(app, s.gates, s.gates.c.kind == "clarify"), what="the card")
        labels = [o["label"] for o in gate[0].options]
        assert "Send to Jazz flyer" in labels and "Send to Poster series" not in labels and "A new task" in labels
        moved = await rows(app, s.inbox, s.inbox.c.task_id == "task-poster")
        assert [m.status for m in moved] == ["withdrawn"]
        await wait_until(pilot, lambda: "you said not this task" in str(routed_rows(app)[0].render()),
                         what="the line to say so")
        await app.do_resolve(app.snap.gates[0], True, labels.index("Send to Jazz flyer") + 1)
        sent = await wait_until(pilot, lambda: rows(app, s.inbox, s.inbox.c.task_id == "task-flyer"),
                                what="the message at the chosen task")
        assert sent[0].text == "make the posters warmer"


@pytest.mark.slow
async def test_a_change_sent_while_a_clip_renders_says_the_clip_keeps_the_old_prompt(tmp_path):
    from lomo_tui.tui.widgets.card import TaskCard

    app = make_app(tmp_path, "busy")
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        from tui_apps.states import until_ready

        await until_ready(pilot)
        card = next(c for c in app.screen.query(TaskCard) if c.task_id == "task-trailer")
        card.focus()
        await pilot.press("r")
        await type_text(pilot, "make it slower")
        await pilot.press("enter")
        note = "the running clip keeps the old prompt; your change applies to the next step"
        await wait_until(pilot, lambda: any(note in m.lower() for _, m in seen), what="the notice")
        await wait_until(pilot, lambda: note in card.query_one("#card-text").render().plain, what="the card's note")


async def test_a_declined_spend_leaves_a_card_that_does_not_say_generating(tmp_path):
    from lomo_tui.tui.widgets.card import TaskCard, card_body

    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await type_text(pilot, "make a 3d model of a cat")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.snap and any(g.kind == "spend" for g in app.snap.gates),
                         what="the spend gate", timeout=20)
        gate = next(g for g in app.snap.gates if g.kind == "spend")
        await app.do_resolve(gate, False)
        card = await wait_until(pilot, lambda: next((c for c in app.screen.query(TaskCard) if c.task_id == gate.task_id
                                                     and c.card.state in ("done", "idle")), None),
                                what="the card settled (a declined one-shot waits for the creator: idle)",
                                timeout=20)
        body = card_body(card.card).plain
        assert "Generating" not in body and "declined" in body


async def test_a_follow_up_routed_to_a_task_whose_clip_renders_says_so_in_the_stream(tmp_path):
    """B4 in the stream: the routed line says the running clip keeps the old prompt (in the words' language)."""
    app = make_app(tmp_path, "busy")  # the trailer's clip is rendering
    async with app.run_test(size=SIZE) as pilot:
        from tui_apps.states import until_ready

        await until_ready(pilot)
        ledger = app.session.runtime.ledger
        await ledger.deliver("task-trailer", "make it slower", source="router")
        await ledger.deliver("task-trailer", "сделай помедленнее", source="router")
        app.live.schedule(everything=True)
        lines = await wait_until(pilot, lambda: len(routed_rows(app)) == 2 and routed_rows(app), what="the lines")
        shown = {row.item.language: str(row.render()) for row in lines}
        assert "→ sent to Trailer cut" in shown["en"]
        assert "the running clip keeps the old prompt; your change applies to the next step" in shown["en"]
        assert "уже запущенная генерация (ролик) сохранит старый запрос" in shown["ru"]
        assert "отправлено в Trailer cut" in shown["ru"] and "not this task" not in shown["ru"]


async def test_every_model_error_on_main_is_visible_and_the_next_message_is_answered(tmp_path):
    app = live_app(tmp_path, replies=[{"content": 5, "tool_calls": []}, {"content": 6, "tool_calls": []},
                                      {"content": "Hello!", "tool_calls": []}])
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        for n, words in enumerate(("first try", "second try"), start=1):
            assert await app.submit(words) == "sent"
            await wait_until(pilot, lambda: len(errors_in(app)) == n, what=f"error {n} in the stream")
        assert [row.item.detail for row in errors_in(app)] == ["first try", "second try"]  # each on its message
        await wait_until(pilot, lambda: len([t for t, _ in seen if t == "Lomo could not answer"]) == 2,
                         what="a notice for each failure")
        assert await app.submit("third try") == "sent"
        stream = app.screen.query_one(StreamView)
        await wait_until(pilot, lambda: any(getattr(w, "item", None) is not None and w.item.kind == "assistant"
                                            and w.item.text == "Hello!" for w in stream.rows.values()),
                         what="the answer to the next message")


@pytest.mark.slow
async def test_a_finished_3d_card_does_not_say_it_is_generating(tmp_path):
    from lomo_tui.tui.widgets.card import TaskCard, card_body

    app = live_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await type_text(pilot, "make a 3d model of a cat")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.snap and any(g.kind == "spend" for g in app.snap.gates),
                         what="the spend gate", timeout=20)
        gate = next(g for g in app.snap.gates if g.kind == "spend")
        await app.do_resolve(gate, True, 1)
        card = await wait_until(pilot, lambda: next((c for c in app.screen.query(TaskCard) if c.task_id == gate.task_id
                                                     and c.card.state == "done"), None),
                                what="the card done", timeout=30)
        body = card_body(card.card).plain
        assert "enerating" not in body and ("gltf" in body or "glb" in body), body
