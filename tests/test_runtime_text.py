"""Runtime, governance and CLI text speaks the reader's language (#12 §5): why a gate expired is stored as
catalogue keys and worded where it is shown; the CLI's one error line follows the configured language, else
the locale."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import insert

from conftest import LomoEnv
from lomo_tui.config import creator_language
from lomo_tui.errors import Said
from lomo_tui.governance.gates import expiry_text, open_gate, pending_gates
from lomo_tui.language import locale_language
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s


@pytest.mark.parametrize(("env", "lang"), [
    ({"LANG": "zh_CN.UTF-8"}, "zh"), ({"LANG": "ja_JP.eucJP"}, "ja"), ({"LANG": "ru_RU.KOI8-R"}, "ru"),
    ({"LANG": "de_DE.UTF-8"}, "en"), ({"LANG": "C.UTF-8"}, "en"), ({}, "en"),
    ({"LC_ALL": "ja_JP.UTF-8", "LANG": "ru_RU.UTF-8"}, "ja"),  # LC_ALL before LC_MESSAGES before LANG
    ({"LC_MESSAGES": "zh_TW", "LANG": "en_US.UTF-8"}, "zh"), ({"LC_ALL": "", "LANG": "ru_RU"}, "ru")])
def test_the_locale_names_the_language(env: dict[str, str], lang: str) -> None:
    assert locale_language(env) == lang


def test_the_configured_language_comes_before_the_locale(lomo: LomoEnv) -> None:
    config = lomo.root / "cfg" / "lomo" / "config.toml"
    config.parent.mkdir(parents=True)
    assert creator_language({"LANG": "ja_JP.UTF-8"}, config) == "ja"
    config.write_text('language = "ru"\n')
    assert creator_language({"LANG": "ja_JP.UTF-8"}, config) == "ru"
    assert creator_language({"LANG": "ja_JP.UTF-8", "LOMO_LANGUAGE": "zh"}, config) == "zh"
    config.write_text('language = "ru"\nbroken = \n')  # a config that does not load: the locale decides
    assert creator_language({"LANG": "ja_JP.UTF-8"}, config) == "ja"


def test_an_old_rows_free_text_reason_is_shown_as_it_was_stored() -> None:
    assert expiry_text({"reason": "its deadline passed", "instead": "went on"}, "zh") == (
        "its deadline passed", "went on")
    said = {"reason": "the task was stopped", "reason_said": Said("gate_expiry.stopped").stored()}
    assert expiry_text(said, "ja") == ("タスクが停止されました", "")
    unknown = dict(said, reason_said={"key": "gate_expiry.from_a_later_lomo", "fields": {}})
    assert expiry_text(unknown, "ja") == ("the task was stopped", "")  # a key this catalogue lacks: the words


async def test_a_chinese_task_stopped_at_an_open_gate_says_why_in_chinese(lomo: LomoEnv) -> None:
    from lomo_tui.cli.state import render_task, task_document
    from lomo_tui.views import load_task

    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("海报", goal="做一张海报", language="zh")
        async with rt.db.write() as conn:
            gate = await open_gate(conn, task_id=task, kind="question", question="暖色还是冷色？",
                                   options=["暖色", "冷色"], dedupe_key="t-zh")
            await conn.execute(insert(s.jobs).values(  # a render in flight (a provider that never answers)
                id="job_zh", task_id=task, workspace="ws", idempotency_key="k-zh", kind="image", provider="elsewhere",
                status="running", params={}, deadline=1e12, created_at=1.0, updated_at=1.0))
        await rt.ledger.control(task, "stop")
        doc = await task_document(rt.db, task)
        detail = await load_task(rt.db, task)
    finally:
        await rt.close()
    [shown] = doc["gates"]
    assert shown["id"] == gate.id and shown["status"] == "expired"
    assert (shown["expired_reason"], shown["expired_instead"]) == ("任务已停止", "它本会允许的操作都没有执行")
    assert shown["resolution"]["reason"] == "the task was stopped"  # the stored English stays for old readers
    assert doc["status_reason"] == "已停止"
    assert [(j["status"], j["error"]) for j in doc["jobs"]] == [("cancelled", "已取消：任务已停止")]
    expired = [e.text for e in detail.timeline if e.kind == "gate" and e.status == "expired"]
    assert expired == ["已过期：任务已停止; 它本会允许的操作都没有执行"], expired
    shown_to = render_task(doc, "ru").splitlines()  # the CLI's own words are the reader's; the task's are its own
    assert "  причина: 已停止" in shown_to and "Генерации:" in shown_to, shown_to


async def test_a_question_past_its_deadline_says_what_happened_in_the_tasks_language(lomo: LomoEnv) -> None:
    from lomo_tui.views import load_task

    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("パレット", goal="パレットを選ぶ", language="ja")
        instead = Said("gate_expiry.went_on_with", {"option": "寒色"})
        async with rt.db.write() as conn:
            await open_gate(conn, task_id=task, kind="question", question="暖色か寒色か？", options=["暖色", "寒色"],
                            dedupe_key="t-ja", deadline=0.0,
                            scope={"on_expiry": instead.text("en"), "on_expiry_said": instead.stored()})
        assert await pending_gates(rt.db) == []  # past its deadline: it expired
        detail = await load_task(rt.db, task)
    finally:
        await rt.close()
    [expired] = [e.text for e in detail.timeline if e.kind == "gate" and e.status == "expired"]
    assert "期限が過ぎました" in expired and "「寒色」で進めました" in expired, expired


def test_an_unknown_task_is_one_chinese_line_under_a_chinese_locale(lomo: LomoEnv) -> None:
    proc = lomo.run("task", "show", "nope", LANG="zh_CN.UTF-8")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "lomo: 没有 id 为“nope”的任务；`lomo task list` 会列出所有任务\n", proc.stderr
    english = lomo.run("task", "show", "nope")
    assert english.stderr == "lomo: no task with id 'nope'; `lomo task list` lists the tasks\n", english.stderr


def test_the_configured_language_words_cli_errors(lomo: LomoEnv) -> None:
    config = lomo.root / "cfg" / "lomo" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('language = "ru"\n')
    proc = lomo.run("approve", "gate_nope", LANG="ja_JP.UTF-8")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("lomo: нет карточки с id «gate_nope»"), proc.stderr


def test_a_bad_option_and_a_bad_config_value_follow_the_locale(lomo: LomoEnv) -> None:
    bad = lomo.run("gates", "--jsn", LANG="ja_JP.UTF-8")
    assert bad.returncode == 2 and "不明なオプション --jsn です。--json のことですか？" in bad.stderr, bad.stderr
    config = lomo.root / "cfg" / "lomo" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[runtime]\nworkers = "four"\n')
    proc = lomo.run("gates", "--json", LANG="ru_RU.UTF-8")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "[runtime] workers должно быть целым числом, а не \"four\"; исправьте или удалите строку" in proc.stderr


def test_a_database_that_is_not_lomos_is_one_line_in_the_locales_language(lomo: LomoEnv) -> None:
    junk = lomo.root / "junk.db"
    junk.write_bytes(b"this is no database, only words " * 8)
    argv = [a if a != lomo.db_url else f"sqlite+aiosqlite:///{junk}" for a in lomo.argv("gates")]
    import subprocess

    proc = subprocess.run(argv, env=lomo.environ(LANG="zh_CN.UTF-8"), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr == f"lomo: {junk} 不是 Lomo 数据库（不是 SQLite 文件）：请用 --db 指定别的数据库，或恢复备份\n"


def test_why_the_runtime_settles_a_task_is_worded_in_its_language() -> None:
    from lomo_tui.runtime.decision import TaskState, decide

    done = decide(TaskState(kind="persistent", status="active", planned=True, open_steps=()))
    assert (done.action, done.reason, done.words("ru")) == ("quiet", "checklist complete", "чек-лист выполнен")
    assert "said" not in done.event()  # the run_decided event keeps its shape


def test_the_clis_report_lines_follow_the_locale(lomo: LomoEnv) -> None:
    none = lomo.run("gates", LANG="ja_JP.UTF-8")
    assert (none.returncode, none.stdout) == (0, "あなたの返事を待っている確認カードはありません。\n"), none.stderr
    assert lomo.run("gates").stdout == "No gates are waiting for you.\n"


async def test_a_task_stopped_from_the_tui_says_why_in_its_language(lomo: LomoEnv) -> None:
    """The TUI passed "stop by the creator" as the reason, stored in English on a Chinese task."""
    from lomo_tui.cli.state import task_document
    from lomo_tui.tui.session import Session

    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("海报", goal="做一张海报", language="zh")
        await Session(lomo.settings(), runtime=rt).control(task, "stop")
        doc = await task_document(rt.db, task)
    finally:
        await rt.close()
    assert doc["status"] == "stopped" and doc["status_reason"] == "已停止"
