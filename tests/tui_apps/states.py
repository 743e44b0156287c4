"""App states shared by the snapshot tests and `screenshots/make.py`.

Every state is seeded through the real runtime API (ledger, governance, workspace) in a temporary
folder, with fixed task ids, inside the app's own event loop; workers are not started, so nothing
moves while the frame is taken. Times are frozen on screen (every clock reads 09:41).
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from lomo_tui.config import Settings
from lomo_tui.tui.app import LomoApp
from lomo_tui.tui.fmt import frozen_clock

OWNER = "seed-host:1:seed"
CALL = dict(purpose="worker", model="lomo/local", prompt_tokens=120, completion_tokens=40, cached_tokens=0,
            cost=None, latency_ms=5.0)

STORYBOARD_V1 = "# Storyboard\n\n## Shot 1\nThe band walks in.\n\n## Shot 2\nClose-up on the sax.\n"
STORYBOARD_V2 = "# Storyboard\n\n## Shot 1\nThe band walks in.\n\n## Shot 2\nWide shot: the whole club, lights low.\n"


def settings_for(tmp: Path, **file: Any) -> Settings:
    config: dict[str, Any] = {"budget": {"daily_free_cap": 5.0, "currency": "credits"}}
    config.update(file)
    return Settings(workspace=tmp / "ws", db_url=f"sqlite+aiosqlite:///{tmp / 'lomo.db'}", model="lomo/local",
                    time_scale=0.01, file=config)


def make_png(path: Path, hue: int = 0) -> None:
    """A small deterministic picture (a cat-ish face on a gradient)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (96, 72))
    draw = ImageDraw.Draw(img)
    for y in range(72):
        draw.line([(0, y), (95, y)], fill=(40 + y * 2, 30 + hue, 90 + y))
    draw.ellipse((28, 18, 68, 58), fill=(235, 170, 80))
    draw.polygon([(30, 26), (36, 6), (46, 22)], fill=(235, 170, 80))
    draw.polygon([(50, 22), (60, 6), (66, 26)], fill=(235, 170, 80))
    draw.ellipse((38, 32, 44, 38), fill=(20, 20, 20))
    draw.ellipse((52, 32, 58, 38), fill=(20, 20, 20))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="PNG")


async def say(rt: Any, task_id: str, text: str, reply: str | None, *, cost: float | None = None,
              finish: str = "idle", purpose: str = "worker") -> None:
    """A whole creator → agent exchange through the ledger: deliver, claim, commit the reply."""
    message_id, turn_id = await rt.ledger.deliver(task_id, text)
    claim = await rt.ledger.claim(turn_id, OWNER)
    await rt.ledger.commit_decision(claim, 1, {"content": reply, "tool_calls": []}, [message_id],
                                    dict(CALL, cost=cost, purpose=purpose), finish=finish)
    await asyncio.sleep(0.002)  # distinct timestamps keep the order stable


async def agent_file(rt: Any, task_id: str, rel: str, key: str) -> None:
    """Record a binary file the agent made (as the studio does) as the task's output."""
    from lomo_tui.workspace.files import content_hash

    ws = rt.workspace
    path = ws.root / rel
    async with rt.db.write() as conn:
        seen = await ws.record(conn, rel, content_hash(path), path.stat().st_size, author="agent", task_id=task_id,
                               key=key)
        touch = getattr(ws, "touch", None) or ws._touch  # noqa: SLF001
        await touch(conn, task_id, seen, wrote=True)


