"""The one wall clock the runtime reads: real time plus an offset (LOMO_CLOCK_OFFSET_S).

Every timestamp Lomo stores or compares (events, leases, gate and job deadlines, "today" for the daily
budget, ids) comes from `now()`, so a drill can move a whole installation days ahead by starting its
processes with `LOMO_CLOCK_OFFSET_S=259200`. Durations (`time.monotonic()`) are not wall-clock reads and
stay as they are.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import time

ENV = "LOMO_CLOCK_OFFSET_S"


def _parse(text: str | None) -> float:
    try:
        value = float(text) if text and text.strip() else 0.0
    except ValueError:
        return 0.0  # config.load_settings names a bad value in one line; the clock itself never fails
    return value if math.isfinite(value) else 0.0


_offset = _parse(os.environ.get(ENV))


def now() -> float:
    """Seconds since the epoch, as the runtime sees them."""
    return time.time() + _offset


def today() -> dt.datetime:
    """Local midnight of the clock's current day (aware)."""
    return dt.datetime.fromtimestamp(now()).astimezone().replace(hour=0, minute=0, second=0, microsecond=0)


def offset() -> float:
    return _offset


def set_offset(seconds: float) -> None:
    """Move the clock (settings apply LOMO_CLOCK_OFFSET_S / [runtime] clock_offset_s through this)."""
    global _offset
    _offset = float(seconds)
