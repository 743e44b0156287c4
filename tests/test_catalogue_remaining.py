"""The last creator-facing English that bypassed the catalogue now speaks the task's language, while the model
reads the same English as before: a flow or file edit refused as a conflict, a step's refused or re-opened
reason (`[step_check]`), a tool call the runtime refused before it ran (`[call_error]`, its `error_said`), and the
metavars of `lomo --help` (`[cli_metavar]`)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from conftest import LomoEnv, lomo_in_language
from lomo_tui.errors import Phrase, Said, error_words
from lomo_tui.language.messages import catalogue
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

DONE = {"content": "好了", "tool_calls": []}
FLOW = {"lomo_flow": 1, "nodes": [{"id": "a", "type": "prompt", "params": {"text": "fox"}},
                                  {"id": "b", "type": "generate_image", "params": {"size": "square"}}],
        "edges": [{"from": "a.text", "to": "b.prompt"}]}


def call(name: str, say: str | None = None, /, **arguments: object) -> dict:
    return {"content": say, "tool_calls": [{"name": name, "arguments": arguments}]}


async def _send(rt: Runtime, task: str, words: str) -> None:
    await rt.send(words, task)
    assert await rt.run_until_quiescent(60)


async def _calls(rt: Runtime, task: str, name: str) -> list:
    async with rt.db.read() as conn:
        return (await conn.execute(select(s.tool_calls).join(s.turns, s.turns.c.id == s.tool_calls.c.turn_id).where(
            s.turns.c.task_id == task, s.tool_calls.c.name == name).order_by(s.tool_calls.c.started_at))).all()


async def _model_reads(rt: Runtime, task: str) -> list[dict]:
    async with rt.db.read() as conn:
        said = (await conn.execute(select(s.messages.c.content).where(
            s.messages.c.task_id == task, s.messages.c.role == "tool"))).scalars().all()
    return [json.loads(m) for m in said if m and m.startswith("{")]


def _result(row) -> dict:
    return json.loads(row.result) if isinstance(row.result, str) else row.result


async def _card(rt: Runtime, task: str):
    from lomo_tui.views import load_cards

    return (await load_cards(rt.db, [task]))[task]


# ---- a flow or a file edit refused as a conflict -------------------------------------------------------------
async def test_a_chinese_tasks_flow_edit_conflict_is_chinese_on_its_card_and_english_for_the_model(
        lomo: LomoEnv) -> None:
    path = lomo.workspace / "shots.flow.json"
    path.write_text(json.dumps(FLOW))
    edit = call("edit_flow_nodes", "正在改流程…", path="shots.flow.json", base_version=1, edits={"a": {"text": "wolf"}})
    lomo.replay(call("read_flow", path="shots.flow.json"), DONE, *[edit] * 4)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("流程", language="zh")
        await _send(rt, task, "读一下流程")
        path.write_text(json.dumps(dict(FLOW, nodes=[dict(FLOW["nodes"][0], params={"text": "fox at dawn"}),
                                                     FLOW["nodes"][1]])))  # the creator edits node a
        await _send(rt, task, "把 a 改成 wolf")
        [first, *_] = await _calls(rt, task, "edit_flow_nodes")
        card = await _card(rt, task)
        model = await _model_reads(rt, task)
    finally:
        await rt.close()
    english = ("Not applied: a changed since the version you read, so none of your edits were applied; re-read the "
               "flow and redo them on the current version.")
    chinese = "没有应用：a 在读取之后被改过，所以这次的修改一条也没有应用；会重新读取流程，在当前版本上重做"
    assert first.status == "failed" and _result(first)["error"] == english
    assert error_words(_result(first), "zh") == chinese
    assert {"error": english, "error_kind": "refused"} in model  # the model reads what it always read
    assert card.outcome == chinese, card.outcome


async def test_a_russian_tasks_file_conflict_is_russian_for_the_creator(lomo: LomoEnv) -> None:
    notes = lomo.workspace / "notes.md"
    notes.write_text("# Заметки\n", encoding="utf-8")
    write = call("write_file", "Пишу заметки…", path="notes.md", content="# Заметки\nновое\n", base_version=1)
    lomo.replay(call("read_file", path="notes.md"), DONE, *[write] * 4)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Заметки", language="ru")
        await _send(rt, task, "прочитай заметки")
        notes.write_text("# Заметки\nмоё\n", encoding="utf-8")  # the creator saves v2
        await _send(rt, task, "допиши заметки")
        [first, *_] = await _calls(rt, task, "write_file")
        card = await _card(rt, task)
    finally:
        await rt.close()
    assert _result(first)["error"].startswith("notes.md is at version 2, not 1: it changed since you read it.")
    russian = ("notes.md изменился после чтения (прочитана версия 1, сейчас версия 2); файл будет прочитан заново, "
               "а правка повторена на версии 2")
    assert error_words(_result(first), "ru") == russian
    assert card.outcome == russian, card.outcome


async def test_a_file_edit_that_does_not_apply_and_a_path_outside_speak_the_tasks_language(lomo: LomoEnv) -> None:
    (lomo.workspace / "notes.md").write_text("# Заметки\n", encoding="utf-8")
    edit = call("edit_file", "Правлю…", path="notes.md", old="нет такого", new="да", base_version=1)
    order = call("generate_image", "Рисую…", prompt="a poster", inputs=["../secret.png"])
    lomo.replay(edit, DONE, order, DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Заметки", language="ru")
        await _send(rt, task, "поправь заметки")
        await _send(rt, task, "нарисуй постер")
        [edited] = await _calls(rt, task, "edit_file")
        [ordered] = await _calls(rt, task, "generate_image")
    finally:
        await rt.close()
    assert _result(edited)["error"].startswith("Edit 1: the text to replace ('нет такого') was not found")
    assert error_words(_result(edited), "ru") == (
        "Правка 1: заменяемый текст («нет такого») не найден, поэтому ни одна правка не применена; файл будет "
        "перечитан, а текст скопирован точно, с пробелами и переносами строк")
    assert "'../secret.png' is outside the workspace ('..' climbs out of it)" in _result(ordered)["error"]
    said = error_words(_result(ordered), "ru")
    assert "«../secret.png» — за пределами рабочей папки («..» выводит за её пределы)" in said, said
    assert "outside" not in said and "climbs" not in said


def test_a_file_the_disk_or_its_permissions_refuse_is_worded_in_the_readers_language() -> None:
    from lomo_tui.workspace.errors import WorkspaceIOError, WorkspacePermissionError

    denied = WorkspacePermissionError("posters/a.png", "write")
    assert str(denied) == ("Cannot write 'posters/a.png': permission denied; check the permissions of the file and "
                           "its folder, or choose another location.")
    assert denied.said_as is not None
    assert denied.said_as.text("zh") == "无法写入“posters/a.png”：没有权限；需要检查这个文件及其文件夹的权限，或换一个位置"
    odd = WorkspaceIOError("a.md", "read", "Input/output error", "check the file and try again")
    assert str(odd) == "Cannot read 'a.md': Input/output error; check the file and try again."
    assert odd.said_as is not None and odd.said_as.text("ru").startswith("Не удалось прочитать «a.md»")


def test_an_invalid_flow_is_worded_problem_by_problem_in_the_readers_language() -> None:
    from lomo_tui.workspace.errors import FlowError
    from lomo_tui.workspace.flows import parse_flow

    with pytest.raises(FlowError) as caught:
        parse_flow('{"lomo_flow": 1, "nodes": [{"id": "a.b", "type": "x"}, {"type": "y"}]}')
    exc = caught.value
    assert str(exc) == ('The flow is not valid: node 2 needs an "id" (a non-empty string); node id \'a.b\' must not '
                        "contain '.'; fix this and try again.")
    assert exc.said_as is not None
    assert exc.said_as.text("zh") == '流程无效：第 2 个节点需要 "id"（非空字符串）；节点 id \'a.b\' 不能含有“.”；需要修正后再试'
    assert exc.said_as.text("ja").startswith('フローが正しくありません：2 番目のノードには "id"')


# ---- a step refused, re-opened -------------------------------------------------------------------------------
async def test_a_chinese_tasks_refused_step_says_why_in_chinese(lomo: LomoEnv) -> None:
    from lomo_tui.cli.state import render_task, task_document

    (lomo.workspace / "notes.md").write_text("# 笔记\n", encoding="utf-8")
    plan = call("update_plan", brief="封面", steps=[{"title": "封面", "tool": "generate_image"}])
    claim = call("complete_step", "第 1 步完成了", step="1", artifacts=["notes.md"])
    lomo.replay(plan, call("read_file", path="notes.md"), *[claim] * 4)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("封面", language="zh")
        await _send(rt, task, "做一张封面")
        [first, *_] = await _calls(rt, task, "complete_step")
        card = await _card(rt, task)
        doc = await task_document(rt.db, task)
        model = await _model_reads(rt, task)
    finally:
        await rt.close()
    english = ("step 1 was not marked done: notes.md v1 was made by the creator, not by this task: it is not a new "
               "version; notes.md is a document, not an image")
    chinese = "第 1 步没有标为完成：notes.md 的 v1 是你做的，不是这个任务做的：不算新版本；notes.md 是文档，不是图片"
    assert _result(first)["error"] == english and {"error": english, "error_kind": "unverified"} in model
    assert error_words(_result(first), "zh") == chinese
    assert card.outcome == chinese, card.outcome
    assert chinese in doc["status_reason"] and "made by the creator" not in doc["status_reason"]
    shown = render_task(doc, "zh")  # `lomo task show` in the creator's language, its prompt-cache line too
    assert "提示缓存：" in shown and "Prompt cache" not in shown, shown


async def test_a_plan_step_without_a_title_is_refused_in_the_tasks_language(lomo: LomoEnv) -> None:
    lomo.replay(call("update_plan", "正在列计划…", steps=[{"title": "封面"}, {"title": " "}]), DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("封面", language="zh")
        await _send(rt, task, "列个计划")
        [planned] = await _calls(rt, task, "update_plan")
    finally:
        await rt.close()
    assert _result(planned)["error"] == "step 2 has no title"
    assert error_words(_result(planned), "zh") == "第 2 步没有标题"


async def test_a_step_reopened_after_the_creator_broke_its_file_says_why_in_japanese(lomo: LomoEnv) -> None:
    from lomo_tui.cli.state import render_task, task_document

    plan = call("update_plan", brief="メモ", steps=[{"title": "メモを書く", "tool": "write_file"}])
    write = call("write_file", path="memo.md", content="# メモ\n")
    claim = call("complete_step", step="1", artifacts=["memo.md"])
    lomo.replay(plan, write, claim, {"content": "できました", "tool_calls": []},
                {"content": "確認します", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("メモ", language="ja")
        await _send(rt, task, "メモを書いて")
        assert (await task_document(rt.db, task))["checklist"][0]["status"] == "done"
        (lomo.workspace / "memo.md").write_bytes(b"")  # the creator empties it: it no longer holds
        await rt.workspace.observe("memo.md")  # as the watcher does
        await _send(rt, task, "続けて")
        doc = await task_document(rt.db, task)
    finally:
        await rt.close()
    [step] = doc["checklist"]
    assert step["status"] == "pending"
    assert "memo.md：ファイルが空です" in step["evidence"] and "the file is empty" not in step["evidence"]
    assert "memo.md：ファイルが空です" in step["why"]
    assert "memo.md：ファイルが空です" in render_task(doc, "ja")


def test_a_reason_list_keeps_its_catalogue_form_through_a_row() -> None:
    problems = [Phrase(Said("step_check.not_in_workspace", {"path": "a.png"})),
                Phrase(Said("step_check.wrong_kind", {"path": "b.md", "kind": Phrase(Said("step_check.a_document")),
                                                      "wanted": Phrase(Said("step_check.a_image"))}))]
    assert problems == ["a.png is not in the workspace", "b.md is a document, not an image"]  # still plain English
    said = Said("tool_error.step_unverified", {"n": 2, "problems": problems})
    loaded = Said.load(json.loads(json.dumps(said.stored())))
    assert loaded is not None and loaded.text("en") == said.text("en")
    assert loaded.text("zh") == "第 2 步没有标为完成：工作区里没有 a.png；b.md 是文档，不是图片"
    assert loaded.text("ru") == ("шаг 2 не отмечен выполненным: a.png нет в рабочей папке; b.md — документ, "
                                 "а не изображение")


# ---- a tool call the runtime refused before it ran -----------------------------------------------------------
async def test_arguments_a_tool_does_not_take_are_said_in_the_tasks_language(lomo: LomoEnv) -> None:
    order = call("generate_image", "…", colour="red")
    lomo.replay(call("update_plan", brief="x", steps=[{"title": "x", "tool": "generate_image"}]), *[order] * 4)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("x", language="ja")
        await _send(rt, task, "go")
        [first, *_] = await _calls(rt, task, "generate_image")
        card = await _card(rt, task)
        model = await _model_reads(rt, task)
    finally:
        await rt.close()
    result = _result(first)
    said = "「画像を生成」の呼び出しの引数が合わなかったため、呼び出しをやり直させました"
    assert first.status == "failed" and result["error_said"]["key"] == "call_error.invalid_arguments"
    assert {"error": result["error"], "error_kind": "invalid_arguments"} in model  # no creator wording for it
    assert result["error"].startswith("generate_image does not take colour")
    assert error_words(result, "ja") == said
    assert card.outcome == said, card.outcome
    assert card.status == "failed" and said in card.reason, card.reason  # it stopped repeating itself: the card


async def test_a_tool_this_task_cannot_use_is_said_in_the_tasks_language_on_its_card(lomo: LomoEnv) -> None:
    """An unknown tool never starts (no ledger row): its card words it by the tool's name."""
    step = {"content": "正在处理…", "tool_calls": [{"name": "paint_wall", "arguments": {}},
                                                {"name": "ask_user", "arguments": {"question": "继续吗？"}}]}
    lomo.replay(step)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("x", language="zh")
        await _send(rt, task, "go")  # the turn waits on the question: the card shows what became of the calls
        assert await _calls(rt, task, "paint_wall") == []
        card = await _card(rt, task)
        model = await _model_reads(rt, task)
    finally:
        await rt.close()
    assert {"error": "unknown tool 'paint_wall'", "error_kind": "unknown_tool"} in model
    assert card.outcome == "这个任务不能使用“paint_wall”", card.outcome