async def studio_order(rt: Any, claim: Any, step: int, kind: str, prompt: str, amount: float, *, status: str,
                       progress: float) -> str:
    """The job and charge rows `Studio.submit` writes for an order, frozen at STATUS/PROGRESS (workers are off,
    so no provider moves it on)."""
    from lomo_tui.base.ids import call_key
    from lomo_tui.store import schema as s

    key = call_key(claim.turn_id, step, 0)
    job_id = f"job-{claim.task_id[5:]}"
    t = time.time()
    async with rt.ledger.fenced(claim) as conn:
        await conn.execute(s.jobs.insert().values(
            id=job_id, workspace=str(rt.settings.workspace), idempotency_key=key, task_id=claim.task_id,
            turn_id=claim.turn_id, step=step, kind=kind, provider="embedded", provider_job_id=f"p-{job_id}",
            status=status, progress=progress, prompt=prompt, params={}, cost=amount, deadline=t + 600, created_at=t,
            updated_at=t))
        await conn.execute(s.charges.insert().values(id=f"chg-{job_id}", job_id=job_id, task_id=claim.task_id,
                                                     amount=amount, idempotency_key=key, status="charged",
                                                     created_at=t))
    return job_id


async def seed_empty(rt: Any) -> None:
    await rt.ledger.main_task_id()


