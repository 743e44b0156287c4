"""Scenario drills (DESIGN M2; seed 000 §8, §11.2–11.3): a scripted creator drives Lomo through its public surface
only — `lomo --run-once`, `lomo send`, `lomo approve`, `lomo inspect --json`, `lomo task show --json`,
`lomo stats --json`, `lomo memory list --json`, `lomo context --json` — and saves files the way real editors do
(vim's write-a-temp-then-rename, an in-place truncate-and-write). Each drill gets a fresh workspace, database and
XDG folders, the offline model `lomo/local` and the embedded studio (LOMO_TIME_SCALE keeps its latency small).

Per drill it prints the collaboration measures of seed §11.2:
  nudges          times the creator had to say "continue" before the task reached the script's next stop
  needless        confirmations the script did not call for (cards beyond the expected ones) + the ledger's own count
  dup_gens        the same generation ordered twice in a task (same kind, prompt and inputs; a retry after a failure
                  does not count)
  routing         messages sent to the main thread that reached another target than the script meant (rate)
  stale           creator saves that an agent write replaced without them (an overwrite of a newer edit)
  dup_artifacts   copies: more result files than the script asked for, or two files with the same bytes
  leaks           forgotten facts found again (memory list, the state document, the prompt a step would send)
and the J5 metrics of `lomo stats --json`. Goals: 0 nudges, 0 duplicate generations, 0 stale overwrites, 0 leaks,
routing errors ≤ 2 %. Findings (what the drill saw that the script did not expect) are listed under each drill.

    python bench/drills.py                         # every drill, a table
    python bench/drills.py --only poster,flow --json
    python bench/drills.py --seed 7 --keep         # another editor save pattern / ordinal choice; keep the folders

A benchmark: it prints figures and exits 0 (2 on bad usage); a drill that breaks is reported as such.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
DAY_S = 86_400
CONTINUE = "continue"
MAX_NUDGES = 3
FORGOTTEN = ("warm colour", "warm color")  # the fact the memory drill forgets


# ---- the sandbox: one fresh installation, driven through the CLI -------------------------------------------------
class Sandbox:
    """A workspace, a SQLite database and XDG folders of its own; every call is a `lomo` subprocess."""

    def __init__(self, root: Path, time_scale: float) -> None:
        self.root, self.ws = root, root / "ws"
        self.ws.mkdir(parents=True)
        self.db = f"sqlite+aiosqlite:///{root / 'lomo.db'}"
        self.env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                        LOMO_TIME_SCALE=str(time_scale), LOMO_WATCHDOG_SECONDS="1",
                        XDG_CONFIG_HOME=str(root / "cfg"), XDG_DATA_HOME=str(root / "data"),
                        XDG_STATE_HOME=str(root / "state"), XDG_CACHE_HOME=str(root / "cache"))
        for key in ("LOMO_FAULTS", "LOMO_MODEL", "LOMO_DB_URL", "LOMO_WORKSPACE", "LOMO_CLOCK_OFFSET_S",
                    "LOMO_STUDIO_FAULTS", "LOMO_REPLAY_FILE"):
            self.env.pop(key, None)
        self.clock_offset = 0.0
        self.commands = 0

    def advance(self, seconds: float) -> None:
        """Move the installation's clock (every later process reads LOMO_CLOCK_OFFSET_S)."""
        self.clock_offset += seconds

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "lomo_tui", "--workspace", str(self.ws), "--db", self.db,
                "--model", "lomo/local", *args]

    def environ(self, faults: str | None = None) -> dict[str, str]:
        env = dict(self.env, LOMO_CLOCK_OFFSET_S=str(self.clock_offset))
        if faults:
            env["LOMO_FAULTS"] = faults
        return env

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        self.commands += 1
        return subprocess.run(self.argv(*args), env=self.environ(), capture_output=True, text=True, timeout=timeout)

    def popen(self, *args: str, faults: str | None = None) -> subprocess.Popen[str]:
        self.commands += 1
        return subprocess.Popen(self.argv(*args), env=self.environ(faults), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def json(self, *args: str) -> Any:
        done = self.run(*args)
        if done.returncode != 0:
            raise RuntimeError(f"lomo {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
        return json.loads(done.stdout)

    def inspect(self) -> dict[str, Any]:
        return self.json("inspect", "--json")


def parse(out: str) -> dict[str, Any]:
    try:
        value = json.loads(out)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.05) -> Any:
    """Poll PREDICATE until truthy or TIMEOUT passes (returns the last value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def process_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


# ---- editors' save patterns ---------------------------------------------------------------------------------------
def save_rename(path: Path, text: str) -> None:
    """vim, `sed -i`, JetBrains: write a temp file beside it, fsync, rename over the original."""
    tmp = path.with_name(f".{path.name}.swp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def save_in_place(path: Path, text: str) -> None:
    """nano, VS Code: truncate the file and write it again in place."""
    with open(path, "r+" if path.exists() else "w", encoding="utf-8") as fh:
        fh.seek(0)
        fh.truncate()
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


SAVES = {"rename": save_rename, "in-place": save_in_place}


# ---- one drill's record -------------------------------------------------------------------------------------------
@dataclass
class Drill:
    name: str
    box: Sandbox
    rng: random.Random
    nudges: int = 0
    expected_gates: int = 0
    routes: list[dict[str, Any]] = field(default_factory=list)
    creator_saves: list[dict[str, Any]] = field(default_factory=list)
    expected_artifacts: dict[str, int] = field(default_factory=dict)  # task label -> result files expected
    labels: dict[str, str] = field(default_factory=dict)  # label -> task id
    known: set[str] = field(default_factory=lambda: {"main"})  # task ids seen so far
    findings: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    leaks: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    # -- the creator's acts --
    def say(self, text: str, expect: str, label: str | None = None, task: str | None = None) -> dict[str, Any]:
        """Send TEXT (to the main thread, or straight to TASK's inbox) and run until quiet. EXPECT: where the script
        means it to go — "main", "new" (a new task, remembered as LABEL) or the label of a task made earlier."""
        args = ["--run-once", text, "--json"] + (["--task", self.labels[task]] if task else [])
        before = set(self.known)
        report = self.timed(f"say {text!r}", lambda: self.box.run(*args))
        self.learn(report, label if expect == "new" else None)
        main = next((t for t in report.get("tasks", []) if t["id"] == "main"), {})
        if main.get("replies"):
            self.steps[-1]["main_reply"] = main["replies"][-1][:120]
        if not task:
            self.routes.append({"text": text, "expect": expect, "label": label, "before": before})
        return report

    def learn(self, report: dict[str, Any], label: str | None) -> None:
        """Tasks a run-once report shows for the first time; the first new one gets LABEL (the final routing check
        compares it with where the router's copy of the message went)."""
        fresh = [t["id"] for t in report.get("tasks", []) if t["id"] not in self.known and t["id"] != "main"]
        self.known.update(t["id"] for t in report.get("tasks", []))
        if label and fresh and label not in self.labels:
            self.labels[label] = fresh[0]

    def approve(self, gate_id: str, option: int = 1) -> None:
        done = self.box.run("approve", gate_id, "--option", str(option))
        if done.returncode != 0:
            self.findings.append(f"approve {gate_id} exited {done.returncode}: {done.stderr.strip()}")
        self.timed(f"approve {gate_id[-6:]} #{option}", lambda: self.box.run("--run-once", "--json"))

    def timed(self, what: str, act: Callable[[], subprocess.CompletedProcess[str]]) -> dict[str, Any]:
        start = time.perf_counter()
        done = act()
        took = time.perf_counter() - start
        self.steps.append({"step": what, "seconds": round(took, 2), "rc": done.returncode})
        if done.returncode != 0:
            self.findings.append(f"{what}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
            return {}
        try:
            return json.loads(done.stdout)
        except json.JSONDecodeError:
            return {}

    def edit(self, rel: str, text: str, marker: str, survives: bool = True) -> str:
        """Save REL as the creator, with a save pattern picked by the seed; MARKER is what must survive."""
        how = self.rng.choice(sorted(SAVES))
        SAVES[how](self.box.ws / rel, text)
        self.creator_saves.append({"path": rel, "marker": marker, "survives": survives, "how": how})
        return how

    def pay(self, label: str) -> dict[str, Any]:
        """Settle LABEL, approving the spend cards its paid calls open (a 3D object costs more than the free
        allowance per call: those cards are expected), then settle it again."""
        shown = self.settle(label, stop_at="idle")
        for _ in range(3):
            spend = [g for g in shown["gates"] if g.get("status") == "pending" and g.get("kind") == "spend"]
            if not spend:
                break
            for gate in spend:
                self.expected_gates += 1
                self.approve(gate["id"], 1)
            shown = self.settle(label, stop_at="idle")
        return self.settle(label)

    # -- what the state says --
    def task(self, label: str) -> dict[str, Any]:
        return self.box.json("task", "show", self.labels[label], "--json")

    def pending_gates(self, label: str | None = None) -> list[dict[str, Any]]:
        gates = [g for g in self.box.inspect()["gates"] if g["status"] == "pending"]
        return [g for g in gates if label is None or g["task_id"] == self.labels.get(label)]

    def settle(self, label: str, stop_at: str = "done") -> dict[str, Any]:
        """The script's next stop for LABEL: "done", or "gate" (a card waits). A task that sits idle with work left
        and nothing to wait for needed a nudge: the creator says "continue" (counted), at most MAX_NUDGES times."""
        for _ in range(MAX_NUDGES + 1):
            shown = self.task(label)
            waits = [g for g in shown["gates"] if g.get("status") == "pending"]
            running = [j for j in shown["jobs"] if j["status"] in ("submitting", "queued", "running")]
            if shown["status"] in ("done", "failed", "stopped") or waits or running:
                break
            if stop_at == "idle":
                break
            self.nudges += 1
            self.findings.append(f"{label}: status {shown['status']!r} with "
                                 f"{sum(c['status'] != 'done' for c in shown['checklist'])} open step(s) and nothing "
                                 f"to wait for — the creator said {CONTINUE!r}")
            self.say(CONTINUE, expect=label, task=label)
        if stop_at == "done" and shown["status"] != "done":
            self.findings.append(f"{label}: ended {shown['status']!r} ({shown.get('status_reason', '')}), not done")
        if stop_at == "gate" and not [g for g in shown["gates"] if g.get("status") == "pending"]:
            self.findings.append(f"{label}: expected a card to wait on; status {shown['status']!r}")
        return shown


# ---- the measures -------------------------------------------------------------------------------------------------
def routing_errors(drill: Drill, state: dict[str, Any]) -> tuple[int, int, list[str]]:
    """Each creator message to main, against the target the script meant (the router's copy shows where it went)."""
    inbox = state["inbox"]
    tasks = {t["id"]: t for t in state["tasks"]}
    errors, wrong = 0, []
    used: set[str] = set()
    for route in drill.routes:
        sent = next((m for m in inbox if m["task_id"] == "main" and m["text"] == route["text"]
                     and m.get("source") == "creator" and m["id"] not in used), None)
        if sent is None:
            errors += 1
            wrong.append(f"{route['text']!r}: not found in the inbox")
            continue
        used.add(sent["id"])
        copy = next((m for m in inbox if m["text"] == route["text"] and m.get("source") == "router"
                     and m["id"] not in used and m["sent_at"] >= sent["sent_at"]), None)
        if copy:
            used.add(copy["id"])
        target = copy["task_id"] if copy else "main"
        if route["expect"] == "new":
            ok = target != "main" and target not in route["before"]
            if ok and route["label"] and route["label"] not in drill.labels:
                drill.labels[route["label"]] = target
        elif route["expect"] == "main":
            ok = target == "main"
        else:
            ok = target == drill.labels.get(route["expect"])
        if not ok:
            errors += 1
            where = tasks.get(target, {}).get("title", target)
            wrong.append(f"{route['text']!r} → {where!r} (meant: {route['expect']})")
    return errors, len(drill.routes), wrong


def duplicate_generations(shown: dict[str, dict[str, Any]], deleted: frozenset[str] = frozenset(),
                          keys: dict[str, str] | None = None) -> int:
    """Generations ordered twice (same kind, prompt and inputs). A result the creator deleted (DELETED: paths of
    `object_deleted` events) may be made again: that is a repair, not a duplicate. A production-graph job is
    named by its idempotency key (KEYS, from `inspect --json`): node + a hash of its inputs' content and
    parameters, so a key frame remade because the character sheet changed is new work, and one made twice
    from the same inputs is a duplicate."""
    keys = keys or {}
    dups = 0
    for task in shown.values():
        seen: set[tuple[Any, ...]] = set()
        for job in task["jobs"]:
            if job["status"] in ("failed", "expired", "cancelled") or job.get("artifact_path") in deleted:
                continue
            key: tuple[Any, ...] = (job["kind"], job.get("prompt"), json.dumps(job.get("inputs"), sort_keys=True))
            if keys.get(job.get("id", ""), "").startswith("prod/"):
                key = ("production", keys[job["id"]].rsplit("/", 2)[-2], keys[job["id"]].rsplit("/", 1)[-1])
            dups += key in seen
            seen.add(key)
    return dups


def duplicate_artifacts(drill: Drill, shown: dict[str, dict[str, Any]]) -> tuple[int, list[str]]:
    notes, extra = [], 0
    for label, want in drill.expected_artifacts.items():
        have = len(shown[label]["artifacts"]) if label in shown else 0
        if have > want:
            extra += have - want
            notes.append(f"{label}: {have} result files, the script asked for {want}")
    by_hash: dict[str, list[str]] = {}
    for path in sorted(drill.box.ws.rglob("*")):
        if path.is_file() and ".lomo" not in path.parts:
            by_hash.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), []).append(
                str(path.relative_to(drill.box.ws)))
    for paths in by_hash.values():
        if len(paths) > 1:
            extra += len(paths) - 1
            notes.append(f"identical files: {', '.join(paths)}")
    return extra, notes


def stale_overwrites(drill: Drill) -> tuple[int, list[str]]:
    count, notes = 0, []
    for save in drill.creator_saves:
        path = drill.box.ws / save["path"]
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if save["survives"] and save["marker"] not in text:
            count += 1
            notes.append(f"{save['path']}: the creator's {save['marker']!r} ({save['how']} save) is gone")
    return count, notes


def measure(drill: Drill) -> dict[str, Any]:
    state = drill.box.inspect()
    stats = drill.box.json("stats", "--json")
    routing, routed, wrong = routing_errors(drill, state)
    shown = {label: drill.task(label) for label in drill.labels}
    gates = [g for g in state["gates"]]
    dup_art, art_notes = duplicate_artifacts(drill, shown)
    stale, stale_notes = stale_overwrites(drill)
    drill.findings += wrong + art_notes + stale_notes
    unexpected = max(0, len(gates) - drill.expected_gates)
    if unexpected:
        drill.findings.append(f"{len(gates)} cards opened, the script expected {drill.expected_gates}: "
                              + "; ".join(f"{g['kind']}: {g['question'][:70]}" for g in gates))
    conflicts = sum(e["type"] in ("write_conflict", "flow_conflict") for e in state["events"])
    return {
        "nudges": drill.nudges,
        "needless_confirmations": unexpected + int(stats.get("needless_confirmations") or 0),
        "duplicate_generations": duplicate_generations(shown, frozenset(
            e.get("path") for e in state["events"] if e["type"] == "object_deleted"),
            {j["id"]: j.get("idempotency_key") or "" for j in state["jobs"]}),
        "routing_errors": routing, "routed_messages": routed,
        "routing_error_rate": round(routing / routed, 4) if routed else 0.0,
        "stale_overwrites": stale, "conflicts_caught": conflicts,
        "duplicate_artifacts": dup_art,
        "leaks": drill.leaks,
        "tasks": {label: {"id": s["id"], "status": s["status"], "artifacts": len(s["artifacts"]),
                          "jobs": len(s["jobs"])} for label, s in shown.items()},
        "j5": {k: v for k, v in stats.items() if k not in ("counts", "scope")},
        "counts": stats.get("counts", {}),
    }


# ---- the drills ---------------------------------------------------------------------------------------------------
ORDINALS = {1: "first", 2: "second", 3: "third"}


def drill_poster(d: Drill) -> None:
    """A poster series with a revision of one poster, then the creator's review."""
    d.say("a retro poster series for a jazz night, three posters", expect="new", label="posters")
    d.expected_artifacts["posters"] = 3
    d.expected_gates += 1  # the review card
    d.settle("posters", stop_at="gate")
    n = d.rng.choice([1, 2, 3])
    d.extra["revised"] = ORDINALS[n]
    d.say(f"make the {ORDINALS[n]} poster warmer", expect="posters")
    shown = d.settle("posters", stop_at="gate")
    target = next((p for p in shown["artifacts"] if f"poster-{n}-" in p), None)
    versions = {o["path"]: o["version"] for o in d.box.inspect()["objects"]}
    if target is None or versions.get(target, 1) < 2:
        d.findings.append(f"the {ORDINALS[n]} poster was not revised in place (versions: {versions})")
    for gate in d.pending_gates("posters"):
        d.approve(gate["id"], 1)
    d.settle("posters")


def drill_film(d: Drill) -> None:
    """A short film (the production graph) with a change sent while its shots are being made."""
    d.say("make a 15-second short film of a fox in a snowy forest, three shots", expect="new", label="film")
    d.expected_gates += 1  # the plan and its budget
    # the production graph's results: storyboard, graph, character sheet, scene reference, sound, three key
    # frames, three clips and the cut; a change makes new versions of these, never new files
    d.expected_artifacts["film"] = 12
    d.settle("film", stop_at="gate")
    plan = d.pending_gates("film")
    if not plan:
        return
    done = d.box.run("approve", plan[0]["id"], "--option", "1")
    if done.returncode != 0:
        d.findings.append(f"approve the plan: {done.stderr.strip()}")
    # the change comes mid-way: while a run-once makes the shots, after the first job is ordered
    proc = d.box.popen("--run-once", "--json")
    started = wait_until(lambda: [j for j in d.box.inspect()["jobs"] if j["task_id"] == d.labels["film"]], 60, 0.1)
    d.extra["film_when_changed"] = {"status": d.task("film")["status"],
                                    "jobs": [(j["kind"], j["status"]) for j in started or []]}
    change = "actually make the fox red instead of white"
    sent = d.box.run("send", change, "--json")
    d.routes.append({"text": change, "expect": "film", "label": None, "before": set()})
    if sent.returncode != 0:
        d.findings.append(f"send the change: {sent.stderr.strip()}")
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        d.findings.append(f"run-once during the change exited {proc.returncode}: {err.strip()[-200:]}")
    d.learn(parse(out), None)
    d.timed("run-once after the change", lambda: d.box.run("--run-once", "--json"))
    shown = d.settle("film", stop_at="idle")
    for gate in d.pending_gates("film"):
        d.expected_gates += 1
        d.approve(gate["id"], 1)
    shown = d.settle("film")
    jobs = shown["jobs"]
    clips = [j for j in jobs if j["kind"] == "video" and j["status"] == "done"]
    after = [j for j in jobs if "red" in (j.get("prompt") or "").lower()]
    films = [p for p in shown["artifacts"] if p.endswith((".mp4", ".webp", ".gif"))]
    d.extra.update(first_jobs_when_sent=len(started or []), video_clips=len(clips), artifacts=shown["artifacts"],
                   jobs_with_the_change=len(after), checklist=[c["title"] for c in shown["checklist"]])
    seconds = [clip_seconds(d.box.ws / p) for p in films]
    d.extra["clip_seconds"] = seconds
    if len(clips) < 3:
        d.findings.append(f"three shots asked: {len(clips)} video clip(s) made, no per-shot clips "
                          f"(checklist: {', '.join(c['title'] for c in shown['checklist'])})")
    if not after:
        d.findings.append(f"the mid-way change {change!r} reached no generation (no job prompt mentions 'red')")


def clip_seconds(path: Path) -> float | None:
    """A video's duration, read back with PyAV."""
    try:
        import av

        with av.open(str(path)) as box:
            stream = box.streams.video[0]
            if stream.duration and stream.time_base:
                return round(float(stream.duration * stream.time_base), 2)
            return round(float(box.duration) / 1e6, 2) if box.duration else None
    except Exception:  # noqa: BLE001 — a figure, not a check
        return None


FLOW = {"lomo_flow": 1,
        "nodes": [{"id": "prompt", "type": "text", "params": {"text": "a jazz night poster"}},
                  {"id": "style", "type": "style", "params": {"style": "flat"}},
                  {"id": "render", "type": "image", "params": {"size": "768x768"}}],
        "edges": [{"from": "prompt.out", "to": "render.prompt"}, {"from": "style.out", "to": "render.style"}]}


def drill_flow(d: Drill) -> None:
    """The creator edits one node of a flow while the agent, having read the flow, edits another node of it."""
    path = d.box.ws / "poster.flow.json"
    path.write_text(json.dumps(FLOW, indent=1) + "\n", encoding="utf-8")
    d.box.run("--run-once", "--json")  # the workspace sees the creator's flow (version 1)
    message = "edit node 2 of poster.flow.json: make it watercolour"
    d.routes.append({"text": message, "expect": "new", "label": "flow", "before": {"main"}})
    # Freeze the run right after its read_flow is recorded (the 3rd tool of the stream: the router's create_task,
    # the plan, the read), save the creator's edit, then let it go on.
    proc = d.box.popen("--run-once", message, "--json", faults="after_tool_done:stop@3")
    frozen = wait_until(lambda: process_state(proc.pid) == "T" or proc.poll() is not None, 60, 0.02)
    calls = [c["name"] for c in d.box.inspect()["tool_calls"] if c["status"] == "done"]
    interleaved = bool(frozen) and proc.poll() is None and calls[-1:] == ["read_flow"]
    d.extra["interleaved"] = interleaved
    if not interleaved:
        d.findings.append(f"could not freeze the agent between its read and its edit (done calls: {calls})")
    edited = json.loads(json.dumps(FLOW))
    edited["nodes"][0]["params"]["text"] = "a jazz night poster, Blue Note 1958"
    how = d.edit("poster.flow.json", json.dumps(edited, indent=1) + "\n", marker="Blue Note 1958")
    d.extra["creator_save"] = how
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=300)
    if proc.returncode != 0:
        d.findings.append(f"the frozen run-once exited {proc.returncode}: {err.strip()[-200:]}")
    d.learn(parse(out), "flow")
    shown = d.settle("flow") if "flow" in d.labels else {}
    final = json.loads(path.read_text(encoding="utf-8"))
    style = next((n["params"] for n in final.get("nodes", []) if n["id"] == "style"), {})
    d.extra.update(final_style=style, task_status=shown.get("status"))
    if "watercol" not in json.dumps(style):
        d.findings.append(f"the agent's edit of node 2 is not in the flow (style node: {style})")


def drill_repair(d: Drill) -> None:
    """A poster the creator deletes before the review is made again by itself; then the creator changes the goal
    (`lomo task goal`) and the plan is rebuilt for it — neither needs a "continue"."""
    d.say("a poster series for a spring farmers market, two posters", expect="new", label="market")
    d.expected_gates += 2  # the review, then the rebuilt plan's review
    d.expected_artifacts["market"] = 5  # two posters (one of them made again), then three for the new goal
    shown = d.settle("market", stop_at="gate")
    posters = sorted(p for p in shown["artifacts"] if p.endswith(".png"))
    if not posters:
        d.findings.append(f"no posters to delete: {shown['artifacts']}")
        return
    (d.box.ws / posters[0]).unlink()  # the creator deletes the first poster, then approves the review
    for gate in d.pending_gates("market"):
        d.approve(gate["id"], 1)
    shown = d.settle("market")
    remade = [j for j in shown["jobs"] if j["status"] == "done"]
    d.extra["after_delete"] = {"status": shown["status"], "jobs": len(remade),
                               "reopened": [c["title"] for c in shown["checklist"] if c.get("why")]}
    if len(remade) != 3:
        d.findings.append(f"deleting one of two posters led to {len(remade)} jobs, not 3 (one poster made again)")
    done = d.box.run("task", "goal", d.labels["market"], "three posters for a summer farmers market",
                     "--why", "the market moved to June")
    if done.returncode != 0:
        d.findings.append(f"lomo task goal exited {done.returncode}: {done.stderr.strip()[-200:]}")
    d.timed("run-once after the goal change", lambda: d.box.run("--run-once", "--json"))
    shown = d.settle("market", stop_at="gate")
    d.extra["rebuilt"] = [c["title"] for c in shown["checklist"]]
    if not any("summer" in (j.get("prompt") or "") for j in shown["jobs"]):
        d.findings.append(f"the new goal reached no generation (checklist: {d.extra['rebuilt']})")
    for gate in d.pending_gates("market"):
        d.approve(gate["id"], 1)
    shown = d.settle("market")
    d.extra["final"] = {"status": shown["status"], "posters": len([p for p in shown["artifacts"]
                                                                  if p.endswith(".png")])}


def drill_3d(d: Drill) -> None:
    """A 3D object, then a change to it."""
    d.say("a 3D model of a ceramic teapot", expect="new", label="teapot")
    d.expected_artifacts["teapot"] = 1
    shown = d.pay("teapot")
    models = [p for p in shown["artifacts"] if p.endswith((".gltf", ".glb"))]
    if not models:
        d.findings.append(f"no glTF result: {shown['artifacts']}")
    else:
        d.extra["model"] = models[0]
        d.extra["gltf_ok"] = gltf_ok(d.box.ws / models[0])
    d.say("make the teapot taller", expect="teapot")
    shown = d.pay("teapot")
    d.extra["after_change"] = {"status": shown["status"], "artifacts": shown["artifacts"],
                               "jobs": [(j["kind"], j["status"]) for j in shown["jobs"]]}
    if len([j for j in shown["jobs"] if j["kind"] == "3d" and j["status"] == "done"]) < 2:
        d.findings.append(f"'make the teapot taller' made no new 3D version (jobs: {d.extra['after_change']['jobs']}; "
                          f"status {shown['status']!r}: {shown.get('status_reason', '')})")


def gltf_ok(path: Path) -> bool:
    try:
        if path.suffix == ".glb":
            return path.read_bytes()[:4] == b"glTF"
        return json.loads(path.read_text(encoding="utf-8")).get("asset", {}).get("version") == "2.0"
    except (OSError, ValueError):
        return False


def drill_switch(d: Drill) -> None:
    """Three tasks in one stream, the creator's follow-ups hopping between them."""
    d.say("a retro poster series for a jazz night, three posters", expect="new", label="jazz")
    d.say("a poster series for a spring farmers market, two posters", expect="new", label="market")
    d.say("a 3D model of a lighthouse", expect="new", label="lighthouse")
    d.expected_artifacts.update(jazz=3, market=2, lighthouse=1)
    d.expected_gates += 2  # the two series' reviews
    follow_ups = [("make the second jazz poster bluer", "jazz"),
                  ("the first farmers market poster needs more green", "market"),
                  ("make the lighthouse taller", "lighthouse"),
                  ("make the third jazz night poster darker", "jazz"),
                  ("make the second farmers market poster brighter", "market")]
    d.rng.shuffle(follow_ups)
    for text, label in follow_ups:
        d.say(text, expect=label)
    for label in ("jazz", "market"):
        d.settle(label, stop_at="gate")
        for gate in d.pending_gates(label):
            d.approve(gate["id"], 1)
        d.settle(label)
    d.pay("lighthouse")


def drill_resume(d: Drill) -> None:
    """A task left at its review for days, resumed by a follow-up (the clock moved ahead 3 days)."""
    d.say("a poster series for a spring farmers market, two posters", expect="new", label="market")
    d.expected_artifacts["market"] = 2
    d.expected_gates += 1
    d.settle("market", stop_at="gate")
    d.box.advance(3 * DAY_S)
    d.say("back to the farmers market posters: make the first one brighter", expect="market")
    shown = d.settle("market", stop_at="gate")
    events = d.box.inspect()["events"]
    from datetime import datetime

    last = max(datetime.fromisoformat(e["at"]).timestamp() for e in events)
    d.extra["clock_moved_days"] = round((last - time.time()) / DAY_S, 2)
    if d.extra["clock_moved_days"] < 2.9:
        d.findings.append(f"the runtime's events are not 3 days ahead (newest is {d.extra['clock_moved_days']} days)")
    d.extra["open_gates_after_days"] = [g["status"] for g in shown["gates"]]
    for gate in d.pending_gates("market"):
        d.approve(gate["id"], 1)
    d.settle("market")


def drill_memory(d: Drill) -> None:
    """A preference, its correction, then forgetting it; the forgotten fact must come back nowhere."""
    d.say("I always prefer muted colours", expect="main")
    first = d.box.json("memory", "list", "--json")
    d.say("actually I prefer warm colours", expect="main")
    second = d.box.json("memory", "list", "--all", "--json")
    d.extra["after_statement"] = [m["text"] for m in first]
    d.extra["after_correction"] = [(m["version"], m["status"], m["text"]) for m in second]
    active = [m for m in second if m["status"] == "active"]
    if any("muted" in m["text"].lower() for m in active):
        d.findings.append(f"the correction left the corrected preference active: {[m['text'] for m in active]}")
    d.say("forget that I like warm colours", expect="main")
    d.expected_gates += 1  # the irreversible forget card
    forget = [g for g in d.pending_gates() if g["kind"] == "irreversible"]
    if not forget:
        d.findings.append("no forget card opened")
    else:
        d.extra["forget_card"] = forget[0]["question"]
        d.approve(forget[0]["id"], 1)
    for step in d.steps:
        if step.get("main_reply", "").rstrip().endswith("?"):
            d.findings.append(f"{step['step']}: Main answered with a question and no card to answer it: "
                              f"{step['main_reply']!r}")
    d.say("a poster for a book fair", expect="new", label="book")
    d.settle("book")
    d.leaks = memory_leaks(d)


def memory_leaks(d: Drill) -> int:
    """Places the forgotten fact may not appear: memories (active and every version), the state document's
    memories, every job prompt, and what each task's next step would send — except the creator's own messages,
    which the conversation keeps (forgetting concerns memory use)."""
    def has(text: Any) -> bool:
        low = json.dumps(text, ensure_ascii=False).lower() if not isinstance(text, str) else text.lower()
        return any(f in low for f in FORGOTTEN)
    leaks: list[str] = []
    for m in d.box.json("memory", "list", "--all", "--json"):
        if has(m["text"]):
            leaks.append(f"memory list: {m['id']} v{m['version']} {m['status']}: {m['text']!r}")
    state = d.box.inspect()
    leaks += [f"inspect memories: {m['text']!r}" for m in state["memories"] if has(m["text"])]
    for task in state["tasks"]:
        ctx = d.box.json("context", *( [] if task["id"] == "main" else [task["id"]]), "--json")
        for message in ctx["messages"]:
            if message["role"] != "user" and has(message["content"]):
                leaks.append(f"context of {task['id']} ({message['role']}): …{snippet(message['content'])}…")
        for job in d.box.json("task", "show", task["id"], "--json").get("jobs", []) if task["kind"] != "main" else []:
            if has(job.get("prompt") or ""):
                leaks.append(f"job prompt of {task['id']}: {job['prompt']!r}")
    d.findings += leaks
    return len(leaks)


def snippet(text: str) -> str:
    low = text.lower()
    at = min((low.find(f) for f in FORGOTTEN if f in low), default=0)
    return text[max(0, at - 40): at + 40].replace("\n", " ")


DRILLS: dict[str, Callable[[Drill], None]] = {
    "poster": drill_poster, "film": drill_film, "flow": drill_flow, "3d": drill_3d,
    "switch": drill_switch, "resume": drill_resume, "memory": drill_memory, "repair": drill_repair,
}


def run_drill(name: str, seed: int, time_scale: float, keep: bool) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"lomo-drill-{name}-"))
    drill = Drill(name, Sandbox(root, time_scale), random.Random(f"{seed}:{name}"))
    start = time.perf_counter()
    error = None
    try:
        DRILLS[name](drill)
        result = measure(drill)
    except Exception as exc:  # noqa: BLE001 — a drill reports, it does not fail
        error = f"{type(exc).__name__}: {exc}"
        result = {}
    result.update(drill=name, seed=seed, seconds=round(time.perf_counter() - start, 1), error=error,
                  commands=drill.box.commands, findings=drill.findings, steps=drill.steps, details=drill.extra)
    if keep:
        result["folder"] = str(root)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return result


