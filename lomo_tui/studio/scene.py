"""Compose a scene from a prompt: gradient sky, sun or moon, family decor, land, subjects."""
from __future__ import annotations

import math
from dataclasses import dataclass
from random import Random
from typing import Callable

from PIL import Image, ImageDraw

from ..language import mentions
from .palette import RGB, Palette, mix
from .subjects import FOREGROUND, SUBJECT_WORDS, Pen

Draw = ImageDraw.ImageDraw


@dataclass(frozen=True)
class Stage:
    """Where things go: image size, scale unit (the short side) and horizon line."""

    w: int
    h: int
    horizon: int

    @property
    def unit(self) -> int:
        return min(self.w, self.h)


def _sky_at(stops: tuple[RGB, ...], t: float) -> RGB:
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    return mix(stops[i], stops[i + 1], t - i)


def gradient(size: tuple[int, int], stops: tuple[RGB, ...]) -> Image.Image:
    """A vertical gradient through ``stops`` (top to bottom)."""
    w, h = size
    column = Image.new("RGB", (1, h))
    column.putdata([_sky_at(stops, y / max(h - 1, 1)) for y in range(h)])
    return column.resize((w, h), Image.Resampling.NEAREST)


def _alpha(colour: RGB, a: int) -> tuple[int, int, int, int]:
    return (*colour, a)


def _glow(d: Draw, cx: float, cy: float, r: float, colour: RGB, rings: int, alpha: int) -> None:
    for k in range(rings, 0, -1):
        rr = r * (1 + 0.35 * k)
        d.ellipse((cx - rr, cy - rr, cx + rr, cy + rr), fill=_alpha(colour, alpha))


def _disc(d: Draw, cx: float, cy: float, r: float, colour: RGB) -> None:
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)


def _plain_sun(d: Draw, st: Stage, p: Palette, rng: Random, size: float, height: float, glow: int) -> None:
    """A sun ``height`` (share of the sky) above the horizon, ``size`` (share of the unit) wide."""
    x, y, r = st.w * rng.uniform(0.25, 0.75), st.horizon * (1 - height), max(2.0, st.unit * size)
    _glow(d, x, y, r, p.light, glow, 22)
    _disc(d, x, y, r, p.light)


