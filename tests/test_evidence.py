"""Evidence and verified transitions (DESIGN J2, J4, G3): a step moves only on a result that checks out.

Real runs (the runtime, the embedded studio, real files read back with Pillow and PyAV); a claim nothing
shows, a file of the wrong kind or one the task did not make moves nothing, and a file the creator changes
after the step was checked sends the step back to be checked again.
"""
from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui import metrics, views
from lomo_tui.runtime import decision
from lomo_tui.runtime.reactions import resolve_gate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.tasks import checklist, evidence, verify

PHASES = ["transition_read", "transition_decided", "transition_claimed", "transition_executed",
          "transition_validated", "transition_written", "transition_accounted"]


def call(*calls: tuple[str, dict]) -> dict:
    return {"content": None, "tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


def plan(*steps: dict) -> dict:
    return call(("update_plan", {"brief": "b", "steps": list(steps)}))


async def run_task(lomo: LomoEnv, message: str, model: str = "lomo/replay") -> tuple[Runtime, str]:
    rt = Runtime(lomo.settings(model=model))
    await rt.start()
    task = await rt.ledger.create_task("Evidence")
    await rt.send(message, task)
    assert await rt.run_until_quiescent(60)
    return rt, task


async def step_rows(rt: Runtime, task: str) -> list:
    async with rt.db.read() as conn:
        return await checklist.items(conn, task)


async def failed_calls(rt: Runtime, name: str) -> list[dict]:
    async with rt.db.read() as conn:
        rows = (await conn.execute(select(s.tool_calls.c.result).where(
            s.tool_calls.c.name == name, s.tool_calls.c.status == "failed"))).scalars().all()
    return [evidence._result(r) for r in rows]


async def event_types(rt: Runtime, task: str) -> list[str]:
    async with rt.db.read() as conn:
        return list((await conn.execute(select(s.events.c.type).where(s.events.c.task_id == task).order_by(
            s.events.c.id))).scalars())


def png(size: tuple[int, int], colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


async def test_a_claim_that_points_at_nothing_does_not_move_the_checklist(lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "Write the caption"}),
                call(("complete_step", {"step": "1", "evidence": "I wrote it, trust me"})),
                {"content": "finished", "tool_calls": []})
    rt, task = await run_task(lomo, "caption the cat")
    try:
        [step] = await step_rows(rt, task)
        [refusal] = await failed_calls(rt, "complete_step")
        async with rt.db.read() as conn:
            doc = await metrics.compute(conn, task_id=task)
            rows = (await conn.execute(select(s.step_evidence))).all()
    finally:
        await rt.close()
    assert step.state == "pending" and rows == []
    assert refusal["error_kind"] == "unverified"
    assert "was not marked done: nothing shows it" in refusal["error"] and "artifacts" in refusal["error"]
    assert (doc["counts"]["claimed_transitions"], doc["counts"]["verified_transitions"]) == (1, 0)
    assert doc["verified_transition_ratio"] == 0.0 and doc["tokens_per_verified_transition"] is None


async def test_a_text_file_named_like_a_picture_does_not_complete_an_image_step(lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "Draw the poster", "tool": "generate_image", "args": {"prompt": "jazz"}}),
                call(("write_file", {"path": "poster.png", "content": "not really a picture", "base_version": None})),
                call(("complete_step", {"step": "1", "evidence": "drew it", "artifacts": ["poster.png"]})),
                {"content": "finished", "tool_calls": []})
    rt, task = await run_task(lomo, "a jazz poster")
    try:
        [step] = await step_rows(rt, task)
        [refusal] = await failed_calls(rt, "complete_step")
    finally:
        await rt.close()
    assert step.state == "pending"
    assert "poster.png: not a readable picture" in refusal["error"]


async def test_the_creators_own_file_is_not_a_new_version_made_by_the_step(lomo: LomoEnv) -> None:
    (lomo.workspace / "notes.md").write_text("the creator wrote this\n")
    lomo.replay(plan({"title": "Write the notes", "tool": "write_file"}),
                call(("complete_step", {"step": "1", "evidence": "notes are there", "artifacts": ["notes.md"]})),
                {"content": "finished", "tool_calls": []})
    rt, task = await run_task(lomo, "write the notes")
    try:
        [step] = await step_rows(rt, task)
        [refusal] = await failed_calls(rt, "complete_step")
    finally:
        await rt.close()
    assert step.state == "pending"
    assert "notes.md v1 was made by the creator, not by this task: it is not a new version" in refusal["error"]