def goals_met(r: dict[str, Any]) -> bool:
    return (not r.get("error") and r.get("nudges") == 0 and r.get("duplicate_generations") == 0
            and r.get("stale_overwrites") == 0 and r.get("leaks") == 0 and r.get("routing_error_rate", 1) <= 0.02)


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def print_table(results: list[dict[str, Any]], seed: int) -> None:
    header = ["drill", "nudges", "needless", "dup gens", "routing", "stale", "dup files", "leaks", "verified",
              "tok/verified", "dup work", "interrupt/ms", "calls/finished", "s", "goals"]
    rows = []
    for r in results:
        j5 = r.get("j5", {})
        rows.append([r["drill"], fmt(r.get("nudges")), fmt(r.get("needless_confirmations")),
                     fmt(r.get("duplicate_generations")),
                     f"{r.get('routing_errors', '—')}/{r.get('routed_messages', '—')}", fmt(r.get("stale_overwrites")),
                     fmt(r.get("duplicate_artifacts")), fmt(r.get("leaks")),
                     fmt(j5.get("verified_transition_ratio")), fmt(j5.get("tokens_per_verified_transition")),
                     fmt(j5.get("duplicate_work_rate")), fmt(j5.get("interruptions_per_milestone")),
                     fmt(j5.get("model_calls_per_finished_task")), fmt(r["seconds"]),
                     "met" if goals_met(r) else "MISSED"])
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, table

    print(f"Scenario drills · seed {seed} · lomo/local + embedded studio · {machine()}")
    print(table(rows, header))
    routed = sum(r.get("routed_messages", 0) for r in results)
    wrong = sum(r.get("routing_errors", 0) for r in results)
    print(f"routing: {wrong} of {routed} messages to the wrong target ({(wrong / routed * 100) if routed else 0:.1f} %;"
          " goal ≤ 2 %)")
    for r in results:
        print(f"\n{r['drill']}:" + (f" ERROR {r['error']}" if r.get("error") else ""))
        for finding in r["findings"]:
            print(f"  - {finding}")
        if r.get("details"):
            print(f"  details: {json.dumps(r['details'], ensure_ascii=False, default=str)[:600]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(DRILLS), help=f"comma-separated: {','.join(DRILLS)}")
    parser.add_argument("--seed", type=int, default=1, help="editor save patterns, ordinals, follow-up order")
    parser.add_argument("--time-scale", type=float, default=0.02, help="LOMO_TIME_SCALE for the embedded studio")
    parser.add_argument("--keep", action="store_true", help="keep each drill's folder (printed)")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in DRILLS]
    if unknown or not names:
        parser.error(f"unknown drill {', '.join(unknown) or '(none)'}; choose from {', '.join(DRILLS)}")
    if args.time_scale < 0:
        parser.error("--time-scale must be 0 or more")
    start = time.perf_counter()
    results = [run_drill(n, args.seed, args.time_scale, args.keep) for n in names]
    if args.json:
        print(json.dumps({"seed": args.seed, "time_scale": args.time_scale,
                          "seconds": round(time.perf_counter() - start, 1), "drills": results},
                         indent=2, ensure_ascii=False, default=str))
    else:
        print_table(results, args.seed)
        print(f"\n{len(results)} drill(s) in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
