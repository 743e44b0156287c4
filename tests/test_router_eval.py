"""The routing eval's dev half as a regression gate (bench/routing_eval.py runs both halves).

Goals (DESIGN A5–A7, issue "Main thread, Router and tasks"): accuracy ≥ 85 %, wrong-attach ≤ 2 %,
duplicate tasks ≤ 5 %. The held-out half is not asserted here: lomo/local's rules are not tuned on it.
"""
from __future__ import annotations

import pytest

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "routing_eval.py"


def _bench():
    spec = importlib.util.spec_from_file_location("routing_eval", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
async def test_dev_split_meets_the_routing_goals() -> None:
    bench = _bench()
    results = await bench.evaluate("dev", "lomo/local")
    m = bench.metrics(results)
    wrong = [f"{r.conv}#{r.n} {r.text!r}: {r.route} {r.task or ''}" for r in results if not r.correct]
    assert m["turns"] >= 75
    assert m["accuracy"] >= 0.85, wrong
    assert m["wrong_attach_rate"] <= 0.02, wrong
    assert m["duplicate_task_rate"] <= 0.05, wrong
    assert m["direct_expected_hit"] == m["direct_expected"], wrong  # named files never need the model
