"""Seeing the work (issue 12 §6): names told apart, no text editor on binaries, the first screen, the bell,
previews that step through results and show clips and 3D models, CJK captions."""
from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lomo_tui.studio import caption
from lomo_tui.tui.fmt import distinct_names
from lomo_tui.tui.widgets.stream import Welcome
from tui_apps.live import notifications, wait_until
from tui_apps.states import make_app, until_ready

SIZE = (120, 36)
POSTERS = [f"retro-poster-for-the-jazz-night-poster-{n}-of-4-{h}.png"
           for n, h in zip(range(1, 5), ("c2b0ad", "9a1e04", "77ffee", "0b0b0b"))]


def test_long_names_keep_the_part_that_differs():
    short = distinct_names(POSTERS, 26)
    assert len(set(short)) == 4 and all(len(n) <= 26 for n in short)
    assert short[0] == "retro-…1-of-4-c2b0ad.png"
    assert distinct_names(["cat.png", "dog.png"], 26) == ["cat.png", "dog.png"]


async def test_the_tree_and_the_card_tell_four_posters_apart(tmp_path):
    from lomo_tui.tui.widgets.card import TaskCard, card_body
    from lomo_tui.tui.widgets.tree import WorkspaceTree
    from tui_apps.states import agent_file, make_png

    async def seed(rt):
        await rt.ledger.main_task_id()
        await rt.ledger.create_task("Poster series", task_id="task-poster")
        for name in POSTERS:
            make_png(rt.workspace.root / name)
            await agent_file(rt, "task-poster", name, f"seed-{name}")

    app = make_app(tmp_path, "empty")
    app.session.seed = seed
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        tree = app.screen.query_one(WorkspaceTree)
        labels = [await wait_until(pilot, lambda n=n: tree.label_text(n), what=n) for n in POSTERS]
        assert len({label.split(" v")[0] for label in labels}) == 4
        assert all(label.startswith("📄 retro-…") for label in labels)
        assert [label.split("…")[1][0] for label in labels] == ["1", "2", "3", "4"]  # the part that differs
        card = next(c for c in app.screen.query(TaskCard) if c.task_id == "task-poster")
        shown = card_body(card.card).plain
        assert shown.count("retro-…") == 2 and "-of-4-" in shown


async def test_e_on_a_picture_never_opens_a_text_editor(tmp_path, monkeypatch):
    marker = tmp_path / "editor-ran"
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(tmp_path, "busy")
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        app.edit_file(app.workspace_root / "cat.png")
        blob = app.workspace_root / "data.bin"  # a file of no known kind that is not text either
        blob.write_bytes(bytes(range(256)) * 4)
        app.edit_file(blob)
        assert not marker.exists()
        assert any(title == "Not a text file" and "cat.png" in m for title, m in seen)
        assert any(title == "Not a text file" and "data.bin" in m for title, m in seen)


async def test_the_first_screen_shows_what_lomo_can_do_until_the_first_message(tmp_path):
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        welcome = app.screen.query_one(Welcome)
        assert welcome.display and "What Lomo can do" in str(welcome.render())
        welcome.action_example(0)
        await pilot.pause()
        field = app.screen.query_one("#composer-input")
        assert field.value.startswith("Make a poster series")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not welcome.display, what="the welcome to make way")


async def test_the_bell_rings_when_a_gate_opens_unless_turned_off(tmp_path):
    from lomo_tui.governance.gates import open_gate

    for setting, rings in (("gates", 1), ("off", 0)):
        app = make_app(tmp_path / setting, "empty", tui={"bell": setting})
        rang: list[int] = []
        app.bell = lambda: rang.append(1)  # the terminal's bell cannot be heard here; count the calls
        async with app.run_test(size=SIZE) as pilot:
            await until_ready(pilot)
            async with app.session.db.write() as conn:
                await open_gate(conn, task_id=None, kind="question", question="Which font?",
                                options=["Serif", "Sans"], dedupe_key="bell")
            app.live.schedule(everything=True)
            await wait_until(pilot, lambda: app.snap.gates, what="the gate")
            assert len(rang) == rings, setting


# ---- CJK captions --------------------------------------------------------------------------------------
def fake_fc_match(tmp: Path, prints: str) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in ("fc-match", "fc-list"):
        script = bin_dir / tool
        script.write_text(f"#!/bin/sh\necho {tool} \"$@\" >> {tmp / 'asked'}\nprintf '%s' '{prints}'\n",
                          encoding="utf-8")
        script.chmod(0o755)
    return bin_dir


def test_captions_ask_fontconfig_for_a_cjk_font(tmp_path, monkeypatch):
    font = tmp_path / "NotReallyAFont.ttf"
    font.write_bytes(b"not a font")
    monkeypatch.setenv("PATH", str(fake_fc_match(tmp_path, str(font))))  # this fontconfig only
    caption.fontconfig_files.cache_clear()
    caption._fonts.cache_clear()
    try:
        assert caption.fontconfig_files() == (str(font),)
        asked = (tmp_path / "asked").read_text(encoding="utf-8")
        assert "fc-match -f %{file} :lang=zh" in asked and "fc-list" in asked
        assert caption.font_for("一只猫", 14) is not None  # a file that is not a font is passed over
    finally:
        caption.fontconfig_files.cache_clear()
        caption._fonts.cache_clear()


