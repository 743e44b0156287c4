"""`lomo memory list|show|forget` (CONTRACTS §7), memories in `inspect --json` (§4), forgetting from the
stream through an irreversible gate, and crash drills: a SIGKILL at each commit of a forget cascade."""
from __future__ import annotations

import json
import signal
import sqlite3
from typing import Any

import pytest

from conftest import LomoEnv

LIST_KEYS = {"id", "version", "status", "kind", "scope", "text", "stated", "evidence"}


def ok(lomo: LomoEnv, *args: str, **extra: Any) -> Any:
    proc = lomo.run(*args, **extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if "--json" in args else proc.stdout


def send(lomo: LomoEnv, words: str) -> str:
    return ok(lomo, "send", words, "--json")["id"]


@pytest.mark.slow
def test_memory_list_show_and_forget_print_the_contract_shapes(lomo: LomoEnv) -> None:
    said = send(lomo, "I usually like low-saturation palettes.")
    send(lomo, "I always use a serif font.")
    rows = ok(lomo, "memory", "list", "--json")
    assert [set(r) >= LIST_KEYS for r in rows] == [True, True]
    palette = next(r for r in rows if "palettes" in r["text"])
    assert (palette["version"], palette["status"], palette["kind"], palette["scope"], palette["stated"]) == (
        1, "active", "preference", "creator", True)
    assert palette["evidence"] == [{"message_id": said, "role": "origin"}]
    shown = ok(lomo, "memory", "show", palette["id"], "--json")
    assert {k: shown[k] for k in LIST_KEYS} == {k: palette[k] for k in LIST_KEYS} and len(shown["versions"]) == 1
    result = ok(lomo, "memory", "forget", palette["id"], "--yes", "--json")
    assert (result["forgotten"], result["rebuilt"]) == ([palette["id"]], [])
    assert [r["text"] for r in ok(lomo, "memory", "list", "--json")] == ["I always use a serif font."]
    every = ok(lomo, "memory", "list", "--all", "--json")
    gone = next(r for r in every if r["id"] == palette["id"])
    assert (gone["status"], gone["text"]) == ("forgotten", "")
    memories = lomo.inspect()["memories"]
    assert sorted((m["id"], m["version"], m["status"], m["text"]) for m in memories) == sorted(
        (r["id"], r["version"], r["status"], r["text"]) for r in every)
    assert "low-saturation" not in ok(lomo, "memory", "list")


@pytest.mark.slow
def test_memory_forget_refuses_without_yes_or_a_target_and_names_unknown_ids(lomo: LomoEnv) -> None:
    send(lomo, "I usually like low-saturation palettes.")
    memory_id = ok(lomo, "memory", "list", "--json")[0]["id"]
    refused = lomo.run("memory", "forget", memory_id)
    assert refused.returncode == 2 and "--yes" in refused.stderr and "Traceback" not in refused.stderr
    assert ok(lomo, "memory", "list", "--json")[0]["status"] == "active"
    unknown = lomo.run("memory", "forget", "mem-nothere", "--yes")
    assert unknown.returncode == 1 and "mem-nothere" in unknown.stderr and len(unknown.stderr.splitlines()) == 1
    nothing = lomo.run("memory", "forget", "--query", "jazz trumpets", "--yes")
    assert nothing.returncode == 1 and "jazz trumpets" in nothing.stderr
    assert lomo.run("memory", "forget", "--yes").returncode == 2
    assert lomo.run("memory", "show", "mem-nothere").returncode == 1
    by_query = ok(lomo, "memory", "forget", "--query", "low-saturation palettes", "--yes", "--json")
    assert by_query["forgotten"] == [memory_id]


@pytest.mark.slow
def test_forget_that_from_the_stream_opens_an_irreversible_gate_and_approval_forgets(lomo: LomoEnv) -> None:
    lomo.replay()
    ok(lomo, "--run-once", "I always prefer muted, low-saturation colours", "--json")
    ok(lomo, "--run-once", "I always use a serif font.", "--json")
    assert len(ok(lomo, "memory", "list", "--json")) == 2
    ok(lomo, "--run-once", "forget that I like muted colours", "--json")
    gates = ok(lomo, "gates", "--json")
    forget_gates = [g for g in gates if g["kind"] == "irreversible"]
    assert len(forget_gates) == 1
    assert "I always prefer muted, low-saturation colours" in forget_gates[0]["options"][0]["consequence"]
    assert len(ok(lomo, "memory", "list", "--json")) == 2  # nothing goes before the creator answers
    ok(lomo, "approve", forget_gates[0]["id"], "--option", "1")
    assert [r["text"] for r in ok(lomo, "memory", "list", "--json")] == ["I always use a serif font."]
    logs = "".join(p.read_text(errors="replace") for p in (lomo.root / "state").rglob("*.log"))
    assert "muted" not in logs


BRAND = ("Our brand's main colour is ottercobalt.", "Paired with cream it feels softer overall.",
         "I always use a serif font.")


def brand_case(lomo: LomoEnv) -> tuple[str, list[dict[str, Any]]]:
    ids = [send(lomo, words) for words in BRAND]
    return ids[0], ok(lomo, "memory", "list", "--all", "--json")


def settled(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["version"], r["status"], r["text"], [e["role"] for e in r["evidence"]]) for r in rows]


@pytest.mark.slow
@pytest.mark.parametrize("commit", [1, 2, 3, 4])
def test_a_forget_killed_at_each_commit_is_completed_at_the_next_start(lomo: LomoEnv, commit: int) -> None:
    blue, before = brand_case(lomo)
    crashed = lomo.run("memory", "forget", blue, "--yes", "--json", faults=f"after_forget_commit:crash@{commit}")
    assert crashed.returncode == -signal.SIGKILL
    after = ok(lomo, "memory", "list", "--all", "--json")  # the next start finishes the cascade
    brand = before[0]["id"]
    assert settled([r for r in after if r["id"] == brand]) == [
        (1, "forgotten", "", ["origin"]), (2, "forgotten", "", ["origin", "refine"]),
        (3, "active", "Paired with cream it feels softer overall.", ["origin"])]
    assert [r for r in after if r["id"] != brand] == [r for r in before if r["id"] != brand]
    with sqlite3.connect(lomo.db_path) as conn:
        assert conn.execute("SELECT status, stage FROM memory_forgets").fetchall() == [("done", 4)]
        assert conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0] == 2
        assert not conn.execute("SELECT 1 FROM memory_fts WHERE memory_fts MATCH 'ottercobalt'").fetchall()
        assert "ottercobalt" not in conn.execute("SELECT text FROM memory_profiles WHERE status = 'current'"
                                                 ).fetchone()[0]
    events = [e for e in lomo.inspect()["events"] if e["type"] == "memory_forgotten"]
    assert len(events) == 1 and events[0]["memories"] == [brand]


@pytest.mark.slow
def test_memory_on_postgres_remembers_and_forgets(pg_lomo: LomoEnv) -> None:
    blue, before = brand_case(pg_lomo)
    assert settled(before[:2]) == [(1, "superseded", BRAND[0], ["origin"]),
                                   (2, "active", BRAND[0] + " " + BRAND[1], ["origin", "refine"])]
    result = ok(pg_lomo, "memory", "forget", blue, "--yes", "--json")
    assert result["rebuilt"] == [before[0]["id"]]
    active = ok(pg_lomo, "memory", "list", "--json")
    assert sorted(r["text"] for r in active) == sorted(BRAND[1:])
