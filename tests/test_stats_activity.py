"""What the TUI's stats view charts (`metrics.activity`) and reads (`metrics.rows`): per day and per task, counted
from the ledgers on a real SQLite database."""
from __future__ import annotations

import datetime as dt
import time

from sqlalchemy import insert, update

from conftest import LomoEnv
from lomo_tui import metrics
from lomo_tui.governance.gates import open_gate
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.tasks import checklist

DAY = 86400


async def test_activity_counts_verified_steps_and_model_calls_per_day_and_per_task(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.open()
    try:
        now = time.time()
        poster = await rt.ledger.create_task("Posters")
        flyer = await rt.ledger.create_task("Flyer")
        async with rt.db.write() as conn:
            steps = await checklist.revise(conn, poster, [{"title": "Poster 1"}, {"title": "Poster 2"}])
            for step in steps:
                await checklist.complete(conn, step.id, evidence="claimed")  # claims, no evidence yet
            await conn.execute(update(s.checklist).where(s.checklist.c.id == steps[0].id).values(
                done_at=now - 2 * DAY))
            gate = await open_gate(conn, task_id=poster, kind="plan", question="Poster 2 ok?", options=["Yes"],
                                   dedupe_key="t", scope={"checklist_item": steps[1].id})
            for task_id, ago, tokens in ((poster, 0, 100), (poster, 0, 50), (poster, 3 * DAY, 10), (flyer, 0, 7),
                                         (flyer, 40 * DAY, 1)):
                await conn.execute(insert(s.model_calls).values(
                    task_id=task_id, model="lomo/local", prompt_tokens=tokens, completion_tokens=0,
                    created_at=now - ago))
        await resolve_gate(rt.db, gate.id, approve=True, by="creator:test")  # the creator's approval verifies it
        async with rt.db.read() as conn:
            doc = await metrics.activity(conn, days=7, now=now)
            only_flyer = await metrics.activity(conn, days=7, now=now, task_id=flyer)
            recent = await metrics.activity(conn, days=7, now=now, since=now - DAY)
    finally:
        await rt.close()
    days = doc["days"]
    assert len(days) == 7 and days[-1]["day"] == dt.date.fromtimestamp(now).isoformat()
    assert [d["model_calls"] for d in days] == [0, 0, 0, 1, 0, 0, 3]  # the 40-day-old call is out of the chart
    assert [(d["claimed"], d["verified"]) for d in days][-3:] == [(1, 0), (0, 0), (1, 1)]
    by_task = {t["title"]: t for t in doc["tasks"]}
    assert (by_task["Posters"]["model_calls"], by_task["Posters"]["tokens"]) == (3, 160)
    assert (by_task["Posters"]["claimed"], by_task["Posters"]["verified"]) == (2, 1)
    assert by_task["Flyer"]["model_calls"] == 2  # per task counts every call, as `lomo stats` does
    assert [t["title"] for t in only_flyer["tasks"]] == ["Flyer"]
    recent_by_task = {t["title"]: t for t in recent["tasks"]}  # SINCE bounds the per-task totals, not the chart
    assert (recent_by_task["Posters"]["model_calls"], recent_by_task["Posters"]["claimed"]) == (2, 1)
    assert recent["days"] == days


def test_rows_say_what_each_figure_is_made_of_and_a_dash_where_nothing_was_measured() -> None:
    counts = {"claimed_transitions": 4, "verified_transitions": 3, "model_calls": 1, "tokens": 1234,
              "currency": "credits", "duplicate_jobs": 0, "jobs": 0, "creator_interruptions": 1, "takeovers": 0,
              "recovered": 0, "finished_tasks": 0}
    doc = {"verified_transition_ratio": 0.75, "tokens_per_verified_transition": 411.3,
           "cost_per_verified_transition": None, "spend_per_verified_transition": 0.0, "duplicate_work_rate": None,
           "interruptions_per_milestone": 0.25, "needless_confirmations": 0, "unsafe_actions_prevented": 2,
           "recovery_success_rate": None, "model_calls_per_finished_task": None, "counts": counts,
           "scope": {"task_id": None, "since": None}}
    rows = dict(metrics.rows(doc))
    assert rows["Verified transitions"] == "75% (3 of 4 claimed steps)"
    assert rows["Tokens per verified"] == "411 (1,234 tokens, 1 model call)"
    assert rows["Duplicate work"].startswith("—") and rows["Unsafe actions stopped"] == "2"
    assert metrics.render(doc).splitlines()[0] == "Stats · all tasks"
