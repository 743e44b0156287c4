"""A message that points at a piece of a series ("the 2nd one", 第二张, 2枚目, вторую, "the last one") goes to the
task that has such a series, without a card, even when another task is in view; complaints about a piece and
edits whose words alone read as a new request are edits (issue #12 §4–§5, "ask when two candidates are close"
without asking when the words leave one)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from lomo_tui.language import parse

BENCH = Path(__file__).resolve().parent.parent / "bench" / "routing_eval.py"
POSTERS = {"key": "jazz", "title": "Poster series: jazz night", "goal": "a series of 4 retro posters for a jazz night",
           "age_h": 2, "files": [f"posters/jazz_{n}.png" for n in range(1, 5)], "language": "en"}
TEA = {"key": "tea", "title": "Tea packaging", "goal": "packaging for a green tea brand", "age_h": 30,
       "files": ["tea/box.png"], "language": "en"}


def _bench():
    spec = importlib.util.spec_from_file_location("routing_eval", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("text", [
    "the 2nd one needs more contrast", "first one bigger text pls", "lose the text on the second one",
    "i dont like the first one", "swap the font on the last one", "第二张再亮一点", "2枚目をもう少し明るく",
    "вторую сделай поярче"])
async def test_a_position_goes_to_the_one_task_with_a_series(text: str, tmp_path: Path) -> None:
    bench = _bench()
    conv = {"conv": "refs", "split": "test", "tasks": [POSTERS, TEA],
            "turns": [{"text": text, "accept": [{"route": "followup", "task": "jazz"}]}]}
    [result] = await bench.run_conversation(conv, "lomo/local", tmp_path)
    assert (result.route, result.task) == ("followup", "jazz"), (result.route, result.task, result.reason)


@pytest.mark.parametrize("text, act", [
    ("i dont like the first one", "revise"), ("not a fan of the third one", "revise"),
    ("不太喜欢第二张", "revise"), ("2枚目は好きじゃない", "revise"), ("вторая не нравится", "revise"),
    ("lose the text on the second one", "revise"), ("give the third one a sunset", "revise"),
    ("его сделай чёрно-белым", "revise"), ("它太花了，简单点", "revise"),
    ("love the second one", "thanks"), ("make a second poster", "one_shot"), ("今天花了多少钱", "question")])
def test_what_a_message_about_a_piece_asks(text: str, act: str) -> None:
    assert parse(text).reading.act == act


def test_a_second_poster_is_another_piece_not_the_second_one() -> None:
    assert parse("make a second poster").reference is None
    assert parse("make the second poster warmer").reference.n == 2


@pytest.mark.parametrize("text", ["next: wedding welcome board", "次：友達の結婚式のウェルカムボード",
                                  "дальше: афиша для концерта"])
async def test_after_next_a_thing_named_without_a_verb_is_a_new_piece(text: str, tmp_path: Path) -> None:
    """ "next:" brings in the next item: a noun phrase after it was read as nothing and went to the newest task."""
    bench = _bench()
    conv = {"conv": "next", "split": "test", "tasks": [POSTERS, TEA],
            "turns": [{"text": text, "accept": [{"route": "lightweight"}, {"route": "persistent"}]}]}
    [result] = await bench.run_conversation(conv, "lomo/local", tmp_path)
    assert result.route in ("lightweight", "persistent"), (result.route, result.task, result.reason)


async def test_a_one_shot_made_just_now_is_no_series_to_point_into(tmp_path: Path) -> None:
    """ "у третьей картинки слишком яркие цвета" after a one-shot cover was asked for: the third picture is the
    series's, not the cover's (which has no piece yet and will have one)."""
    bench = _bench()
    teremok = {"key": "teremok", "title": "Иллюстрации к сказке «Теремок»", "goal": "Четыре иллюстрации к сказке",
               "age_h": 48, "files": [f"art/teremok_{n}.png" for n in range(1, 5)], "language": "ru"}
    conv = {"conv": "cover", "split": "test", "tasks": [teremok],
            "turns": [{"text": "нарисуй обложку для книжки про лису",
                       "accept": [{"route": "lightweight"}]},
                      {"text": "у третьей картинки слишком яркие цвета",
                       "accept": [{"route": "followup", "task": "teremok"}]}]}
    results = await bench.run_conversation(conv, "lomo/local", tmp_path)
    assert [(r.route, r.task) for r in results][-1] == ("followup", "teremok"), [(r.route, r.task) for r in results]
