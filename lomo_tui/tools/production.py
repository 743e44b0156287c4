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

from ..studio.assembly import FORMATS, assemble
from ..workspace.errors import WorkspaceError
from .registry import Registry, ToolContext, ToolError, obj, plain_error, tool

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
        raise ToolError(f"{what} {rel!r} is not a workspace path: {plain_error(str(exc), 'it is outside')}",
                        kind="bad_input") from None
    if not path.is_file():
        raise ToolError(f"{what} {rel} does not exist in the workspace", kind="bad_input")
    return path


def _output(rel: str) -> tuple[str, str]:
    stem, dot, suffix = rel.rpartition(".")
    if not dot or suffix.lower() not in FORMATS:
        raise ToolError(f"output {rel!r} must end in .mp4 (or .webp)", kind="bad_input")
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
        try:
            film = await asyncio.to_thread(assemble, sources, sound, fmt=wanted)
        except ValueError as exc:
            raise ToolError(f"the film was not made: {plain_error(str(exc), 'a clip could not be read')}",
                            kind="bad_input") from None
        target = output if film.format == wanted else f"{stem}.{film.format}"
        written = await ctx.services.workspace.write_bytes(target, film.data, base_version, ctx.task_id, ctx.key)
        result: dict[str, Any] = dict(written, format=film.format, seconds=round(film.seconds, 3),
                                      frames=film.frames, fps=film.fps, shots=[round(d, 3) for d in film.shots],
                                      audio=film.audio)
        if film.note:
            result["note"] = film.note
        return result
