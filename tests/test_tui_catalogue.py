"""Every creator-facing text of the TUI comes from the one catalogue and speaks the creator's language
(issue #12 §5): a card, a stream line, the "not this task" card and the notices about them, rendered for a
Chinese or Russian task, carry no English words."""
from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from lomo_tui.language.messages import template
from lomo_tui.store import schema as s
from lomo_tui.tui.widgets.card import card_actions, card_body, running_job_note
from lomo_tui.tui.widgets.stream import MessageRow, StreamView
from lomo_tui.views import Artifact, Card, InboxItem, Job, StreamItem, load_gates
from tui_apps.live import booted, live_app, notifications, rows, wait_until

ROOT = Path(__file__).resolve().parent.parent / "lomo_tui"
# names and technical words that stay as they are in every language
KEEP = {"lomo", "ctrl", "esc", "enter", "tab", "api", "png", "md", "credits", "v"}
WORD = re.compile(r"[A-Za-z][A-Za-z']+")


def english(text: str) -> list[str]:
    """The English words of TEXT (file names and the words in KEEP do not count)."""
    text = re.sub(r"\S+\.(png|md|glb|mp4|wav)\b", " ", text)
    return [w for w in WORD.findall(text) if w.lower() not in KEEP]


def _card(lang: str, title: str, **kw) -> Card:
    return Card(id="task-1", title=title, kind="lightweight", status="running", state="running", language=lang,
                checklist_done=1, checklist_total=3, spend=0.25, model_cost=0.02,
                artifacts=tuple(Artifact(f"renders/p{n}.png", 1, "image", "agent") for n in range(4)),
                jobs=(Job("job-1", "video", "running", 0.4),), waiting_messages=1, **kw)


@pytest.mark.parametrize("lang,title", [("zh", "猫的海报"), ("ru", "Постер с котом"), ("ja", "猫のポスター")])
def test_a_card_for_a_task_in_another_language_has_no_english_words(lang: str, title: str) -> None:
    card = _card(lang, title)
    shown = card_body(card).plain + " " + " ".join(label for _, label in card_actions(card))
    shown += " " + template("tui_card.keys", lang)
    assert english(shown) == [], shown
    assert title in shown
    paused = dataclasses.replace(card, state="paused", status="paused")
    assert english(" ".join(label for _, label in card_actions(paused))) == []
    assert english(running_job_note("3d", lang)) == []


def test_an_english_card_reads_as_before() -> None:
    card = _card("en", "Cat poster")
    shown = card_body(card).plain
    assert "lightweight · running" in shown and "video running" in shown and "+ $0.02 model" in shown
    assert "+2 more" in shown and [label for _, label in card_actions(card)] == [
        "open", "reply", "pause", "stop", "promote"]


@pytest.mark.parametrize("lang,words", [("zh", "把海报改暖一点"), ("ru", "сделай постеры теплее")])
def test_stream_lines_speak_the_language_of_the_words(lang: str, words: str) -> None:
    for item in (StreamItem("i:1", "pending", words, 0.0, "task-1", language=lang),
                 StreamItem("i:2", "failed", words, 0.0, "task-1", language=lang),
                 StreamItem("e:1", "error", "", 0.0, "task-1", "failed", words, language=lang),
                 StreamItem("r:1", "routed", "海报" if lang == "zh" else "Постеры", 0.0, "task-1", "pending",
                            "i:1", language=lang),
                 StreamItem("m:1", "user", (words + "\n") * 30, 0.0, "task-1", language=lang)):
        shown = MessageRow(item).content_for(item).plain
        assert english(shown) == [], (item.kind, shown)


def test_inbox_labels_speak_the_language_of_the_message() -> None:
    read = InboxItem("i:1", "把海报改暖一点", "consumed", 0.0, 3, False, None)
    assert read.label == "模型已读取（第 3 步）"
    assert InboxItem("i:2", "make it warmer", "consumed", 0.0, 3, True, None).label == "acted upon (step 3)"


