"""Keys never stored or shown: a key a provider echoes in an error is masked in the database, stderr and logs."""
from __future__ import annotations

import logging
import sqlite3
import subprocess

import pytest

from conftest import LomoEnv
from lomo_tui import redact
from openai_stub import OpenAIStub, error

AZURE_LIKE = "3f9a0c4be17d4c8e9a2b6f5d0e1c7a98"  # not shaped like sk-…: only knowing the key finds it
GOOGLE_LIKE = "AIzaSyD4x9Qv7Lm2Np8Rt6Wk3Hc5Jb1Fg0Ze_Yu"


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


def _stored_text(lomo: LomoEnv) -> str:
    """Every value of every table, as text."""
    with sqlite3.connect(lomo.db_path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for table in tables for row in conn.execute(f'SELECT * FROM "{table}"'))


def _log_text(lomo: LomoEnv) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in (lomo.root / "state").rglob("*.log"))


def _config(lomo: LomoEnv, text: str) -> None:
    config = lomo.root / "cfg" / "lomo" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")


def _assert_nowhere(lomo: LomoEnv, done: subprocess.CompletedProcess[str], **env: str) -> None:
    shown = done.stdout + done.stderr + lomo.run("inspect", "--json", **env).stdout
    assert AZURE_LIKE not in shown
    assert AZURE_LIKE not in _stored_text(lomo)
    assert AZURE_LIKE not in _log_text(lomo)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["environment", "config"])
def test_a_key_the_model_provider_echoes_is_masked_everywhere(lomo: LomoEnv, stub: OpenAIStub, where: str) -> None:
    stub.reset()
    stub.enqueue(*[error(400, f"Invalid request for key {AZURE_LIKE}. Authorization: Bearer {AZURE_LIKE}")] * 4)
    key_line = f'api_key = "{AZURE_LIKE}"\n' if where == "config" else ""
    _config(lomo, f'[providers.openai]\napi_base = "{stub.base_url}"\n{key_line}timeout = 10\n')
    env = {"OPENAI_API_KEY": AZURE_LIKE if where == "environment" else ""}
    done = lomo.run("--run-once", "hello there", model="openai/stub-model", **env)
    assert done.returncode == 1
    assert "Provider rejected the request (400): Invalid request for key " in done.stderr
    assert stub.requests and stub.requests[0].headers.get("authorization") == f"Bearer {AZURE_LIKE}"
    _assert_nowhere(lomo, done, **env)


@pytest.mark.slow
def test_a_key_the_media_provider_echoes_is_masked_everywhere(lomo: LomoEnv, stub: OpenAIStub) -> None:
    stub.reset()
    stub.enqueue(*[error(400, f"Your key {AZURE_LIKE} may not use this model")] * 4)
    _config(lomo, f'[studio]\nprovider = "litellm"\nimage_model = "openai/gpt-image-1"\n'
                  f'api_base = "{stub.base_url}"\ntimeout = 10\n')
    env = {"OPENAI_API_KEY": AZURE_LIKE}
    done = lomo.run("--run-once", "a picture of a cat", "--json", model="lomo/local", **env)
    assert stub.requests, done.stderr
    jobs = lomo.inspect()["jobs"]
    assert [j["status"] for j in jobs] == ["failed"]
    _assert_nowhere(lomo, done, **env)


def test_key_shaped_tokens_and_configured_keys_are_masked() -> None:
    redact.register_config({"providers": {"gemini": {"api_key": GOOGLE_LIKE}}, "studio": {"api_key": "short"}})
    text = (f"bad key {GOOGLE_LIKE}; Authorization: Bearer abc.def-ghi_jkl; groq gsk_{'a1' * 14}; "
            "url postgresql://lomo:hunter2pass@db.local/lomo; model gpt-4o and seconds 5")
    masked = redact.redact(text)
    assert GOOGLE_LIKE not in masked and "abc.def-ghi_jkl" not in masked and "gsk_a1" not in masked
    assert "hunter2pass" not in masked and "Bearer [redacted]" in masked
    assert masked.endswith("model gpt-4o and seconds 5")  # ordinary words stay
    assert redact.redact_data({"error": [f"echo {GOOGLE_LIKE}"], "n": 3}) == {"error": ["echo [redacted]"], "n": 3}


def test_the_log_filter_masks_messages_arguments_and_tracebacks(tmp_path) -> None:  # noqa: ANN001
    redact.register(["zq9-custom-secret-value"])
    handler = logging.FileHandler(tmp_path / "lomo.log")
    handler.addFilter(redact.RedactingFilter())
    logger = logging.getLogger("lomo.test.redact")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.info("calling with %s", "zq9-custom-secret-value")
        try:
            raise RuntimeError("provider said zq9-custom-secret-value")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = (tmp_path / "lomo.log").read_text()
    assert "zq9-custom-secret-value" not in text and "calling with [redacted]" in text
    assert "RuntimeError: provider said [redacted]" in text
