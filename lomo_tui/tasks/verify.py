"""Validating a step's result against what the step promised (DESIGN J4, G3): real file inspection, no trust.

A step promises a kind of result by its tool (generate_image → an image, write_file → a document, …) and,
where its arguments or its job's order say so, a size, a duration and a count. `inspect` opens the file the
way a player would (Pillow for images, PyAV for clips and sound, the glTF container for 3D, a UTF-8 decode for
documents, the flow parser for flows) and reports what it found; `problems` compares that with the promise.
Nothing here touches the database: `tasks.evidence` gathers the sources and records the verdict.
"""
from __future__ import annotations

import json
import struct
import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Phrase, Said

# what each tool's step promises to leave behind
PROMISED_KIND = {"generate_image": "image", "generate_video": "video", "generate_3d": "3d",
                 "generate_audio": "audio", "write_file": "document", "edit_file": "document",
                 "append_file": "document", "edit_flow_nodes": "flow", "read_flow": "read", "read_file": "read",
                 "read_flow_node": "read", "ask_user": "answer"}
JOB_KIND = {"image": "image", "video": "video", "3d": "3d", "audio": "audio"}
MEDIA = ("image", "video", "3d", "audio")
KINDS = ("image", "video", "3d", "audio", "document", "flow", "read", "answer")  # each has `step_check.a_KIND`
CHANGES = ("document", "flow")  # steps whose result must be a changed file
DURATION_TOLERANCE = (0.25, 0.05)  # seconds, share of the promised length: whichever is larger
INSPECT_LIMIT = 200_000_000  # bytes; a larger file is not opened (it is reported, not read)


@dataclass(frozen=True)
class Promise:
    """What a step said it would leave: a kind, and where it says so a size, a length and a count."""

    kind: str | None  # image | video | 3d | audio | document | flow | read | answer | None (not said)
    size: tuple[int, int] | None = None
    seconds: float | None = None
    count: int = 1

    def describe(self) -> str:
        parts = [self.kind or "a result"]
        if self.size:
            parts.append(f"{self.size[0]}×{self.size[1]}")
        if self.seconds:
            parts.append(f"{self.seconds:g} s")
        if self.count > 1:
            parts.append(f"{self.count} of them")
        return ", ".join(parts)


@dataclass
class Facts:
    """What inspecting one file found."""

    path: str
    kind: str | None = None  # what the bytes are, not what the name says
    width: int | None = None
    height: int | None = None
    seconds: float | None = None
    frames: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"path": self.path, "kind": self.kind, "width": self.width, "height": self.height,
               "seconds": None if self.seconds is None else round(self.seconds, 3), "frames": self.frames,
               **self.detail}
        if self.error:
            out["error"] = self.error
        return {k: v for k, v in out.items() if v is not None}