def test_every_tui_key_in_the_code_is_in_the_catalogue() -> None:
    """`text("group.name")` in the TUI reads `tui_group.name`: a key another branch added to the old
    strings.toml, or a typo, fails here rather than on the creator's screen."""
    missing = []
    for path in sorted((ROOT / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("text", "lines") and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                key = "tui_" + node.args[0].value
                try:
                    template(key, "en")
                except KeyError:
                    missing.append(f"{path.name}: {key}")
    assert missing == []
    assert not (ROOT / "tui" / "data" / "strings.toml").exists()


def _routed(app) -> list[MessageRow]:
    stream = app.screen_stack[0].query_one(StreamView)
    return [w for w in stream.rows.values() if isinstance(w, MessageRow) and w.item.kind == "routed"]


async def test_not_this_task_for_a_chinese_message_asks_in_chinese(tmp_path) -> None:
    app = live_app(tmp_path, replies=[
        {"content": None, "tool_calls": [{"name": "send_to_task", "arguments": {"task_id": "task-poster"}}]}])
    seen = notifications(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await booted(pilot)
        ledger = app.session.runtime.ledger
        await ledger.create_task("海报系列", task_id="task-poster", language="zh")
        await ledger.create_task("爵士传单", task_id="task-flyer", language="zh")
        await ledger.control("task-poster", "pause")  # it keeps the message unread
        await ledger.deliver("task-poster", "一组爵士之夜的海报")  # the words that started it (its card says so)
        assert await app.submit("把海报改暖一点") == "sent"  # what Enter in the composer does
        [row] = await wait_until(pilot, lambda: _routed(app), what="the routed line")
        assert english(str(row.render())) == [] and "已交给 海报系列" in str(row.render())
        row.action_not_this()
        await wait_until(pilot, lambda: rows(app, s.gates, s.gates.c.kind == "clarify"), what="the card")
        [gate] = await load_gates(app.session.db)
        assert gate.language == "zh" and gate.task_title == "主线"  # the main thread's card, by its name in zh
        said = " ".join([gate.question, gate.blocks, gate.continues,
                         *(o.label + " " + o.consequence for o in gate.options)])
        assert english(said) == [], said
        assert "交给 爵士传单" in [o.label for o in gate.options]
        await wait_until(pilot, lambda: any("关卡收件箱" in m for _, m in seen), what="the notice")
        assert all(english(m) == [] for _, m in seen if "关卡" in m)
        await wait_until(pilot, lambda: "卡片会问" in str(_routed(app)[0].render()), what="the line to say so")
        assert english(str(_routed(app)[0].render())) == []


# ---- the stats view's time axis (F3) ---------------------------------------------------------------------
def test_the_stats_axis_says_today_at_the_right_end_as_a_label_of_its_own() -> None:
    """"today" ends under the last day's column, drawn as its own segment: inside one run of text with the
    oldest label its place depended on how wide a renderer draws spaces (mid-axis in an SVG rendering)."""
    from lomo_tui.tui.screens.stats import charts_content, spark

    days = [{"verified": n % 2, "claimed": 1, "model_calls": n} for n in range(14)]
    chart = charts_content({"days": days, "tasks": []})
    lines = list(chart.split("\n"))
    row = next(line for line in lines if "model calls" in line.plain)
    axis = next(line for line in lines if "13d ago" in line.plain)
    chart_end = row.plain.index(spark([d["model_calls"] for d in days])) + 2 * len(days)
    assert [seg.text for seg in axis.render_segments() if seg.text.strip()] == ["13d ago", "today"]
    assert axis.plain.index("today") + len("today") == chart_end
    assert axis.plain.index("13d ago") == row.plain.index(spark([d["model_calls"] for d in days]))


async def test_the_task_view_of_a_russian_task_speaks_russian(tmp_path) -> None:
    from lomo_tui.tui.screens.task import TaskScreen
    from lomo_tui.tui.widgets.composer import ComposerInput

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(120, 36)) as pilot:
        await booted(pilot)
        task = await app.session.runtime.ledger.create_task("Постер с котом", language="ru")
        await app.session.runtime.ledger.control(task, "pause")
        await app.open_task(task)
        screen = await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded
                                  and app.screen.lang == "ru" and app.screen, what="the task view in Russian")
        titles = [str(screen.query_one(f"#{name}").render()) for name in (
            "brief-title", "checklist-title", "artifacts-title", "inbox-title", "timeline-title", "task-gates-title",
            "task-gates-hint", "checklist")]
        assert all(english(t) == [] for t in titles), titles
        assert "Бриф" in titles[0] and "Ждёт вас (0)" in titles[5]
        placeholder = screen.query_one(ComposerInput).placeholder
        assert english(placeholder) == [] and "Сообщение этой задаче" in str(placeholder)
        header = str(screen.query_one("#task-title").render())
        assert "долгая · на паузе" in header, header
        activity = [e.text for e in screen.detail.timeline]
        assert "задача создана" in activity and "на паузе" in activity, activity
        assert all(english(t) == [] for t in activity), activity


async def test_the_apps_own_text_follows_the_creators_language(tmp_path) -> None:
    """After the creator writes in Japanese, the help screen, the header and the gate pane speak Japanese;
    a word too short to tell ("ok") does not switch back."""
    from lomo_tui.tui.screens.help import HelpScreen
    from lomo_tui.tui.widgets.header import HeaderBar

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(120, 36)) as pilot:
        await booted(pilot)
        session = app.session
        session.notice_language("猫の短い動画を作ってください")
        session.notice_language("ok")
        assert session.language == "ja"
        app.live.schedule(everything=True)
        header = app.screen.query_one(HeaderBar)
        await wait_until(pilot, lambda: "待っているゲートなし" in header.render().plain, what="the header in Japanese")
        said = header.render().plain.split(" │ ")[3:]  # after Lomo, the workspace path and the model's name
        assert said and all(english(part) == [] for part in said), said
        app.action_help()
        screen = await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen.query("#help-keys")
                                  and app.screen, what="help")
        table = str(screen.query_one("#help-keys").render())
        assert "Lomo のキー" in table and "どこでも" in table and "終了" in table
        keys_named = {"Del", "Space", "right", "left", "EDITOR"}  # the keys' own names, as the keyboard has them
        assert [w for w in english(table) if w not in keys_named] == [], english(table)
        session.notice_language("make a short clip about coffee")  # three words or more: English again
        assert session.language == "en"