async def test_a_written_document_completes_its_step_with_evidence_and_every_phase_in_the_events(
        lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "Write the notes", "tool": "write_file"}),
                call(("write_file", {"path": "notes.md", "content": "# Notes\nshot 1\n", "base_version": None})),
                call(("complete_step", {"step": "1", "evidence": "wrote the notes", "artifacts": ["notes.md"]})),
                {"content": "finished", "tool_calls": []})
    rt, task = await run_task(lomo, "write the notes")
    try:
        [step] = await step_rows(rt, task)
        async with rt.db.read() as conn:
            [row] = (await conn.execute(select(s.step_evidence))).all()
            task_row = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task))).one()
            doc = await metrics.compute(conn, task_id=task)
        types = await event_types(rt, task)
    finally:
        await rt.close()
    assert step.state == "done" and task_row.status == "done"
    assert step.evidence == "wrote the notes (notes.md v1)"
    assert (row.kind, row.version, row.origin, row.status, row.goal_version) == ("object_version", 1, "step",
                                                                                 "valid", 2)
    assert row.checks[0]["kind"] == "document" and row.produced_at > 0 and row.expires_at is None
    seen = [t for t in types if t.startswith("transition_")]
    assert [t for t in PHASES if t in seen] == PHASES  # each phase is on the record …
    order = [seen.index(t) for t in PHASES[3:]]
    assert order == sorted(order) and seen.index("transition_claimed") < order[0]  # … in the protocol's order
    assert doc["verified_transition_ratio"] == 1.0 and doc["counts"]["verified_transitions"] == 1
    assert doc["tokens_per_verified_transition"] == doc["counts"]["tokens"]


async def test_a_document_step_that_changed_nothing_does_not_complete(lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "Draft the notes", "tool": "write_file"}, {"title": "Polish the notes", "tool": "edit_file"}),
                call(("write_file", {"path": "notes.md", "content": "draft\n", "base_version": None})),
                call(("complete_step", {"step": "1", "artifacts": ["notes.md"]})),
                call(("complete_step", {"step": "2", "evidence": "polished", "artifacts": ["notes.md"]})),
                {"content": "finished", "tool_calls": []})
    rt, task = await run_task(lomo, "draft and polish the notes")
    try:
        first, second = await step_rows(rt, task)
        [refusal] = await failed_calls(rt, "complete_step")
    finally:
        await rt.close()
    assert (first.state, second.state) == ("done", "pending")
    assert "notes.md v1 already shows step 1: it is not a new version" in refusal["error"]


async def test_a_job_result_that_is_not_what_its_step_promised_fails_the_job_and_refunds_it(lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "The sound", "tool": "generate_audio", "args": {"prompt": "rain", "seconds": 3}},
                     {"title": "A picture", "tool": "generate_image", "args": {"prompt": "rain"}}),
                call(("generate_image", {"prompt": "rain", "step": "1"})),  # the picture, for the sound's step
                {"content": "hm", "tool_calls": []})
    rt, task = await run_task(lomo, "a picture of rain and the sound of rain")
    try:
        step, _ = await step_rows(rt, task)
        [refusal] = await failed_calls(rt, "generate_image")
        async with rt.db.read() as conn:
            job = (await conn.execute(select(s.jobs))).one()
            charge = (await conn.execute(select(s.charges.c.status))).scalar()
        types = await event_types(rt, task)
    finally:
        await rt.close()
    assert step.state == "pending" and job.status == "failed" and charge == "refunded"
    assert job.error.startswith("the result did not check out: renders/image/") and "not a sound" in job.error
    assert refusal["error_kind"] == "job_failed" and "did not check out" in refusal["error"]
    assert "transition_rejected" in types and "transition_written" not in types


