"""Line breaking by cell width for text that mixes CJK and spaced scripts, and a Visual that uses it.

Textual (like Rich) breaks lines only at spaces, so a Chinese or Japanese sentence is one "word": it moves
whole to the next line when it does not fit after a bullet, or is chopped at the cell limit. Here a line may
also break between two wide characters (or a wide and a narrow one), except before closing punctuation and
small kana, after opening brackets, between a number and its counter ("9枚") and inside a katakana word
("チェックリスト") — the rules of kinsoku, simplified. Japanese text (it has kana) breaks where the script
changes to kanji or katakana, not inside a word ("ありませ" / "ん。"). A key hint line breaks only between its
keys, its "·" ending a line ("Ctrl+P 命令 ·"), never starting one. Widths are terminal cells, measured when the
widget is drawn: nothing is split in advance.
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

NO_LINE_START = frozenset("、。，．,.!?！？：:；;）)」』】〕》〉’”ー…‥・·ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々〻")
NO_LINE_END = frozenset("（(「『【〔《〈‘“")


def _wide(ch: str) -> bool:
    return get_character_cell_size(ch) == 2


def _katakana(ch: str) -> bool:
    return "\u30a0" <= ch <= "\u30ff"


def _hiragana(ch: str) -> bool:
    return "\u3041" <= ch <= "\u309f"


def _script(ch: str) -> str:
    """hiragana, katakana, kanji, or "" for anything else (punctuation, Latin)."""
    if _hiragana(ch):
        return "hiragana"
    if _katakana(ch):
        return "katakana"
    return "kanji" if "\u3400" <= ch <= "\u9fff" or ch in "々〆" else ""


def _breaks_between(a: str, b: str, japanese: bool = False) -> bool:
    """May a line break between the characters A and B (a space stays at the end of the line before)? In
    JAPANESE text (it has kana) a word is not broken: never before hiragana (okurigana, particles), nor inside
    a run of kanji or of katakana; a line breaks where the script changes to kanji or katakana."""
    if b == " " or b in NO_LINE_START:
        return False
    if a == " ":
        return True
    if a in NO_LINE_END or (a.isdigit() and _wide(b)) or (_katakana(a) and _katakana(b)):
        return False
    if japanese and _script(b) and (_script(b) == "hiragana" or _script(a) == _script(b)):
        return False
    return _wide(a) or _wide(b)


def _units(text: str, keep: str | None = None) -> list[str]:
    """TEXT in the pieces a line may not break inside (a word with its trailing spaces, one CJK character);
    with KEEP (" · "), the items between those separators, each with the separator after it."""
    if keep:
        items = text.split(keep)
        return [item + keep for item in items[:-1]] + [items[-1]]
    units: list[str] = []
    current = ""
    japanese = any(_hiragana(ch) for ch in text)
    for ch in text:
        if current and _breaks_between(current[-1], ch, japanese):
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


def wrap(text: str, width: int, keep: str | None = None) -> list[str]:
    """The lines TEXT takes at WIDTH cells (every line at most WIDTH cells; a line that is not the last
    ends where a break is allowed, its trailing spaces dropped). KEEP: break only after that separator
    (a key hint "Enter 发送 · F1 帮助" keeps each key with its words; one wider than a line breaks as usual)."""
    width = max(width, 1)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, used = "", 0
        units = _units(paragraph, keep)
        if keep:  # an item wider than a line breaks as any text does
            units = [u for item in units for u in (_units(item) if cell_len(item.rstrip(" ")) > width else [item])]
        for unit in units:
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
    line drawn through MARKUP (Textual markup with $line: "[b]$line[/]", "[@click=go(1)]$line[/]"), the prefix
    with it. A BODY that is `Content` keeps its own styles (MARKUP is not used), and LEAD, where given, is the
    markup the prefix alone is drawn through ("[b $warning]$line[/]"). KEEP: break the body only after that
    separator (" · " between key hints)."""

    body: str | Content
    prefix: str = ""
    markup: str = "$line"
    lead: str | None = None
    keep: str | None = None

    @property
    def plain(self) -> str:
        return self.body.plain if isinstance(self.body, Content) else self.body


def _pieces(body: Content, rows: list[str]) -> list[Content]:
    """BODY cut where `wrap` broke its plain text into ROWS (the spaces dropped at a break stay out)."""
    plain, cuts, cursor = body.plain, [], 0
    for row in rows:
        start = plain.find(row, cursor) if row else cursor
        start = cursor if start < 0 else start
        cuts += [start, start + len(row)]
        cursor = start + len(row)
    pieces = body.divide(cuts)
    return [pieces[2 * n + 1] if 2 * n + 1 < len(pieces) else Content("") for n in range(len(rows))]


class Paragraphs(Visual):
    """Paragraphs with hanging indents, wrapped by `wrap` at the width they are drawn at."""

    def __init__(self, paragraphs: list[Para]) -> None:
        self.paragraphs = paragraphs

    def lines(self, width: int) -> list[Content]:
        out: list[Content] = []
        for para in self.paragraphs:
            indent = cell_len(para.prefix)
            fits = indent < width
            rows = (wrap(para.plain, max(width - indent, 1), para.keep) if fits
                    else wrap(para.prefix + para.plain, width, para.keep))
            lead = [para.prefix] + [" " * indent] * (len(rows) - 1) if fits else [""] * len(rows)
            if isinstance(para.body, Content) or para.lead is not None:
                bodies = (_pieces(para.body, rows) if isinstance(para.body, Content) and fits
                          else [Content.from_markup(para.markup, line=row) for row in rows])
                out += [Content.from_markup(para.lead or "$line", line=a) + b for a, b in zip(lead, bodies)]
            else:
                out += [Content.from_markup(para.markup, line=f"{a}{b}") for a, b in zip(lead, rows)]
        return out

    def __str__(self) -> str:
        return "\n".join(f"{p.prefix}{p.plain}" for p in self.paragraphs)

    @property
    def plain(self) -> str:
        """The text unwrapped, a paragraph a line (as `Content.plain` reads)."""
        return str(self)

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return Content("\n").join(self.lines(width)).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max((cell_len(f"{p.prefix}{line}") for p in self.paragraphs for line in p.plain.split("\n")),
                   default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines(width))

    def extract(self, selection: Selection) -> str:
        return selection.extract(str(self))
