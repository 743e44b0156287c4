"""Fitted scorers of the offline router (data, `router_weights.json`): logistic models whose weights
`bench/fit_router.py` fits on the labelled dev turns (tests/data/routing/dev.jsonl) only.

A model is {"features": [names], "weights": [w], "bias": b, "threshold": t, "use": …}; `probability(name, x)`
is σ(b + Σ wᵢ·xᵢ) over the feature values X (missing ones count 0), `decide(name, x)` is probability ≥ t.
`use` says whether the router decides by the model (false: by the hand-set rule it was fitted to replace,
kept where the model did worse on the held-out halves). A new phrasing is fixed by adding labelled turns
and refitting, not by a branch.
"""
from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Mapping

WEIGHTS = Path(__file__).with_name("router_weights.json")
HAND_SET = False  # decide by the hand-set rules instead (bench/fit_router.py collects its rows so: no weights read)


@cache
def models() -> dict[str, dict[str, Any]]:
    """The shipped models, {name: model} (read once)."""
    with WEIGHTS.open(encoding="utf-8") as fh:
        return dict(json.load(fh)["models"])


def logit(model: Mapping[str, Any], x: Mapping[str, float]) -> float:
    return float(model["bias"]) + sum(float(w) * float(x.get(f, 0.0))
                                      for f, w in zip(model["features"], model["weights"]))


def probability(name: str, x: Mapping[str, float]) -> float:
    z = logit(models()[name], x)
    return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


def cut(name: str, feature: str) -> float:
    """For a model of one FEATURE: the value at and above which it says yes (where its probability reaches the
    threshold) — a fitted threshold, as `router.dedupe` and the offline router compare similarities with."""
    model = models()[name]
    [w] = [w for f, w in zip(model["features"], model["weights"]) if f == feature]
    t = float(model.get("threshold", 0.5))
    return round((math.log(t / (1.0 - t)) - float(model["bias"])) / float(w), 4)


def used(name: str) -> str | bool:
    """How the router uses model NAME: False (the hand-set rule decides), True, or a mode ("add")."""
    if HAND_SET:
        return False
    use = models()[name].get("use", True)
    return use if isinstance(use, str) else bool(use)


def decide(name: str, x: Mapping[str, float]) -> bool:
    """Does model NAME say yes to the feature values X (probability at or above its threshold)?"""
    return probability(name, x) >= float(models()[name].get("threshold", 0.5))
