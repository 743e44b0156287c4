"""Long and odd messages through the command line: handled in linear time, read the same as before."""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from conftest import LomoEnv
from lomo_tui.models import local_router

# The list cue as it was first written: right, but quadratic on a long text without separators.
REFERENCE_LIST = re.compile(r"[^,，、;；:：・\n]+(?:[,，、;；・]\s*[^,，、;；・\n]+){2,}")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab ,，、;；:：・\n\t", max_size=40))
def test_the_linear_list_cue_finds_exactly_what_the_reference_pattern_finds(text: str) -> None:
    expected, found = REFERENCE_LIST.search(text), local_router._LIST.search(text)
    assert (found and found.group()) == (expected and expected.group())


@pytest.mark.slow
def test_a_200_kb_message_without_commas_is_answered(lomo: LomoEnv) -> None:
    message = "make a poster of a cat sitting on a very " + "very " * 40_000 + "tall wall"
    assert len(message.encode()) > 200_000
    # quadratic list matching took minutes here (20 KB: 8 s, 120 KB: 288 s); linear, this is seconds
    done = subprocess.run(lomo.argv("--run-once", "-", "--json", model="lomo/local"), env=lomo.environ(),
                          input=message, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["quiescent"] and any(t["kind"] == "lightweight" and t["status"] == "done" for t in report["tasks"])
    assert [m["text"] for m in lomo.inspect()["inbox"]][0] == message