async def seed_busy(rt: Any) -> None:
    """Main conversation with inline cards in every state, two gates, a file changed by the creator."""
    from lomo_tui.governance.gates import open_gate

    L, ws = rt.ledger, rt.workspace
    main = await L.main_task_id()
    (ws.root / "storyboard.md").write_text(STORYBOARD_V1, encoding="utf-8")
    (ws.root / "notes.txt").write_text("Venue: Blue Door, Friday 9pm\n", encoding="utf-8")
    await ws.observe("storyboard.md")
    await ws.observe("notes.txt")

    # 1. A persistent task that read the storyboard, wrote a brief, and is running again.
    await say(rt, main, "Make a poster series for the jazz night", "Started a persistent task: Poster series.",
              purpose="router")
    await L.create_task("Poster series", task_id="task-poster", brief="Six posters for the Blue Door jazz night. "
                        "Art deco, **gold on navy**, one per band.")
    message_id, turn_id = await L.deliver("task-poster", "Six posters, art deco, gold on navy")
    claim = await L.claim(turn_id, OWNER)
    calls = [{"name": "read_file", "arguments": {"path": "storyboard.md"}},
             {"name": "write_file", "arguments": {"path": "posters/brief.md", "content": "...", "base_version": None}}]
    await L.commit_decision(claim, 1, {"content": None, "tool_calls": calls}, [message_id],
                            dict(CALL, cost=0.008, cache_write_tokens=100))  # the stable prefix, written once
    await L.start_call(claim, 1, 0, "read_file", calls[0]["arguments"], "read")
    read = await ws.read("storyboard.md", "task-poster")
    await L.finish_call(claim, 1, 0, "done", {"path": "storyboard.md", "version": read["version"]}, ran=True,
                        last_in_step=False, name="read_file", tool_message="{}")
    await L.start_call(claim, 1, 1, "write_file", calls[1]["arguments"], "write")
    wrote = await ws.write("posters/brief.md", "# Poster brief\n\nGold on navy, art deco.\n", None, "task-poster",
                           f"{turn_id}/1/1")
    await L.finish_call(claim, 1, 1, "done", wrote, ran=True, last_in_step=True, name="write_file",
                        tool_message="{}")
    await L.commit_decision(claim, 2, {"content": "Brief drafted in posters/brief.md. Shall I start the first "
                                                  "poster?", "tool_calls": []}, [], dict(CALL, cost=0.004, cached_tokens=100),
                            finish="idle")
    from lomo_tui.tasks import checklist

    async with rt.db.write() as conn:
        steps = await checklist.revise(conn, "task-poster", [
            {"title": "Write the brief"}, {"title": "Poster 1: the quartet"}, {"title": "Poster 2: the trio"},
            {"title": "Posters 3–6", "needs_confirmation": True}])
        await checklist.complete(conn, steps[0].id, evidence="posters/brief.md v1")
    message_id, turn_id = await L.deliver("task-poster", "Yes, start with the quartet")
    await L.claim(turn_id, OWNER)  # running now

    # 2. A one-shot picture, done.
    await say(rt, main, "A quick cat picture for the flyer corner", "Making it as a one-off.", purpose="router")
    await L.create_task("Cat picture", kind="lightweight", task_id="task-cat")
    make_png(ws.root / "cat.png")
    await agent_file(rt, "task-cat", "cat.png", "seed-cat")
    message_id, turn_id = await L.deliver("task-cat", "A cat picture")
    claim = await L.claim(turn_id, OWNER)
    await L.commit_decision(claim, 1, {"content": None, "tool_calls": [
        {"name": "generate_image", "arguments": {"prompt": "a cat"}}]}, [message_id], dict(CALL))
    await studio_order(rt, claim, 1, "image", "a cat", 0.04, status="done", progress=1.0)
    await L.commit_decision(claim, 2, {"content": "Here is your cat: cat.png.", "tool_calls": []}, [], dict(CALL),
                            finish="done")

    # 3. Waiting for the creator: the task asked which palette.
    await L.create_task("Jazz night flyer", task_id="task-flyer")
    message_id, turn_id = await L.deliver("task-flyer", "A flyer to match the posters")
    claim = await L.claim(turn_id, OWNER)
    ask = {"name": "ask_user", "arguments": {"question": "Which palette for the flyer?"}}
    await L.commit_decision(claim, 1, {"content": None, "tool_calls": [ask]}, [message_id], dict(CALL))
    await L.start_call(claim, 1, 0, "ask_user", ask["arguments"], "gate")
    async with L.fenced(claim) as conn:
        gate = await open_gate(conn, task_id="task-flyer", kind="question", question="Which palette for the flyer?",
                               options=[{"label": "Gold on navy", "consequence": "matches the posters"},
                                        {"label": "Red and cream", "consequence": "stands out on the wall"}],
                               dedupe_key="seed-flyer", turn_id=turn_id, scope={"turn": turn_id},
                               continues="the posters go on")
    await L.suspend(claim, "gate", gate.id, "waiting_gate")

    # 4. Waiting for a generation job (a trailer clip renders).
    await L.create_task("Trailer cut", task_id="task-trailer")
    message_id, turn_id = await L.deliver("task-trailer", "A 15 second trailer")
    claim = await L.claim(turn_id, OWNER)
    await L.commit_decision(claim, 1, {"content": "Rendering the clip.", "tool_calls": [
        {"name": "generate_video", "arguments": {"prompt": "jazz club, 15 s"}}]}, [message_id], dict(CALL))
    job_id = await studio_order(rt, claim, 1, "video", "jazz club, 15 s", 0.60, status="running", progress=0.45)
    await L.suspend(claim, "job", job_id, "waiting_job")

    # 5. A spending gate on an album cover (plan approval before paid generation).
    await L.create_task("Album cover", task_id="task-album")
    async with rt.db.write() as conn:
        await open_gate(conn, task_id="task-album", kind="spend", question="Generate 4 covers at 0.40 credits each?",
                        options=[{"label": "Approve 1.60 credits", "consequence": "4 images, charged once"},
                                 {"label": "Just one (0.40)", "consequence": "1 image"}],
                        dedupe_key="seed-album", scope={"description": "image generation for this task"},
                        continues="drafting the copy")

    # 6. Paused, with a message it has not read (it can be withdrawn or replaced).
    await L.create_task("Storyboard v2", task_id="task-story")
    await L.control("task-story", "pause")
    await L.deliver("task-story", "Make shot 3 longer")

    # 7. Failed.
    await L.create_task("Voice-over", task_id="task-voice")
    message_id, turn_id = await L.deliver("task-voice", "Record the intro voice-over")
    claim = await L.claim(turn_id, OWNER)
    await L.fail_turn(claim, "model error: the provider refused the key (401); check config.toml, then resume")

    # The creator edits the storyboard in their editor: a new version and a notice for the poster task.
    (ws.root / "storyboard.md").write_text(STORYBOARD_V2, encoding="utf-8")
    await ws.observe("storyboard.md")
    await say(rt, main, "How are the posters going?", "The poster series is running; two gates wait for you.",
              purpose="router")


