"""Small pure formatting helpers shared by widgets (money, times, bars, message styling)."""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Callable

from textual.content import Content, Span

from .. import clock

Clock = Callable[[float], str]

STATE_STYLE = {
    "running": "$success",
    "waiting_job": "$secondary",
    "waiting_you": "$warning",
    "paused": "$text-muted",
    "done": "$primary",
    "failed": "$error",
    "stopped": "$text-muted",
    "idle": "$text-muted",
    "archived": "$text-muted",
}
STATE_ICON = {
    "running": "●", "waiting_job": "◔", "waiting_you": "⚑", "paused": "‖", "done": "✓", "failed": "✗",
    "stopped": "■", "idle": "○", "archived": "▫",
}


def clock_time(at: float) -> str:
    """Local wall-clock time for a timestamp (HH:MM, or the date for older days)."""
    if not at:
        return ""
    now = time.localtime(clock.now())
    then = time.localtime(at)
    if then[:3] == now[:3]:
        return time.strftime("%H:%M", then)
    return time.strftime("%d %b %H:%M", then)


def frozen_clock(text: str = "09:41") -> Clock:
    """A clock for snapshots: every time reads the same."""
    return lambda _at: text


def money(amount: float | None, currency: str = "USD") -> str:
    """"$0.12" for dollars, "0.40 credits" for anything else."""
    if amount is None:
        return "—"
    number = f"{amount:,.2f}" if amount >= 0.01 or amount == 0 else f"{amount:.3f}"
    return f"${number}" if currency.upper() in ("USD", "$") else f"{number} {currency}"


def bar(done: int, total: int, width: int = 8) -> str:
    if total <= 0:
        return ""
    filled = round(width * done / total)
    return "▰" * filled + "▱" * (width - filled)


def middle_cut(text: str, width: int) -> str:
    """"jazz-short-film-shot-1-of-3-90bb0b.png" -> "jazz-short-fi…0bb0b.png"."""
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep - keep // 2] + "…" + text[-(keep // 2):]


_BREAKS = "-_ ."


def distinct_names(names: list[str], width: int) -> list[str]:
    """NAMES shortened to WIDTH so that they stay told apart: the part they share is elided (its first
    word kept), the part that differs and the extension stay. ["retro-poster-for-the-jazz-night-1-c2b0ad.png",
    "…-2-9a1e04.png"] -> ["retro-…1-c2b0ad.png", "retro-…2-9a1e04.png"]."""
    if all(len(n) <= width for n in names):
        return list(names)
    shared = _common_prefix(names) if len(names) > 1 else ""
    out = []
    for name in names:
        if len(name) <= width:
            out.append(name)
            continue
        if len(shared) >= 6:
            first = next((i + 1 for i, ch in enumerate(shared) if ch in _BREAKS), len(shared))
            lead = shared[:min(first, 8)]
            name = lead + "…" + name[len(shared):]
            if len(name) <= width:
                out.append(name)
                continue
            rest = name[len(lead) + 1:]
            out.append(lead + "…" + _keep_start(rest, width - len(lead) - 1))
        else:
            out.append(middle_cut(name, width))
    return out


def _common_prefix(names: list[str]) -> str:
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    cut = max((i + 1 for i, ch in enumerate(prefix) if ch in _BREAKS), default=0)
    return prefix[:cut]  # end on a word boundary, so "poster-1" and "poster-12" keep their numbers


def _keep_start(text: str, width: int) -> str:
    """TEXT cut to WIDTH keeping its start (where names differ) and its extension."""
    if len(text) <= width:
        return text
    dot = text.rfind(".")
    ext = text[dot:] if 0 < dot and len(text) - dot <= 6 else ""
    keep = max(1, width - len(ext) - 1)
    return text[:keep] + "…" + ext


def short_path(path: str | Path, home: Path | None = None) -> str:
    path = Path(path)
    home = home or Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def compact_path(path: str | Path, width: int = 32, home: Path | None = None) -> str:
    """The workspace as the header shows it: ~ for home, middle folders elided to fit WIDTH
    ("~/…/clients/jazz-night"), the last folder always whole."""
    text = short_path(path, home)
    if len(text) <= width:
        return text
    parts = text.split("/")
    head, tail = parts[0], parts[1:]  # head: "~", or "" for an absolute path
    while len(tail) > 1 and len("/".join([head, "…", *tail])) > width:
        tail = tail[1:]
    return "/".join([head, "…", *tail]) if tail else text


_INLINE = (
    (re.compile(r"\*\*(.+?)\*\*"), "bold"),
    (re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])"), "italic"),
    (re.compile(r"`([^`]+)`"), "$secondary"),
)


def message_content(text: str) -> Content:
    """Markdown-flavoured styling without re-layout: headings, bold, italics and code are styled in place,
    the markers stay (so selection copies exactly what was written). Fast enough for thousands of rows."""
    spans: list[Span] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            spans.append(Span(offset, offset + len(line.rstrip("\n")), "bold $accent"))
        elif stripped.startswith(("- ", "* ", "+ ")):
            lead = len(line) - len(stripped)
            spans.append(Span(offset + lead, offset + lead + 1, "$primary"))
        elif stripped.startswith(">"):
            spans.append(Span(offset, offset + len(line.rstrip("\n")), "italic $text-muted"))
        offset += len(line)
    for pattern, style in _INLINE:
        for match in pattern.finditer(text):
            spans.append(Span(match.start(), match.end(), style))
    return Content(text, spans=spans)
