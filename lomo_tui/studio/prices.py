"""What the embedded studio charges, and how long it pretends to take.

Prices are in ``credits`` and quoted to 2 decimals (rounded half up, never below 0.01):

============  ==========================================  ====================
kind          price                                       params (defaults)
============  ==========================================  ====================
``image``     per image, by pixel count:                  ``size`` (768, 768),
              ≤ 0.26 MP (512²) 0.02; ≤ 1.05 MP (1024²)    ``n`` 1
              0.04; ≤ 4.2 MP (2048²) 0.08; above that
              0.02 per started megapixel
``video``     per second, by frame pixel count:           ``seconds`` 5,
              ≤ 0.23 MP (640×360) 0.10; ≤ 0.92 MP         ``size`` (480, 270)
              (1280×720) 0.20; ≤ 2.1 MP (1920×1080)
              0.40; above that 0.80
``3d``        0.25 per mesh                               ``n`` 1
``audio``     0.01 per second                             ``seconds`` 3
============  ==========================================  ====================

``size`` (or ``size_px``) may be a (width, height) pair or a ``"WxH"`` string. Simulated latency (seconds, before
the service applies ``LOMO_TIME_SCALE``) is image 3–6 (longer above 1 MP), video 4–8 per second
of clip, 3d 8–12 and audio 3–5, times √n for several images or meshes, with a jitter fixed by
the seed.
"""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from random import Random
from typing import Any, Mapping

CURRENCY = "credits"
KINDS = ("image", "video", "3d", "audio")

IMAGE_TIERS = ((512 * 512, 0.02), (1024 * 1024, 0.04), (2048 * 2048, 0.08))
IMAGE_PER_MEGAPIXEL_ABOVE = 0.02
VIDEO_TIERS = ((640 * 360, 0.10), (1280 * 720, 0.20), (1920 * 1080, 0.40))
VIDEO_PER_SECOND_ABOVE = 0.80
MESH_PRICE = 0.25
AUDIO_PER_SECOND = 0.01

DEFAULTS: dict[str, dict[str, Any]] = {
    "image": {"size": (768, 768), "n": 1},
    "video": {"seconds": 5, "size": (480, 270)},
    "3d": {"n": 1},
    "audio": {"seconds": 3},
}


def _params(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    if kind not in DEFAULTS:
        raise ValueError(f"unknown media kind {kind!r}; expected one of {KINDS}")
    given = {k: v for k, v in params.items() if v is not None}
    if "size_px" in given:  # the generation service's name for it
        given.setdefault("size", given["size_px"])
    merged = {**DEFAULTS[kind], **given}
    if "seconds" in merged and not float(merged["seconds"]) > 0:
        raise ValueError("seconds must be positive")
    if "n" in merged and int(merged["n"]) < 1:
        raise ValueError("n must be at least 1")
    return merged


def pixels(size: Any) -> int:
    """Pixel count of a (width, height) pair or a ``"WxH"`` string."""
    w, h = (int(v) for v in (size.lower().split("x") if isinstance(size, str) else size))
    if w < 1 or h < 1:
        raise ValueError(f"bad size {size!r}")
    return w * h


def _tiered(px: int, tiers: tuple[tuple[int, float], ...], above: float) -> float:
    return next((price for limit, price in tiers if px <= limit), above)


def _credits(amount: float) -> float:
    return max(0.01, float(Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)))


def quote(kind: str, params: Mapping[str, Any]) -> float:
    """The price in credits of one job of ``kind`` ("image", "video", "3d", "audio")."""
    p = _params(kind, params)
    if kind == "image":
        px = pixels(p["size"])
        each = _tiered(px, IMAGE_TIERS, IMAGE_PER_MEGAPIXEL_ABOVE * math.ceil(px / 1_000_000))
        return _credits(each * int(p["n"]))
    if kind == "video":
        per_second = _tiered(pixels(p["size"]), VIDEO_TIERS, VIDEO_PER_SECOND_ABOVE)
        return _credits(per_second * float(p["seconds"]))
    if kind == "3d":
        return _credits(MESH_PRICE * int(p["n"]))
    return _credits(AUDIO_PER_SECOND * float(p["seconds"]))


def simulated_latency(kind: str, params: Mapping[str, Any], seed: int) -> float:
    """Seconds the embedded studio takes for a job, before ``LOMO_TIME_SCALE``; the jitter is
    fixed by ``seed`` so a replayed job takes as long as the first time."""
    p = _params(kind, params)
    jitter = Random(f"{kind}\x00{seed}").random()
    if kind == "image":
        return (3.0 + 3.0 * jitter) * max(1.0, math.sqrt(pixels(p["size"]) / (1024 * 1024))) * int(p["n"]) ** 0.5
    if kind == "video":
        return float(p["seconds"]) * (4.0 + 4.0 * jitter)
    if kind == "3d":
        return (8.0 + 4.0 * jitter) * int(p["n"]) ** 0.5
    return 3.0 + 2.0 * jitter