def test_captions_fall_back_where_there_is_no_fontconfig(tmp_path, monkeypatch):
    from PIL import Image

    from lomo_tui.studio.palette import palette_for

    monkeypatch.setenv("PATH", str(tmp_path))  # no fc-match anywhere
    caption.fontconfig_files.cache_clear()
    caption._fonts.cache_clear()
    try:
        assert caption.fontconfig_files() == ()
        picture = Image.new("RGB", (200, 120))
        caption.caption(picture, "一只猫在月光下", palette_for("cat"))  # draws, whatever the font
    finally:
        caption.fontconfig_files.cache_clear()
        caption._fonts.cache_clear()


# ---- previews --------------------------------------------------------------------------------------------
async def test_a_preview_steps_through_a_tasks_results(tmp_path):
    from lomo_tui.tui.screens.preview import PreviewScreen
    from lomo_tui.tui.screens.task import TaskScreen
    from lomo_tui.tui.widgets.task_parts import ArtifactRow
    from tui_apps.states import agent_file, make_png

    async def seed(rt):
        await rt.ledger.main_task_id()
        await rt.ledger.create_task("Poster series", task_id="task-poster")
        for n, name in enumerate(POSTERS[:3]):
            make_png(rt.workspace.root / name, hue=n * 40)
            await agent_file(rt, "task-poster", name, f"seed-{name}")

    app = make_app(tmp_path, "empty")
    app.session.seed = seed
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await app.open_task("task-poster")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded, what="task view")
        row = await wait_until(pilot, lambda: app.screen.query(ArtifactRow) and app.screen.query(ArtifactRow).first(),
                               what="an artifact")
        first = row.artifact.path
        row.focus()
        await pilot.press("enter")
        preview = await wait_until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen, what="preview")
        assert preview.path.name == first and "1 of 3" in str(preview.query_one("#preview-title").render())
        seen = [preview.path.name]
        for _ in range(3):
            await pilot.press("right")
            seen.append(preview.path.name)
        assert len(set(seen[:3])) == 3 and seen[3] == seen[0]  # every result, then round again
        await pilot.press("left")
        assert preview.path.name == seen[2]


@pytest.mark.parametrize("suffix", [".gif", ".webp"])
async def test_an_animated_clip_plays_and_says_its_frames_and_length(tmp_path, suffix):
    from PIL import Image

    from lomo_tui.tui.screens.preview import PreviewScreen

    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        clip = app.workspace_root / f"clip{suffix}"
        frames = [Image.new("RGB", (64, 48), (40 * n, 80, 200 - 40 * n)) for n in range(5)]
        frames[0].save(clip, save_all=True, append_images=frames[1:], duration=120, loop=0)
        await app.open_file(clip)
        preview = await wait_until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen, what="preview")
        info = await wait_until(pilot, lambda: preview.query("#preview-info") and preview.query_one("#preview-info"),
                                what="the clip's facts")
        assert "5 frames" in str(info.render()) and "0.60 s" in str(info.render())
        await wait_until(pilot, lambda: preview.frame > 0, what="the clip to play")
        await pilot.press("space")
        assert not preview.playing


async def test_a_gltf_model_previews_as_a_rendered_still_not_json(tmp_path):
    from lomo_tui.studio.mesh import render_mesh
    from lomo_tui.tui.screens.preview import PreviewScreen

    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        model = app.workspace_root / "vase.gltf"
        model.write_bytes(render_mesh("a vase", seed=1))
        await app.open_file(model)
        preview = await wait_until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen, what="preview")
        info = await wait_until(pilot, lambda: preview.query("#preview-info") and preview.query_one("#preview-info"),
                                what="the model's facts")
        assert "3D model" in str(info.render()) and "triangles" in str(info.render())
        picture = preview.query_one("#preview-picture")
        assert picture.image.size[0] > 0  # a picture widget, drawn from the mesh
        from textual.widgets import TextArea

        assert not preview.query(TextArea) and "base64" not in str(preview.query_one("#preview-body").render())


def test_the_still_of_a_model_is_drawn_from_its_triangles(tmp_path):
    from lomo_tui.studio.mesh import render_mesh
    from lomo_tui.tui.meshview import render_still

    model = tmp_path / "cube.gltf"
    model.write_bytes(render_mesh("a cube", seed=1))
    still, count = render_still(model, (160, 120))
    assert count >= 12 and still.size == (160, 120)
    background = still.getpixel((0, 0))
    assert still.getpixel((80, 60)) != background  # the model is in the middle of the picture


async def test_a_long_job_finishing_rings_when_asked_for(tmp_path):
    from tui_apps.live import booted, live_app, type_text

    app = live_app(tmp_path, tui={"bell": "jobs", "long_job_s": 0})
    rang: list[int] = []
    app.bell = lambda: rang.append(1)
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await booted(pilot)
        await type_text(pilot, "a picture of a cat")
        await pilot.press("enter")
        await wait_until(pilot, lambda: rang, what="the bell", timeout=30)
        assert any(title == "Finished" and "image" in m for title, m in seen)


async def test_an_mp4_clip_of_the_studio_plays_in_the_preview_too(tmp_path):
    from PIL import Image

    from lomo_tui.studio.video import encode_mp4
    from lomo_tui.tui.screens.preview import PreviewScreen

    app = make_app(tmp_path, "empty")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        clip = app.workspace_root / "clip.mp4"
        frames = [Image.new("RGB", (64, 48), (40 * n, 80, 200 - 40 * n)) for n in range(8)]
        clip.write_bytes(encode_mp4(frames, 8, (64, 48)))
        await app.open_file(clip)
        preview = await wait_until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen, what="preview")
        info = await wait_until(pilot, lambda: preview.query("#preview-info") and preview.query_one("#preview-info"),
                                what="the clip's facts")
        assert "8 frames" in str(info.render()) and "1.00 s" in str(info.render())