async def test_a_made_poster_the_creator_edits_is_checked_again_and_reopened_when_it_breaks(
        lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "Poster", "tool": "generate_image", "args": {"prompt": "a jazz poster"}}),
                call(("generate_image", {"prompt": "a jazz poster", "step": "1"})),
                {"content": "made it", "tool_calls": []})
    rt, task = await run_task(lomo, "a jazz poster")
    try:
        [step] = await step_rows(rt, task)
        assert step.state == "done" and step.artifacts
        rel = step.artifacts[0]
        path: Path = lomo.workspace / rel
        path.write_bytes(png((768, 768), "navy"))  # the creator repaints it, still a 768×768 picture
        await rt.workspace.observe(rel)
        [marked] = await step_rows(rt, task)
        assert marked.state == "done" and marked.why == f"{rel} changed after this step was checked (v1 → v2, by you)"
        assert "(to check again:" in checklist.render([marked])
        shown = lomo.run("task", "show", task, "--json")
        assert shown.returncode == 0, shown.stderr
        [item] = json.loads(shown.stdout)["checklist"]
        assert item["why"] == marked.why and [e["source"] for e in item["evidence_records"]] == ["job"]
        assert f"! to check again: {rel} changed" in lomo.run("task", "show", task).stdout
        [card_item] = await views.load_checklist(rt.db, task)  # the task card says it too
        assert card_item.why == f"to check again: {marked.why}"

        assert await evidence.revalidate(rt.db, rt.workspace.root, task) == [
            {"item": step.id, "outcome": "revalidated", "why": marked.why}]
        [kept] = await step_rows(rt, task)
        assert kept.state == "done" and kept.why == "" and kept.evidence.endswith(f"checked again on {rel} v2")

        path.write_text("oops, saved text over it")  # now it is no picture at all
        await rt.workspace.observe(rel)
        await rt.send("how is it going?", task)  # the next turn's READ phase checks it again before acting
        assert await rt.run_until_quiescent(60)
        [reopened] = await step_rows(rt, task)
        async with rt.db.read() as conn:
            statuses = sorted((r.origin, r.version, r.status) for r in (await conn.execute(
                select(s.step_evidence))).all())
            doc = await metrics.compute(conn, task_id=task)
        types = await event_types(rt, task)
    finally:
        await rt.close()
    assert reopened.state == "pending" and reopened.evidence.startswith("re-opened: ")
    assert "changed after this step was checked (v2 → v3, by you)" in reopened.why
    assert "not a readable picture" in reopened.why
    assert statuses == [("revalidation", 2, "stale"), ("step", 1, "stale")]
    assert "evidence_revalidated" in types and "step_reopened" in types
    assert doc["counts"]["verified_transitions"] == 1  # a re-validation is the runtime's check, not new work
    assert (doc["counts"]["stale_evidence_rechecked"], doc["counts"]["steps_reopened"]) == (1, 1)


async def test_expired_evidence_is_stale_and_checked_again(lomo: LomoEnv) -> None:
    lomo.replay(plan({"title": "Write the notes", "tool": "write_file"}),
                call(("write_file", {"path": "notes.md", "content": "notes\n", "base_version": None})),
                call(("complete_step", {"step": "1", "artifacts": ["notes.md"]})),
                {"content": "finished", "tool_calls": []})
    rt, task = await run_task(lomo, "write the notes")
    try:
        async with rt.db.write() as conn:
            await conn.execute(s.step_evidence.update().values(expires_at=1.0))
        async with rt.db.read() as conn:
            assert await evidence.why_stale(conn, task) != {}
            [why] = (await evidence.why_stale(conn, task)).values()
        assert why.startswith("its evidence expired at ")
        [outcome] = await evidence.revalidate(rt.db, rt.workspace.root, task)
        async with rt.db.read() as conn:
            assert await evidence.why_stale(conn, task) == {}
    finally:
        await rt.close()
    assert outcome["outcome"] == "revalidated"  # the file is still what the step made


async def test_the_offline_planner_finishes_a_3d_object_on_verified_steps(lomo: LomoEnv) -> None:
    rt, task = await run_task(lomo, "design a 3D model of a ceramic vase for the shop", model="lomo/local")
    try:
        async with rt.db.read() as conn:
            gate = (await conn.execute(select(s.gates).where(s.gates.c.task_id == task))).one()
        assert gate.kind == "plan"  # the model costs more than the free amount: the creator approves the plan
        await resolve_gate(rt.db, gate.id, approve=True, option=1, by="creator:test")
        await rt.sweep()
        assert await rt.run_until_quiescent(60)
        steps = await step_rows(rt, task)
        async with rt.db.read() as conn:
            kinds = sorted(c["kind"] for r in (await conn.execute(select(s.step_evidence))).all()
                           for c in r.checks)
            doc = await metrics.compute(conn, task_id=task)
    finally:
        await rt.close()
    assert [i.state for i in steps] == ["done", "done"]
    assert kinds == ["3d", "image"]
    assert doc["verified_transition_ratio"] == 1.0


