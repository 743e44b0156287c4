"""The prompt written small on a picture, in a font that has its characters."""
from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from .palette import Palette

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# Tried after Pillow's bundled font (basic Latin only), in order, where the system has them.
_SYSTEM_FONTS = (
    "DejaVuSans.ttf", "NotoSans-Regular.ttf", "Arial Unicode.ttf", "arial.ttf",
    "NotoSansCJK-Regular.ttc", "NotoSansCJKsc-Regular.otf", "DroidSansFallbackFull.ttf",
    "PingFang.ttc", "Hiragino Sans GB.ttc", "msyh.ttc",
)
_MISSING = "\U0010fffd"  # a private-use character no font draws: its glyph is the "missing" box


# Languages whose script Pillow's fonts lack, asked of fontconfig (`fc-match ':lang=zh'`) when it is there.
_FONTCONFIG_LANGS = ("zh", "ja", "ko")


@lru_cache(maxsize=1)
def fontconfig_files() -> tuple[str, ...]:
    """Font files fontconfig picks for Chinese, Japanese and Korean text (none without fontconfig)."""
    found: list[str] = []
    for lang in _FONTCONFIG_LANGS:
        # fc-match names the best font for the language (it may be a Latin one ranked first); fc-list
        # names fonts that really cover it
        for tool, args in (("fc-match", ["-f", "%{file}"]), ("fc-list", ["-f", "%{file}\n"])):
            exe = shutil.which(tool)
            if exe is None:
                continue
            try:
                out = subprocess.run([exe, *args, f":lang={lang}"], capture_output=True, text=True, timeout=3,
                                     check=False).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            for file in sorted(out.split("\n"))[:3] if tool == "fc-list" else [out.strip()]:
                if file and file not in found and Path(file).is_file():
                    found.append(file)
    return tuple(found)


@lru_cache(maxsize=8)
def _fonts(size: int) -> tuple[Font, ...]:
    fonts: list[Font] = [ImageFont.load_default(size)]
    for name in (*_SYSTEM_FONTS, *fontconfig_files()):
        try:
            fonts.append(ImageFont.truetype(name, size))
        except OSError:
            continue
    return tuple(fonts)


@lru_cache(maxsize=4096)
def _glyph(font: Font, ch: str) -> bytes:
    canvas = Image.new("L", (64, 64))
    ImageDraw.Draw(canvas).text((8, 8), ch, font=font, fill=255)
    return canvas.tobytes()


def _covered(font: Font, text: str) -> int:
    return sum(ch.isspace() or _glyph(font, ch) != _glyph(font, _MISSING) for ch in set(text))


def font_for(text: str, size: int) -> Font:
    """The first font that draws every character of ``text`` (else the one that draws most)."""
    fonts = _fonts(size)
    need = len(set(text))
    return next((f for f in fonts if _covered(f, text) == need), None) or max(fonts, key=lambda f: _covered(f, text))


def _fit(text: str, font: Font, width: int) -> str:
    """``text``, cut with an ellipsis where needed so it fits ``width`` pixels."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "…") > width:
        text = text[: min(len(text) - 1, int(len(text) * width / font.getlength(text + "…")))]
    return text.rstrip() + "…"


def _layout(size: tuple[int, int]) -> tuple[int, int, int]:
    """The caption's font size, left margin and top row for a picture of SIZE."""
    w, h = size
    font_size = margin = max(8, min(w, h) // 40)
    return font_size, margin, h - 2 * margin


def uncaption(image: Image.Image) -> Image.Image:
    """Cover the caption a Lomo render carries with the row above it (in place), so a piece remade from
    itself shows one caption, not the old one under the new."""
    font_size, _, top = _layout(image.size)
    top = max(1, top - 2)
    bottom = min(image.height, top + 2 + font_size * 13 // 10 + 4)
    row = image.crop((0, top - 1, image.width, top))
    for y in range(top, bottom):
        image.paste(row, (0, y))
    return image


def caption(image: Image.Image, prompt: str, palette: Palette) -> None:
    """Write the prompt small along the bottom-left edge, in the palette's ink."""
    size, margin, top = _layout(image.size)
    text = " ".join(prompt.split())[:200]
    font = font_for(text + "…", size)
    text = _fit(text, font, image.width - 2 * margin)
    d = ImageDraw.Draw(image, "RGBA")
    d.text((margin + 1, top + 1), text, font=font, fill=(0, 0, 0, 90))
    d.text((margin, top), text, font=font, fill=palette.ink)
