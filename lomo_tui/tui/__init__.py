"""The Textual app. Imported only when the TUI opens (never by the runtime)."""
from __future__ import annotations

from typing import Any


def run_app(settings: Any) -> int:
    from .app import LomoApp

    LomoApp(settings).run()
    return 0