def test_inspection_reads_what_real_files_are(tmp_path: Path) -> None:
    from lomo_tui.studio.render import render_audio, render_clip, render_mesh

    (tmp_path / "clip.mp4").write_bytes(render_clip("rain", seed=1, seconds=2.0, size=(160, 90), inputs=[],
                                                    fmt="mp4"))
    (tmp_path / "clip.gif").write_bytes(render_clip("rain", seed=1, seconds=2.0, size=(160, 90), inputs=[],
                                                    fmt="gif"))
    (tmp_path / "rain.wav").write_bytes(render_audio("rain", seed=1, seconds=1.5))
    (tmp_path / "vase.gltf").write_bytes(render_mesh("vase", seed=1))
    (tmp_path / "still.png").write_bytes(png((64, 48), "red"))
    (tmp_path / "broken.png").write_bytes(png((64, 48), "red")[:40])
    (tmp_path / "fake.mp4").write_bytes(b"hello, not a clip")
    mp4, gif = verify.inspect(tmp_path, "clip.mp4"), verify.inspect(tmp_path, "clip.gif")
    assert (mp4.kind, mp4.width, mp4.height, round(mp4.seconds, 1)) == ("video", 160, 90, 2.0)
    assert (gif.kind, round(gif.seconds, 1)) == ("video", 2.0)
    assert (verify.inspect(tmp_path, "rain.wav").kind, verify.inspect(tmp_path, "rain.wav").seconds) == ("audio", 1.5)
    assert verify.inspect(tmp_path, "vase.gltf").kind == "3d"
    assert verify.inspect(tmp_path, "broken.png").error.startswith("not a readable picture")
    assert verify.inspect(tmp_path, "fake.mp4").error.startswith("not a playable clip")
    assert verify.inspect(tmp_path, "gone.png").error == "the file is not there"

    five = verify.promise_of("generate_video", {"seconds": 5})
    assert verify.problems(five, mp4) == ["clip.mp4 lasts 2.00 s, not the 5 s the step ordered"]
    assert verify.problems(verify.promise_of("generate_video", {"seconds": 2}), mp4) == []
    sized = verify.promise_of("generate_image", {}, {"kind": "image", "size_px": [64, 64]})
    assert verify.problems(sized, verify.inspect(tmp_path, "still.png")) == [
        "still.png is 64×48, not the 64×64 the step ordered"]
    assert verify.problems(verify.promise_of("generate_3d", {}), verify.inspect(tmp_path, "still.png")) == [
        "still.png is an image, not a 3D model"]


async def test_an_answer_that_holds_for_an_hour_expires_and_its_step_is_asked_again(lomo: LomoEnv) -> None:
    """J2 expiry: a question asked with valid_minutes (is the hall free on Friday?) gives evidence that expires;
    with the clock moved on (LOMO_CLOCK_OFFSET_S, the one clock) the step is marked, and at the next decision the
    runtime re-opens it and the task asks again."""
    from lomo_tui import clock

    question = {"question": "Is the hall free on Friday?", "options": ["Yes", "No"], "valid_minutes": 60}
    lomo.replay(plan({"title": "Check the hall", "tool": "ask_user", "args": question},
                     {"title": "Review the plan", "needs_confirmation": True}),
                call(("ask_user", question)),
                call(("complete_step", {"step": "1", "evidence": "the hall is free"})),
                call(("ask_user", question)))
    before = clock.offset()
    rt, task = await run_task(lomo, "book the hall for the gig")
    try:
        [asked] = [g for g in await _gates(rt, task) if g.status == "pending"]
        await resolve_gate(rt.db, asked.id, approve=True, option=1, by="creator:test")
        await rt.sweep()
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            [row] = (await conn.execute(select(s.step_evidence))).all()
        assert row.kind == "creator_answer" and row.expires_at == pytest.approx(row.produced_at + 3600)
        [review] = [g for g in await _gates(rt, task) if g.status == "pending"]
        first, _ = await step_rows(rt, task)
        assert first.state == "done" and first.why == ""

        clock.set_offset(before + 2 * 3600)  # two hours later
        first, _ = await step_rows(rt, task)
        assert first.state == "done" and first.why.startswith("the creator's answer expired at ")
        async with rt.db.read() as conn:
            state = await decision.read_state(conn, task)
        assert decision.decide(dataclasses.replace(state, status="active", pending_gates=0)).action == "repair"
        await resolve_gate(rt.db, review.id, approve=True, option=1, by="creator:test")  # the next decision
        await rt.sweep()
        assert await rt.run_until_quiescent(60)
        first, _ = await step_rows(rt, task)
        gates = await _gates(rt, task)
        async with rt.db.read() as conn:
            reopened = (await conn.execute(select(s.events.c.data).where(
                s.events.c.task_id == task, s.events.c.type == "step_reopened"))).scalars().all()
    finally:
        clock.set_offset(before)
        await rt.close()
    assert first.state == "pending" and first.evidence.startswith("re-opened: the creator's answer expired at ")
    assert [g.kind for g in gates if g.status == "pending"] == ["question"]  # asked again, not taken as still true
    assert [r["by"] for r in reopened] == ["run_decided:gate_answered"]  # the runtime's repair, not a model's


