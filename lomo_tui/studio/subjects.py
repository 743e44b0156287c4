"""Subject silhouettes (cat, dog, tree, person, car…) drawn with Pillow primitives."""
from __future__ import annotations

import math
from random import Random
from typing import Callable, Sequence

from PIL import ImageDraw

from ..language import KeywordTable as Table
from .palette import RGB, Palette

SUBJECT_WORDS: Table = {
    "cat": ("cat", "kitten*", "kitty", "猫", "ネコ", "ねこ", "кот", "кота", "коту", "котом", "коты",
            "котик*", "котен*", "кошк*"),
    "fox": ("fox", "foxes", "vixen", "狐狸", "狐", "キツネ", "きつね", "лис", "лиса", "лису", "лисы", "лисой",
            "лисиц*", "лисен*", "лисичк*"),
    "dog": ("dog", "puppy", "puppies", "pup", "狗", "犬", "いぬ", "イヌ", "собак*", "пес", "щен*"),
    "tree": ("tree", "pine*", "oak", "树", "樹", "木", "дерев*", "елк*", "ель", "сосн*"),
    "mountain": ("mountain*", "peak*", "alps", "山", "гора", "горы", "гор", "горах", "горн",
                 "горный", "горная", "горное", "горные"),
    "city": ("city", "cities", "town", "skyline", "street*", "urban", "downtown", "城市", "都市",
             "街", "町", "город*", "улиц*"),
    "person": ("person", "people", "man", "woman", "girl", "boy", "child", "kid", "portrait", "人",
               "女孩", "男孩", "少女", "女の子", "男の子", "человек*", "люд*", "девушк*", "девочк*",
               "мальчик*", "женщин*", "мужчин*"),
    "car": ("car", "auto", "automobile", "truck", "taxi", "车", "汽车", "車", "クルマ", "машин*",
            "автомобил*", "авто"),
    "house": ("house*", "home", "cottage", "cabin", "房子", "房屋", "小屋", "家", "дом", "дома",
              "домик*"),
    "bird": ("bird*", "seagull*", "鸟", "鳥", "птиц*", "чайк*"),
    "flower": ("flower*", "rose", "tulip*", "bloom*", "花", "цветок", "цветы", "цветов", "роза", "розы",
               "тюльпан*"),
}

WEATHER_WORDS: Table = {
    "rain": ("rain*", "drizzle", "storm*", "雨", "дожд*", "ливн*", "ливен*"),
    "snow": ("snow*", "blizzard", "雪", "снег*", "снеж*", "метел*"),
}


class Pen:
    """Draws in subject units: ``u`` rightwards (mirrored by ``face``), ``v`` up from the feet."""

    def __init__(self, draw: ImageDraw.ImageDraw, x: float, y: float, s: float, face: int) -> None:
        self.draw, self.x, self.y, self.s, self.face = draw, x, y, s, face

    def pt(self, u: float, v: float) -> tuple[float, float]:
        return (self.x + u * self.s * self.face, self.y - v * self.s)

    def _box(self, u0: float, v0: float, u1: float, v1: float) -> tuple[float, float, float, float]:
        (xa, ya), (xb, yb) = self.pt(u0, v0), self.pt(u1, v1)
        return (min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb))

    def oval(self, u0: float, v0: float, u1: float, v1: float, fill: RGB) -> None:
        self.draw.ellipse(self._box(u0, v0, u1, v1), fill=fill)

    def circle(self, u: float, v: float, r: float, fill: RGB) -> None:
        self.oval(u - r, v - r, u + r, v + r, fill)

    def rect(self, u0: float, v0: float, u1: float, v1: float, fill: RGB, radius: float = 0) -> None:
        self.draw.rounded_rectangle(self._box(u0, v0, u1, v1), radius=radius * self.s, fill=fill)

    def poly(self, points: Sequence[tuple[float, float]], fill: RGB) -> None:
        self.draw.polygon([self.pt(u, v) for u, v in points], fill=fill)

    def line(self, points: Sequence[tuple[float, float]], fill: RGB, width: float) -> None:
        self.draw.line([self.pt(u, v) for u, v in points], fill=fill,
                       width=max(1, round(width * self.s)), joint="curve")


