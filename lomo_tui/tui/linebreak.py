"""Line breaking by cell width for text that mixes CJK and spaced scripts, and a Visual that uses it.

Textual (like Rich) breaks lines only at spaces, so a Chinese or Japanese sentence is one "word": it moves
whole to the next line when it does not fit after a bullet, or is chopped at the cell limit. Here a line may
also break between two wide characters (or a wide and a narrow one), except before closing punctuation and
small kana, after opening brackets, between a number and its counter ("9枚") and inside a katakana word
("チェックリスト") — the rules of kinsoku, simplified. Widths are terminal cells, measured when the widget is drawn: nothing is split in advance.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len, get_character_cell_size
from textual.content import Content
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

NO_LINE_START = frozenset("、。，．,.!?！？：:；;）)」』】〕》〉’”ー…‥・ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々〻")
NO_LINE_END = frozenset("（(「『【〔《〈‘“")


def _wide(ch: str) -> bool:
    return get_character_cell_size(ch) == 2


def _katakana(ch: str) -> bool:
    return "\u30a0" <= ch <= "\u30ff"


def _breaks_between(a: str, b: str) -> bool:
    """May a line break between the characters A and B (a space stays at the end of the line before)?"""
    if b == " ":
        return False
    if a == " ":
        return True
    if a in NO_LINE_END or b in NO_LINE_START or (a.isdigit() and _wide(b)) or (_katakana(a) and _katakana(b)):
        return False
    return _wide(a) or _wide(b)


def _units(text: str) -> list[str]:
    """TEXT in the pieces a line may not break inside (a word with its trailing spaces, one CJK character)."""
    units: list[str] = []
    current = ""
    for ch in text:
        if current and _breaks_between(current[-1], ch):
            units.append(current)
            current = ""
        current += ch
    if current:
        units.append(current)
    return units


def _fold(word: str, width: int) -> list[str]:
    """A piece wider than a line, cut by cells."""
    out, line = [], ""
    for ch in word:
        if line and cell_len(line + ch) > width:
            out.append(line)
            line = ""
        line += ch
    return out + [line] if line else out


def wrap(text: str, width: int) -> list[str]:
    """The lines TEXT takes at WIDTH cells (every line at most WIDTH cells; a line that is not the last
    ends where a break is allowed, its trailing spaces dropped)."""
    width = max(width, 1)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, used = "", 0
        for unit in _units(paragraph):
            body = unit.rstrip(" ")
            if line and used + cell_len(body) > width:
                lines.append(line.rstrip(" "))
                line, used = "", 0
                unit = unit.lstrip(" ")
                body = unit.rstrip(" ")
            if not line and cell_len(body) > width:
                *whole, body = _fold(body, width) or [""]
                lines.extend(whole)
                unit = body
            line += unit
            used += cell_len(unit)
        lines.append(line.rstrip(" "))
    return lines


@dataclass(frozen=True)
class Para:
    """One paragraph: PREFIX on its first line (its width indents the others), BODY wrapped after it, each
    line drawn through MARKUP (Textual markup with $line: "[b]$line[/]", "[@click=go(1)]$line[/]")."""

    body: str
    prefix: str = ""
    markup: str = "$line"


class Paragraphs(Visual):
    """Paragraphs with hanging indents, wrapped by `wrap` at the width they are drawn at."""

    def __init__(self, paragraphs: list[Para]) -> None:
        self.paragraphs = paragraphs

    def lines(self, width: int) -> list[Content]:
        out: list[Content] = []
        for para in self.paragraphs:
            indent = cell_len(para.prefix)
            rows = wrap(para.body, max(width - indent, 1)) if indent < width else wrap(para.prefix + para.body, width)
            lead = [para.prefix] + [" " * indent] * (len(rows) - 1) if indent < width else [""] * len(rows)
            out += [Content.from_markup(para.markup, line=f"{a}{b}") for a, b in zip(lead, rows)]
        return out

    def __str__(self) -> str:
        return "\n".join(f"{p.prefix}{p.body}" for p in self.paragraphs)

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return Content("\n").join(self.lines(width)).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max((cell_len(f"{p.prefix}{line}") for p in self.paragraphs for line in p.body.split("\n")),
                   default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines(width))

    def extract(self, selection: Selection) -> str:
        return selection.extract(str(self))