def test_a_tool_the_task_cannot_use_is_named_in_the_creators_words() -> None:
    from lomo_tui.runtime.turns import _tool_words

    said = Said("call_error.not_available", {"tool": _tool_words("generate_video")})
    assert said.text("zh") == "这个任务不能使用“生成视频”"
    assert Said("call_error.unknown_tool", {"name": _tool_words("nope")}).text("en") == "there is no tool nope"


# ---- `lomo --help`'s metavars ------------------------------------------------------------------------------------
_lomo = lomo_in_language


ENGLISH_METAVARS = re.compile(r"\b(DIR|NAME|MESSAGE|TASK_ID|task_id|SECONDS|COMMAND|ACTION|TEXT|WHEN|FILE)\b")


@pytest.mark.parametrize("lang,workspace,task", [("zh", "--workspace 文件夹", "任务ID"),
                                                 ("ja", "--workspace フォルダ", "タスクID"),
                                                 ("ru", "--workspace ПАПКА", "ID-ЗАДАЧИ")])
def test_help_metavars_speak_the_creators_language(tmp_path: Path, lang: str, workspace: str, task: str) -> None:
    top = _lomo(tmp_path, lang, "--help")
    show = _lomo(tmp_path, lang, "task", "show", "--help")
    assert top.returncode == show.returncode == 0
    for text in (top.stdout, show.stdout):
        assert workspace in text and ENGLISH_METAVARS.findall(text) == [], text
    assert f"[--task {task}]" in top.stdout and f"\n  {task}\n" in show.stdout


