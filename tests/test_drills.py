"""Scenario drills (M2): the one clock the runtime reads, the defects the drills found in the offline planner, and
the drills themselves (bench/drills.py: a scripted creator on the public surface; slow)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lomo_tui import clock
from lomo_tui.config import load_settings
from lomo_tui.errors import LomoError
from lomo_tui.models.base import ModelRequest
from lomo_tui.models.local import Planner
from lomo_tui.base.ids import new_id

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import drills  # noqa: E402 — bench/ is not a package

DAY = 86_400


@pytest.fixture
def restore_clock() -> Any:
    before = clock.offset()
    yield
    clock.set_offset(before)


def test_the_clock_offset_moves_every_wall_clock_read_and_ids_stay_ordered(tmp_path: Path,
                                                                           restore_clock: None) -> None:
    earlier = new_id("task")
    load_settings(workspace=str(tmp_path), db="sqlite+aiosqlite:///x.db", env={"LOMO_CLOCK_OFFSET_S": str(3 * DAY)},
                  config_path=tmp_path / "none.toml")
    import time

    assert clock.now() - time.time() == pytest.approx(3 * DAY, abs=5)
    assert clock.today().timestamp() > time.time() + 2 * DAY
    assert new_id("task") > earlier


@pytest.mark.parametrize("value", ["abc", "-5", "nan"])
def test_a_bad_clock_offset_is_one_clear_line(tmp_path: Path, value: str, restore_clock: None) -> None:
    with pytest.raises(LomoError) as caught:
        load_settings(workspace=str(tmp_path), db="sqlite+aiosqlite:///x.db", env={"LOMO_CLOCK_OFFSET_S": value},
                      config_path=tmp_path / "none.toml")
    assert str(caught.value).startswith(f"LOMO_CLOCK_OFFSET_S={value!r}") and "\n" not in str(caught.value)


def _tools(*names: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n}} for n in names]


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_a_flow_edit_patches_the_flow_read_in_an_earlier_step() -> None:
    """Flow drill: the read and the edit are two steps apart (a complete_step between); the edit used to be sent
    with base_version None and no patches, and the task failed."""
    flow = {"path": "poster.flow.json", "version": 3,
            "nodes": [{"id": "prompt", "params": {}}, {"id": "style", "params": {"style": "flat"}}]}
    messages = [{"role": "user", "content": "edit node 2 of poster.flow.json: make it watercolour"},
                {"role": "assistant", "content": None, "tool_calls": [_call("c1", "read_flow", {"path": "poster.flow.json"})]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(flow)},
                {"role": "assistant", "content": None, "tool_calls": [_call("c2", "complete_step", {"step": "s1"})]},
                {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"ok": True})}]
    steps = [{"id": "s1", "n": 1, "title": "Read", "state": "done", "tool": "read_flow", "args": {}},
             {"id": "s2", "n": 2, "title": "Edit", "state": "pending", "tool": "edit_flow_nodes",
              "args": {"path": "poster.flow.json", "edits": [{"node": "2", "change": "watercolour",
                                                                "style": ["watercolor"]}], "base_version": "$version"}}]
    request = ModelRequest(messages=messages, tools=_tools("edit_flow_nodes", "read_flow", "complete_step"),
                           hints={"task_kind": "persistent", "language": "en", "checklist": steps})
    (call,) = Planner(request).next().tool_calls
    assert call.name == "edit_flow_nodes"
    assert call.arguments["base_version"] == 3 and call.arguments["edits"] == {"style": {"style": "watercolor"}}


def _one_shot(message: str, made: str, tool: str, prompt: str) -> ModelRequest:
    messages = [{"role": "user", "content": prompt},
                {"role": "assistant", "content": None, "tool_calls": [_call("c1", tool, {"prompt": prompt})]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"status": "done", "path": made})},
                {"role": "user", "content": message}]
    return ModelRequest(messages=messages, tools=_tools("generate_image", "generate_video", "generate_3d"),
                        hints={"task_kind": "lightweight", "language": "en", "new_messages": [message],
                               "checklist": [], "artifacts": [made]})


def test_changing_a_one_shot_3d_object_remakes_it_as_3d_from_its_request() -> None:
    """3D drill: "make the teapot taller" was ordered as an image with the glTF as its input (refused: the task
    failed); its prompt had also lost the teapot."""
    request = _one_shot("make the teapot taller", "renders/meshes/teapot.gltf", "generate_3d",
                        "a 3D model of a ceramic teapot")
    (call,) = Planner(request).next().tool_calls
    assert call.name == "generate_3d"
    assert "inputs" not in call.arguments and call.arguments["prompt"].startswith("a 3D model of a ceramic teapot")


def test_a_changed_clip_is_not_given_a_video_as_its_picture_and_keeps_its_length() -> None:
    """Film drill: "make the fox red instead" after the clip was made passed the MP4 as an input image; the same
    refusal twice stopped the task, and "continue" could not move it."""
    steps = [{"id": "s1", "n": 1, "title": "Key frame", "state": "done", "tool": "generate_image",
              "args": {"prompt": "fox, key frame"}, "artifacts": ["renders/image/k.png"]},
             {"id": "s2", "n": 2, "title": "15-second clip", "state": "done", "tool": "generate_video",
              "args": {"prompt": "fox in snow", "seconds": 15}, "artifacts": ["renders/video/clip.mp4"]}]
    message = "actually make the fox red instead of white"
    request = ModelRequest(messages=[{"role": "user", "content": message}], tools=_tools("update_plan", "generate_video"),
                           hints={"task_kind": "persistent", "language": "en", "new_messages": [message],
                                  "checklist": steps, "artifacts": ["renders/video/clip.mp4", "renders/image/k.png"]})
    (call,) = Planner(request).next().tool_calls
    revision = [s for s in call.arguments["steps"] if "id" not in s][0]
    assert revision["tool"] == "generate_video"
    assert "inputs" not in revision["args"] and revision["args"]["seconds"] == 15


# ---- the drills, end to end through the CLI ----------------------------------------------------------------------
def _run(name: str) -> dict[str, Any]:
    result = drills.run_drill(name, seed=1, time_scale=0.05, keep=False)
    assert result["error"] is None, result
    return result


@pytest.mark.slow
def test_poster_drill_meets_the_goals() -> None:
    r = _run("poster")
    assert drills.goals_met(r), r["findings"]
    assert r["duplicate_artifacts"] == 0 and r["tasks"]["posters"]["status"] == "done"


@pytest.mark.slow
def test_flow_drill_keeps_the_creators_edit_and_applies_the_agents() -> None:
    r = _run("flow")
    assert r["findings"] == [] and r["stale_overwrites"] == 0, r["findings"]
    assert r["details"]["task_status"] == "done" and "watercol" in json.dumps(r["details"]["final_style"])
    # the agent's edit applied on the creator's save: its read is not sent back to be read (and edited) again
    assert r["counts"]["steps_reopened"] == 0 and r["j5"]["verified_transition_ratio"] == 1.0


@pytest.mark.slow
def test_repair_drill_remakes_a_deleted_poster_and_rebuilds_the_plan_for_a_new_goal() -> None:
    r = _run("repair")
    assert drills.goals_met(r) and r["findings"] == [], r["findings"]
    assert r["details"]["after_delete"] == {"status": "done", "jobs": 3, "reopened": []}
    assert r["details"]["rebuilt"][:3] == ["Poster 1 of 3", "Poster 2 of 3", "Poster 3 of 3"]
    assert r["details"]["final"] == {"status": "done", "posters": 5}


@pytest.mark.slow
def test_3d_drill_remakes_the_object_as_3d() -> None:
    r = _run("3d")
    assert drills.goals_met(r), r["findings"]
    assert r["details"]["gltf_ok"] and r["details"]["after_change"]["status"] == "done"


@pytest.mark.slow
def test_resume_drill_after_three_days_reaches_the_old_task() -> None:
    r = _run("resume")
    assert drills.goals_met(r), r["findings"]
    assert r["details"]["clock_moved_days"] >= 2.9 and r["tasks"]["market"]["status"] == "done"


@pytest.mark.slow
def test_memory_drill_corrects_then_forgets_without_leaks() -> None:
    r = _run("memory")
    assert r["leaks"] == 0 and r["routing_errors"] == 0, r["findings"]
    assert [s for v, s, _ in r["details"]["after_correction"]] == ["superseded", "active"]


@pytest.mark.slow
def test_film_drill_takes_the_mid_way_change_without_nudges() -> None:
    r = _run("film")
    assert r["nudges"] == 0 and r["routing_errors"] == 0, r["findings"]
    assert r["details"]["jobs_with_the_change"] >= 1
    # the change remakes what depends on the character (new work), nothing twice, and its cards bought it
    assert (r["duplicate_generations"], r["duplicate_artifacts"], r["needless_confirmations"]) == (0, 0, 0), \
        r["findings"]
