"""Fitted scorers of the offline router (data, `router_weights.json`), fitted by `bench/fit_router.py` on the
labelled turns of every opened half of tests/data/routing/ (dev.jsonl and the held-out halves opened turn by
turn; never the still-blind ones).

A model is {"features": [names], "weights": [w], "bias": b, "threshold": t, "use": …, "kind"?}; its logit for
feature values X is b + Σ wᵢ·xᵢ (missing features count 0). A logistic model gives σ(logit) per row
(`probability`, `decide`); a "rank" model (`choice`) a softmax over one routing call's candidates and "none of
these" (score 0). `use` says whether the router decides by the model: False (the hand-set rule it was fitted
to replace decides), True (the model alone) or "add" (the hand-set rule's choice, and where it finds none, the
model's) — whichever was not worse on any half (bench/routing_eval.py).

To fix a phrasing by data, not a branch: add the labelled turn to tests/data/routing/dev.jsonl, run
`python bench/fit_router.py` (collects the rows, refits these weights), then `python bench/routing_eval.py`
(every half must stay as good) and `python bench/judge_router.py` (leave one half out).
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


def choice(model: Mapping[str, Any], xs: list[Mapping[str, float]]) -> list[float]:
    """Each candidate's probability of being the one meant, over the candidates' feature values XS: a "rank"
    model's softmax over them and "none of these" (score 0), else each one's own logistic probability."""
    zs = [logit(model, x) for x in xs]
    if model.get("kind") == "rank":
        top = max(zs + [0.0])
        es = [math.exp(z - top) for z in zs]
        total = sum(es) + math.exp(-top)
        return [e / total for e in es]
    return [1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0 for z in zs]


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