def _width(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def test_help_columns_line_up_by_terminal_columns_under_wide_metavars(tmp_path: Path) -> None:
    shown = _lomo(tmp_path, "zh", "--help").stdout
    options = shown.split("选项：\n", 1)[1].splitlines()
    starts = {_width(line[:re.search(r"\S\s{2,}(?=\S)", line).end()]) for line in options
              if line.startswith("  -") and re.search(r"\S\s{2,}\S", line)}
    assert len(starts) == 1, shown  # every option's help starts in one column
    assert all(_width(line) <= 100 for line in shown.splitlines()), shown


def test_a_usage_error_names_the_argument_as_the_usage_line_does(tmp_path: Path) -> None:
    missing = _lomo(tmp_path, "ja", "task", "show")
    assert missing.returncode == 2 and "タスクID" in missing.stderr.splitlines()[-1], missing.stderr
    assert "task_id" not in missing.stderr


def test_every_metavar_is_worded_in_every_language() -> None:
    english = catalogue("en")["cli_metavar"]
    assert all(name == text for name, text in english.items())  # English reads exactly as before
    for lang in ("zh", "ja", "ru"):
        assert set(catalogue(lang)["cli_metavar"]) == set(english), lang
        assert all(" " not in text for text in catalogue(lang)["cli_metavar"].values())  # argparse splits usage
