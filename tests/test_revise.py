"""Revising the right thing: "the second poster", 第二张, 2枚目, вторую, "that one" remake the piece the
creator means, from itself, as its next version, with one caption (issue 12 §4)."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops
from PIL.PngImagePlugin import PngInfo

from lomo_tui.models.base import ModelRequest
from lomo_tui.models.local import Planner
from lomo_tui.models.local_nlu import find_reference
from lomo_tui.studio.picture import picture
from lomo_tui.studio.render import render_image

SERIES = [f"renders/image/retro-poster-poster-{n}-of-4-x{n}.png" for n in range(1, 5)]


@pytest.mark.parametrize("text, lang, expected", [
    ("make the second poster warmer", "en", [SERIES[1]]),
    ("第二张海报再暖一点", "zh", [SERIES[1]]),
    ("2枚目のポスターをもっと暖かく", "ja", [SERIES[1]]),
    ("сделай вторую афишу теплее", "ru", [SERIES[1]]),
    ("сделай четвёртую потемнее", "ru", [SERIES[3]]),
    ("make the last one bluer", "en", [SERIES[3]]),
    ("最后一张更亮一点", "zh", [SERIES[3]]),
    ("最後のポスターを青く", "ja", [SERIES[3]]),
    ("сделай последнюю ярче", "ru", [SERIES[3]]),
    ("make the first two warmer", "en", SERIES[:2]),
    ("前两张改成蓝色", "zh", SERIES[:2]),
    ("poster 3 needs more contrast", "en", [SERIES[2]]),
    ("make the third one darker", "en", [SERIES[2]]),
])
def test_an_ordinal_in_four_languages_picks_the_piece_in_series_order(text: str, lang: str,
                                                                       expected: list[str]) -> None:
    reference = find_reference(text, lang)
    assert reference is not None, text
    assert reference.pick(SERIES, recent=list(reversed(SERIES))) == expected


@pytest.mark.parametrize("text, lang", [("make that one warmer", "en"), ("那张再暖一点", "zh"),
                                        ("それをもっと暖かく", "ja"), ("сделай её теплее", "ru")])
def test_that_one_is_the_piece_made_most_recently(text: str, lang: str) -> None:
    reference = find_reference(text, lang)
    assert reference is not None and reference.pick(SERIES, recent=[SERIES[2], SERIES[0]]) == [SERIES[2]]


def test_a_prompt_naming_its_own_place_in_the_series_is_not_a_reference() -> None:
    assert find_reference("retro poster — poster 2 of 4, warmer", "en") is None
    assert find_reference("make it warmer", "en") is None


def _series_request(message: str, kind: str = "persistent") -> ModelRequest:
    steps = [{"id": f"step-{n}", "n": n, "title": f"Poster {n} of 4", "state": "done", "needs_confirmation": False,
              "tool": "generate_image", "args": {"prompt": f"retro poster — poster {n} of 4", "size": "poster"},
              "evidence": "", "artifacts": [SERIES[n - 1]]} for n in range(1, 5)]
    steps.append({"id": "step-5", "n": 5, "title": "Review the series", "state": "pending",
                  "needs_confirmation": True, "tool": None, "args": {}, "evidence": "", "artifacts": []})
    tools = [{"type": "function", "function": {"name": name}} for name in ("update_plan", "generate_image")]
    return ModelRequest(messages=[{"role": "user", "content": message}], tools=tools, hints={
        "task_kind": kind, "language": "en", "new_messages": [message], "checklist": steps,
        "artifacts": list(reversed(SERIES))})


def test_the_second_poster_is_remade_from_itself_into_its_own_path() -> None:
    reply = Planner(_series_request("make the second poster warmer")).next()
    (call,) = reply.tool_calls
    revisions = [s for s in call.arguments["steps"] if "id" not in s]
    assert [r["args"]["inputs"] for r in revisions] == [[SERIES[1]]]
    args = revisions[0]["args"]
    assert args["output"] == SERIES[1]
    assert args["prompt"].startswith("retro poster — poster 2 of 4, ")
    assert args["prompt"].count("poster 2 of 4") == 1 and "4 of 4" not in args["prompt"]
    assert call.arguments["steps"].index(revisions[0]) < [s.get("id") for s in call.arguments["steps"]].index("step-5")


def test_the_first_two_become_two_revisions_each_of_its_own_piece() -> None:
    reply = Planner(_series_request("make the first two warmer", kind="lightweight")).next()
    assert [(c.name, c.arguments["inputs"], c.arguments["output"]) for c in reply.tool_calls] == [
        ("generate_image", [SERIES[0]], SERIES[0]), ("generate_image", [SERIES[1]], SERIES[1])]


def _png_with_metadata(image: Image.Image, prompt: str) -> bytes:
    info = PngInfo()
    info.add_text("prompt", prompt)
    info.add_text("seed", "1")
    out = io.BytesIO()
    image.save(out, "PNG", pnginfo=info)
    return out.getvalue()


def test_a_piece_remade_from_a_lomo_render_shows_only_the_new_caption(tmp_path: Path) -> None:
    old_prompt, new_prompt = "retro poster — poster 1 of 4 with a long old caption", "warmer"
    size = (320, 448)
    captioned, clean = tmp_path / "captioned.png", tmp_path / "clean.png"
    captioned.write_bytes(render_image(old_prompt, seed=1, size=size))
    clean.write_bytes(_png_with_metadata(picture(old_prompt, seed=1, size=size), old_prompt))
    from_captioned = Image.open(io.BytesIO(render_image(new_prompt, seed=2, size=size, inputs=[captioned])))
    from_clean = Image.open(io.BytesIO(render_image(new_prompt, seed=2, size=size, inputs=[clean])))
    band = (0, size[1] - 40, size[0], size[1])
    diff = ImageChops.difference(from_captioned.convert("RGB").crop(band), from_clean.convert("RGB").crop(band))
    differing = sum(diff.convert("L").point(lambda v: 255 if v > 24 else 0).histogram()[255:])
    assert differing == 0, f"{differing} pixels of the old caption show under the new one"


def _objects(env: Any) -> dict[str, int]:
    return {o["path"]: o["version"] for o in env.inspect()["objects"] if not o["deleted"]}


def _run(env: Any, message: str) -> dict[str, Any]:
    proc = env.run("--run-once", message, "--json", model="lomo/local")
    assert proc.returncode == 0, proc.stderr
    state = json.loads(proc.stdout)
    for gate in state.get("gates") or []:
        if gate["kind"] == "plan":
            assert env.run("approve", gate["id"], "--option", "1", model="lomo/local").returncode == 0
            proc = env.run("--run-once", "--json", model="lomo/local")
            assert proc.returncode == 0, proc.stderr
    return state


@pytest.mark.slow
def test_make_the_second_poster_warmer_makes_poster_two_version_two_from_poster_two(lomo: Any) -> None:
    _run(lomo, "a retro poster series, four posters")
    before = _objects(lomo)
    posters = sorted(p for p in before if p.endswith(".png"))
    assert len(posters) == 4 and all(v == 1 for v in before.values())
    second = next(p for p in posters if "poster-2-of-4" in p)
    _run(lomo, "make the second poster warmer")
    after = _objects(lomo)
    assert sorted(p for p in after if p.endswith(".png")) == posters, "no new poster file"
    assert after[second] == 2 and all(after[p] == 1 for p in posters if p != second)
    assert sorted(f.name for f in (lomo.workspace / "renders" / "image").iterdir()) == sorted(Path(p).name
                                                                                             for p in posters)
    call = [c for c in lomo.inspect()["tool_calls"] if c["name"] == "generate_image"][-1]
    assert call["arguments"]["inputs"] == [second] and call["result"]["path"] == second


@pytest.mark.slow
def test_that_one_right_after_a_single_piece_remakes_that_piece(lomo: Any) -> None:
    _run(lomo, "make a poster of a red fox")
    (piece, version), = _objects(lomo).items()
    assert version == 1
    _run(lomo, "make that one warmer")
    assert _objects(lomo) == {piece: 2}


async def test_a_creator_save_while_a_piece_is_remade_is_kept_and_the_result_goes_to_a_new_file(lomo: Any) -> None:
    from sqlalchemy import select

    from conftest import async_wait_for

    from lomo_tui.runtime.scheduler import Runtime
    from lomo_tui.store import schema as s

    poster = lomo.workspace / "poster.png"
    poster.write_bytes(render_image("retro poster", seed=1, size=(64, 64)))
    lomo.replay({"content": None, "tool_calls": [{"name": "generate_image", "arguments": {
        "prompt": "retro poster, warmer", "inputs": ["poster.png"], "output": "poster.png"}}]},
        {"content": "done", "tool_calls": []})
    rt = Runtime(lomo.settings(env={"LOMO_TIME_SCALE": "0.5"}, time_scale=0.5))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Poster")
        await rt.send("make it warmer", task)

        async def ordered() -> bool:
            async with rt.db.read() as conn:
                return (await conn.execute(select(s.jobs.c.status))).scalars().first() in ("queued", "running")

        await async_wait_for(ordered, 30, what="the job to be ordered")
        mine = render_image("the creator's own edit", seed=7, size=(64, 64))
        poster.write_bytes(mine)  # the creator saves the piece while it is being remade
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            [job] = (await conn.execute(select(s.jobs))).all()
    finally:
        await rt.close()
    assert job.status == "done"
    assert poster.read_bytes() == mine  # never overwritten
    assert job.artifact_path != "poster.png" and (lomo.workspace / job.artifact_path).is_file()
