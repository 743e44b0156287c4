"""The Textual app. Imported only when the TUI opens (never by the runtime)."""
from __future__ import annotations

from typing import Any


def run_app(settings: Any) -> int:
    """Open the TUI. The first screen paints before the runtime (and any model library) loads."""
    from .images import image_mode, prepare

    prepare(image_mode(settings))  # one round trip to the terminal, before Textual owns the keyboard
    from .app import LomoApp

    result = LomoApp(settings).run()
    return result if isinstance(result, int) else 0