async def seed_history(rt: Any, count: int = 10_000) -> None:
    """COUNT messages on the main thread (bulk-inserted: what matters is what the views do with them)."""
    from lomo_tui.store import schema as s

    main = await rt.ledger.main_task_id()
    t0 = time.time() - count
    rows = [dict(task_id=main, role="user" if n % 2 == 0 else "assistant", content=f"Message {n}: "
                 + ("make the sax louder" if n % 2 == 0 else "Done — the **sax** is louder now."),
                 created_at=t0 + n) for n in range(count)]
    async with rt.db.write() as conn:
        for start in range(0, count, 2000):
            await conn.execute(s.messages.insert(), rows[start:start + 2000])


async def seed_memory(rt: Any) -> None:
    """What a creator told Lomo over a few days: a refined preference, a rule, a fact they confirmed in the view,
    a project constraint, and a style Lomo inferred from repeated requests (all through `Runtime.send`)."""
    from lomo_tui.memory.actions import confirm_memory
    from lomo_tui.memory.listing import memory_rows

    await rt.ledger.main_task_id()
    await rt.ledger.create_task("Poster series", task_id="task-poster")
    for words in ("make a cat in watercolour style", "make a city in watercolour style",
                  "make a robot in watercolour style"):
        await rt.send(words, None)
        await asyncio.sleep(0.002)
    for words, task_id in (("For this project always use A3 portrait.", "task-poster"),
                           ("Our brand colour is teal.", None), ("Never put text over faces.", "task-poster"),
                           ("I usually like muted, low-saturation colours.", None),
                           ("Also with a soft cream accent.", None)):
        await rt.send(words, task_id)
        await asyncio.sleep(0.002)  # distinct timestamps keep the order stable
    async with rt.db.read() as conn:
        brand = next(r["id"] for r in await memory_rows(conn) if "teal" in r["text"])
    await confirm_memory(rt.db, brand)


async def seed_stats(rt: Any) -> None:
    """Two weeks of work: model calls per day on three tasks (most read from the prompt cache), completed shots
    of which the creator approved some (verified), a spend gate the creator rejected (an unsafe action stopped)."""
    from sqlalchemy import insert, select, update

    from lomo_tui.governance.gates import open_gate
    from lomo_tui.runtime.reactions import resolve_gate
    from lomo_tui.store import schema as s
    from lomo_tui.tasks import checklist

    main = await rt.ledger.main_task_id()
    for task_id, title in (("task-poster", "Poster series"), ("task-trailer", "Trailer cut"),
                           ("task-cat", "Cat picture")):
        await rt.ledger.create_task(title, task_id=task_id)
    now = time.time()
    # (days ago, model calls on the posters, on the trailer, a shot completed, approved by the creator)
    pattern = [(13, 2, 0, 0, 0), (11, 4, 1, 1, 1), (10, 1, 0, 0, 0), (8, 6, 2, 1, 1), (7, 3, 1, 1, 0),
               (5, 2, 0, 0, 0), (3, 5, 2, 1, 1), (2, 1, 1, 1, 1), (1, 4, 0, 1, 0), (0, 3, 1, 1, 1)]
    calls = [dict(task_id=task_id, model="lomo/local", prompt_tokens=900, completion_tokens=120,
                  cached_tokens=0 if n == 0 else 760, cache_write_tokens=760 if n == 0 else 0,
                  created_at=now - days_ago * 86400 - n)
             for days_ago, posters, trailer, _, _ in pattern
             for task_id, count in (("task-poster", posters), ("task-trailer", trailer)) for n in range(count)]
    calls += [dict(task_id=task_id, model="lomo/local", prompt_tokens=300, completion_tokens=40, cached_tokens=0,
                   cache_write_tokens=0, created_at=now - 60)
              for task_id in (main, "task-cat", "task-cat")]
    approvals = []
    async with rt.db.write() as conn:
        await conn.execute(insert(s.model_calls), calls)
        shots = [p for p in pattern if p[3]]
        steps = await checklist.revise(conn, "task-trailer", [{"title": f"Shot {n + 1}"} for n in range(len(shots))])
        for step, (days_ago, _, _, _, approved) in zip(steps, shots):
            await checklist.complete(conn, step.id, evidence="claimed")
            if approved:  # the creator approved the shot: a verified transition
                gate = await open_gate(conn, task_id="task-trailer", kind="question", question=f"{step.title} ok?",
                                       options=["Yes"], dedupe_key=f"seed-{step.id}", scope={"checklist_item": step.id})
                approvals.append((gate.id, True))
        gate = await open_gate(conn, task_id="task-poster", kind="spend", question="Generate 6 posters at 0.40?",
                               options=["Approve 2.40 credits"], dedupe_key="seed-spend", scope={})
        approvals.append((gate.id, False))
    for gate_id, approve in approvals:
        await resolve_gate(rt.db, gate_id, approve=approve, by="creator:seed")
    async with rt.db.write() as conn:  # when each shot was done (its checklist row and its transition's events)
        events = (await conn.execute(select(s.events.c.id, s.events.c.data).where(
            s.events.c.task_id == "task-trailer", s.events.c.type.like("transition_%")))).all()
        for step, (days_ago, *_) in zip(steps, shots):
            await conn.execute(update(s.checklist).where(s.checklist.c.id == step.id).values(
                done_at=now - days_ago * 86400))
            for event in events:
                if (event.data or {}).get("item") == step.id:
                    await conn.execute(update(s.events).where(s.events.c.id == event.id).values(
                        at=now - days_ago * 86400))


