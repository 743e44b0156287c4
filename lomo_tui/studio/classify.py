"""Recognise a palette family from an image's pixels (used to check renders match prompts)."""
from __future__ import annotations

import io
from functools import lru_cache

from PIL import Image

from .palette import NEUTRAL, PALETTES
from .scene import compose

Features = tuple[float, ...]
_THUMB = 48
_HUE_BINS = 6  # red, yellow, green, cyan, blue, magenta


def image_features(image: Image.Image) -> Features:
    """Mean lightness and saturation, shares of dark and bright pixels, and the saturation in
    each of six hue bins; all in 0..1."""
    hsv = image.convert("RGB").resize((_THUMB, _THUMB), Image.Resampling.BOX).convert("HSV").tobytes()
    n = _THUMB * _THUMB
    light = sat = dark = bright = 0.0
    hues = [0.0] * _HUE_BINS
    for k in range(0, len(hsv), 3):
        h, s, v = hsv[k], hsv[k + 1] / 255, hsv[k + 2]
        light += v
        sat += s
        dark += v < 64
        bright += v >= 224
        hues[round(h * _HUE_BINS / 256) % _HUE_BINS] += s
    return (light / 255 / n, sat / n, dark / n, bright / n, *(x / n for x in hues))


_WEIGHTS = (1.5, 1.0, 1.0, 0.5) + (1.0,) * _HUE_BINS


def _distance(a: Features, b: Features) -> float:
    return sum(w * (x - y) ** 2 for w, x, y in zip(_WEIGHTS, a, b))


@lru_cache(maxsize=1)
def _references() -> dict[str, Features]:
    """Features of each family's plain reference render (one scene per family, no subject)."""
    return {
        family: image_features(compose(family if family != NEUTRAL else "", palette, seed=0, size=(160, 160)))
        for family, palette in PALETTES.items()
    }


def classify_features(features: Features) -> str:
    """The family whose reference render is nearest in feature space."""
    refs = _references()
    return min(refs, key=lambda family: _distance(features, refs[family]))


def classify_image_family(png_bytes: bytes) -> str:
    """Which palette family an encoded image looks like, judged from its pixels alone."""
    with Image.open(io.BytesIO(png_bytes)) as image:
        return classify_features(image_features(image))
