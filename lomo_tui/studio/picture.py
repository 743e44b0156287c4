"""The picture behind a still or a clip: a composed scene, or the creator's inputs in the palette."""
from __future__ import annotations

import os
from random import Random
from typing import Sequence

from PIL import Image, ImageOps

from .caption import uncaption
from .palette import Palette, palette_for
from .scene import compose

Size = tuple[int, int]
InputPath = str | os.PathLike[str]

# Share of an input's own colour kept when recolouring it into the palette: a neutral prompt
# asks for no palette, so the photo stays as it is; black-and-white keeps no colour at all.
_KEEP = {"neutral": 1.0, "mono": 0.0}
_DEFAULT_KEEP = 0.3


def load_input(path: InputPath, size: Size) -> Image.Image:
    """An input image, upright, RGB, cropped and scaled to fill ``size``."""
    with Image.open(path) as src:
        src.draft("RGB", size)
        image = ImageOps.exif_transpose(src).convert("RGB")
        if "prompt" in src.info and "seed" in src.info:  # a Lomo render: its caption is not part of the picture
            uncaption(image)
    return ImageOps.fit(image, size, Image.Resampling.BILINEAR)


def recolour(image: Image.Image, palette: Palette) -> Image.Image:
    """Map the image's tones onto the palette, keeping a share of its own colour."""
    keep = _KEEP.get(palette.family, _DEFAULT_KEEP)
    if keep >= 1.0:
        return image
    grey = ImageOps.autocontrast(image.convert("L"), cutoff=1)
    mid = palette.sky[len(palette.sky) // 2]
    tinted = ImageOps.colorize(grey, black=palette.subject, white=palette.light, mid=mid)
    return Image.blend(tinted, image, keep) if keep else tinted


def _collage(base: Image.Image, extras: Sequence[InputPath], palette: Palette, rng: Random) -> None:
    """Lay further inputs over the base as framed cards along the bottom edge."""
    w, h = base.size
    side = max(8, min(w, h) * 3 // 10)
    border = max(1, side // 24)
    for i, path in enumerate(extras[:3]):
        card = ImageOps.expand(recolour(load_input(path, (side, side)), palette), border, fill=palette.light)
        x = w - (i + 1) * (side + border * 4) + rng.randrange(border + 1)
        y = h - side - border * 6 - rng.randrange(border * 2 + 1)
        base.paste(card, (max(0, x), max(0, y)))


def picture(prompt: str, *, seed: int, size: Size, inputs: Sequence[InputPath] = (),
            restyle: bool = True) -> Image.Image:
    """The scene for a prompt, or (given inputs) the first input recoloured with the rest on top.
    RESTYLE False keeps the first input's own colours (a key frame a clip animates)."""
    palette = palette_for(prompt)
    if not inputs:
        return compose(prompt, palette, seed=seed, size=size)
    base = load_input(inputs[0], size)
    if restyle:
        base = recolour(base, palette)
    _collage(base, inputs[1:], palette, Random(f"{seed}\x00{prompt}"))
    return base

