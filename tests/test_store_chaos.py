"""The chaos benchmark runs end to end on a short campaign and reports every figure."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIGURES = ("duplicate jobs per key", "double charges", "charges over the cap without approval",
           "non-idempotent calls run twice", "acknowledged messages lost", "messages consumed twice",
           "creator saves lost", "jobs with two end states", "stuck turns", "messages left pending",
           "authorisations beyond one per approved gate", "versions repeating an older hash", "duplicate object rows",
           "integrity check")


@pytest.mark.slow
def test_a_short_chaos_campaign_runs_to_quiescence_and_reports_every_invariant(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOMO_")}
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "chaos.py"), "--seconds", "6", "--seed", "7",
                           "--quiesce-seconds", "60", "--json", "--keep", str(tmp_path / "campaign")],
                          env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert list(report["figures"]) == list(FIGURES)
    assert report["figures"]["integrity check"] == "ok"
    assert all(isinstance(v, (int, float)) for k, v in report["figures"].items() if k != "integrity check")
    activity = report["activity"]
    assert activity["clean processes"] > 0 and activity["saves"] > 0
    assert (tmp_path / "campaign" / "lomo.db").is_file()
