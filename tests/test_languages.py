"""The offline default end to end in the creator's language: answers, one-shots and tasks keep it (A10)."""
from __future__ import annotations

import json

import pytest

from conftest import LomoEnv
from lomo_tui.models.local_nlu import detect_language


@pytest.mark.slow
@pytest.mark.parametrize("message, language", [
    ("你好", "zh"), ("こんにちは", "ja"), ("привет", "ru"), ("hello", "en")])
def test_main_answers_in_the_creators_language(lomo: LomoEnv, message: str, language: str) -> None:
    proc = lomo.run("--run-once", message, "--json", model="lomo/local")
    assert proc.returncode == 0, proc.stderr
    [main] = [t for t in json.loads(proc.stdout)["tasks"] if t["kind"] == "main"]
    assert main["replies"] and detect_language(main["replies"][-1]) == language


@pytest.mark.slow
@pytest.mark.parametrize("message, language", [
    ("画一只猫", "zh"), ("猫の絵を描いて", "ja"), ("нарисуй кота", "ru")])
def test_a_one_shot_in_any_language_makes_its_picture(lomo: LomoEnv, message: str, language: str) -> None:
    proc = lomo.run("--run-once", message, "--json", model="lomo/local")
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    [task] = [t for t in state["tasks"] if t["kind"] == "lightweight"]
    assert task["status"] == "done" and task["language"] == language
    [job] = state["jobs"]
    assert job["status"] == "done" and job["kind"] == "image"
    assert [m["text"] for m in state["inbox"] if m["task_id"] == task["id"]] == [message]  # their own words


@pytest.mark.slow
def test_the_review_card_speaks_the_tasks_language(lomo: LomoEnv) -> None:
    proc = lomo.run("--run-once", "做一组复古爵士海报，四张", "--json", model="lomo/local")
    assert proc.returncode == 0, proc.stderr
    [gate] = lomo.inspect()["gates"]
    assert detect_language(gate["question"]) == "zh" and gate["options"][0]["label"] == "没问题，继续"
