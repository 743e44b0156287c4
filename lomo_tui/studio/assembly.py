"""The final cut: shot clips one after another, each for its own duration, with a sound under them.

One video file comes out: MP4 (H.264 + AAC through PyAV), or, where this PyAV has no H.264 encoder,
an animated WebP (which carries no sound, and says so). The frame rate is the first clip's (the
embedded studio's fixed rate for its clips); every clip is resampled to it and fitted to the first
clip's frame, so a film of clips lasting d1, d2, … runs round(d1·fps) + round(d2·fps) + … frames.
Clips are decoded one at a time, so memory holds one shot, not the film.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from PIL import Image, ImageOps

from .video import (
    CLIP_FPS, audio_codec, encode_animation, encode_mp4, even_size, frame_durations, frames_at, mp4_available,
    read_clip, read_wav,
)

FORMATS = ("mp4", "webp")
MAX_FPS = 60


@dataclass(frozen=True)
class Film:
    data: bytes
    format: str  # mp4 | webp
    fps: int
    frames: int
    seconds: float
    shots: list[float]  # each clip's duration as cut, in order
    audio: bool  # a sound stream is in the file
    note: str | None = None  # what the creator should know (sound left out, and why)


def film_format(requested: str | None = None) -> str:
    """MP4 where H.264 can be encoded (and was asked for, or nothing was), else animated WebP."""
    if requested == "webp" or not mp4_available():
        return "webp"
    return "mp4"


def assemble(clips: Sequence[str | os.PathLike[str]], audio: str | os.PathLike[str] | None = None, *,
             fmt: str | None = None) -> Film:
    """Cut CLIPS together in order with AUDIO (a 16-bit WAV) under them. ValueError with a sentence when a
    clip or the sound cannot be read (then nothing is made)."""
    if not clips:
        raise ValueError("a film needs at least one clip")
    fmt = film_format(fmt)
    paths = [Path(p) for p in clips]
    first = read_clip(paths[0])
    fps = max(1, min(MAX_FPS, round(first.fps) or CLIP_FPS))
    size = first.frames[0].size
    if fmt == "mp4":
        size = even_size(size)
    sound = read_wav(audio) if audio is not None else None
    shots: list[float] = []

    def cut() -> Iterator[Image.Image]:
        for i, path in enumerate(paths):
            clip = first if i == 0 else read_clip(path)
            count = 0
            for frame in frames_at(clip, fps):
                count += 1
                yield frame if frame.size == size else ImageOps.fit(frame, size, Image.Resampling.BILINEAR)
            shots.append(count / fps)

    if fmt == "mp4":
        data = encode_mp4(cut(), fps, size, sound)
        with_sound = sound is not None and audio_codec() is not None
        note = "the sound was left out: this PyAV has no AAC encoder" if sound is not None and not with_sound else None
    else:
        images = list(cut())
        data = encode_animation(images, frame_durations(len(images) / fps, len(images), 1), "webp")
        with_sound = False
        note = ("the sound was left out: an animated WebP (the fallback without an H.264 encoder) has no audio"
                if sound is not None else None)
    count = round(sum(shots) * fps)
    return Film(data, fmt, fps, count, count / fps, shots, with_sound, note)
