"""The last English a creator read outside the catalogue: `lomo stats` (its heading, scope and units), a task's
kind and status in the run-once report and `lomo task show`, a production graph's errors (the model still
reads English), the colon after a `--help` section heading in Chinese and Japanese, and the gates panel's
lines, broken by cell width without splitting a Japanese word or starting a line with "·"."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.geometry import Region

from conftest import LomoEnv, lomo_in_language
from lomo_tui.errors import worded
from lomo_tui.language.messages import catalogue
from lomo_tui.production.graph import GraphError, as_graph
from lomo_tui.workspace.flows import parse_flow



def _speaking(lomo: LomoEnv, lang: str) -> None:
    lomo.env["LOMO_LANGUAGE"] = lang


# ---- `lomo stats` ----------------------------------------------------------------------------------------------
def test_lomo_stats_speaks_the_readers_language_and_json_keeps_its_keys(lomo: LomoEnv) -> None:
    _speaking(lomo, "zh")
    shown = lomo.run("stats")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "统计 · 全部任务", shown.stdout
    assert not re.search(r"\b(Stats|all tasks|tokens|model calls|questions|take-overs)\b", shown.stdout), shown.stdout
    values = {cell_len(line[:re.search(r"\S\s{2,}(?=\S)", line).end()]) for line in lines[1:]}
    assert len(values) == 1, shown.stdout  # the values start in one terminal column under wide names
    doc = json.loads(lomo.run("stats", "--json").stdout)
    assert {"verified_transition_ratio", "tokens_per_verified_transition", "duplicate_work_rate",
            "interruptions_per_milestone", "unsafe_actions_prevented", "recovery_success_rate"} <= set(doc)
    task = lomo.new_task("Poster")
    assert lomo.run("stats", "--task", task).stdout.splitlines()[0] == f"统计 · 任务 {task}"


async def test_the_stats_views_tasks_name_the_main_thread_in_the_readers_language(lomo: LomoEnv) -> None:
    from lomo_tui import metrics
    from lomo_tui.store import migrate
    from lomo_tui.store import schema as s
    from lomo_tui.store.engine import Database

    db = Database(lomo.db_url)
    try:
        await migrate.upgrade(db)
        async with db.write() as conn:
            await conn.execute(s.tasks.insert().values(id="main", kind="main", status="idle", title="Main",
                                                       created_at=0.0, updated_at=0.0))
            for task in ("main", None):
                await conn.execute(s.model_calls.insert().values(task_id=task, model="lomo/replay", created_at=1.0))
        async with db.read() as conn:
            titles = {t["title"] for t in (await metrics.activity(conn, lang="zh"))["tasks"]}
    finally:
        await db.close()
    assert titles == {"主线", "（无任务）"}


def test_lomo_stats_in_english_reads_as_before(lomo: LomoEnv) -> None:
    _speaking(lomo, "en")
    shown = lomo.run("stats").stdout.splitlines()
    assert shown[0] == "Stats · all tasks" and shown[1].startswith("  Verified transitions  ")


# ---- a task's kind and status ----------------------------------------------------------------------------------
def test_the_run_once_report_and_task_show_word_a_tasks_kind_and_status(lomo: LomoEnv) -> None:
    _speaking(lomo, "ja")
    task = lomo.new_task("ポスター")
    lomo.replay({"content": "できました", "tool_calls": []})
    report = lomo.run("--run-once", "ポスターを作って", "--task", task)
    assert report.returncode == 0, report.stderr
    head = next(line for line in report.stdout.splitlines() if line.startswith("● ポスター"))
    assert head == f"● ポスター [継続タスク, 待機中] {task}", report.stdout
    show = lomo.run("task", "show", task)
    assert show.stdout.splitlines()[0] == f"● ポスター [継続タスク, 待機中] {task}", show.stdout
    doc = json.loads(lomo.run("task", "show", task, "--json").stdout)
    assert (doc["kind"], doc["status"]) == ("persistent", "idle")  # JSON keeps the raw ids
    ran = json.loads(lomo.run("--run-once", "もう一枚", "--task", task, "--json").stdout)
    assert {t["kind"] for t in ran["tasks"]} <= {"main", "lightweight", "persistent"}
    assert lomo.run("task", "show", "main").stdout.splitlines()[0] == "● メイン [メイン, 待機中] main"
    assert json.loads(lomo.run("task", "show", "main", "--json").stdout)["title"] == "Main"


def test_every_task_status_the_runtime_sets_has_words_in_every_language() -> None:
    statuses = ("active", "running", "idle", "waiting_gate", "waiting_job", "blocked", "paused", "done", "failed",
                "stopped")
    for lang in ("en", "zh", "ja", "ru"):
        words = catalogue(lang)["wording"]
        assert all(f"status_{s}" in words for s in statuses) and all(
            f"kind_{k}" in words for k in ("main", "lightweight", "persistent")), lang


# ---- production graph errors -----------------------------------------------------------------------------------
CYCLE = {"lomo_flow": 1, "nodes": [{"id": "a", "type": "key_frame", "params": {}},
                                   {"id": "b", "type": "shot_clip", "params": {}}],
         "edges": [{"from": "a.image", "to": "b.key_frame"}, {"from": "b.video", "to": "a.shot"}]}
UNKNOWN = {"lomo_flow": 1, "nodes": [{"id": "a", "type": "generate_image", "params": {}}], "edges": []}


def _graph_error(flow: dict) -> GraphError:
    with pytest.raises(GraphError) as caught:
        as_graph(parse_flow(json.dumps(flow)))
    return caught.value


def test_a_graph_error_is_english_for_the_model_and_the_readers_language_for_the_creator() -> None:
    cycle, unknown = _graph_error(CYCLE), _graph_error(UNKNOWN)
    assert str(cycle) == "the graph has a cycle through a, b; a step cannot wait on itself"
    assert str(unknown).startswith("node type generate_image is not a production step (known: brief, ")
    assert cycle.text("zh") == "制作图在 a, b 处形成了循环；一个步骤不能等待它自己"
    assert unknown.text("ja").startswith("ノードの種類 generate_image は制作ステップではありません")
    assert cycle.text("ru") == "в графе цикл через a, b; шаг не может ждать сам себя"


def test_a_graph_run_refused_for_its_shape_is_english_for_the_model_and_chinese_for_the_creator(
        lomo: LomoEnv) -> None:
    from lomo_tui.errors import Said

    task = lomo.new_task("短片")
    (lomo.workspace / "film.flow.json").write_text(json.dumps(CYCLE), encoding="utf-8")
    lomo.replay({"content": None, "tool_calls": [{"name": "run_production", "arguments": {"path": "film.flow.json"}}]},
                {"content": "好了", "tool_calls": []})
    assert lomo.run("--run-once", "做这个短片", "--task", task).returncode == 0
    [row] = [c for c in lomo.inspect()["tool_calls"] if c["name"] == "run_production"]
    result = row["result"] if isinstance(row["result"], dict) else json.loads(row["result"])
    assert "the graph has a cycle through a, b; a step cannot wait on itself" in result["error"]  # the model's
    said = Said.load(result["error_said"])
    assert said is not None and "制作图在 a, b 处形成了循环；一个步骤不能等待它自己" in said.text("zh"), said


async def test_a_graph_that_cannot_be_read_says_so_in_the_tasks_language_in_task_show(lomo: LomoEnv) -> None:
    from lomo_tui.production.report import graph_states
    from lomo_tui.store import migrate
    from lomo_tui.store import schema as s
    from lomo_tui.store.engine import Database

    task = lomo.new_task("Film")
    (lomo.workspace / "film.flow.json").write_text(json.dumps(CYCLE), encoding="utf-8")
    db = Database(lomo.db_url)
    try:
        await migrate.upgrade(db)
        async with db.write() as conn:
            await conn.execute(s.production_nodes.insert().values(  # the task ran this graph once
                workspace=str(lomo.workspace), graph="film.flow.json", node_id="a", task_id=task, type="key_frame",
                status="done", updated_at=0.0))
        [graph] = await graph_states(db, task)
    finally:
        await db.close()
    assert graph["error"] == ("the graph cannot be read: the graph has a cycle through a, b; "
                              "a step cannot wait on itself")  # what JSON and the model read
    assert worded(graph["error"], "zh") == "无法读取制作图：制作图在 a, b 处形成了循环；一个步骤不能等待它自己"
    _speaking(lomo, "zh")
    shown = lomo.run("task", "show", task)
    assert "  ✗ 无法读取制作图：制作图在 a, b 处形成了循环；一个步骤不能等待它自己" in shown.stdout, shown.stdout
    doc = json.loads(lomo.run("task", "show", task, "--json").stdout)
    assert doc["production"][0]["error"].startswith("the graph cannot be read: ")


def test_a_storyboard_node_that_cannot_be_read_keeps_its_catalogue_form(tmp_path: Path) -> None:
    from lomo_tui.production.state import _parse_board

    _, missing = _parse_board(tmp_path, "board.md")
    (tmp_path / "empty.md").write_text("no shots here", encoding="utf-8")
    _, empty = _parse_board(tmp_path, "empty.md")
    assert missing == "the storyboard board.md cannot be read" and worded(missing, "ja") == "絵コンテ board.md を読み込めません"
    assert worded(empty, "zh") == "分镜 empty.md 里没有 “## Shot N” 小节"


# ---- `--help` headings -----------------------------------------------------------------------------------------
_lomo = lomo_in_language


@pytest.mark.parametrize("lang,headings", [("zh", ("位置参数：", "选项：")), ("ja", ("位置引数：", "オプション："))])
def test_help_section_headings_end_with_the_languages_own_colon(tmp_path: Path, lang: str, headings) -> None:
    for args in (("--help",), ("task", "--help"), ("stats", "--help")):
        shown = _lomo(tmp_path, lang, *args)
        assert shown.returncode == 0, shown.stderr
        rows = shown.stdout.splitlines()
        assert headings[1] in rows, shown.stdout
        assert not [row for row in rows if row and not row.startswith(" ") and row.endswith(":")], shown.stdout
    assert headings[0] in _lomo(tmp_path, lang, "--help").stdout.splitlines()


def test_help_headings_in_english_and_russian_keep_the_ascii_colon(tmp_path: Path) -> None:
    assert "options:" in _lomo(tmp_path, "en", "--help").stdout.splitlines()
    assert "параметры:" in _lomo(tmp_path, "ru", "--help").stdout.splitlines()


# ---- the gates panel -------------------------------------------------------------------------------------------
sys.path.insert(0, str(Path(__file__).parent))
from tui_apps.states import make_app, until_ready  # noqa: E402

from lomo_tui.tui.linebreak import NO_LINE_START, wrap  # noqa: E402
from lomo_tui.views import GateOption, GateView  # noqa: E402

KANA_WORDS = ("ありません", "することは", "チェックリスト", "ポスター", "ショーウィンドウ", "花瓶の", "します")
QUESTION = {"ja": "ショーウィンドウ用の花瓶のポスターを 3 枚作って、チェックリストに追加しますか？",
            "zh": "要为橱窗的花瓶做 3 张海报，并加入清单吗？"}


@pytest.fixture
def language(monkeypatch: pytest.MonkeyPatch):
    for name in ("LOMO_LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    return lambda lang: monkeypatch.setenv("LOMO_LANGUAGE", lang)


def _drawn(widget) -> list[str]:
    """WIDGET's lines as drawn, without its border and padding."""
    width, height = widget.outer_size
    inner = widget.content_region.x - widget.region.x
    return [strip.text[inner:].rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


def _gate(lang: str) -> GateView:
    options = {"ja": (GateOption("承認する", "ポスターを作って、チェックリストに追加します"),
                      GateOption("やめる", "何もしません。ありません。")),
               "zh": (GateOption("批准", "做海报，并把它加入清单"), GateOption("取消", "什么也不做。"))}[lang]
    return GateView(id="g1", kind="question", question=QUESTION[lang], options=options, task_id="t1",
                    task_title="ポスター" if lang == "ja" else "海报", blocks="", continues="", created_at=0.0,
                    language=lang)


def _no_bad_breaks(rows: list[str], text: str) -> None:
    for row in rows:
        assert not row.lstrip()[:1] in NO_LINE_START, rows  # no line starts with "·" or closing punctuation
    joined = "".join(row.strip() for row in rows)
    for word in KANA_WORDS:
        if word in text.replace(" ", ""):
            assert word in joined and any(word in row for row in rows), (word, rows)  # never split


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("size", [(60, 24), (120, 30), (140, 36)], ids=["60x24", "120x30", "140x36"])
async def test_the_gates_panel_breaks_cjk_lines_by_cell_width(tmp_path, language, lang, size) -> None:
    from lomo_tui.tui.widgets.gates import GateInbox, GateList

    language(lang)
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=size) as pilot:
        await until_ready(pilot)
        if app.screen.has_class("-narrow"):
            app.screen.focus_gates()  # one pane at a time: Ctrl+G shows the panel
            await pilot.pause()
        inbox = app.screen.query_one(GateInbox)
        empty = app.screen.query_one("#gates-empty")
        assert inbox.display and empty.display
        rows = [r for r in _drawn(empty) if r.strip()]
        assert all(cell_len(r) <= empty.content_region.width for r in rows)
        _no_bad_breaks(rows, catalogue(lang)["tui_gates"]["empty"])
        inbox.show((_gate(lang),))
        await pilot.pause()
        listed = app.screen.query_one(GateList)
        shown = [r for r in _drawn(listed) if r.strip()]
        assert shown and all(cell_len(r) <= listed.content_region.width for r in shown)
        kind = catalogue(lang)["gate"]["kind_question"]
        question = shown[:next(n for n, r in enumerate(shown) if r.startswith(f"  {kind} · "))]
        assert question[0].startswith("⚑ ") and all(r.startswith("  ") for r in question[1:]), shown  # hanging
        said = "".join(r.strip() for r in question).replace("⚑", "").replace(" ", "")
        assert said == QUESTION[lang].replace(" ", ""), shown  # nothing lost or moved
        _no_bad_breaks(shown, QUESTION[lang] + "".join(o.consequence for o in _gate(lang).options))
        hint = [r for r in _drawn(app.screen.query_one("#gates-hint")) if r.strip()]
        assert hint and not any(r.lstrip().startswith("·") for r in hint), hint


