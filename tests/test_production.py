"""The production graph (DESIGN I1): a film planned as storyboard + graph, run node by node through the ledger,
changes that redo exactly what they touch, and restarts that never make or charge a node twice."""
from __future__ import annotations

import json
import random
import re
import signal
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import av
import pytest
from PIL import Image, ImageStat
from sqlalchemy import select

from conftest import LomoEnv, async_wait_for, wait_for
from lomo_tui import metrics
from lomo_tui.production.graph import GraphError, as_graph, film_flow, parse_storyboard
from lomo_tui.production.report import graph_states
from lomo_tui.production.state import evaluate
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.studio.video import CLIP_FPS
from lomo_tui.workspace.flows import Edge, Flow, Node, dump_flow, merge_node_edits, parse_flow

FILM = "films/a-fox-in-a-snowy-forest"
GRAPH = f"{FILM}.flow.json"
BOARD = """# Storyboard: a fox

## Shot 1
- Duration: 1 s
- Frame: Wide shot of a fox in a snowy forest
- Action: The camera pushes in
- Sound: Wind

## Shot 2
- Duration: 1.5 s
- Frame: Medium shot of the fox
- Action: The fox sniffs the snow
- Sound: Soft steps

## Shot 3
- Duration: 1 s
- Frame: Wide closing shot
- Action: The fox runs into the trees
- Sound: Music fades
"""


def _config(lomo: LomoEnv) -> None:
    for where in (lomo.root / "cfg", lomo.root / "cfg" / "lomo"):  # a loaded machine never expires a shot
        where.mkdir(parents=True, exist_ok=True)
        (where / "config.toml").write_text("[studio]\ndeadline_seconds = 300\n")


def _probe(path: Path) -> dict[str, Any]:
    with av.open(str(path)) as container:
        v = container.streams.video[0]
        return {"codec": v.codec_context.name, "seconds": float(v.duration * v.time_base),
                "frames": sum(1 for _ in container.decode(video=0)),
                "audio": [a.codec_context.name for a in container.streams.audio]}


def _records(**rows: Any) -> dict[str, Any]:
    return {k: SimpleNamespace(**v) for k, v in rows.items()}


# ---- the graph, its keys and its staleness (no runtime) -----------------------------------------------------------
def _graph(tmp_path: Path) -> Any:
    (tmp_path / "film").mkdir()
    (tmp_path / "film" / "storyboard.md").write_text(BOARD)
    flow = film_flow(brief="a fox", subject="a fox", storyboard="film/storyboard.md", shots=3,
                     folder="film")
    return as_graph(parse_flow(dump_flow(flow)))


def _all_done(tmp_path: Path, graph: Any) -> dict[str, Any]:
    """Records as if every node had been made once, from the files as they are now."""
    records: dict[str, Any] = {}
    for _ in graph.order:  # a node's key is known once its inputs are done
        states = evaluate(graph, records, tmp_path, "film.flow.json")
        for st in states.values():
            if st.key and st.state != "done":
                out = tmp_path / str(graph.node(st.id).params.get("output"))
                out.write_bytes(f"{st.id} made from {st.key}".encode())
                records[st.id] = SimpleNamespace(key=st.key, status="done", artifact=str(out.relative_to(tmp_path)),
                                                 runs=1, job_id=None, error=None, approved=None)
    return records


def test_a_shots_text_edit_makes_exactly_that_shot_and_the_cut_stale(tmp_path: Path) -> None:
    graph = _graph(tmp_path)
    records = _all_done(tmp_path, graph)
    states = evaluate(graph, records, tmp_path, "film.flow.json")
    assert {st.state for st in states.values()} == {"done"}
    board = tmp_path / "film" / "storyboard.md"
    board.write_text(BOARD.replace("The fox sniffs the snow", "The fox leaps over a frozen stream"))
    stale = {i for i, st in evaluate(graph, records, tmp_path, "film.flow.json").items() if st.state != "done"}
    assert stale == {"shot2_frame", "shot2", "cut"}  # shot 1 and 3 read only their own sections
    board.write_text(BOARD.replace("- Duration: 1.5 s", "- Duration: 2 s"))
    stale = {i for i, st in evaluate(graph, records, tmp_path, "film.flow.json").items() if st.state != "done"}
    assert stale == {"shot2", "sound", "cut"}  # a longer shot: its clip, the sound under the film, the cut
    board.write_text(BOARD.replace("- Sound: Soft steps", "- Sound: Crunching snow"))
    stale = {i for i, st in evaluate(graph, records, tmp_path, "film.flow.json").items() if st.state != "done"}
    assert stale == set()  # the sound node is prompted by its own params: a shot's sound note changes no picture