async def _gates(rt: Runtime, task: str) -> list:
    async with rt.db.read() as conn:
        return (await conn.execute(select(s.gates).where(s.gates.c.task_id == task).order_by(
            s.gates.c.created_at))).all()


async def test_a_read_the_task_already_built_on_is_not_sent_back_to_be_read_again(lomo: LomoEnv) -> None:
    """The flow drill: the agent read v1, the creator saved v2, the agent's next edit applied on v2 (v3). The read
    step used to be re-opened, so the task read again and redid its edit (8 model calls for 3 steps)."""
    (lomo.workspace / "notes.md").write_text("# Notes\nshot 1\n")
    lomo.replay(plan({"title": "Read the notes", "tool": "read_file", "args": {"path": "notes.md"}}),
                call(("read_file", {"path": "notes.md"})),
                call(("complete_step", {"step": "1"})),
                {"content": "read them", "tool_calls": []})
    rt, task = await run_task(lomo, "read the notes")
    try:
        [step] = await step_rows(rt, task)
        assert step.state == "done"
        (lomo.workspace / "notes.md").write_text("# Notes\nshot 1\nshot 2, by the creator\n")
        await rt.workspace.observe("notes.md")
        [marked] = await step_rows(rt, task)
        assert marked.why == "notes.md changed after this step was checked (v1 → v2, by you)"  # not seen yet
        await rt.workspace.write("notes.md", "# Notes\nshot 1\nshot 2, by the creator\nshot 3\n", 2, task, "k-1")
        [built_on] = await step_rows(rt, task)
        async with rt.db.read() as conn:
            assert await evidence.stale(conn, task) == {}
        (lomo.workspace / "notes.md").write_text("the creator again\n")  # a newer save than the task's is news
        await rt.workspace.observe("notes.md")
        [again] = await step_rows(rt, task)
    finally:
        await rt.close()
    assert built_on.state == "done" and built_on.why == ""
    assert again.why == "notes.md changed after this step was checked (v1 → v4, by you)"


async def test_why_a_step_is_checked_again_or_reopened_speaks_the_tasks_language(lomo: LomoEnv) -> None:
    """A Chinese task's card said "notes.md was deleted" and "re-opened: …" in English."""
    lomo.replay(plan({"title": "写笔记", "tool": "write_file"}),
                call(("write_file", {"path": "notes.md", "content": "笔记\n", "base_version": None})),
                call(("complete_step", {"step": "1", "artifacts": ["notes.md"]})),
                {"content": "完成", "tool_calls": []})
    rt, task = await run_task(lomo, "写一份笔记")
    try:
        async with rt.db.write() as conn:
            await conn.execute(s.tasks.update().where(s.tasks.c.id == task).values(language="zh"))
            await conn.execute(s.step_evidence.update().values(expires_at=1.0))
        async with rt.db.read() as conn:
            [stale] = (await evidence.why_stale(conn, task)).values()
        (lomo.workspace / "notes.md").unlink()  # and the ledger heard of it, as the watcher tells it
        async with rt.db.write() as conn:
            await conn.execute(s.objects.update().where(s.objects.c.path == "notes.md").values(deleted=True))
        [outcome] = await evidence.revalidate(rt.db, rt.workspace.root, task)
        async with rt.db.read() as conn:
            [step] = await checklist.items(conn, task)
            status = (await conn.execute(select(s.tasks.c.status_reason).where(s.tasks.c.id == task))).scalar()
    finally:
        await rt.close()
    assert stale.startswith("它的依据已于") and "过期" in stale
    assert outcome["outcome"] == "reopened"
    assert step.why.startswith("已重新打开：") and "re-opened" not in step.why, step.why
    assert "re-opened" not in (status or ""), status
