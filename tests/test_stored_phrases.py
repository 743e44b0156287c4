"""Words Lomo stores are stored as catalogue text, not as English: a production node's error (a review the creator
stopped, a job that ran past its deadline) and a memory's source in the main thread are worded when they are read,
in the reader's language. Real runtime, real SQLite, the embedded studio."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.errors import Said, worded
from lomo_tui.memory import actions
from lomo_tui.production.report import graph_states
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.workspace.flows import Edge, Flow, Node, dump_flow

sys.path.insert(0, str(Path(__file__).parent))
from tui_apps.live import wait_until  # noqa: E402
from tui_apps.states import make_app, until_ready  # noqa: E402

RUN = {"content": None, "tool_calls": [{"name": "run_production", "arguments": {"path": "film.flow.json"}}]}


async def _pending(rt: Runtime) -> list[Any]:
    async with rt.db.read() as conn:
        return list((await conn.execute(select(s.gates).where(s.gates.c.status == "pending"))).all())


async def _task_in(rt: Runtime, title: str, lang: str) -> str:
    task = await rt.ledger.create_task(title)
    async with rt.db.write() as conn:
        await conn.execute(s.tasks.update().where(s.tasks.c.id == task).values(language=lang))
    return task


def _node(graph: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in graph["nodes"] if n["id"] == node_id)


def _shown(lomo: LomoEnv, lang: str, task: str) -> tuple[str, dict[str, Any]]:
    """`lomo task show TASK` for a reader of LANG, and its `--json`."""
    lomo.env["LOMO_LANGUAGE"] = lang
    shown = lomo.run("task", "show", task)
    assert shown.returncode == 0, shown.stderr
    doc = lomo.run("task", "show", task, "--json")
    assert doc.returncode == 0, doc.stderr
    return shown.stdout, json.loads(doc.stdout)


# ---- production graphs ---------------------------------------------------------------------------------------
async def test_a_review_the_creator_stopped_says_so_in_russian_for_a_russian_task(lomo: LomoEnv) -> None:
    flow = Flow(nodes=(Node("idea", "brief", {"text": "лиса в снегу"}), Node("look", "review", {"question": "Лиса?"})),
                edges=(Edge("idea.text", "look.brief"),))
    (lomo.workspace / "film.flow.json").write_text(dump_flow(flow), encoding="utf-8")
    lomo.replay(RUN, {"content": "готово", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await _task_in(rt, "Лиса", "ru")
        await rt.send("запусти мой граф", task)
        assert await rt.run_until_quiescent(60)
        [review] = await _pending(rt)
        await rt.resolve_gate(review.id, approve=False)  # the creator stops the graph at this review
        assert await rt.run_until_quiescent(60)
        [graph] = await graph_states(rt.db, task)
        async with rt.db.read() as conn:
            [call] = (await conn.execute(select(s.tool_calls).where(s.tool_calls.c.name == "run_production"))).all()
    finally:
        await rt.close()
    look = _node(graph, "look")
    assert look["state"] == "failed"
    assert look["error"] == "the creator stopped the graph at this review"  # what the model and the JSON read
    assert worded(look["error"], "ru") == "автор остановил граф на этой проверке"
    # the failed call's error, as the creator reads it, names the reason in their language too
    said = Said.load(call.result["error_said"])
    assert said is not None and said.text("ru") == "граф остановился: look: автор остановил граф на этой проверке"
    assert call.result["error"] == "the graph stopped: look: the creator stopped the graph at this review"
    text, doc = _shown(lomo, "ru", task)
    assert "look" in text and "— автор остановил граф на этой проверке" in text, text
    node = _node(doc["production"][0], "look")
    assert node["error"] == "the creator stopped the graph at this review"  # JSON keeps its English `error`
    assert node["error_text"] == "автор остановил граф на этой проверке"  # and says it in the task's language


DEADLINE = {"zh": "截止时间前没有结果；费用已退还", "ja": "期限までに結果がありませんでした。料金は返金されました",
            "ru": "к сроку результата нет; плата возвращена"}


@pytest.mark.parametrize("lang", ["zh", "ja", "ru"])
async def test_a_node_whose_job_ran_past_its_deadline_says_so_in_the_tasks_language(lomo: LomoEnv,
                                                                                   lang: str) -> None:
    (lomo.root / "cfg").mkdir(exist_ok=True)
    (lomo.root / "cfg" / "config.toml").write_text("[studio]\ndeadline_seconds = 0.3\n")
    flow = Flow(nodes=(Node("idea", "brief", {"text": "a fox"}),
                       Node("hero", "character_sheet", {"prompt": "a red fox", "size": "square",
                                                        "output": "hero.png"})),
                edges=(Edge("idea.text", "hero.brief"),))
    (lomo.workspace / "film.flow.json").write_text(dump_flow(flow), encoding="utf-8")
    lomo.replay(RUN, {"content": "…", "tool_calls": []})
    rt = Runtime(lomo.settings(env={"LOMO_STUDIO_FAULTS": "never_resolve", "LOMO_WATCHDOG_SECONDS": "0.1"}))
    await rt.start()
    try:
        task = await _task_in(rt, "Fox", lang)
        await rt.send("run my graph", task)
        assert await rt.run_until_quiescent(60)
        [card] = await _pending(rt)
        await rt.resolve_gate(card.id, approve=True)
        assert await rt.run_until_quiescent(60)  # the job hangs, expires at its deadline, the graph stops
        [graph] = await graph_states(rt.db, task)
    finally:
        await rt.close()
    hero = _node(graph, "hero")
    assert hero["state"] == "failed", graph
    assert hero["error"] == "no result before the deadline; the charge was refunded"
    assert worded(hero["error"], lang) == DEADLINE[lang]
    text, doc = _shown(lomo, lang, task)
    assert f"— {DEADLINE[lang]}" in text, text
    node = _node(doc["production"][0], "hero")
    assert node["error"] == "no result before the deadline; the charge was refunded"
    assert node["error_text"] == DEADLINE[lang]


def test_a_node_row_keeps_catalogue_text_as_its_catalogue_form_and_a_providers_words_verbatim() -> None:
    from types import SimpleNamespace

    from lomo_tui.errors import Phrase, column_text, column_value
    from lomo_tui.production.engine import _job_error

    silent = SimpleNamespace(id="job-1", error="", status="cancelled")  # a job that ended and said nothing
    stored = column_text(_job_error(silent, {}))
    assert stored is not None and "the job" not in stored  # the row keeps its key, not English
    loaded = column_value(stored)
    assert isinstance(loaded, Phrase) and loaded == "the job was cancelled"
    assert worded(loaded, "ja") == "ジョブは取り消されました"
    provider = SimpleNamespace(id="job-2", error='{"key": "moderation", "detail": "blocked"}', status="failed")
    assert column_value(column_text(_job_error(provider, {}))) == provider.error  # a provider's words, as they came
    old = "the creator stopped the graph at this review"  # a row from before: its English, as it was stored
    assert column_value(old) == old


# ---- memories ------------------------------------------------------------------------------------------------
async def test_a_memorys_source_in_the_main_thread_and_the_creator_scope_are_data_not_english(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.open()
    try:
        await rt.send("I usually like muted colours.", None)
        poster = await rt.ledger.create_task("Poster")
        await rt.send("Never put text over faces.", poster)
        async with rt.db.read() as conn:
            entries = await actions.memory_entries(conn)
    finally:
        await rt.close()
    liking = next(e for e in entries if "muted" in e.text)
    assert liking.scope == "creator" and liking.scope_title is None  # the creator's: no title to store in English
    [source] = liking.sources[liking.version_id]
    assert source.task_title is None and source.main  # said in the main thread: worded by whoever shows it
    rule = next(e for e in entries if e.kind == "constraint")
    [said] = rule.sources[rule.version_id]
    assert said.task_title == "Poster" and not said.main


async def test_the_chinese_memory_view_names_the_main_thread_zhuxian(tmp_path: Path) -> None:
    from lomo_tui.tui.screens.memory import MemoryScreen

    app = make_app(tmp_path, "memory")
    async with app.run_test(size=(120, 36)) as pilot:
        await until_ready(pilot)
        app.session.language = "zh"  # the creator writes Chinese now
        await pilot.press("f2")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen) and app.screen.loaded
                                  and app.screen, what="the memory view")
        detail = str(screen.query_one("#memory-detail").render())  # the brand fact, said in the main thread
        assert "“Our brand colour is teal.”" in detail and "主线 · 09:41" in detail, detail
        assert "Main" not in detail and "说过" in detail and "事实" in detail, detail  # its role and kind too