def test_the_key_table_reads_the_catalogue_and_keeps_english_for_the_readme() -> None:
    from lomo_tui.tui import keys

    rows = {what: where for where, _, what in keys.help_rows(lang="ru")}
    assert rows["Выход"] == "Везде" and "Окно памяти" in rows.values()
    assert keys.BY_ID["app.quit"].description == "Quit" and keys.BY_ID["card.open"].scope == "A task card"


async def test_a_change_notice_on_a_chinese_tasks_card_speaks_chinese(lomo) -> None:
    from lomo_tui.runtime.scheduler import Runtime
    from lomo_tui.views import load_cards

    (lomo.workspace / "storyboard.md").write_text("# 镜头 1\n狐狸睡着。\n\n# 镜头 2\n狐狸奔跑。\n", encoding="utf-8")
    rt = Runtime(lomo.settings(), watch=False)
    await rt.open()
    try:
        zh = await rt.ledger.create_task("狐狸短片", language="zh")
        en = await rt.ledger.create_task("Fox film")
        for task in (zh, en):
            await rt.workspace.read("storyboard.md", task)
        (lomo.workspace / "storyboard.md").write_text("# 镜头 1\n狐狸睡着。\n\n# 镜头 2\n狐狸跑进雪里。\n",
                                                     encoding="utf-8")
        await rt.workspace.observe("storyboard.md")
        cards = await load_cards(rt.db, [zh, en])
    finally:
        await rt.close()
    [said] = cards[zh].notices
    assert said == "storyboard.md v1 → v2：'镜头 2' 有改动；任务会先重读再继续" and english(said) == []
    assert cards[en].notices == ("storyboard.md v1 → v2: '镜头 2' changed; re-read before continuing",)
    assert english(card_body(cards[zh]).plain) == []