def test_a_character_sheet_edit_makes_its_key_frames_clips_and_cut_stale_and_nothing_else(tmp_path: Path) -> None:
    graph = _graph(tmp_path)
    records = _all_done(tmp_path, graph)
    (tmp_path / "film" / "character.png").write_bytes(b"the creator's own drawing")
    states = evaluate(graph, records, tmp_path, "film.flow.json")
    stale = {i for i, st in states.items() if st.state != "done"}
    assert stale == {"shot1_frame", "shot2_frame", "shot3_frame", "shot1", "shot2", "shot3", "cut"}
    assert {i for i, st in states.items() if st.state == "stale"} == stale
    assert states["character"].state == "done"  # the creator's edit is the character sheet now, not redone
    assert all(states[i].state == "done" for i in ("scene", "sound", "brief", "storyboard"))
    assert graph.dependents("character") == {"shot1_frame", "shot2_frame", "shot3_frame", "shot1", "shot2", "shot3",
                                             "cut"}


def test_a_creator_edit_of_a_node_the_agent_changes_is_refused_per_node_and_other_edits_apply(tmp_path: Path) -> None:
    graph = _graph(tmp_path)
    base = graph.flow
    creator = Flow(tuple(n.with_params({"direction": "at dusk"}) if n.id == "shot2_frame" else n for n in base.nodes),
                   base.edges, base.extra)
    refused = merge_node_edits(base, creator, {"shot2_frame": {"direction": "at dawn"}, "shot3": {"take": 2}})
    assert refused.conflicts == ("shot2_frame",) and refused.flow is None
    applied = merge_node_edits(base, creator, {"shot3": {"take": 2}})
    assert applied.ok and "shot2_frame changed" in applied.describe()
    records = _all_done(tmp_path, graph)
    after = evaluate(as_graph(applied.flow), records, tmp_path, "film.flow.json")
    assert {i for i, st in after.items() if st.state != "done"} == {"shot2_frame", "shot2", "shot3", "cut"}


def test_a_hand_written_flow_is_checked_in_one_sentence() -> None:
    with pytest.raises(GraphError, match="node type generate_image is not a production step"):
        as_graph(Flow((Node("a", "generate_image"),)))
    with pytest.raises(GraphError, match="cycle"):
        as_graph(Flow((Node("a", "key_frame"), Node("b", "shot_clip")),
                      (Edge("a.image", "b.key_frame"), Edge("b.clip", "a.reference"))))
    shots = parse_storyboard("## 镜头 1\n- 时长：2 秒\n- 画面：雪林里的狐狸\n- 动作：镜头推进\n- 声音：风声\n")
    assert shots[1].seconds == 2 and "雪林里的狐狸" in shots[1].prompt() and "风声" not in shots[1].prompt()


# ---- the runtime: lomo/local plans it, the embedded studio makes it -----------------------------------------------
async def _approve_all(rt: Runtime) -> list[Any]:
    async with rt.db.read() as conn:
        gates = (await conn.execute(select(s.gates).where(s.gates.c.status == "pending"))).all()
    for gate in gates:
        await rt.resolve_gate(gate.id, approve=True)
    return gates


async def _rows(rt: Runtime, table: Any) -> list[Any]:
    async with rt.db.read() as conn:
        return (await conn.execute(select(table))).all()


async def _runs(rt: Runtime) -> dict[str, int]:
    return {r.node_id: r.runs for r in await _rows(rt, s.production_nodes)}


async def _say(rt: Runtime, task: str, text: str) -> list[Any]:
    """Deliver TEXT, let the task run to its card, approve it, run to the end; the cards it asked."""
    await rt.send(text, task)
    assert await rt.run_until_quiescent(120)
    cards = await _approve_all(rt)
    assert await rt.run_until_quiescent(240)
    assert not rt.errors, rt.errors
    return cards


def _magenta(path: Path) -> float:
    """How magenta the lower right card of a key frame is (where the character sheet is laid in)."""
    with Image.open(path) as image:
        w, h = image.size
        side = min(w, h) * 3 // 10
        r, g, b = ImageStat.Stat(image.convert("RGB").crop((w - side - 20, h - side - 30, w - 10, h - 10))).mean
    return (r + b) / 2 - g


