"""The litellm studio from the command line: 3D falls back to the embedded studio, failures are reported."""
from __future__ import annotations

import json

import pytest

from conftest import LomoEnv
from openai_stub import OpenAIStub, error


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


def _litellm_studio(lomo: LomoEnv, stub: OpenAIStub) -> None:
    config = lomo.root / "cfg" / "lomo" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[studio]\nprovider = "litellm"\nimage_model = "openai/gpt-image-1"\n'
                      f'api_base = "{stub.base_url}"\napi_key = "test-key-for-the-stub"\ntimeout = 10\n'
                      '[budget]\nfree_per_call = 1.0\n', encoding="utf-8")


@pytest.mark.slow
def test_a_3d_request_with_the_litellm_studio_is_made_by_the_embedded_studio(lomo: LomoEnv,
                                                                             stub: OpenAIStub) -> None:
    stub.reset()
    _litellm_studio(lomo, stub)
    done = lomo.run("--run-once", "a 3d model of a chair", "--json", model="lomo/local")
    assert done.returncode == 0, done.stderr
    [task] = [t for t in json.loads(done.stdout)["tasks"] if t["kind"] == "lightweight"]
    assert [(j["kind"], j["status"]) for j in task["jobs"]] == [("3d", "done")]
    [artifact] = task["artifacts"]
    assert artifact["path"].endswith(".gltf") and (lomo.workspace / artifact["path"]).is_file()
    assert stub.requests == []  # litellm has no 3D endpoint: nothing was ordered there
    [job] = lomo.inspect()["jobs"]
    assert job["status"] == "done" and job["provider_job_id"].startswith("emb-")


@pytest.mark.slow
def test_a_failed_generation_is_reported_by_run_once(lomo: LomoEnv, stub: OpenAIStub) -> None:
    stub.reset()
    stub.enqueue(*[error(400, "Your request was rejected by the safety system")] * 4)
    _litellm_studio(lomo, stub)
    done = lomo.run("--run-once", "a picture of a dog", model="lomo/local")
    assert stub.requests, done.stderr
    assert "✗ the image failed: " in done.stdout and "safety system" in done.stdout
    report = json.loads(lomo.run("--run-once", "--json", model="lomo/local").stdout)
    assert report["tasks"] == [] or all(j["status"] != "done" for t in report["tasks"] for j in t["jobs"])
