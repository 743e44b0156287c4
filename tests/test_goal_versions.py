"""Goal versions (DESIGN J1): a task's goal and brief change on the record — who, why, from which message."""
from __future__ import annotations

import json

import pytest

from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.runtime.prompt_view import describe
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import migrate
from lomo_tui.store import schema as s
from lomo_tui.store.engine import Database


def plan(*briefs: str) -> dict:
    """One step: write each brief in turn (with the same one-step checklist: a review, so the task waits for
    the creator's card instead of going on — a step ticked off on the model's word alone no longer moves)."""
    calls = [{"name": "update_plan", "arguments": {"brief": b, "steps": [
        {"title": "Sketch the poster", "needs_confirmation": True}]}} for b in briefs]
    return {"content": None, "tool_calls": calls}


@pytest.mark.slow
def test_each_brief_change_is_a_version_saying_who_why_and_from_which_message(lomo: LomoEnv) -> None:
    # after each plan only the review is next: its card opens without asking the model again (J3)
    lomo.replay(plan("warm colours"), plan("cool blues, no text", "cool blues, no text"))
    task = lomo.new_task("Jazz poster")
    first = lomo.run("--run-once", "a jazz poster", "--task", task, "--json")
    assert first.returncode == 0, first.stderr
    second = lomo.run("--run-once", "make it blue and drop the text", "--task", task, "--json")
    assert second.returncode == 0, second.stderr
    shown = lomo.run("task", "show", task, "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    messages = {m["text"]: m["id"] for m in doc["conversation"] if m["role"] == "creator"}
    versions = doc["goal_versions"]
    assert [(v["version"], v["goal"], v["brief"], v["who"]) for v in versions] == [
        (1, "Jazz poster", "", "lomo"), (2, "Jazz poster", "warm colours", "agent"),
        (3, "Jazz poster", "cool blues, no text", "agent")]  # writing the same brief again records nothing
    assert versions[0]["message_id"] == messages["a jazz poster"]  # the task's first message
    assert versions[1]["message_id"] == messages["a jazz poster"]
    assert versions[2]["message_id"] == messages["make it blue and drop the text"]
    assert versions[2]["why"] == "the plan was revised" and doc["brief"] == "cool blues, no text"
    text = lomo.run("task", "show", task)
    assert "Goal and brief versions:" in text.stdout and "v3" in text.stdout


@pytest.mark.fresh_db
async def test_upgrading_an_older_database_gives_every_task_its_first_version(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url)
    await migrate.upgrade(db, "0012")
    async with db.write() as conn:  # a task as release 0012 wrote it
        await conn.exec_driver_sql(
            "INSERT INTO tasks (id, kind, status, title, goal, brief, source_inbox, created_at, updated_at) "
            "VALUES ('task-0ld', 'persistent', 'idle', 'old work', 'a zine', 'risograph, two colours', "
            "'msg-0ld', 1, 5)")
    await migrate.upgrade(db)
    async with db.read() as conn:
        rows = (await conn.execute(select(s.task_goal_versions))).all()
    await db.close()
    assert [(r.task_id, r.version, r.goal, r.brief, r.message_id, r.at) for r in rows] == [
        ("task-0ld", 1, "a zine", "risograph, two colours", "msg-0ld", 5.0)]


async def test_the_current_goal_is_in_the_context_tail_when_the_title_and_request_do_not_say_it(
        lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(), watch=False)
    await rt.open()
    try:
        task = await rt.ledger.create_task("Posters", goal="four posters for the jazz night, one per player")
        plain = await rt.ledger.create_task("Cat picture")
        goal_doc = await describe(rt, task)
        plain_doc = await describe(rt, plain)
    finally:
        await rt.close()
    tail = goal_doc["messages"][-1]["content"]
    assert "Goal (current): four posters for the jazz night, one per player" in tail
    assert all("Goal (current)" not in m["content"] for m in plain_doc["messages"])  # the title says it already


@pytest.mark.parametrize("lang, title, reason, by", [
    ("en", "Cat poster", "changed by the creator", "by the creator"),
    ("zh", "猫的海报", "创作者修改", "由 创作者"),
    ("ru", "Постер с котом", "изменено автором", "автор"),
])
def test_lomos_reason_for_a_goal_version_is_worded_in_the_creators_language(
        lomo: LomoEnv, lang: str, title: str, reason: str, by: str) -> None:
    lomo.env["LOMO_LANGUAGE"] = lang
    task = lomo.new_task(title)
    changed = lomo.run("task", "goal", task, title + " ×3")  # no --why: Lomo gives the reason
    assert changed.returncode == 0, changed.stderr
    shown = lomo.run("task", "show", task)
    assert shown.returncode == 0, shown.stderr
    line = next(l for l in shown.stdout.splitlines() if l.strip().startswith("v2"))
    assert reason in line and by in line, line
    assert "changed by the creator" not in shown.stdout or lang == "en"
    doc = json.loads(lomo.run("task", "show", task, "--json").stdout)
    assert doc["language"] == lang and doc["goal_versions"][1]["why"] == reason  # the task's language: its title's
    assert doc["goal_versions"][1]["who"] == "creator:cli"


def test_the_creators_own_reason_is_kept_as_they_wrote_it(lomo: LomoEnv) -> None:
    lomo.env["LOMO_LANGUAGE"] = "zh"
    task = lomo.new_task("猫的海报")
    assert lomo.run("task", "goal", task, "三张猫的海报", "--why", "客户要三张").returncode == 0
    doc = json.loads(lomo.run("task", "show", task, "--json").stdout)
    assert [v["why"] for v in doc["goal_versions"]][1] == "客户要三张"


@pytest.mark.fresh_db
async def test_upgrading_words_the_english_reasons_older_rows_stored(lomo: LomoEnv) -> None:
    db = Database(lomo.db_url)
    await migrate.upgrade(db, "0017")
    async with db.write() as conn:  # a task as release 0017 wrote it: Lomo's reasons in English
        await conn.exec_driver_sql(
            "INSERT INTO tasks (id, kind, status, title, goal, brief, language, created_at, updated_at) "
            "VALUES ('task-0ld', 'persistent', 'idle', '猫', '猫', '', 'zh', 1, 5)")
        for version, who, why in [(1, "lomo", "the task was created"), (2, "agent", "the plan was revised"),
                                  (3, "creator:cli", "changed by the creator"), (4, "creator:cli", "the client")]:
            await conn.exec_driver_sql(
                "INSERT INTO task_goal_versions (task_id, version, goal, brief, who, why, at) "
                f"VALUES ('task-0ld', {version}, '猫', '', '{who}', '{why}', {version})")
    await migrate.upgrade(db)
    await db.close()
    lomo.env["LOMO_LANGUAGE"] = "zh"
    doc = json.loads(lomo.run("task", "show", "task-0ld", "--json").stdout)
    assert [v["why"] for v in doc["goal_versions"]] == ["任务创建", "计划已修订", "创作者修改", "the client"]
