"""Production tools: cutting a film together from the shots the studio made.

`assemble_film` is a local write (no spend): the clips and the sound are read from the workspace, the
cut is made in a worker thread, and the file is written through the workspace like `write_file` — a
version by the agent, refused with a conflict if the file changed since `base_version`, once per
idempotency key (a retried call returns the first call's version).
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..errors import Said
from ..workspace.errors import WorkspaceError
from .registry import Registry, Suspend, ToolContext, ToolError, obj, plain_error, refusal_why, tool

STR = {"type": "string"}
CLIPS = {"type": "array", "items": STR, "minItems": 1,
         "description": "workspace paths of the shot clips, in storyboard order (mp4, gif or webp)"}
AUDIO = {"type": ["string", "null"], "description": "workspace path of a WAV sound laid under the cut (or null)"}
OUTPUT = {"type": "string", "description": "workspace path of the film to write, ending .mp4 (or .webp)"}
BASE = {"type": ["integer", "null"], "description": "the version of OUTPUT you read (null for a new file); "
        "refused with a conflict if the file changed since"}


def _source(ctx: ToolContext, rel: str, what: str) -> Path:
    try:
        path, rel = ctx.services.workspace.resolve(rel)
    except (WorkspaceError, ValueError, OSError) as exc:
        raise ToolError.said("path_outside", kind="bad_input", what=Said(f"tool_error.source_{what}"), path=repr(rel),
                             why=refusal_why(exc)) from None
    if not path.is_file():
        raise ToolError.said("path_missing", kind="bad_input", what=Said(f"tool_error.source_{what}"), path=rel)
    return path


def _output(rel: str) -> tuple[str, str]:
    from ..studio.assembly import FORMATS  # PIL and PyAV load when a film is cut, not at start-up

    stem, dot, suffix = rel.rpartition(".")
    if not dot or suffix.lower() not in FORMATS:
        raise ToolError.said("film_ext", kind="bad_input", path=repr(rel))
    return stem, suffix.lower()


def register(reg: Registry) -> None:
    @tool(reg, "assemble_film", "Cut shot clips together in order, each for its own length, with a sound under "
          "them, into one video file (MP4: H.264 + AAC; an animated WebP without sound where H.264 is missing).",
          obj({"clips": CLIPS, "audio": AUDIO, "output": OUTPUT, "base_version": BASE}, ["clips", "output"]),
          side_effect="write", idempotent=True, domain="video")
    async def assemble_film(ctx: ToolContext, clips: list[str], output: str, audio: str | None = None,
                            base_version: int | None = None) -> dict[str, Any]:
        stem, wanted = _output(output)
        sources = [_source(ctx, rel, "clip") for rel in clips]
        sound = _source(ctx, audio, "audio") if audio else None
        from ..studio.assembly import assemble

        try:
            film = await asyncio.to_thread(assemble, sources, sound, fmt=wanted)
        except ValueError as exc:
            raise ToolError.said("film_not_made", kind="bad_input",
                                 why=plain_error(str(exc), "") or Said("tool_error.clip_unreadable")) from None
        target = output if film.format == wanted else f"{stem}.{film.format}"
        written = await ctx.services.workspace.write_bytes(target, film.data, base_version, ctx.task_id, ctx.key)
        result: dict[str, Any] = dict(written, format=film.format, seconds=round(film.seconds, 3),
                                      frames=film.frames, fps=film.fps, shots=[round(d, 3) for d in film.shots],
                                      audio=film.audio)
        if film.note:
            result["note"] = film.note
        return result


# ---- production graphs (DESIGN I1) --------------------------------------------------------------------------------
GRAPH = {"type": "string", "description": "workspace path of the production graph (a .flow.json file)"}


def register_graph(reg: Registry) -> None:
    from ..production import engine as production
    from ..production.graph import GraphError, film_text, parse_storyboard
    from ..workspace.errors import FlowError

    @tool(reg, "plan_production", "Write the production graph of a film from its storyboard: brief → storyboard → "
          "character sheet and scene reference → a key frame and a clip per shot → sound → the final cut.",
          obj({"storyboard": {"type": "string", "description": "workspace path of the storyboard (## Shot N sections)"},
               "path": GRAPH, "brief": {"type": "string", "description": "the film's brief in a sentence (the brief "
                                                                       "node's text)"}, "subject": {"type": "string", "description": "who or what the film is "
                                                                                      "about, for the references"},
               "base_version": BASE}, ["storyboard", "path"]), side_effect="write", idempotent=True, domain="video")
    async def plan_production(ctx: ToolContext, storyboard: str, path: str, brief: str = "", subject: str = "",
                              base_version: int | None = None) -> dict[str, Any]:
        from ..studio.render import clip_format

        if not path.endswith(".flow.json"):
            raise ToolError.said("graph_ext", kind="bad_input", path=repr(path))
        read = await ctx.services.workspace.read(storyboard, ctx.task_id)
        shots = parse_storyboard(read["content"])
        if not shots:
            raise ToolError.said("no_shots", kind="bad_input", path=read["path"])
        seconds = sum(shot.seconds or 3 for shot in shots.values())
        folder = path[: -len(".flow.json")]
        text = film_text(brief=brief or subject, subject=subject or brief or folder, storyboard=read["path"],
                         shots=max(shots), folder=folder,
                         clip_ext="mp4" if clip_format() == "mp4" else "gif")
        written = await ctx.services.workspace.write(path, text, base_version, ctx.task_id, ctx.key)
        return dict(written, shots=len(shots), seconds=seconds)

    @tool(reg, "run_production", "Run a production graph: make each node whose inputs are ready (independent ones in "
          "parallel), reuse every result whose inputs and params did not change, redo only stale nodes. One card "
          "asks for the quoted cost first.", obj({"path": GRAPH}, ["path"]), side_effect="paid", idempotent=True,
          domain="video")
    async def run_production(ctx: ToolContext, path: str) -> Any:
        engine = production.Engine(ctx, path)
        try:
            progress = await engine.advance()
        except FlowError as exc:
            raise ToolError.said("graph_invalid", kind="bad_input", path=path, detail=exc.said_as or str(exc)) from None
        except GraphError as exc:
            raise ToolError.said("graph_error", kind="bad_input", path=path, detail=exc.said_as) from None
        if progress.declined:
            raise ToolError.said("production_declined", kind="declined")
        if progress.gate:
            return Suspend("gate", progress.gate, "waiting_gate")
        if progress.jobs:
            return Suspend("any", progress.jobs[0], "waiting_job", refs=tuple(progress.jobs))
        states = progress.states
        if progress.failed:
            reasons = [Said("production_error.node_reason", {"node": i, "why": states[i].error
                                                               or Said("production_error.node_failed")})
                       for i in progress.failed[:4]]  # joined the reader's way (`said.list`: "; " in English)
            raise ToolError.said("graph_stopped", kind="graph_failed", reasons=reasons)
        cut = next((st.artifact for st in states.values() if st.type == "assembly" and st.artifact), None)
        return {"graph": engine.path, "status": "done", "film": cut,
                "nodes": {i: st.state for i, st in states.items()}, "made_now": progress.ran}
