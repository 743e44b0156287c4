"""`lomo memory list|show|forget` speak the creator's language: the empty list's hint, stated or inferred, a
version's status ("superseded", "(forgotten)"), a memory's kind and scope, a source's role, what forgetting did
and why it refused; so do the memory view's version statuses (the list and the forget dialog), `lomo task list`'s
status column and a task action's line, `lomo context`'s table and the worker's first line. `--json` keeps the
contract's words (CONTRACTS §7). Real subprocesses on real SQLite; the memories come through `Runtime.send`."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LomoEnv
from lomo_tui.language import message
from lomo_tui.runtime.scheduler import Runtime

sys.path.insert(0, str(Path(__file__).parent))
from tui_apps.live import wait_until  # noqa: E402
from tui_apps.states import make_app, until_ready  # noqa: E402

SAID = ("I usually like muted, low-saturation colours.", "Also with a soft cream accent.")
# the English the memory commands printed, as words (a memory's own text is the creator's and stays)
ENGLISH = re.compile(r"\b(Nothing remembered|stated|inferred|active|superseded|forgotten|preference|fact|"
                     r"constraint|creator|origin|refine|confirm|none|rebuilt|memories|memory forget needs|"
                     r"cannot be undone)\b")
LANGS = ("zh", "ja", "ru")


def _speaking(lomo: LomoEnv, lang: str) -> None:
    lomo.env["LOMO_LANGUAGE"] = lang


def _run(lomo: LomoEnv, *args: str) -> subprocess.CompletedProcess[str]:
    done = lomo.run(*args)
    assert done.returncode == 0, done.stderr
    return done


def _ours(text: str) -> str:
    """TEXT without the memory's own words (the creator's English, kept as said) and its ids."""
    for words in (*SAID, " ".join(SAID)):
        text = text.replace(words, "")
    return re.sub(r"\b(mem|msg|ev|mv)-[\w-]+", "", text)


async def _remember(lomo: LomoEnv) -> None:
    """A preference the creator said, then refined: version 1 superseded, version 2 active."""
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.open()
    try:
        for words in SAID:
            await rt.send(words, None)
    finally:
        await rt.close()


@pytest.mark.parametrize("lang", LANGS)
def test_an_empty_memory_list_says_so_in_the_creators_language(lomo: LomoEnv, lang: str) -> None:
    _speaking(lomo, lang)
    shown = _run(lomo, "memory", "list").stdout.strip()
    assert shown == message("cli_memory.none", lang) and not ENGLISH.search(shown), shown
    assert json.loads(_run(lomo, "memory", "list", "--json").stdout) == []


@pytest.mark.parametrize("lang", LANGS)
async def test_memory_list_and_show_word_stated_statuses_kinds_and_roles(lomo: LomoEnv, lang: str) -> None:
    await _remember(lomo)
    _speaking(lomo, lang)
    rows = json.loads(_run(lomo, "memory", "list", "--all", "--json").stdout)
    assert [(r["version"], r["status"], r["kind"], r["scope"], r["stated"]) for r in rows] == [
        (1, "superseded", "preference", "creator", True), (2, "active", "preference", "creator", True)]
    listed = _run(lomo, "memory", "list", "--all").stdout
    shown = _run(lomo, "memory", "show", rows[0]["id"]).stdout
    for text in (listed, shown):
        assert not ENGLISH.search(_ours(text)), text
        for key in ("status_active", "kind_preference", "scope_creator", "stated"):
            assert message(f"memory_words.{key}", lang) in text, (key, text)
    assert message("memory_words.status_superseded", lang) in listed
    assert message("memory_words.status_superseded", lang) in shown, shown  # the older version's line
    assert message("memory_words.role_refine", lang) in shown and message("memory_words.role_origin", lang) in shown
    if lang == "zh":
        assert f"[偏好，关于你，亲口说的，已被取代] {SAID[0]}" in listed, listed


@pytest.mark.parametrize("lang", LANGS)
async def test_forgetting_from_the_cli_says_what_went_and_why_it_refused_in_the_creators_language(
        lomo: LomoEnv, lang: str) -> None:
    await _remember(lomo)
    _speaking(lomo, lang)
    memory_id = json.loads(_run(lomo, "memory", "list", "--json").stdout)[0]["id"]
    neither = lomo.run("memory", "forget", "--yes")
    assert neither.returncode == 2 and neither.stderr.startswith("lomo: ") and not ENGLISH.search(neither.stderr)
    assert neither.stderr.strip() == "lomo: " + message("cli_memory.needs_target", lang)
    unasked = lomo.run("memory", "forget", memory_id)  # no terminal to ask on
    assert unasked.returncode == 2 and "--yes" in unasked.stderr and not ENGLISH.search(unasked.stderr), unasked.stderr
    gone = _run(lomo, "memory", "forget", memory_id, "--yes").stdout
    assert gone.strip() == message("cli_memory.forgotten", lang, ids=memory_id) and not ENGLISH.search(_ours(gone))
    every = _run(lomo, "memory", "list", "--all").stdout
    assert message("memory_words.status_forgotten", lang) in every and message("cli_memory.forgotten_text", lang) \
        in every and not ENGLISH.search(_ours(every)), every
    rows = json.loads(_run(lomo, "memory", "list", "--all", "--json").stdout)
    assert {(r["status"], r["text"]) for r in rows} == {("forgotten", "")}  # the contract's words stay


# ---- the rest of the CLI's own words -------------------------------------------------------------------------
def test_task_list_words_a_tasks_status_and_a_task_action_says_what_it_did(lomo: LomoEnv) -> None:
    _speaking(lomo, "zh")
    task = lomo.new_task("海报")
    listed = _run(lomo, "task", "list").stdout
    line = next(line for line in listed.splitlines() if line.startswith(task))
    assert "空闲" in line and "idle" not in line, listed
    assert re.search(r"^main +空闲 +主线$", listed, re.M) and "Main" not in listed, listed  # the main thread's title
    stopped = _run(lomo, "task", "stop", task).stdout.strip()
    assert stopped == f"已停止：{task}", stopped
    assert json.loads(_run(lomo, "task", "list", "--json").stdout)[-1]["status"] == "stopped"
    paused = _run(lomo, "task", "archive", task, "--json").stdout
    assert json.loads(paused) == {"id": task, "action": "archive"}


async def test_task_show_gates_and_the_export_word_a_jobs_kind_and_status_a_gates_kind_and_a_tasks_status(
        lomo: LomoEnv) -> None:
    from lomo_tui.governance.gates import open_gate
    from lomo_tui.store import migrate
    from lomo_tui.store import schema as s
    from lomo_tui.store.engine import Database

    task = lomo.new_task("海报")
    db = Database(lomo.db_url)
    try:
        await migrate.upgrade(db)
        async with db.write() as conn:
            await conn.execute(s.tasks.update().where(s.tasks.c.id == task).values(language="zh"))
            await conn.execute(s.jobs.insert().values(  # a poster the studio made for this task
                id="job-1", workspace=str(lomo.workspace), idempotency_key="k-1", task_id=task, kind="image",
                provider="embedded", status="done", prompt="一张海报", params={}, deadline=9e9, created_at=1.0,
                updated_at=1.0))
            await open_gate(conn, task_id=task, kind="spend", question="花 3 个积分做海报？", options=[{"label": "好"}],
                            dedupe_key="poster-spend")
    finally:
        await db.close()
    _speaking(lomo, "zh")
    shown = _run(lomo, "task", "show", task).stdout
    job = next(line for line in shown.splitlines() if "一张海报" in line)
    assert job.split() == ["图片", "完成", "一张海报"], shown
    gates = _run(lomo, "gates").stdout
    assert "[花费] 花 3 个积分做海报？" in gates and "[spend]" not in gates, gates
    assert json.loads(_run(lomo, "gates", "--json").stdout)[0]["kind"] == "spend"
    page = _run(lomo, "task", "export", task).stdout
    assert f"长期任务 · 空闲 · {task}" in page and "idle" not in page, page


def test_lomo_context_speaks_the_creators_language(lomo: LomoEnv) -> None:
    _speaking(lomo, "ja")
    shown = _run(lomo, "context").stdout
    head = shown.splitlines()[0]
    assert head.startswith(message("tui_context.head", "ja").split("{")[0]) and "tokens" not in head, shown
    assert not re.search(r"^(layer|Tools:)|\bchars\b", shown, re.M), shown
    assert message("tui_context.col_layer", "ja") in shown


def test_the_workers_first_line_speaks_the_creators_language(lomo: LomoEnv) -> None:
    _speaking(lomo, "ru")
    worker = subprocess.Popen(lomo.argv("worker"), env=lomo.env, stderr=subprocess.PIPE, text=True,
                              cwd=lomo.root)
    try:
        first = worker.stderr.readline() if worker.stderr else ""
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert first.startswith("lomo: рабочий процесс ") and " on " not in first, first


# ---- the memory view -------------------------------------------------------------------------------------------
async def test_the_chinese_memory_view_words_an_earlier_versions_status(tmp_path: Path) -> None:
    from lomo_tui.tui.screens.confirm import ConfirmScreen
    from lomo_tui.tui.screens.memory import MemoryList, MemoryScreen

    app = make_app(tmp_path, "memory")
    async with app.run_test(size=(120, 36)) as pilot:
        await until_ready(pilot)
        app.session.language = "zh"
        await pilot.press("f2")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen) and app.screen.loaded
                                  and app.screen, what="the memory view")
        listing = screen.query_one(MemoryList)
        refined = next(n for n, e in enumerate(screen.entries) if len(e.versions) > 1)  # muted, then cream
        listing.highlighted = refined
        detail = await wait_until(pilot, lambda: "v1" in (d := str(screen.query_one("#memory-detail").render()))
                                  and d, what="the earlier version")
        assert "已被取代" in detail and "superseded" not in detail, detail
        await pilot.press("f")
        dialog = await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen,
                                  what="the forget dialog")
        assert "v1（已被取代）" in dialog.detail and "v2（有效）" in dialog.detail, dialog.detail
        assert not re.search(r"\b(active|superseded)\b", dialog.detail), dialog.detail