FILM_BOARD = """# Storyboard: a fox in a snowy forest

## Shot 1
- Duration: 1 s
- Frame: Wide shot of a fox in a snowy forest at dawn
- Action: The camera pushes in through the pines
- Sound: Wind in the branches

## Shot 2
- Duration: 1.5 s
- Frame: Medium shot of the fox
- Action: The fox sniffs the snow
- Sound: Soft steps

## Shot 3
- Duration: 1 s
- Frame: Wide shot, the fox trots away
- Action: The camera holds
- Sound: Wind
"""


async def seed_film(rt: Any) -> None:
    """A three-shot film whose graph was made once; then the creator rewrote Shot 2 (its nodes and the cut stale)."""
    from sqlalchemy import insert
    from types import SimpleNamespace

    from lomo_tui.production.graph import as_graph, film_flow
    from lomo_tui.production.state import evaluate
    from lomo_tui.store import schema as s
    from lomo_tui.workspace.flows import dump_flow, parse_flow

    root = Path(rt.settings.workspace)
    await rt.ledger.create_task("Fox film", task_id="task-film",
                                brief="a 15-second short film of a fox in a snowy forest, three shots")
    (root / "films").mkdir(parents=True, exist_ok=True)
    (root / "films" / "storyboard.md").write_text(FILM_BOARD, encoding="utf-8")
    flow = film_flow(brief="a fox in a snowy forest", subject="a fox", storyboard="films/storyboard.md", shots=3,
                     folder="films")
    (root / "films" / "fox.flow.json").write_text(dump_flow(flow), encoding="utf-8")
    graph, records = as_graph(parse_flow(dump_flow(flow))), {}
    for _ in graph.order:  # each node made once, in order (a node's key is known once its inputs are made)
        for st in evaluate(graph, records, root, "films/fox.flow.json").values():
            if st.key and st.state != "done":
                out = root / str(graph.node(st.id).params.get("output"))
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(f"{st.id} made from {st.key}".encode())
                records[st.id] = SimpleNamespace(key=st.key, status="done", artifact=str(out.relative_to(root)),
                                                 runs=1, job_id=None, error=None, approved=None)
    async with rt.db.write() as conn:
        await conn.execute(insert(s.production_nodes), [
            dict(workspace=str(root), graph="films/fox.flow.json", node_id=node_id, task_id="task-film",
                 type=graph.node(node_id).type, key=r.key, status="done", artifact=r.artifact, runs=1,
                 updated_at=1_700_000_000.0) for node_id, r in records.items()])
    (root / "films" / "storyboard.md").write_text(  # the creator's edit of Shot 2
        FILM_BOARD.replace("The fox sniffs the snow", "The fox leaps over a frozen stream"), encoding="utf-8")


