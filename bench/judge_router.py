"""Judge the offline router's fitted attach model without running the runtime: leave one half out.

For every opened half in tests/data/routing/ (bench/fit_router.HALVES), the attach model is fitted on the
collected rows of the other halves (tests/data/routing/dev_features.jsonl) and replayed on that half's routing
calls, against what the hand-set rule (_clear_best, the rows' "hand") did there:

  the same pick as the hand-set rule   the turn's outcome is the one the rows recorded ("ok")
  another candidate                    the message would go to it: right when the turn's labels want a
                                       follow-up to it, else a wrong attach (an estimate: some branches of
                                       the router send nowhere even with a candidate)
  no candidate where the rule had one  "veto": counted wrong when the labels want that candidate

It is an estimate for choosing a configuration; bench/routing_eval.py on every half is the judge.

    python bench/judge_router.py                 # every mode, leave-one-half-out
    python bench/judge_router.py --mode rank-add # one mode: the ranking, where the hand-set rule finds none
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

import fit_router  # noqa: E402
import routing_eval  # noqa: E402
from lomo_tui.language import scorer  # noqa: E402


def _wants_followup() -> dict[tuple[str, int], bool]:
    out = {}
    for half in fit_router.HALVES:
        for conv in routing_eval.load(half):
            for n, turn in enumerate(conv["turns"]):
                out[(conv["conv"], n)] = any(e["route"] == "followup" for e in turn["accept"])
    return out


def groups(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    out: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["model"] == "attach":
            out[(r["conv"], r["n"])].append(r)
    return out


def pick(model: dict[str, Any], rows: list[dict[str, Any]], mode: str) -> int | None:
    """The index of the candidate MODEL picks among ROWS in MODE (None: no candidate)."""
    hand = next((i for i, r in enumerate(rows) if r["hand"]), None)
    if mode == "hand":
        return hand
    if mode == "add" and hand is not None:
        return hand
    probs = scorer.choice(model, rows)
    best = max(range(len(rows)), key=lambda i: probs[i])
    if mode == "swap" and hand is not None:
        return best  # another candidate, never none
    return best if probs[best] >= float(model.get("threshold", 0.5)) else None


def replay(model: dict[str, Any], grouped: dict[tuple[str, int], list[dict[str, Any]]], mode: str,
           wants: dict[tuple[str, int], bool]) -> dict[str, int]:
    tally = {"calls": 0, "changed": 0, "fixed": 0, "broken": 0, "wrong_attach": 0, "veto": 0}
    for key, rows in grouped.items():
        tally["calls"] += 1
        ok = bool(rows[0]["ok"])
        hand = next((i for i, r in enumerate(rows) if r["hand"]), None)
        mine = pick(model, rows, mode)
        if mine == hand:
            continue
        tally["changed"] += 1
        if mine is None:
            tally["veto"] += 1
            now = not any(r["label"] for r in rows)  # right only if no candidate was meant
        else:
            now = bool(rows[mine]["label"]) and wants.get(key, False)
            if not now:
                tally["wrong_attach"] += 1
        tally["fixed"] += int(now and not ok)
        tally["broken"] += int(ok and not now)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", action="append",
                        help="add, True (the logistic model alone), rank, rank-add, rank-swap, logistic-swap")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--base-features", action="store_true", help="FEATURES only, not ATTACH_FEATURES")
    parser.add_argument("--l2", type=float, default=fit_router.L2["attach"])
    args = parser.parse_args(argv)
    rows = fit_router.read_rows()
    wants = _wants_followup()
    modes = args.mode or ["add", "True", "rank", "rank-add", "rank-swap"]
    for mode in modes:
        total = defaultdict(int)
        print(f"== {mode} (threshold {args.threshold}) ==")
        for half in fit_router.HALVES:
            train = [r for r in rows if r.get("half") != half and r["model"] == "attach"]
            test = groups([r for r in rows if r.get("half") == half])
            kind = "rank" if mode.startswith("rank") else "logistic"
            features = fit_router.FEATURES if args.base_features else fit_router.ATTACH_FEATURES
            model = {**fit_router.fit_attach(train, kind, features, args.l2), "threshold": args.threshold}
            t = replay(model, test, mode.split("-")[-1] if "-" in mode else "add" if mode == "add" else "full", wants)
            for k, v in t.items():
                total[k] += v
            print(f"  {half:9} " + "  ".join(f"{k} {v}" for k, v in t.items()))
        print(f"  {'all':9} " + "  ".join(f"{k} {v}" for k, v in total.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