@pytest.mark.slow
async def test_a_three_shot_film_is_planned_made_and_changed_only_where_it_changed(lomo: LomoEnv) -> None:
    _config(lomo)
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    try:
        task = await rt.ledger.create_task("Fox film")
        [card] = await _say(rt, task, "make a 3-second short film of a fox in a snowy forest, three shots")
        assert card.kind == "spend" and "9 generations" in card.question and "character sheet" in card.question
        film = lomo.workspace / FILM / "film.mp4"
        probe = _probe(film)
        shots = parse_storyboard((lomo.workspace / FILM / "storyboard.md").read_text())
        seconds = sum(shot.seconds for shot in shots.values())
        assert len(shots) == 3 and seconds == 3
        assert probe["codec"] == "h264" and probe["audio"] == ["aac"]
        assert probe["frames"] == seconds * CLIP_FPS and probe["seconds"] == pytest.approx(seconds, abs=0.01)
        jobs = await _rows(rt, s.jobs)
        assert Counter(j.kind for j in jobs) == {"image": 5, "video": 3, "audio": 1}  # one job per paid node
        assert len({j.idempotency_key for j in jobs}) == len(jobs) == len(await _rows(rt, s.charges)) == 9
        assert set((await _runs(rt)).values()) == {1}
        [state] = await graph_states(rt.db, task)
        assert state["path"] == GRAPH and {n["state"] for n in state["nodes"]} == {"done"}
        assert any(n["type"] == "storyboard" for n in state["nodes"])
        async with rt.db.read() as conn:  # the graph's approved card bought its nodes: not a needless one
            assert (await metrics.compute(conn, task_id=task))["needless_confirmations"] == 0

        # the creator repaints the character sheet: its key frames, clips and the cut are made again, nothing else
        before = _magenta(lomo.workspace / FILM / "shot1.png")
        Image.new("RGB", (768, 768), (255, 0, 255)).save(lomo.workspace / FILM / "character.png")
        [state] = await graph_states(rt.db, task)
        stale = {n["id"] for n in state["nodes"] if n["state"] != "done"}
        assert stale == {"shot1_frame", "shot2_frame", "shot3_frame", "shot1", "shot2", "shot3", "cut"}
        [card] = await _say(rt, task, "I changed the character sheet, update the film")
        assert "6 generations" in card.question and "redo stale results" in card.question
        runs = await _runs(rt)
        assert {k for k, v in runs.items() if v == 2} == {"shot1_frame", "shot2_frame", "shot3_frame", "shot1",
                                                          "shot2", "shot3", "cut"}
        assert runs["character"] == runs["scene"] == runs["sound"] == 1
        assert len(await _rows(rt, s.jobs)) == 15 and len(await _rows(rt, s.charges)) == 15
        assert _magenta(lomo.workspace / FILM / "shot1.png") > before + 15  # the key frame shows the new sheet
        async with rt.db.read() as conn:  # remade from a new sheet: new work, not duplicate work
            assert (await metrics.compute(conn, task_id=task))["duplicate_work_rate"] == 0

        # "change shot 2 to …" edits that node: its key frame and clip are made again (and the cut)
        await _say(rt, task, "change shot 2 to the fox leaps over a frozen stream")
        flow = parse_flow((lomo.workspace / GRAPH).read_text())
        assert flow.node("shot2_frame").params["direction"] == "the fox leaps over a frozen stream"
        assert len(await _rows(rt, s.jobs)) == 17
        # "regenerate shot 2 only" makes one node again
        await _say(rt, task, "regenerate shot 2 only")
        runs = await _runs(rt)
        assert len(await _rows(rt, s.jobs)) == 18 and runs["shot2"] == 4 and runs["shot1"] == 2
        assert runs["cut"] == 4 and _probe(film)["frames"] == seconds * CLIP_FPS
    finally:
        await rt.close()
    proc = lomo.run("task", "show", task, "--json")
    assert proc.returncode == 0, proc.stderr
    [graph] = json.loads(proc.stdout)["production"]
    assert {n["id"]: n["state"] for n in graph["nodes"]}["cut"] == "done"


