"""A production graph through `[studio] provider = "litellm"` against a real HTTP server speaking OpenAI's image API
on 127.0.0.1: a key frame's character sheet and scene reference reach the image model as reference images (the
edit call's `image[]` parts), and where the model does not take them the card says so and nothing is uploaded."""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import subprocess
import sys
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.models import remote
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.studio.remote import takes_references
from lomo_tui.workspace.flows import Edge, Flow, Node, dump_flow
from media_stub import MediaStub

pytestmark = pytest.mark.usefixtures("loopback_only")  # no test here reaches past 127.0.0.1 (conftest)
KEY = "sk-test-media-0123456789"
RUN = {"content": None, "tool_calls": [{"name": "run_production", "arguments": {"path": "lit.flow.json"}}]}
DONE = {"content": "done", "tool_calls": []}
FLOW = Flow(
    nodes=(Node("character", "character_sheet", {"prompt": "a red fox, full figure", "size": "square",
                                                 "output": "lit/character.png"}),
           Node("scene", "scene_reference", {"prompt": "the snowy forest, no fox", "output": "lit/scene.png"}),
           Node("frame", "key_frame", {"prompt": "the fox in deep snow", "output": "lit/frame.png"})),
    edges=(Edge("character.image", "frame.character"), Edge("scene.image", "frame.scene")))


@pytest.fixture(scope="module")
def server(loopback_only: None) -> Iterator[MediaStub]:
    remote.preload()  # once for the module (seconds)
    with MediaStub() as running:
        yield running


@pytest.fixture
def stub(server: MediaStub) -> MediaStub:
    server.reset()
    server.image_by_prompt = True
    return server


def _config(lomo: LomoEnv, stub: MediaStub, model: str) -> None:
    for where in (lomo.root / "cfg", lomo.root / "cfg" / "lomo"):
        where.mkdir(parents=True, exist_ok=True)
        (where / "config.toml").write_text(
            f'[studio]\nprovider = "litellm"\ndeadline_seconds = 300\nimage_model = "{model}"\n'
            f'api_base = "{stub.base_url}"\napi_key = "{KEY}"\ntimeout = 5\n')


async def _run(lomo: LomoEnv) -> str:
    """Run the graph to its card, approve it, run to the end; the card's question."""
    (lomo.workspace / "lit.flow.json").write_text(dump_flow(FLOW))
    lomo.replay(RUN, DONE)
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("References")
        await rt.send("run my graph", task)
        assert await rt.run_until_quiescent(60)
        async with rt.db.read() as conn:
            [card] = (await conn.execute(select(s.gates).where(s.gates.c.status == "pending"))).all()
        await rt.resolve_gate(card.id, approve=True)
        assert await rt.run_until_quiescent(60)
        assert not rt.errors, rt.errors
        async with rt.db.read() as conn:
            jobs = (await conn.execute(select(s.jobs))).all()
        assert [j.status for j in jobs] == ["done"] * 3 and {j.provider for j in jobs} == {"litellm"}
    finally:
        await rt.close()
    return str(card.question)


@pytest.mark.slow
async def test_key_frames_send_the_character_sheet_and_scene_as_reference_images(stub: MediaStub,
                                                                                 lomo: LomoEnv) -> None:
    _config(lomo, stub, "openai/gpt-image-1")
    question = await _run(lomo)
    assert "go to openai/gpt-image-1 as reference images" in question
    [edit] = stub.hits("POST", "/v1/images/edits")  # the key frame, with both references
    sheet = (lomo.workspace / "lit" / "character.png").read_bytes()
    scene = (lomo.workspace / "lit" / "scene.png").read_bytes()
    assert sheet != scene
    assert sorted(edit.uploads) == sorted([("image[]", scene), ("image[]", sheet)])
    assert edit.body["prompt"] == "the fox in deep snow"
    assert len(stub.hits("POST", "/v1/images/generations")) == 2  # the sheet and the scene, from text
    assert (lomo.workspace / "lit" / "frame.png").is_file()


@pytest.mark.slow
async def test_a_model_without_reference_images_is_named_on_the_card_and_gets_text_only(stub: MediaStub,
                                                                                         lomo: LomoEnv) -> None:
    _config(lomo, stub, "openai/dall-e-3")
    question = await _run(lomo)
    assert "openai/dall-e-3 does not take reference images" in question
    assert stub.hits("POST", "/v1/images/edits") == []
    generated = stub.hits("POST", "/v1/images/generations")
    assert len(generated) == 3 and all(r.uploads == () for r in generated)


def test_which_image_models_take_reference_images_is_data_and_a_setting_overrides_it() -> None:
    assert takes_references("openai/gpt-image-1") and takes_references("gemini/gemini-2.5-flash-image")
    assert not takes_references("openai/dall-e-3") and not takes_references(None)
    assert takes_references("openai/dall-e-3", True) and not takes_references("openai/gpt-image-1", False)
    assert takes_references("my-proxy/any", "yes") and not takes_references("openai/gpt-image-1", "false")


def test_the_production_engine_and_its_card_never_load_litellm() -> None:
    code = ("import sys; from lomo_tui.production import engine; from lomo_tui.studio import remote, providers; "
            "from lomo_tui.studio.embedded import EmbeddedStudio; "
            "note = engine.references_note(EmbeddedStudio(__import__('pathlib').Path('.')), 'en'); "
            "assert 'character sheet' in note; assert remote.takes_references('openai/gpt-image-1'); "
            "assert 'litellm' not in sys.modules, 'litellm was imported'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr
