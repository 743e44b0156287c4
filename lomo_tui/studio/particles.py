"""Weather and atmosphere drawn over a picture at a moment ``t`` (0..1) of a clip."""
from __future__ import annotations

import math
from dataclasses import dataclass
from random import Random

from PIL import Image, ImageDraw

from ..language import most_mentioned as best
from .palette import RGB, Palette, mix
from .subjects import WEATHER_WORDS


@dataclass(frozen=True)
class _Mote:
    x: float
    y: float
    vx: float
    vy: float
    size: float
    phase: float


def particle_kind(prompt: str, palette: Palette) -> str:
    """``rain`` or ``snow`` when the prompt says so, ``stars`` at night, else drifting ``motes``."""
    weather = best(prompt, WEATHER_WORDS, "")
    if weather:
        return weather
    return "stars" if palette.family in ("night", "neon") else "motes"


class Particles:
    """A seeded set of particles that move (and wrap around) as ``t`` goes from 0 to 1."""

    _SPEED = {"rain": (3.0, 5.0), "snow": (0.3, 0.6), "stars": (0.0, 0.0), "motes": (-0.25, -0.1)}

    def __init__(self, kind: str, palette: Palette, size: tuple[int, int], rng: Random) -> None:
        self.kind, self.palette, self.size = kind, palette, size
        lo, hi = self._SPEED[kind]
        count = max(8, min(240, size[0] * size[1] // 2500))
        self.motes = [
            _Mote(rng.random(), rng.random(), rng.uniform(-0.05, 0.05), rng.uniform(lo, hi),
                  rng.uniform(0.5, 1.0), rng.uniform(0, math.tau))
            for _ in range(count)
        ]

    @property
    def streak(self) -> RGB:
        """Light rain on a dark sky, dark rain on a light one."""
        sky = self.palette.sky[len(self.palette.sky) // 2]
        return self.palette.light if sum(sky) < 384 else mix(sky, self.palette.subject, 0.6)

    def draw(self, image: Image.Image, t: float) -> Image.Image:
        """Draw the particles as they are at ``t`` onto ``image`` (in place) and return it."""
        d = ImageDraw.Draw(image, "RGBA")
        w, h = self.size
        unit = min(w, h)
        for m in self.motes:
            x, y = (m.x + m.vx * t) % 1.0 * w, (m.y + m.vy * t) % 1.0 * h
            if self.kind == "rain":
                d.line((x, y, x - unit * 0.01, y + unit * 0.06 * m.size), fill=(*self.streak, 140),
                       width=max(1, unit // 300))
                continue
            r = m.size * unit / (90 if self.kind == "snow" else 180)
            twinkle = 0.5 + 0.5 * math.sin(m.phase + t * math.tau * 3)
            alpha = round(70 + 185 * twinkle) if self.kind == "stars" else (210 if self.kind == "snow" else 110)
            x += math.sin(m.phase + t * math.tau) * unit * 0.01 if self.kind == "snow" else 0
            colour = self.palette.accent if self.kind == "stars" else self.palette.light
            d.ellipse((x - r, y - r, x + r, y + r), fill=(*colour, alpha))
        return image