async def test_the_graphs_plan_card_speaks_the_tasks_language(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    try:
        task = await rt.ledger.create_task("狐狸短片")
        async with rt.db.write() as conn:
            await conn.execute(s.tasks.update().where(s.tasks.c.id == task).values(language="zh"))
        await rt.send("做一个雪林里狐狸的15秒短片，分三个镜头", task)
        assert await rt.run_until_quiescent(120)
        [card] = [g for g in await _rows(rt, s.gates) if g.status == "pending"]
    finally:
        await rt.close()
    assert card.kind == "spend" and "项生成" in card.question and "制作图" in card.question
    words = " ".join([card.question, card.continues or "", (card.scope or {}).get("description", "")]
                     + [o["label"] + " " + o.get("consequence", "") for o in card.options])
    english = {w for w in re.findall(r"[A-Za-z]{3,}", words) if w not in ("credits", "films", "flow", "json")}
    assert not english, english


# ---- crashes -------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_sigkill_during_a_graph_run_then_restart_makes_each_node_once_and_charges_it_once(lomo: LomoEnv) -> None:
    _config(lomo)
    (lomo.workspace / "film").mkdir()
    (lomo.workspace / "film" / "storyboard.md").write_text(BOARD)
    flow = film_flow(brief="a fox", subject="a fox", storyboard="film/storyboard.md", shots=3,
                     folder="film")
    (lomo.workspace / "film.flow.json").write_text(dump_flow(flow))  # a hand-written flow runs the same way
    run = {"name": "run_production", "arguments": {"path": "film.flow.json"}}
    lomo.replay({"content": None, "tool_calls": [run]}, {"content": "done", "tool_calls": []})
    task = lomo.new_task("Fox film")
    assert lomo.run("--run-once", "make the film", "--task", task).returncode == 0
    [gate] = [g for g in lomo.inspect()["gates"] if g["status"] == "pending"]
    assert lomo.run("approve", gate["id"]).returncode == 0
    rng = random.Random(15)  # kill points drawn at random (seeded: a failure replays)
    faults = [f"after_node_ordered:crash@{rng.randint(1, 4)}", f"after_tool_started:crash@{rng.randint(1, 3)}",
              "after_node_made:crash@1", f"after_gen_submit:crash@{rng.randint(1, 3)}"]
    killed = 0
    for fault in faults:
        proc = lomo.popen("--run-once", faults=fault)
        _, err = proc.communicate(timeout=180)
        assert proc.returncode in (0, -signal.SIGKILL), err
        killed += proc.returncode == -signal.SIGKILL
    assert killed >= 3, "the drill must really kill the runs"
    proc = lomo.popen("--run-once")  # and a kill from outside while a job is in flight
    wait_for(lambda: proc.poll() is not None or any(j["status"] in ("queued", "running")
                                                    for j in lomo.inspect()["jobs"]), 120, what="a job in flight")
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    final = lomo.run("--run-once")
    assert final.returncode == 0, final.stderr
    state = lomo.inspect()
    jobs = state["jobs"]
    assert len(jobs) == 9 and len({j["idempotency_key"] for j in jobs}) == 9, jobs
    assert all(j["status"] == "done" for j in jobs), jobs
    assert len(state["charges"]) == 9 and all(c["status"] == "charged" for c in state["charges"])
    doc = json.loads(lomo.run("task", "show", task, "--json").stdout)
    [graph] = doc["production"]
    assert {n["state"] for n in graph["nodes"]} == {"done"}
    assert {n["id"]: n["runs"] for n in graph["nodes"]}["cut"] == 1
    [film] = [o for o in state["objects"] if o["path"] == "film/film.mp4"]
    assert film["version"] == 1  # the cut was written once
    assert _probe(lomo.workspace / "film" / "film.mp4")["frames"] == 3.5 * CLIP_FPS


# ---- the task view's graph list ------------------------------------------------------------------------------------
async def test_the_graph_list_shows_each_node_and_its_keys_edit_the_flow_as_the_creator(tmp_path: Path) -> None:
    from textual.app import App, ComposeResult

    from lomo_tui.tui.widgets.graph import GraphList

    graph = _graph(tmp_path)
    (tmp_path / "film.flow.json").write_text(dump_flow(graph.flow))
    nodes = [{"id": i, "type": graph.node(i).type, "state": "stale" if i.startswith("shot2") else "done",
              "key": "ab" * 8, "result": None, "runs": 1} for i in graph.order]

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield GraphList(tmp_path, id="graph")

    app = One()
    async with app.run_test() as pilot:
        widget = app.query_one(GraphList)
        widget.show([{"path": "film.flow.json", "nodes": nodes}])
        assert widget.option_count == len(graph.order)
        assert "stale" in str(widget.get_option_at_index(graph.order.index("shot2")).prompt)
        widget.focus()
        widget.highlighted = graph.order.index("shot2")
        await pilot.press("r")
        await pilot.press("s")
        await pilot.pause()
    node = parse_flow((tmp_path / "film.flow.json").read_text()).node("shot2")
    assert node.params["take"] == 2 and node.params["skip"] is True
    records = _all_done(tmp_path, graph)
    states = evaluate(as_graph(parse_flow((tmp_path / "film.flow.json").read_text())), records, tmp_path,
                      "film.flow.json")
    assert states["shot2"].state == "skipped" and states["cut"].state == "stale"


async def test_a_hand_written_flow_with_a_review_waits_for_the_creator_and_then_cuts(lomo: LomoEnv) -> None:
    _config(lomo)
    flow = Flow(
        nodes=(Node("hero", "character_sheet", {"prompt": "a red fox, full figure", "size": "square",
                                                  "output": "hand/hero.png"}),
               Node("look", "review", {"question": "Is the fox right?"}),
               Node("frame", "key_frame", {"prompt": "the fox in deep snow", "output": "hand/frame.png"}),
               Node("clip", "shot_clip", {"seconds": 1, "prompt": "the fox trots", "output": "hand/clip.mp4"}),
               Node("cut", "assembly", {"output": "hand/cut.mp4"})),
        edges=(Edge("hero.image", "look.sheet"), Edge("look.ok", "frame.hold"), Edge("hero.image", "frame.character"),
               Edge("frame.image", "clip.key_frame"), Edge("clip.clip", "cut.clip1")))
    (lomo.workspace / "hand.flow.json").write_text(dump_flow(flow))
    run = {"name": "run_production", "arguments": {"path": "hand.flow.json"}}
    lomo.replay({"content": None, "tool_calls": [run]}, {"content": "done", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Hand-made graph")
        await rt.send("run my graph", task)
        assert await rt.run_until_quiescent(120)
        [card] = await _approve_all(rt)
        assert card.kind == "spend" and "3 generations" in card.question
        assert await rt.run_until_quiescent(120)
        [review] = await _approve_all(rt)  # the checkpoint: nothing after it is made before the creator says so
        assert review.question == "Is the fox right?"
        assert [j.kind for j in await _rows(rt, s.jobs)] == ["image"]
        assert await rt.run_until_quiescent(120)
        assert not rt.errors, rt.errors
        assert Counter(j.kind for j in await _rows(rt, s.jobs)) == {"image": 2, "video": 1}
        assert _probe(lomo.workspace / "hand" / "cut.mp4")["frames"] == CLIP_FPS
        [state] = await graph_states(rt.db, task)
        assert {n["id"]: n["state"] for n in state["nodes"]} == dict.fromkeys(("hero", "look", "frame", "clip",
                                                                                "cut"), "done")
    finally:
        await rt.close()


async def test_the_tree_marks_a_stale_result_and_an_old_database_reads_as_no_graph(lomo: LomoEnv) -> None:
    from lomo_tui import views
    from lomo_tui.production.engine import _upsert
    from lomo_tui.production.report import stale_results
    from lomo_tui.store.engine import Database

    graph = _graph(lomo.workspace)
    (lomo.workspace / "film.flow.json").write_text(dump_flow(graph.flow))
    records = _all_done(lomo.workspace, graph)
    rt = Runtime(lomo.settings(), watch=False)
    await rt.open()
    try:
        ws = str(lomo.workspace)
        async with rt.db.write() as conn:
            for node_id, r in records.items():
                await _upsert(conn, ws, "film.flow.json", node_id, graph.node(node_id).type, key=r.key, status="done",
                              artifact=r.artifact, runs=1, task_id="main")
        assert await stale_results(rt.db, lomo.workspace) == set()
        (lomo.workspace / "film" / "character.png").write_bytes(b"the creator's own drawing")
        stale = await stale_results(rt.db, lomo.workspace)
        assert stale == {f"film/shot{n}.{ext}" for n in (1, 2, 3) for ext in ("png", "mp4")} | {"film/film.mp4"}
        await rt.workspace.index()
        marks = await views.load_marks(rt.db, lomo.workspace)
        assert marks["film/shot2.png"].stale and not marks["film/scene.png"].stale
    finally:
        await rt.close()
    old = Database(f"sqlite+aiosqlite:///{lomo.root / 'old.db'}")
    try:
        assert await stale_results(old) == set() and await graph_states(old, "task-x") == []
    finally:
        await old.close()