async def test_a_declined_spend_on_a_chinese_one_shot_leaves_a_chinese_card(tmp_path) -> None:
    from lomo_tui.tui.widgets.card import TaskCard

    app = live_app(tmp_path)
    seen = notifications(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await booted(pilot)
        assert await app.submit("做一个猫的3D模型") == "sent"  # a 3D model costs more than the free amount
        await wait_until(pilot, lambda: app.snap and any(g.kind == "spend" for g in app.snap.gates),
                         what="the spend gate", timeout=20)
        gate = next(g for g in app.snap.gates if g.kind == "spend")
        assert gate.language == "zh"
        await app.do_resolve(gate, False)
        card = await wait_until(pilot, lambda: next((c for c in app.screen.query(TaskCard) if c.task_id == gate.task_id
                                                     and c.card.state in ("done", "idle")), None),
                                what="the card settled", timeout=20)
        body = card_body(card.card).plain
        assert "你拒绝了" in body and english(body) == [], body
        assert any("已拒绝" in m for _, m in seen) and all(english(m.replace(gate.question, "")) == []
                                                          for _, m in seen if "已拒绝" in m)


# ---- the footer, F3, F4 and the Activity pane speak the creator's language (issue #12 §5) ------------------
def _footer(screen) -> list[str]:
    """The words of SCREEN's footer, as drawn."""
    from textual.widgets._footer import FooterKey

    return [key.description for key in screen.query(FooterKey) if key.description]


async def test_the_footer_speaks_the_creators_language_and_follows_it(tmp_path) -> None:
    """Textual's bindings carry English descriptions; after the creator's first Chinese message the footer
    of the main screen, the stats view (F3) and the context view (F4) speaks Chinese, and English again after
    an English message."""
    from lomo_tui.tui.screens.context_view import ContextScreen
    from lomo_tui.tui.screens.stats import StatsScreen

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(160, 40)) as pilot:
        await booted(pilot)
        await wait_until(pilot, lambda: "Quit" in _footer(app.screen), what="the English footer")
        app.session.notice_language("给我做一张猫的海报")
        said = await wait_until(pilot, lambda: "退出" in _footer(app.screen) and _footer(app.screen),
                                what="the footer in Chinese")
        assert all(english(w) == [] for w in said), said
        assert "新任务" in said and "帮助" in said, said
        app.live.schedule(everything=True)
        await wait_until(pilot, lambda: str(app.screen.query_one("#tree-title").render()) == "工作区",
                         what="the tree's title in Chinese")
        await pilot.press("f3")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.loaded
                                  and app.screen, what="the stats view")
        said = await wait_until(pilot, lambda: _footer(screen), what="its footer")
        assert any("时段" in w for w in said), said
        assert all(english(w) == [] for w in said), said
        await pilot.press("escape")
        await pilot.press("f4")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.loaded
                                  and app.screen, what="the context view")
        said = await wait_until(pilot, lambda: _footer(screen), what="its footer")
        assert all(english(w) == [] for w in said), said
        await pilot.press("escape")
        app.session.notice_language("make a short clip about coffee")
        await wait_until(pilot, lambda: "Quit" in _footer(app.screen), what="the footer in English again")


