"""Pictures in the terminal through textual-image, without slowing the first paint.

`[tui] images` in config.toml: "auto" (Sixel or the Kitty graphics protocol where the terminal has
one, coloured half cells otherwise — also under tmux), "halfcell", "unicode", or "off".

`prepare()` runs before `App.run()`: it asks the terminal what it supports in one round trip
(`termprobe`). textual-image itself is imported later, on the first picture, in a thread, with its
own import-time terminal probe kept off (it would read the keyboard Textual now owns) and its
cell-size cache filled from our probe. Pictures are decoded and scaled in a thread as well.
"""
from __future__ import annotations

import asyncio
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from .termprobe import Caps, probe

log = logging.getLogger("lomo.tui.images")
MODES = ("auto", "halfcell", "unicode", "off")
_caps: Caps | None = None
_library: Any = None
_lock = threading.Lock()


def image_mode(settings: Any) -> str:
    mode = str(settings.section("tui").get("images", "auto")).lower() if hasattr(settings, "section") else "auto"
    return mode if mode in MODES else "auto"


def prepare(mode: str) -> None:
    """Before Textual starts: learn what the terminal can show (milliseconds, not an import)."""
    global _caps
    if mode != "off":
        _caps = probe()


class _NotATerminal:
    """sys.__stdout__ as textual-image's import sees it: not a terminal, so it asks nothing."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _import_library() -> Any:
    global _library
    with _lock:
        if _library is not None:
            return _library
        caps = _caps or Caps("unicode", None)
        from textual_image import _terminal

        _terminal.get_cell_size._result = _terminal.CellSize(*(caps.cell or (10, 20)))  # type: ignore[attr-defined]
        real = sys.__stdout__
        sys.__stdout__ = _NotATerminal(real)  # type: ignore[assignment,misc]
        try:
            from textual_image import widget
        finally:
            sys.__stdout__ = real  # type: ignore[misc]
        _library = widget
        return widget


async def widget_class(mode: str) -> Any | None:
    """The textual-image widget class for MODE (None when pictures are off or cannot load)."""
    if mode == "off":
        return None
    try:
        widget = await asyncio.to_thread(_import_library)
    except Exception:  # noqa: BLE001 — no pictures is better than no app
        log.exception("textual-image could not load; previews show file names only")
        return None
    kind = mode if mode != "auto" else (_caps.graphics if _caps else "unicode")
    return {"sixel": widget.SixelImage, "tgp": widget.TGPImage, "halfcell": widget.HalfcellImage}.get(
        kind, widget.UnicodeImage)


def _load(path: Path, max_px: tuple[int, int]) -> Any:
    from PIL import Image as PILImage

    with PILImage.open(path) as img:
        img.seek(0)
        copy = img.convert("RGB")
    copy.thumbnail(max_px)
    return copy


async def load_picture(path: Path, max_px: tuple[int, int] = (320, 320)) -> Any | None:
    """The picture at PATH, decoded and scaled down in a thread (None if it is not a readable image)."""
    try:
        return await asyncio.to_thread(_load, path, max_px)
    except Exception:  # noqa: BLE001 — a broken image shows as its name
        return None