def _size_of(value: Any) -> tuple[int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return int(value[0]), int(value[1])
    if isinstance(value, str) and "x" in value.lower():
        w, _, h = value.lower().partition("x")
        if w.strip().isdigit() and h.strip().isdigit():
            return int(w), int(h)
    return None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def promise_of(tool: str | None, args: dict[str, Any] | None, job: dict[str, Any] | None = None) -> Promise:
    """The step's promise: its tool's kind (else the kind its job made), the size and length its job was ordered
    with (else its own args), and a count where its args name one."""
    args = args or {}
    order = job or {}
    kind = PROMISED_KIND.get(tool or "") or JOB_KIND.get(str(order.get("kind") or ""))
    size = _size_of(order.get("size_px")) or _size_of(args.get("size"))
    seconds = _number(order.get("seconds")) or _number(args.get("seconds"))
    count = args.get("count") if isinstance(args.get("count"), int) and args.get("count", 0) > 1 else 1
    return Promise(kind, size if kind in ("image", "video") else None,
                   seconds if kind in ("video", "audio") else None, count)


# ---- inspection ------------------------------------------------------------------------------------------
def inspect(root: Path, rel: str) -> Facts:
    """Open ROOT/REL and say what it really is. Never raises: a broken file is Facts with an error."""
    facts = Facts(rel)
    path = root / rel
    try:
        if not path.is_file():
            facts.error = _said("not_there")
            return facts
        if path.stat().st_size == 0:
            facts.error = _said("empty")
            return facts
        if path.stat().st_size > INSPECT_LIMIT:
            facts.error = _said("too_large")
            return facts
        suffix = path.name.lower().rsplit(".", 1)[-1] if "." in path.name else ""
        probes = _PROBES_BY_SUFFIX.get(suffix, _PROBES)
        for probe in probes:
            attempt = Facts(rel)  # each probe starts clean: a failed one leaves nothing behind
            if probe(path, attempt):
                return attempt
            facts.error = attempt.error if len(probes) == 1 else ""
        facts.error = facts.error or _said("unreadable_content")
    except OSError as exc:
        facts.error = _said("read_failed", why=exc.strerror or exc.__class__.__name__)
    return facts


def _picture(path: Path, facts: Facts) -> bool:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.verify()
        with Image.open(path) as im:  # verify() leaves the image unusable: open again for the facts
            frames = int(getattr(im, "n_frames", 1) or 1)
            facts.width, facts.height = im.size
            facts.detail["format"] = im.format
            if frames > 1:  # an animated GIF/WebP is a clip (the studio writes clips that way)
                total = 0
                for n in range(frames):
                    im.seek(n)
                    total += int(im.info.get("duration") or 0)
                facts.kind, facts.frames, facts.seconds = "video", frames, total / 1000 if total else None
            else:
                facts.kind, facts.frames = "image", 1
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        facts.error = _said("not_picture", why=exc.__class__.__name__)
        return False
    return True


def _gif(path: Path, facts: Facts) -> bool:
    """A GIF clip, read by PyAV (its container knows the length; Pillow would decode every frame); a still GIF
    is left to `_picture`."""
    return _media(path, facts) and (facts.frames or 0) > 1


def _media(path: Path, facts: Facts) -> bool:
    import av

    try:
        with av.open(str(path)) as container:
            video = container.streams.video[0] if container.streams.video else None
            audio = container.streams.audio[0] if container.streams.audio else None
            if video is None and audio is None:
                return False
            seconds = container.duration / 1_000_000 if container.duration else None
            stream = video or audio
            if seconds is None and stream.duration and stream.time_base:
                seconds = float(stream.duration * stream.time_base)
            facts.seconds = seconds
            facts.detail["format"] = container.format.name.split(",")[0]
            if video is not None:
                facts.kind, facts.frames = "video", int(video.frames or 0) or None
                facts.width, facts.height = video.codec_context.width, video.codec_context.height
                if not facts.frames:  # a container without a frame count: decode one frame at least
                    facts.frames = 1 if next(container.decode(video=0), None) is not None else 0
            else:
                facts.kind = "audio"
    except (av.error.FFmpegError, OSError, ValueError, IndexError, StopIteration) as exc:
        facts.error = _said("not_playable", why=exc.__class__.__name__)
        return False
    return facts.kind == "audio" or bool(facts.frames)


def _wave(path: Path, facts: Facts) -> bool:
    try:
        with wave.open(str(path), "rb") as w:
            rate, frames = w.getframerate(), w.getnframes()
    except (wave.Error, EOFError, OSError):
        return _media(path, facts)
    if not rate or not frames:
        facts.error = _said("no_samples")
        return False
    facts.kind, facts.seconds, facts.detail["format"] = "audio", frames / rate, "wav"
    return True


def _gltf_doc(doc: Any, facts: Facts) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("asset"), dict):
        facts.error = _said("gltf_no_asset")
        return False
    meshes = doc.get("meshes") or []
    if not meshes:
        facts.error = _said("no_mesh")
        return False
    facts.kind = "3d"
    facts.detail.update(meshes=len(meshes), format="gltf")
    return True