async def test_the_composer_speaks_the_creators_language_and_follows_it(tmp_path) -> None:
    """The input's hint and the name of the thread it writes to were drawn once, in English: after a Russian
    message they stayed "Message Lomo — Enter sends" and "→ Main"."""
    from lomo_tui.tui.widgets.composer import Composer

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(160, 40)) as pilot:
        await booted(pilot)
        composer = app.screen.query_one(Composer)
        assert composer.input.placeholder.startswith("Message Lomo") and composer.target_title == "Main"
        app.session.notice_language("сделай короткий фильм про лису")
        await wait_until(pilot, lambda: composer.target_title == "Главная", what="Main's name in Russian")
        assert english(composer.input.placeholder.replace("Lomo", "").replace("Enter", "").replace("Ctrl+J", "")) \
            == [], composer.input.placeholder
        composer.set_away(True)
        assert "Esc: писать здесь" in str(app.screen.query_one("#target").render())
        app.session.notice_language("make a short clip about coffee")
        await wait_until(pilot, lambda: composer.target_title == "Main", what="English again")
        assert composer.input.placeholder.startswith("Message Lomo")


async def test_the_stats_view_of_a_chinese_creator_has_no_english_words(tmp_path) -> None:
    from lomo_tui.tui.screens.stats import StatsScreen

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(160, 40)) as pilot:
        await booted(pilot)
        app.session.notice_language("给我做一张猫的海报")
        await app.session.runtime.ledger.create_task("猫的海报", language="zh")
        await pilot.press("f3")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.loaded
                                  and app.screen, what="the stats view")
        shown = "\n".join(str(screen.query_one(f"#{name}").render()) for name in (
            "stats-title", "stats-numbers", "stats-chart"))
        assert "已验证的进展" in shown and "重复工作" in shown and "今天" in shown, shown
        assert english(shown) == [], english(shown)


def test_the_figures_keep_their_english_for_lomo_stats() -> None:
    from lomo_tui import metrics

    doc = {"verified_transition_ratio": 0.5, "tokens_per_verified_transition": 1200.0,
           "cost_per_verified_transition": None, "spend_per_verified_transition": 0.5, "duplicate_work_rate": 0.0,
           "interruptions_per_milestone": 0.5, "needless_confirmations": 0, "unsafe_actions_prevented": 1,
           "recovery_success_rate": None, "model_calls_per_finished_task": 3.0,
           "counts": {"verified_transitions": 1, "claimed_transitions": 2, "tokens": 1200, "model_calls": 1,
                      "currency": "credits", "duplicate_jobs": 0, "jobs": 2, "creator_interruptions": 1,
                      "recovered": 0, "takeovers": 0, "finished_tasks": 1}}
    rows = dict(metrics.rows(doc))
    assert rows["Verified transitions"] == "50% (1 of 2 claimed steps)"
    assert rows["Tokens per verified"] == "1,200 (1,200 tokens, 1 model call)"
    assert rows["Recovery success"] == "— (0 of 0 take-overs completed)"
    ru = dict(metrics.rows(doc, "ru"))
    assert ru["Проверенные переходы"] == "50% (проверено 1 из 2 заявленных шагов)"
    assert all(english(name + " " + value) == [] for name, value in ru.items()), ru


async def test_the_context_view_names_its_layers_in_the_creators_language(tmp_path) -> None:
    """F4 shows each layer of the prompt by its catalogue label (not the English id), and its own words in
    the creator's language; the messages are the model's and stay as they are."""
    from lomo_tui.tui.screens.context_view import ContextScreen

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(160, 40)) as pilot:
        await booted(pilot)
        app.session.notice_language("给我做一张猫的海报")
        await pilot.press("f4")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.loaded
                                  and app.screen, what="the context view")
        shown = str(screen.query_one("#context-text").render())
        ours = shown.split("\n--- ")[0]  # before the first message
        ours = ours.replace(screen.doc["task_id"], "").replace(screen.doc["model"], "")
        assert "系统提示" in ours and "历史" in ours and "层" in ours, ours
        assert english(ours) == [], english(ours)
        heads = [line for line in shown.split("\n") if line.startswith("--- ")]
        assert heads and all(english(h) == [] for h in heads), heads
        title = str(screen.query_one("#context-title").render())
        assert english(title) == [], title


