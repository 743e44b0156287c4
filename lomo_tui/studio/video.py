"""Real video files through PyAV (FFmpeg's libraries ship in its wheels): H.264 + AAC in MP4.

Writing: ``encode_mp4`` takes PIL frames at a constant rate and, optionally, a 16-bit PCM sound.
Reading: ``read_clip`` gives any clip the studio or a provider makes (MP4 or another FFmpeg format,
animated GIF or WebP) as timed frames. PyAV is imported only when a video is made or read.
"""
from __future__ import annotations

import io
import math
import os
import wave
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

from PIL import Image

CLIP_FPS = 8  # the embedded studio's clips: a fixed rate, so frame count = seconds × fps
VIDEO_CODECS = ("libx264", "h264")  # the first one this PyAV build can encode is used
AUDIO_CODEC = "aac"
_AUDIO_CHUNK = 1024  # samples per AAC frame
_PILLOW_ANIMATIONS = (b"GIF8", b"RIFF")


@dataclass(frozen=True)
class Sound:
    """Interleaved 16-bit little-endian PCM."""

    pcm: bytes
    rate: int
    channels: int

    @property
    def seconds(self) -> float:
        return len(self.pcm) / (2 * self.channels * self.rate)


@dataclass(frozen=True)
class Clip:
    """A clip's frames, each with how long it shows, in seconds."""

    frames: list[Image.Image]
    durations: list[float]

    @property
    def seconds(self) -> float:
        return sum(self.durations)

    @property
    def fps(self) -> float:
        return len(self.frames) / self.seconds if self.seconds else float(CLIP_FPS)

    def at(self, t: float) -> Image.Image:
        """The frame showing at time ``t`` (seconds from the clip's start)."""
        elapsed = 0.0
        for frame, duration in zip(self.frames, self.durations):
            elapsed += duration
            if t < elapsed - 1e-9:
                return frame
        return self.frames[-1]


@lru_cache(maxsize=1)
def video_codec() -> str | None:
    """The H.264 encoder PyAV offers here, or None (no PyAV, or a build without one)."""
    try:
        import av
    except ImportError:
        return None
    for name in VIDEO_CODECS:
        try:
            av.Codec(name, "w")
        except Exception:  # noqa: BLE001 — av raises its own UnknownCodecError family
            continue
        return name
    return None


@lru_cache(maxsize=1)
def audio_codec() -> str | None:
    """The AAC encoder, or None where PyAV lacks it."""
    if video_codec() is None:
        return None
    import av

    try:
        av.Codec(AUDIO_CODEC, "w")
    except Exception:  # noqa: BLE001
        return None
    return AUDIO_CODEC


def mp4_available() -> bool:
    return video_codec() is not None


def even_size(size: tuple[int, int]) -> tuple[int, int]:
    """H.264 in 4:2:0 needs even sides."""
    return max(2, size[0] - size[0] % 2), max(2, size[1] - size[1] % 2)


def read_wav(path: str | os.PathLike[str]) -> Sound:
    """A 16-bit PCM WAV (mono or stereo); ValueError with a sentence otherwise."""
    try:
        with wave.open(str(path), "rb") as wav:
            if wav.getsampwidth() != 2 or wav.getnchannels() not in (1, 2):
                raise ValueError(f"{Path(path).name} is not 16-bit mono or stereo PCM")
            return Sound(wav.readframes(wav.getnframes()), wav.getframerate(), wav.getnchannels())
    except (wave.Error, EOFError):
        raise ValueError(f"{Path(path).name} is not a WAV sound the studio can read") from None


def encode_mp4(frames: Iterable[Image.Image], fps: int, size: tuple[int, int], sound: Sound | None = None) -> bytes:
    """An MP4 of FRAMES (resized to ``even_size(size)`` where they differ) at a constant FPS, with SOUND
    as AAC cut to the picture's length (a shorter sound ends early). RuntimeError when this PyAV has no
    H.264 encoder; SOUND is left out when it has no AAC encoder (see ``audio_codec``)."""
    import av

    codec = video_codec()
    if codec is None:
        raise RuntimeError("this PyAV build has no H.264 encoder")
    width, height = even_size(size)
    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as container:
        video = container.add_stream(codec, rate=fps)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.options = {"preset": "veryfast", "crf": "23"} if codec == "libx264" else {}
        audio = None
        if sound is not None and audio_codec() is not None:
            audio = container.add_stream(AUDIO_CODEC, rate=sound.rate)
            audio.layout = "mono" if sound.channels == 1 else "stereo"
        count = 0
        for count, image in enumerate(frames, 1):
            if image.size != (width, height):
                image = image.resize((width, height), Image.Resampling.BILINEAR)
            frame = av.VideoFrame.from_image(image.convert("RGB"))
            frame.pts = count - 1
            frame.time_base = Fraction(1, fps)
            container.mux(video.encode(frame))
        container.mux(video.encode())
        if audio is not None and sound is not None:
            _encode_sound(container, audio, sound, count / fps)
    return out.getvalue()