def _cat(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.oval(-0.30, 0, 0.30, 0.62, c)
    pen.circle(0, 0.74, 0.21, c)
    pen.poly([(-0.20, 0.82), (-0.16, 1.02), (-0.04, 0.92)], c)
    pen.poly([(0.20, 0.82), (0.16, 1.02), (0.04, 0.92)], c)
    pen.line([(0.24, 0.08), (0.45, 0.12), (0.52, 0.30), (0.46, 0.46)], c, 0.07)
    pen.oval(-0.12, 0.72, -0.04, 0.80, p.accent)
    pen.oval(0.04, 0.72, 0.12, 0.80, p.accent)


def _dog(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.rect(-0.42, 0.30, 0.30, 0.62, c, 0.12)
    for u in (-0.38, -0.20, 0.06, 0.20):
        pen.rect(u, 0, u + 0.10, 0.40, c, 0.03)
    pen.circle(0.40, 0.72, 0.17, c)
    pen.rect(0.45, 0.60, 0.66, 0.74, c, 0.05)
    pen.oval(0.26, 0.50, 0.37, 0.80, c)
    pen.line([(-0.40, 0.55), (-0.55, 0.75), (-0.58, 0.86)], c, 0.06)
    pen.circle(0.45, 0.77, 0.025, p.accent)


def _fox(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.oval(-0.40, 0.22, 0.26, 0.52, c)  # a long, low body
    for u in (-0.34, -0.22, 0.10, 0.20):
        pen.rect(u, 0, u + 0.07, 0.32, c, 0.03)
    pen.poly([(-0.36, 0.40), (-0.62, 0.52), (-0.86, 0.34), (-0.70, 0.18), (-0.48, 0.24)], c)  # brush
    pen.poly([(-0.86, 0.34), (-0.70, 0.18), (-0.78, 0.24)], p.light)  # its pale tip
    pen.poly([(0.16, 0.42), (0.30, 0.74), (0.62, 0.54), (0.40, 0.40)], c)  # head and pointed snout
    pen.poly([(0.24, 0.66), (0.24, 0.90), (0.36, 0.72)], c)  # ears
    pen.poly([(0.32, 0.70), (0.40, 0.92), (0.45, 0.68)], c)
    pen.poly([(0.36, 0.44), (0.62, 0.54), (0.44, 0.40)], p.light)  # white muzzle
    pen.circle(0.40, 0.60, 0.025, p.accent)


def _tree(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.rect(-0.06, 0, 0.06, 0.50, c)
    if rng.random() < 0.5:
        for v, half in ((0.30, 0.34), (0.55, 0.27), (0.78, 0.19)):
            pen.poly([(-half, v), (half, v), (0, v + 0.36)], c)
        return
    for u, v, r in ((0, 0.80, 0.26), (-0.19, 0.62, 0.20), (0.19, 0.62, 0.20)):
        pen.circle(u, v, r, c)


def _person(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.circle(0, 0.90, 0.09, c)
    pen.poly([(-0.14, 0.79), (0.14, 0.79), (0.11, 0.42), (-0.11, 0.42)], c)
    pen.line([(-0.06, 0.44), (-0.09, 0.0)], c, 0.07)
    pen.line([(0.06, 0.44), (0.09, 0.0)], c, 0.07)
    pen.line([(-0.13, 0.76), (-0.24, 0.50)], c, 0.06)
    pen.line([(0.13, 0.76), (0.22, 0.52)], c, 0.06)


def _car(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.rect(-0.60, 0.10, 0.60, 0.38, c, 0.08)
    pen.poly([(-0.32, 0.36), (-0.20, 0.60), (0.22, 0.60), (0.38, 0.36)], c)
    pen.poly([(-0.26, 0.38), (-0.17, 0.55), (-0.02, 0.55), (-0.02, 0.38)], p.accent)
    pen.poly([(0.03, 0.38), (0.03, 0.55), (0.19, 0.55), (0.31, 0.38)], p.accent)
    for u in (-0.35, 0.35):
        pen.circle(u, 0.13, 0.13, c)
        pen.circle(u, 0.13, 0.05, p.accent)
    pen.circle(0.56, 0.28, 0.035, p.light)


def _house(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.rect(0.22, 0.66, 0.32, 0.92, c)
    pen.rect(-0.40, 0, 0.40, 0.56, c)
    pen.poly([(-0.50, 0.54), (0, 0.94), (0.50, 0.54)], c)
    pen.rect(-0.08, 0, 0.08, 0.28, p.accent)
    pen.rect(0.17, 0.28, 0.31, 0.42, p.light)


def _flower(pen: Pen, p: Palette, rng: Random) -> None:
    c = p.subject
    pen.line([(0, 0), (0.02, 0.55)], c, 0.04)
    pen.oval(0.02, 0.16, 0.22, 0.28, c)
    petals = 5 + rng.randrange(3)
    for k in range(petals):
        angle = math.tau * k / petals
        pen.circle(0.02 + 0.13 * math.cos(angle), 0.66 + 0.13 * math.sin(angle), 0.10, p.accent)
    pen.circle(0.02, 0.66, 0.08, p.light)


Draw = Callable[[Pen, Palette, Random], None]

FOREGROUND: dict[str, Draw] = {
    "cat": _cat, "dog": _dog, "fox": _fox, "tree": _tree, "person": _person, "car": _car, "house": _house,
    "flower": _flower,
}