STATES: dict[str, Callable[[Any], Awaitable[None]]] = {"empty": seed_empty, "busy": seed_busy,
                                                       "history": seed_history, "memory": seed_memory,
                                                       "stats": seed_stats, "film": seed_film}


def make_app(tmp: Path, state: str = "busy", *, theme: str | None = None, **file: Any) -> LomoApp:
    """A Lomo app on a fresh database in TMP, seeded with STATE, frozen for snapshots."""
    tmp.mkdir(parents=True, exist_ok=True)
    app = LomoApp(settings_for(tmp, **file), start_workers=False, seed=STATES[state], clock=frozen_clock(),
                  images="halfcell", config_dir=tmp / "config", theme=theme)
    app.path_home = tmp  # the header reads "~/ws" whatever the temporary folder is called
    return app


async def until_ready(pilot: Any, timeout: float = 10.0) -> None:
    """Wait until the app has booted, drawn its state, and every tree folder and thumbnail has loaded."""
    from lomo_tui.tui.widgets.tree import WorkspaceTree

    app = pilot.app
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.02)
        if not app.booted:
            continue
        busy = [w for w in app.workers if w.is_running and w.group not in ("live", "_loader")]
        trees = list(app.screen.query(WorkspaceTree))
        if not busy and all(t.root.data is not None and t.root.data.loaded and t._load_queue.empty() for t in trees):
            from textual.widgets import Input, TextArea

            for field in [*app.screen.query(Input), *app.screen.query(TextArea)]:
                field.cursor_blink = False  # a blinking cursor would make frames differ
            await pilot.pause(0.05)
            await pilot.wait_for_scheduled_animations()
            return
    busy = [(w.name, w.group, w.state) for w in app.workers if w.is_running]
    raise AssertionError(f"the app did not settle in time (booted={app.booted}, error={app.boot_error}, "
                         f"running workers={busy})")


# ---- scenes: the frames the snapshot tests compare and screenshots/make.py draws -----------------------
Steps = Callable[[Any], Awaitable[None]]


@dataclass(frozen=True)
class Scene:
    name: str
    state: str
    size: tuple[int, int] = (120, 36)
    theme: str | None = None
    keys: tuple[str, ...] = ()
    task: str | None = None  # open this task's view

    def app(self, tmp: Path) -> LomoApp:
        return make_app(tmp, self.state, theme=self.theme)

    async def before(self, pilot: Any) -> None:
        await until_ready(pilot)
        if self.task:
            await pilot.app.open_task(self.task)
            await until_ready(pilot)
        for key in self.keys:
            await pilot.press(key)
            await until_ready(pilot)


SCENES = (
    Scene("main-empty", "empty"),
    Scene("main-busy", "busy"),
    Scene("main-80x24", "busy", size=(80, 24)),
    Scene("gates-80x24", "busy", size=(80, 24), keys=("ctrl+g",)),
    Scene("gates-focused", "busy", keys=("ctrl+g", "down")),
    Scene("tree-changed-file", "busy", keys=("ctrl+t", "down", "down", "down", "down")),
    Scene("task-view", "busy", task="task-poster"),
    Scene("task-view-80x24", "busy", size=(80, 24), task="task-story"),
    Scene("task-view-gates", "busy", task="task-flyer"),
    Scene("theme-light", "busy", theme="lomo-light"),
    Scene("theme-high-contrast", "busy", theme="lomo-high-contrast"),
    Scene("help", "empty", keys=("f1",)),
    Scene("memory-view", "memory", keys=("f2",)),
    Scene("memory-view-80x24", "memory", size=(80, 24), keys=("f2", "down", "down")),
    Scene("memory-forget-asks", "memory", keys=("f2", "f")),
    Scene("stats-view", "stats", keys=("f3",)),
    Scene("stats-view-80x24", "stats", size=(80, 24), keys=("f3",)),
    Scene("task-view-graph", "film", task="task-film"),
)