def _encode_sound(container: "av.container.OutputContainer", stream: "av.audio.stream.AudioStream",  # type: ignore[name-defined]  # noqa: F821
                  sound: Sound, seconds: float) -> None:
    import av

    layout = "mono" if sound.channels == 1 else "stereo"
    width = 2 * sound.channels
    total = len(sound.pcm) // width
    total = min(total, round(seconds * sound.rate))
    for start in range(0, total, _AUDIO_CHUNK):
        count = min(_AUDIO_CHUNK, total - start)
        frame = av.AudioFrame(format="s16", layout=layout, samples=count)
        chunk = sound.pcm[start * width:(start + count) * width]
        plane = frame.planes[0]
        plane.update(chunk + bytes(plane.buffer_size - len(chunk)))
        frame.sample_rate, frame.pts, frame.time_base = sound.rate, start, Fraction(1, sound.rate)
        container.mux(stream.encode(frame))
    container.mux(stream.encode())


def read_clip(path: str | os.PathLike[str]) -> Clip:
    """Every frame of a clip with its duration: animated GIF/WebP through Pillow, anything else
    (MP4, WebM, …) through PyAV. ValueError with a sentence when it is not a clip."""
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(4)
    if head in _PILLOW_ANIMATIONS:
        return _read_animation(path)
    return _read_video(path)


def _read_animation(path: Path) -> Clip:
    frames, durations = [], []
    try:
        with Image.open(path) as image:
            for i in range(getattr(image, "n_frames", 1)):
                image.seek(i)
                frames.append(image.convert("RGB"))
                durations.append(max(1, int(image.info.get("duration") or 100)) / 1000)
    except (OSError, ValueError):
        raise ValueError(f"{path.name} is not a clip the studio can read") from None
    return Clip(frames, durations)


def _read_video(path: Path) -> Clip:
    try:
        import av
    except ImportError:
        raise ValueError(f"{path.name}: reading video needs PyAV (pip install av)") from None
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise ValueError(f"{path.name} has no video stream")
            stream = container.streams.video[0]
            rate = float(stream.average_rate or CLIP_FPS)
            timed = [(float(frame.time) if frame.time is not None else i / rate, frame.to_image())
                     for i, frame in enumerate(container.decode(stream))]
    except av.FFmpegError:
        raise ValueError(f"{path.name} is not a video the studio can read") from None
    if not timed:
        raise ValueError(f"{path.name} has no frames")
    timed.sort(key=lambda tf: tf[0])
    times = [t for t, _ in timed]
    durations = [b - a for a, b in zip(times, times[1:])] + [1 / rate]
    return Clip([image for _, image in timed], [max(d, 1e-3) for d in durations])


def frames_at(clip: Clip, fps: int) -> Iterator[Image.Image]:
    """CLIP resampled to FPS: ``round(clip.seconds * fps)`` frames (at least one)."""
    for k in range(max(1, round(clip.seconds * fps))):
        yield clip.at(k / fps)


def frame_durations(seconds: float, count: int, tick_ms: int) -> list[int]:
    """Frame durations in whole ``tick_ms`` that add up to ``seconds`` exactly (to the tick)."""
    ticks = round(seconds * 1000 / tick_ms)
    if ticks < count:
        raise ValueError(f"{seconds} s is too short for {count} frames of at least {tick_ms} ms")
    return [(math.floor((i + 1) * ticks / count) - math.floor(i * ticks / count)) * tick_ms for i in range(count)]


def encode_animation(frames: list[Image.Image], durations: list[int], fmt: str, comment: str = "") -> bytes:
    """An animated GIF or WebP of FRAMES, each shown for its duration in milliseconds."""
    out = io.BytesIO()
    if fmt == "gif":
        shared = frames[0].quantize(colors=255, method=Image.Quantize.MEDIANCUT)
        indexed = [f.quantize(palette=shared, dither=Image.Dither.NONE) for f in frames]
        indexed[0].save(out, "GIF", save_all=True, append_images=indexed[1:], duration=durations,
                        loop=0, comment=comment.encode())
    else:
        frames[0].save(out, "WEBP", save_all=True, append_images=frames[1:], duration=durations,
                       loop=0, quality=70, method=2)
    return out.getvalue()
