"""Short melodies and ambiences whose key, tempo and timbre follow the prompt's mood (WAV out)."""
from __future__ import annotations

import io
import math
import sys
import wave
from array import array
from dataclasses import dataclass
from functools import lru_cache
from random import Random

from ..language import KeywordTable as Table, most_mentioned as best
from .palette import palette_family
from .subjects import WEATHER_WORDS

MOOD_WORDS: Table = {
    "calm": ("calm*", "peace*", "relax*", "quiet", "gentle", "ambient", "sleep*", "lullaby",
             "meditat*", "平静", "安静", "放松", "宁静", "穏やか", "静か", "リラックス", "спокой*",
             "тих*", "расслаб*"),
    "upbeat": ("upbeat", "happy", "cheer*", "fun", "dance*", "party", "energetic", "joy*", "bright",
               "欢快", "快乐", "开心", "活泼", "明るい", "楽しい", "元気", "ダンス", "весел*", "бодр*",
               "радост*", "танц*"),
    "dark": ("dark*", "gloom*", "horror", "scary", "sad", "ominous", "eerie", "spooky", "黑暗", "阴暗",
             "恐怖", "悲伤", "暗い", "怖い", "悲しい", "темн*", "мрачн*", "страш*", "грустн*"),
    "rain": WEATHER_WORDS["rain"],
}
# The mood a palette family suggests when the prompt names none.
_FAMILY_MOOD = {"neon": "upbeat", "retro": "upbeat", "mono": "dark"}


@dataclass(frozen=True)
class Mood:
    """How a mood sounds: tempo, scale (semitones over the root), root (MIDI note) and timbre."""

    bpm: float
    scale: tuple[int, ...]
    root: int
    harmonics: tuple[float, ...]
    beats_per_note: float
    rest_chance: float = 0.0
    kick: bool = False
    drone: bool = False
    noise: bool = False


MOODS: dict[str, Mood] = {
    "calm": Mood(72, (0, 2, 4, 7, 9), 60, (1.0, 0.12, 0.04), 1.0),
    "upbeat": Mood(128, (0, 2, 4, 5, 7, 9, 11), 62, (1.0, 0.0, 0.33, 0.0, 0.2, 0.0, 0.14), 0.5, kick=True),
    "dark": Mood(60, (0, 2, 3, 5, 7, 8, 10), 45, (1.0, 0.5, 0.33, 0.25, 0.2, 0.16), 2.0, drone=True),
    "rain": Mood(66, (0, 3, 5, 7, 10), 57, (1.0, 0.2), 1.0, rest_chance=0.5, noise=True),
}

_TABLE = 2048


def audio_mood(prompt: str) -> str:
    """The mood a prompt asks for; failing that, the one its palette family suggests."""
    return best(prompt, MOOD_WORDS, _FAMILY_MOOD.get(palette_family(prompt), "calm"))


@lru_cache(maxsize=8)
def _wavetable(harmonics: tuple[float, ...]) -> tuple[float, ...]:
    """One normalised period of a waveform built from harmonic amplitudes."""
    shape = [sum(a * math.sin(math.tau * (k + 1) * i / _TABLE) for k, a in enumerate(harmonics) if a)
             for i in range(_TABLE)]
    peak = max(abs(v) for v in shape)
    return tuple(v / peak for v in shape)


_SINE = _wavetable((1.0,))


def _tone(out: list[float], start: int, length: int, freq: float, table: tuple[float, ...], rate: int,
          gain: float, release_s: float) -> None:
    """Add one note: a short linear attack, then exponential decay over ``release_s``."""
    step, phase = freq * _TABLE / rate, 0.0
    attack = max(1, int(rate * 0.01))
    decay = math.exp(-1.0 / (rate * release_s))
    env = 0.0
    for k in range(start, min(len(out), start + length)):
        env = min(1.0, env + 1.0 / attack) if k - start < attack else env * decay
        out[k] += table[int(phase) % _TABLE] * env * gain
        phase += step


def _kick(out: list[float], start: int, rate: int) -> None:
    length = int(rate * 0.15)
    phase = 0.0
    for k in range(min(length, len(out) - start)):
        t = k / length
        phase += math.tau * (50 + 70 * (1 - t) ** 2) / rate
        out[start + k] += math.sin(phase) * (1 - t) ** 2 * 0.6


def _rain(out: list[float], rng: Random, rate: int) -> None:
    """Low-passed noise with scattered droplet ticks."""
    level, smooth = 0.0, 0.15
    for k in range(len(out)):
        level += smooth * (rng.uniform(-1, 1) - level)
        out[k] += level * 0.5
    for _ in range(int(len(out) / rate * 12)):
        _tone(out, rng.randrange(len(out)), int(rate * 0.03), rng.uniform(1800, 3200), _SINE, rate, 0.15, 0.006)


def _midi(note: int) -> float:
    return 440.0 * 2 ** ((note - 69) / 12)


def _synthesise(mood: Mood, rng: Random, total: int, rate: int) -> list[float]:
    out = [0.0] * total
    table = _wavetable(mood.harmonics)
    note_len = int(rate * 60 / mood.bpm * mood.beats_per_note)
    degree = rng.randrange(len(mood.scale))
    for start in range(0, total, note_len):
        degree = max(0, min(2 * len(mood.scale) - 1, degree + rng.choice((-2, -1, -1, 0, 1, 1, 2))))
        octave, step = divmod(degree, len(mood.scale))
        if rng.random() >= mood.rest_chance:
            freq = _midi(mood.root + 12 * octave + mood.scale[step])
            _tone(out, start, note_len * 2, freq, table, rate, 0.5, note_len / rate * 0.6)
    beat = int(rate * 60 / mood.bpm)
    if mood.kick:
        for start in range(0, total, beat):
            _kick(out, start, rate)
    if mood.drone:
        _tone(out, 0, total, _midi(mood.root - 12), table, rate, 0.25, total / rate * 4)
    if mood.noise:
        _rain(out, rng, rate)
    return out


def _pcm(samples: list[float], rate: int) -> bytes:
    """Normalise, fade the ends, and pack as little-endian 16-bit."""
    peak = max((abs(v) for v in samples), default=0.0) or 1.0
    fade = min(len(samples) // 2, int(rate * 0.01))
    pcm = array("h", [0] * len(samples))
    for k, v in enumerate(samples):
        edge = min(1.0, (k + 1) / fade, (len(samples) - k) / fade) if fade else 1.0
        pcm[k] = round(v / peak * 0.85 * edge * 32767)
    if sys.byteorder == "big":
        pcm.byteswap()
    return pcm.tobytes()


def render_audio(prompt: str, *, seed: int, seconds: float = 3, rate: int = 22050) -> bytes:
    """A 16-bit mono WAV of ``round(seconds * rate)`` samples in the prompt's mood."""
    if seconds <= 0 or not 8000 <= rate <= 96000:
        raise ValueError("audio needs seconds > 0 and 8000 <= rate <= 96000")
    total = max(1, round(seconds * rate))
    samples = _synthesise(MOODS[audio_mood(prompt)], Random(f"{seed}\x04{prompt}"), total, rate)
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(_pcm(samples, rate))
    return out.getvalue()
