"""Ask the terminal, once, before Textual starts, what pictures it can show — in one round trip.

textual-image probes at import time: a Sixel query, then a Kitty-graphics query that waits 100 ms
for an answer most terminals never send, and it imports numpy and Pillow first. That cost ~170 ms
before the first paint. Here the graphics query and the device-attributes query go out together;
terminals answer in order, so the device attributes (which every terminal sends) end the wait.
The library itself is then imported after the first paint (see `images.py`).
"""
from __future__ import annotations

import os
import re
import select
import sys
import time
from dataclasses import dataclass

GRAPHICS_QUERY = "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"
CELL_QUERY = "\x1b[16t"
DEVICE_ATTRIBUTES = "\x1b[c"
DA_REPLY = re.compile(r"\x1b\[\?([\d;]*)c")
CELL_REPLY = re.compile(r"\x1b\[6;(\d+);(\d+)t")


@dataclass(frozen=True)
class Caps:
    graphics: str  # sixel | tgp | halfcell | unicode
    cell: tuple[int, int] | None  # (width, height) of a cell in pixels, when known


def _cell_from_ioctl(fd: int) -> tuple[int, int] | None:
    try:
        import fcntl
        import struct
        import termios

        rows, cols, xpix, ypix = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    except (OSError, ImportError):
        return None
    if rows and cols and xpix and ypix:
        return xpix // cols, ypix // rows
    return None


def probe(timeout: float = 0.25) -> Caps:
    """What the terminal on stdin/stdout can show. Without a terminal: text only ("unicode")."""
    stdin, stdout = sys.__stdin__, sys.__stdout__
    if stdin is None or stdout is None or not stdin.isatty() or not stdout.isatty() or os.name != "posix":
        return Caps("unicode", None)
    cell = _cell_from_ioctl(stdout.fileno())
    if os.environ.get("TMUX") or os.environ.get("TERM", "").startswith(("screen", "tmux", "linux")):
        return Caps("halfcell", cell)  # multiplexers and the console pass no picture protocol through
    import termios
    import tty

    fd = stdin.fileno()
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        return Caps("halfcell", cell)
    reply = ""
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        stdout.write(GRAPHICS_QUERY + ("" if cell else CELL_QUERY) + DEVICE_ATTRIBUTES)
        stdout.flush()
        deadline = time.monotonic() + timeout
        while not DA_REPLY.search(reply) and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            reply += os.read(fd, 1024).decode("latin-1")
    except OSError:
        pass
    finally:
        termios.tcsetattr(fd, termios.TCSAFLUSH, saved)
    if cell is None and (found := CELL_REPLY.search(reply)):
        cell = int(found.group(2)), int(found.group(1))
    attributes = DA_REPLY.search(reply)
    # Sixel first, as textual-image does: terminals that report both (WezTerm, Konsole) draw Sixel right.
    if attributes and "4" in attributes.group(1).split(";"):
        return Caps("sixel", cell)
    if "\x1b_Gi=31;OK" in reply:
        return Caps("tgp", cell)
    return Caps("halfcell", cell)