@pytest.mark.parametrize("width", [20, 30, 44, 52])
def test_a_key_hint_line_breaks_only_between_its_keys(width: int) -> None:
    hint = "Enter 发送 · Ctrl+J 换行 · Ctrl+G 关卡 · Ctrl+P 命令 · F1 帮助"
    rows = wrap(hint, width, " · ")
    assert all(cell_len(row) <= width for row in rows) and not any(row.startswith("·") for row in rows), rows
    assert all(any(item in row for row in rows) for item in hint.split(" · ")), rows  # each key with its words
    assert " ".join(rows).replace("  ", " ") == hint


async def test_the_welcome_key_line_never_starts_a_line_with_a_dot(tmp_path, language) -> None:
    from lomo_tui.tui.widgets.stream import Welcome

    language("zh")
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=(60, 24)) as pilot:
        await until_ready(pilot)
        rows = [r.strip() for r in _drawn(app.screen.query_one(Welcome)) if r.strip()]
        keys = [r for r in rows if "F1" in r or "Ctrl" in r or "Enter" in r]
        assert keys and not any(r.startswith("·") for r in rows), rows
        assert any("Ctrl+P 命令" in r for r in rows), rows  # a key keeps its words


def test_japanese_breaks_where_the_script_changes_not_inside_a_word() -> None:
    assert wrap("今あなたが対応することはありません。", 33) == ["今あなたが", "対応することはありません。"]
    rows = wrap("ショーウィンドウ用の花瓶の 3D モデルをチェックリストに追加しますか？", 20)
    assert rows == ["ショーウィンドウ用の", "花瓶の 3D モデルを", "チェックリストに", "追加しますか？"]
    assert wrap("制作图片、短视频、声音", 8) == ["制作图", "片、短视", "频、声音"]  # Chinese breaks between characters
