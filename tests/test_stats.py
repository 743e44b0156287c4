"""`lomo stats`: collaboration metrics counted from the ledgers of real runs (DESIGN J5, CONTRACTS §7)."""
from __future__ import annotations

import json
import signal

import pytest
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui import metrics
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

CONTRACT = {"verified_transition_ratio", "tokens_per_verified_transition", "duplicate_work_rate",
            "interruptions_per_milestone", "unsafe_actions_prevented", "recovery_success_rate"}


def call(*calls: tuple[str, dict]) -> dict:
    return {"content": None, "tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


def stats(env: LomoEnv, *args: str) -> dict:
    proc = env.run("stats", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


async def test_a_poster_series_counts_every_step_as_verified_and_one_question_to_the_creator(
        lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Jazz posters")
        await rt.send("a retro poster series for a jazz night, four posters", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
        await resolve_gate(rt.db, gate.id, approve=True, option=1, by="creator:test")
        await rt.sweep()
        assert await rt.run_until_quiescent(30)
        async with rt.db.read() as conn:
            calls = len((await conn.execute(select(s.model_calls.c.id).where(s.model_calls.c.task_id == task))).all())
            doc = await metrics.compute(conn, task_id=task)
    finally:
        await rt.close()
    counts = doc["counts"]
    assert (counts["claimed_transitions"], counts["verified_transitions"]) == (5, 5)  # 4 posters + the review
    assert doc["verified_transition_ratio"] == 1.0
    assert doc["duplicate_work_rate"] == 0.0 and counts["jobs"] == 4
    assert doc["interruptions_per_milestone"] == 0.2  # one review card over five steps
    assert doc["model_calls_per_finished_task"] == float(calls) and counts["finished_tasks"] == 1
    assert doc["tokens_per_verified_transition"] == round(counts["tokens"] / 5, 1)
    assert doc["unsafe_actions_prevented"] == 0 and doc["needless_confirmations"] == 0
    assert doc["recovery_success_rate"] is None  # nothing crashed: nothing measured


async def test_a_claim_without_evidence_a_repeated_image_and_two_stopped_actions_are_counted(
        lomo: LomoEnv) -> None:
    (lomo.workspace / "note.md").write_text("keep me\n")
    lomo.replay(
        call(("update_plan", {"brief": "a cat", "steps": [{"title": "Draw the cat"}, {"title": "Write the caption"}]}),
             ("generate_image", {"prompt": "a red cat", "step": "1"}), ("generate_image", {"prompt": "a red cat"}),
             ("generate_video", {"prompt": "the cat walks", "seconds": 5})),
        call(("complete_step", {"step": "2", "evidence": "I wrote it"}), ("delete_file", {"path": "note.md"})),
        {"content": "finished", "tool_calls": []},
    )
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Cat")
        await rt.send("draw a cat and caption it", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            gates = {g.kind: g for g in (await conn.execute(select(s.gates).where(
                s.gates.c.task_id == task, s.gates.c.status == "pending"))).all()}
        assert set(gates) == {"spend", "irreversible"}  # each card holds only its call (G4): both wait at once
        for kind, approve, option in (("spend", False, None), ("irreversible", True, 2)):  # decline; keep the file
            await resolve_gate(rt.db, gates[kind].id, approve=approve, option=option, by="creator:test")
        await rt.sweep()
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            doc = await metrics.compute(conn, task_id=task)
            everything = await metrics.compute(conn)
    finally:
        await rt.close()
    assert (lomo.workspace / "note.md").exists()
    counts = doc["counts"]
    assert (counts["claimed_transitions"], counts["verified_transitions"]) == (2, 1)
    assert doc["verified_transition_ratio"] == 0.5  # "I wrote it" points at nothing
    assert (counts["jobs"], counts["duplicate_jobs"], doc["duplicate_work_rate"]) == (2, 1, 0.5)
    assert doc["unsafe_actions_prevented"] == 2  # the declined video spend and the kept file
    assert doc["interruptions_per_milestone"] == 1.0  # two cards over two completed steps
    assert doc["needless_confirmations"] == 0
    assert everything["counts"]["jobs"] == 2  # the whole database holds this task only


@pytest.mark.slow
def test_a_turn_taken_over_after_a_crash_counts_as_recovered_once_it_completes(lomo: LomoEnv) -> None:
    (lomo.workspace / "note.md").write_text("hello\n")
    lomo.replay(call(("read_file", {"path": "note.md"})), {"content": "finished", "tool_calls": []})
    task = lomo.new_task()
    assert stats(lomo)["recovery_success_rate"] is None
    crashed = lomo.run("--run-once", "read the note", "--task", task, faults="after_decision_commit:crash")
    assert crashed.returncode == -signal.SIGKILL
    assert lomo.run("--run-once", "--json").returncode == 0
    doc = stats(lomo, "--task", task)
    assert (doc["counts"]["takeovers"], doc["counts"]["recovered"], doc["recovery_success_rate"]) == (1, 1, 1.0)


def test_stats_json_has_the_contract_keys_as_numbers_or_null_and_scopes_by_time(lomo: LomoEnv) -> None:
    task = lomo.new_task()
    doc = stats(lomo)
    assert CONTRACT <= doc.keys()
    assert all(doc[key] is None or isinstance(doc[key], (int, float)) for key in CONTRACT)
    assert doc["verified_transition_ratio"] is None and doc["unsafe_actions_prevented"] == 0
    assert stats(lomo, "--task", task, "--since", "2d")["scope"]["task_id"] == task
    text = lomo.run("stats")
    assert text.returncode == 0 and "Verified transitions" in text.stdout and "—" in text.stdout


def test_stats_refuses_an_unknown_task_and_an_unreadable_since_in_one_line(lomo: LomoEnv) -> None:
    unknown = lomo.run("stats", "--task", "task_nope")
    assert unknown.returncode == 1 and "no task with id 'task_nope'" in unknown.stderr
    assert "Traceback" not in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1
    since = lomo.run("stats", "--since", "last tuesday")
    assert since.returncode == 2 and "--since 'last tuesday'" in since.stderr and "Traceback" not in since.stderr


def test_since_reads_spans_and_dates() -> None:
    assert metrics.parse_since("2h", now=10_000.0) == 10_000.0 - 7200
    assert metrics.parse_since("1w", now=1_000_000.0) == 1_000_000.0 - 604800
    assert metrics.parse_since("2026-12-01T00:00:00+00:00") == 1796083200.0


async def test_an_approved_plan_budget_that_nothing_was_charged_under_is_a_needless_confirmation(
        lomo: LomoEnv) -> None:
    film = {"title": "Film the cat", "tool": "generate_video", "args": {"prompt": "the cat walks", "seconds": 5}}
    lomo.replay(call(("update_plan", {"brief": "a cat film", "steps": [film]})),
                {"content": "I will wait", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Cat film")
        await rt.send("film the cat", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
            before = await metrics.compute(conn, task_id=task)
        assert gate.kind == "plan" and before["needless_confirmations"] == 0
        await resolve_gate(rt.db, gate.id, approve=True, option=1, by="creator:test")
        async with rt.db.read() as conn:
            after = await metrics.compute(conn, task_id=task)
    finally:
        await rt.close()
    assert after["needless_confirmations"] == 1  # approved, and nothing was ever charged under it
    assert after["counts"]["creator_interruptions"] == 1 and after["interruptions_per_milestone"] is None


@pytest.mark.slow
def test_stats_and_goal_versions_read_the_same_on_postgres(pg_lomo: LomoEnv) -> None:
    pg_lomo.replay(call(("update_plan", {"brief": "two sketches", "steps": [{"title": "Sketch"}]}),
                        ("complete_step", {"step": "1", "evidence": "done, trust me"})),
                   {"content": "finished", "tool_calls": []})
    task = pg_lomo.new_task("Sketches")
    assert pg_lomo.run("--run-once", "two sketches please", "--task", task).returncode == 0
    doc = stats(pg_lomo, "--task", task)
    assert (doc["counts"]["claimed_transitions"], doc["verified_transition_ratio"]) == (1, 0.0)
    assert doc["counts"]["rejected_claims"] == 1  # "trust me" points at nothing: the step stays open
    assert doc["model_calls_per_finished_task"] is None and doc["counts"]["finished_tasks"] == 0
    shown = json.loads(pg_lomo.run("task", "show", task, "--json").stdout)
    assert [(v["version"], v["brief"]) for v in shown["goal_versions"]] == [(1, ""), (2, "two sketches")]