def _model(path: Path, facts: Facts) -> bool:
    data = path.read_bytes()
    if data[:4] == b"glTF":  # binary glTF: header, then a JSON chunk
        if len(data) < 20:
            facts.error = _said("gltf_truncated")
            return False
        _, version, length = struct.unpack_from("<4sII", data)
        chunk_len, chunk_type = struct.unpack_from("<II", data, 12)
        if version != 2 or length != len(data) or chunk_type != 0x4E4F534A:
            facts.error = _said("gltf_damaged")
            return False
        try:
            ok = _gltf_doc(json.loads(data[20:20 + chunk_len]), facts)
        except ValueError:
            facts.error = _said("gltf_damaged")
            return False
        facts.detail["format"] = "glb"
        return ok
    try:
        return _gltf_doc(json.loads(data.decode("utf-8")), facts)
    except (UnicodeDecodeError, ValueError):
        facts.error = _said("not_gltf")
        return False


def _text(path: Path, facts: Facts) -> bool:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    facts.kind = "document"
    facts.detail["chars"] = len(text)
    if path.name.lower().endswith(".json"):
        try:
            from ..workspace.flows import parse_flow

            parse_flow(text)
            facts.kind = "flow"
        except Exception:  # noqa: BLE001 — plain JSON (not a flow) is still a document
            pass
    return True


_PROBES = (_picture, _model, _wave, _media, _text)
_PROBES_BY_SUFFIX = {
    "png": (_picture,), "jpg": (_picture,), "jpeg": (_picture,), "webp": (_picture,), "gif": (_gif, _picture),
    "bmp": (_picture,), "tif": (_picture,), "tiff": (_picture,),
    "mp4": (_media,), "mov": (_media,), "webm": (_media,), "mkv": (_media,), "m4v": (_media,),
    "wav": (_wave,), "mp3": (_media,), "ogg": (_media,), "flac": (_media,), "m4a": (_media,),
    "glb": (_model,), "gltf": (_model,),
    "md": (_text,), "txt": (_text,), "markdown": (_text,), "json": (_text,), "csv": (_text,),
}


# ---- judging ---------------------------------------------------------------------------------------------
def _said(key: str, /, **fields: Any) -> Phrase:
    """A finding's English, keeping its catalogue form (`step_check.KEY`) for the creator's language."""
    return Phrase(Said(f"step_check.{key}", fields))


def problems(promise: Promise, facts: Facts) -> list[str]:
    """What is wrong with FACTS as the result PROMISE asked for (empty: it holds), each a `Phrase`."""
    if facts.error:
        return [_said("file_problem", path=facts.path, problem=facts.error)]
    wanted = promise.kind
    out: list[str] = []
    if wanted in MEDIA or wanted in CHANGES:
        ok = facts.kind == wanted or (wanted == "document" and facts.kind == "flow")
        if not ok:
            out.append(_said("wrong_kind", path=facts.path, kind=a_kind(facts.kind), wanted=a_kind(wanted)))
            return out
    if promise.size and (facts.width, facts.height) != promise.size:
        out.append(_said("wrong_size", path=facts.path, size=f"{facts.width}×{facts.height}",
                         ordered=f"{promise.size[0]}×{promise.size[1]}"))
    if promise.seconds and facts.kind in ("video", "audio"):
        slack = max(DURATION_TOLERANCE[0], DURATION_TOLERANCE[1] * promise.seconds)
        if facts.seconds is None or abs(facts.seconds - promise.seconds) > slack:
            got = _said("unknown_length") if facts.seconds is None else _said("seconds", n=f"{facts.seconds:.2f}")
            out.append(_said("wrong_length", path=facts.path, got=got, ordered=f"{promise.seconds:g}"))
    return out


def a_kind(kind: str | None) -> str:
    """The kind with its article, for messages ("an image", "a 3D model"), as a `Phrase` (`step_check.a_KIND`)."""
    if kind is None:
        return _said("a_unreadable")
    return _said(f"a_{kind}") if kind in KINDS else f"a {kind}"