def _striped_sun(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    r = st.unit * 0.2
    x, y = st.w / 2, st.horizon - r * 0.55
    _glow(d, x, y, r, p.light, 2, 30)
    _disc(d, x, y, r, p.light)
    for k in range(5):
        band = y + r * (0.1 + 0.18 * k)
        thick = max(1.0, r * (0.03 + 0.025 * k))
        d.rectangle((x - r, band, x + r, band + thick), fill=_sky_at(p.sky, band / st.h))


def _stars(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    for _ in range(min(400, st.w * st.horizon // 1800)):
        x, y = rng.uniform(0, st.w), rng.uniform(0, st.horizon * 0.95)
        r = rng.choice((0.6, 0.8, 1.0, 1.6)) * max(1.0, st.unit / 500)
        d.ellipse((x - r, y - r, x + r, y + r), fill=_alpha(p.accent, rng.randrange(110, 256)))


def _moon(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    x, y, r = st.w * rng.uniform(0.6, 0.85), st.horizon * rng.uniform(0.2, 0.35), st.unit * 0.08
    _glow(d, x, y, r, p.light, 3, 14)
    _disc(d, x, y, r, p.light)
    _disc(d, x + r * 0.38, y - r * 0.18, r * 0.86, _sky_at(p.sky, (y - r * 0.18) / st.h))


def _halftone(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    step = max(6, st.unit // 36)
    for row, y in enumerate(range(step // 2, st.horizon, step)):
        r = step * 0.42 * (y / st.horizon) ** 1.5
        if r < 0.6:
            continue
        for x in range((row % 2) * step // 2, st.w + step, step):
            d.ellipse((x - r, y - r, x + r, y + r), fill=_alpha(p.accent, 80))


def _hatch(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    step = max(4, st.unit // 60)
    for x in range(-st.h, st.w, step):
        d.line((x, 0, x + st.horizon, st.horizon), fill=_alpha(p.accent, 36), width=1)


def _clouds(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    for _ in range(rng.randrange(2, 5)):
        cx, cy, s = rng.uniform(0, st.w), rng.uniform(0.1, 0.5) * st.horizon, st.unit * rng.uniform(0.05, 0.09)
        for dx, dy, k in ((-1.2, 0.2, 0.8), (0, 0, 1.0), (1.1, 0.25, 0.75), (0.4, 0.45, 0.9)):
            r = s * k
            d.ellipse((cx + dx * s - r * 1.4, cy + dy * s - r, cx + dx * s + r * 1.4, cy + dy * s + r),
                      fill=(255, 255, 255, 150))


def _rays(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    x, y, r = st.w * rng.uniform(0.2, 0.8), st.horizon * 0.35, st.unit * 0.11
    for k in range(12):
        a = math.tau * k / 12 + rng.uniform(0, 0.2)
        far = st.unit * 1.5
        pts = [(x, y), (x + far * math.cos(a - 0.06), y + far * math.sin(a - 0.06)),
               (x + far * math.cos(a + 0.06), y + far * math.sin(a + 0.06))]
        d.polygon(pts, fill=_alpha(p.light, 28))
    _glow(d, x, y, r, p.light, 4, 26)
    _disc(d, x, y, r, p.light)


def _birds(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    for _ in range(rng.randrange(3, 6)):
        x, y, a = rng.uniform(0.1, 0.9) * st.w, rng.uniform(0.15, 0.6) * st.horizon, st.unit * rng.uniform(0.02, 0.035)
        d.line([(x - a, y - a * 0.45), (x - a * 0.4, y - a * 0.5), (x, y), (x + a * 0.4, y - a * 0.5),
                (x + a, y - a * 0.45)], fill=p.subject, width=max(1, st.unit // 250), joint="curve")


def _mountains(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    for _ in range(3):
        x, top = rng.uniform(0.1, 0.9) * st.w, st.horizon - st.unit * rng.uniform(0.22, 0.42)
        half = st.unit * rng.uniform(0.3, 0.45)
        base = st.horizon + st.unit * 0.02
        d.polygon([(x - half, base), (x, top), (x + half, base)], fill=mix(p.far, p.subject, 0.25))
        cap = 0.28
        d.polygon([(x - half * cap, top + (base - top) * cap), (x, top), (x + half * cap, top + (base - top) * cap),
                   (x + half * cap * 0.3, top + (base - top) * cap * 0.8), (x - half * cap * 0.2, top + (base - top) * cap * 0.9)],
                  fill=p.light)


def _skyline(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    colour, x = mix(p.far, p.subject, 0.55), -rng.uniform(0, st.unit * 0.05)
    win = max(2, st.unit // 110)
    while x < st.w:
        bw, bh = st.unit * rng.uniform(0.05, 0.11), st.unit * rng.uniform(0.1, 0.38)
        top = st.horizon - bh
        d.rectangle((x, top, x + bw, st.horizon + st.unit * 0.03), fill=colour)
        for wy in range(int(top + win * 2), st.horizon - win, win * 3):
            for wx in range(int(x + win * 1.5), int(x + bw - win * 2), win * 3):
                if rng.random() < 0.35:
                    d.rectangle((wx, wy, wx + win, wy + win), fill=p.accent)
        x += bw + st.unit * rng.uniform(0.0, 0.02)


def _treeline(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    colour, x = mix(p.far, p.subject, 0.4), -st.unit * 0.03
    while x < st.w + st.unit * 0.05:
        th, half = st.unit * rng.uniform(0.08, 0.2), st.unit * rng.uniform(0.025, 0.045)
        d.polygon([(x - half, st.horizon + 2), (x, st.horizon - th), (x + half, st.horizon + 2)], fill=colour)
        x += st.unit * rng.uniform(0.025, 0.05)


def _land(d: Draw, st: Stage, rng: Random, top: float, amp: float, colour: RGB) -> None:
    phase, freq = rng.uniform(0, math.tau), rng.uniform(1.5, 3.0)
    xs = [st.w * i / 32 for i in range(33)]
    ridge = [(x, top - amp * math.sin(phase + freq * math.tau * x / st.w)) for x in xs]
    d.polygon([(0, st.h), *ridge, (st.w, st.h)], fill=colour)


def _grid(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    depth, line = st.h - st.horizon, max(1, st.unit // 300)
    for k in range(1, 12):
        y = st.horizon + depth * (k / 11) ** 2
        d.line((0, y, st.w, y), fill=_alpha(p.accent, 200), width=line)
    for j in range(-12, 13):
        d.line((st.w / 2 + j * st.w * 0.02, st.horizon, st.w / 2 + j * st.w * 0.16, st.h),
               fill=_alpha(p.accent, 200), width=line)


def _waves(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    depth = st.h - st.horizon
    for k in range(1, 7):
        y0, amp, phase = st.horizon + depth * k / 7, st.unit * 0.006 * k, rng.uniform(0, math.tau)
        pts = [(x, y0 + amp * math.sin(phase + x * 12 / st.w)) for x in range(0, st.w + 8, 8)]
        d.line(pts, fill=_alpha(p.accent, 90), width=max(1, st.unit // 300))


def _reflection(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    x, depth = st.w / 2, st.h - st.horizon
    for k in range(8):
        y, half = st.horizon + depth * (0.05 + 0.11 * k), st.unit * (0.2 - 0.02 * k)
        d.line((x - half, y, x + half, y), fill=_alpha(p.light, 110 - 10 * k), width=max(1, st.unit // 200))


def _stripes(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    depth = st.h - st.horizon
    for k in range(3):
        y = st.horizon + depth * (0.12 + 0.1 * k)
        d.rectangle((0, y, st.w, y + st.unit * (0.012 + 0.008 * k)), fill=p.far)


def _petals(d: Draw, st: Stage, p: Palette, rng: Random) -> None:
    for _ in range(40):
        x, y, r = rng.uniform(0, st.w), rng.uniform(st.horizon, st.h), st.unit * rng.uniform(0.004, 0.01)
        d.ellipse((x - r, y - r, x + r, y + r), fill=_alpha(rng.choice((p.accent, p.light, p.subject)), 200))


Decor = Callable[[Draw, Stage, Palette, Random], None]


def _sun_decor(size: float, height: float, glow: int) -> Decor:
    return lambda d, st, p, rng: _plain_sun(d, st, p, rng, size, height, glow)


@dataclass(frozen=True)
class Style:
    """A family's decor, drawn in three layers: sky, horizon (behind the land) and ground."""

    sky: tuple[Decor, ...] = ()
    horizon: tuple[Decor, ...] = ()
    ground: tuple[Decor, ...] = ()


STYLES: dict[str, Style] = {
    "warm": Style(sky=(_rays,)),
    "retro": Style(sky=(_halftone, _striped_sun), ground=(_stripes,)),
    "cool": Style(sky=(_sun_decor(0.06, 0.7, 2), _clouds), ground=(_waves,)),
    "night": Style(sky=(_stars, _moon)),
    "pastel": Style(sky=(_sun_decor(0.08, 0.55, 3), _clouds), ground=(_petals,)),
    "forest": Style(sky=(_sun_decor(0.07, 0.6, 4),), horizon=(_treeline,)),
    "sunset": Style(sky=(_sun_decor(0.13, 0.12, 5),), ground=(_reflection,)),
    "mono": Style(sky=(_hatch, _sun_decor(0.09, 0.6, 0))),
    "neon": Style(sky=(_stars, _striped_sun), ground=(_grid,)),
    "neutral": Style(sky=(_sun_decor(0.07, 0.6, 2), _clouds)),
}


def _subjects(d: Draw, st: Stage, p: Palette, rng: Random, names: list[str]) -> None:
    chosen = [n for n in names if n in FOREGROUND][:3]
    scale = st.unit * 0.34 / (1 + 0.25 * max(0, len(chosen) - 1))
    for i, name in enumerate(chosen):
        x = st.w * (i + 1) / (len(chosen) + 1) + rng.uniform(-0.04, 0.04) * st.w
        y = st.horizon + (st.h - st.horizon) * 0.62
        FOREGROUND[name](Pen(d, x, y, scale, rng.choice((-1, 1))), p, rng)


def compose(prompt: str, palette: Palette, *, seed: int, size: tuple[int, int]) -> Image.Image:
    """Paint the scene a prompt describes, in ``palette``; deterministic for (prompt, seed, size)."""
    rng = Random(f"{seed}\x00{prompt}")
    w, h = size
    st = Stage(w, h, round(h * rng.uniform(0.6, 0.7)))
    image = gradient(size, palette.sky)
    d = ImageDraw.Draw(image, "RGBA")
    style, names = STYLES[palette.family], mentions(prompt, SUBJECT_WORDS)
    for decor in style.sky:
        decor(d, st, palette, rng)
    if "bird" in names:
        _birds(d, st, palette, rng)
    if "mountain" in names:
        _mountains(d, st, palette, rng)
    _land(d, st, rng, st.horizon - st.unit * 0.05, st.unit * 0.03, palette.far)
    if "city" in names:
        _skyline(d, st, palette, rng)
    for decor in style.horizon:
        decor(d, st, palette, rng)
    _land(d, st, rng, st.horizon, st.unit * 0.015, palette.ground)
    for decor in style.ground:
        decor(d, st, palette, rng)
    _subjects(d, st, palette, rng, names)
    return image
