"""The embedded studio's renderers: pure, synchronous, deterministic prompt-to-file functions.

Each returns the bytes of a real media file and depends only on its arguments (and, for inputs,
the files' contents), so the generation service can run them in a worker thread and cache them.
"""
from __future__ import annotations

import io
from random import Random
from typing import Callable, Sequence

from PIL import Image
from PIL.PngImagePlugin import PngInfo

from .audio import render_audio
from .caption import caption
from .classify import classify_image_family
from .mesh import render_mesh
from .palette import Palette, palette_family, palette_for
from .particles import Particles, particle_kind
from .picture import InputPath, Size, picture
from .video import CLIP_FPS, encode_animation, encode_mp4, even_size, frame_durations, mp4_available

__all__ = [
    "CLIP_FORMATS", "Palette", "classify_image_family", "clip_format", "encode_animation", "palette_family",
    "palette_for", "render_audio", "render_clip", "render_image", "render_mesh",
]

SOFTWARE = "Lomo studio"


def _png(image: Image.Image, prompt: str, seed: int) -> bytes:
    info = PngInfo()
    info.add_text("prompt", prompt)  # becomes iTXt (UTF-8) when the prompt is not Latin-1
    info.add_text("seed", str(seed))
    info.add_text("Software", SOFTWARE)
    out = io.BytesIO()
    image.save(out, "PNG", pnginfo=info, compress_level=2)
    return out.getvalue()


def render_image(prompt: str, *, seed: int, size: Size = (768, 768),
                 inputs: Sequence[InputPath] = ()) -> bytes:
    """A PNG for the prompt: a composed scene, or the inputs recoloured into the prompt's palette."""
    palette = palette_for(prompt)
    image = picture(prompt, seed=seed, size=size, inputs=inputs)
    kind = particle_kind(prompt, palette)
    if kind in ("rain", "snow"):
        Particles(kind, palette, size, Random(f"{seed}\x02{prompt}")).draw(image, 0.0)
    caption(image, prompt, palette)
    return _png(image, prompt, seed)


_ZOOM = 1.25  # the clip's source picture is this much larger than a frame
CLIP_FORMATS = ("mp4", "gif", "webp")


def clip_format() -> str:
    """The format a video job is made in: MP4 (H.264) where PyAV can encode it, else an animated GIF."""
    return "mp4" if mp4_available() else "gif"


def _ken_burns(source: Size, rng: Random) -> Callable[[float], tuple[float, float, float, float]]:
    """A slow push-in with a pan that starts on the whole picture (the key frame as given) and ends on a
    seeded part of it: maps t in 0..1 to a crop box of the source."""
    sw, sh = source
    k0, k1 = 1.0, 1 / _ZOOM
    end = (rng.random(), rng.random())

    def box(t: float) -> tuple[float, float, float, float]:
        e = t * t * (3 - 2 * t)
        k = k0 + (k1 - k0) * e
        bw, bh = sw * k, sh * k
        cx = bw / 2 + (sw - bw) * end[0]
        cy = bh / 2 + (sh - bh) * end[1]
        return (cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2)

    return box


def render_clip(prompt: str, *, seed: int, seconds: float = 5, fps: int = CLIP_FPS, size: Size = (480, 270),
                inputs: Sequence[InputPath] = (), fmt: str = "gif") -> bytes:
    """A clip of ``round(seconds * fps)`` frames lasting ``seconds`` in all: MP4 (H.264), animated GIF or
    WebP. Given inputs, the first is the key frame: the clip opens on it (its own colours) and pushes in
    with a pan; else it moves over the prompt's scene. Drifting particles (snow, rain, stars, motes) move
    over either."""
    if fmt not in CLIP_FORMATS:
        raise ValueError(f"clip format must be one of {CLIP_FORMATS}, not {fmt!r}")
    if seconds <= 0 or not 1 <= fps <= 50:
        raise ValueError("a clip needs seconds > 0 and 1 <= fps <= 50")
    if fmt == "mp4":
        size = even_size(size)
    count = max(1, round(seconds * fps))
    palette = palette_for(prompt)
    source = picture(prompt, seed=seed, size=(round(size[0] * _ZOOM), round(size[1] * _ZOOM)), inputs=inputs,
                     restyle=False)
    rng = Random(f"{seed}\x01{prompt}")
    path = _ken_burns(source.size, rng)
    particles = Particles(particle_kind(prompt, palette), palette, size, rng)
    frames = [
        particles.draw(source.resize(size, Image.Resampling.BILINEAR, box=path(i / max(count - 1, 1))), i / count)
        for i in range(count)
    ]
    if fmt == "mp4":
        return encode_mp4(frames, fps, size)
    durations = frame_durations(seconds, count, 10 if fmt == "gif" else 1)
    return encode_animation(frames, durations, fmt, f"{prompt} (seed {seed})")