async def test_the_activity_pane_names_tools_in_the_tasks_language(tmp_path) -> None:
    """A Chinese task's Activity pane says 写入文件 for write_file, its status in Chinese (and the file it made
    is a 文档); the ledger keeps the model's name for it, and an English task's pane reads as before."""
    from lomo_tui.tui.screens.task import TaskScreen
    from lomo_tui.views import load_task

    def write(path: str) -> dict:
        return {"content": None, "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "猫"}}]}

    app = live_app(tmp_path, replies=[write("说明.md"), {"content": "写好了。"}, write("notes.md"), {"content": "Done."}])
    async with app.run_test(size=(140, 40)) as pilot:
        await booted(pilot)
        runtime = app.session.runtime
        ledger = runtime.ledger

        def done(path: str):
            return lambda: rows(app, s.tool_calls, s.tool_calls.c.name == "write_file",
                                s.tool_calls.c.status == "done", s.tool_calls.c.arguments["path"].as_string() == path)

        task = await ledger.create_task("海报说明", language="zh")
        await runtime.send("写一个说明文件", task)
        await wait_until(pilot, done("说明.md"), what="the Chinese task's tool call", timeout=20)
        other = await ledger.create_task("Notes")
        await runtime.send("write the notes", other)
        await wait_until(pilot, done("notes.md"), what="the English task's tool call", timeout=20)
        await app.open_task(task)
        screen = await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded
                                  and app.screen, what="the task view")
        activity = await wait_until(pilot, lambda: any(e.kind == "tool" for e in screen.detail.timeline)
                                    and [e.text for e in screen.detail.timeline], what="the activity")
        assert "写入文件（说明.md）完成" in activity, activity
        assert any("决定：写入文件" in t for t in activity), activity
        assert all(english(t) == [] for t in activity), activity
        made = await wait_until(pilot, lambda: [str(w.render()) for w in screen.query("ArtifactRow .name")],
                                what="the file it made")
        assert made == ["说明.md v1 · 文档"], made
        assert {r.name for r in await rows(app, s.tool_calls)} == {"write_file"}
        english_pane = [e.text for e in (await load_task(app.session.db, other)).timeline]
        assert "write_file(notes.md) done" in english_pane and "step 1 decided: write_file" in english_pane
    from lomo_tui.views import worded

    assert worded("tui_tools.a_tool_from_a_newer_lomo", "a_tool_from_a_newer_lomo", "zh") == "a_tool_from_a_newer_lomo"


@pytest.mark.parametrize("name,body,says", [
    ("broken.glb", b"glTF" + bytes(8), "缺少 JSON 数据块"),
    ("empty.gltf", b'{"asset": {"version": "2.0"}, "meshes": []}', "没有可画的三角形"),
    ("garbled.gltf", b"{not json", "不是 glTF JSON"),
])
async def test_a_model_the_preview_cannot_draw_says_why_in_the_creators_language(tmp_path, name, body, says) -> None:
    from textual.widgets import Static

    from lomo_tui.tui.screens.preview import PreviewScreen

    app = live_app(tmp_path, replies=[])
    async with app.run_test(size=(120, 36)) as pilot:
        await booted(pilot)
        app.session.notice_language("给我做一个猫的 3D 模型")
        model = app.workspace_root / name
        model.write_bytes(body)
        await app.open_file(model)
        preview = await wait_until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen, what="preview")
        said = await wait_until(pilot, lambda: " ".join(str(w.render()) for w in preview.query(Static)
                                                        if "3D" in str(w.render())), what="why it cannot be drawn")
        assert says in said, said
        assert [w for w in english(said) if w not in ("JSON", "glTF", "glb")] == [], said
