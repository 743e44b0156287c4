"""The first screen in Chinese and Japanese (issue: CJK on the welcome screen): at 80×24, 140 and 60 columns
every line fits the screen, a bullet or an example never stands alone on its line, a wrapped line hangs
under its text, no line starts with closing punctuation, and no word of Latin letters or katakana is cut —
the lines are broken by cell width where the widget is drawn (`tui.linebreak`), not by Textual's
break-at-spaces, which moved a whole CJK sentence under its bullet."""
from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from textual.geometry import Region

from lomo_tui.tui.linebreak import NO_LINE_START, wrap
from lomo_tui.tui.strings import lines as catalogue_lines
from lomo_tui.tui.widgets.stream import Welcome
from tui_apps.states import make_app, until_ready

WORDS = re.compile(r"[A-Za-z0-9+]+|[\u30a0-\u30ff]+")  # what a line may not break inside


@pytest.fixture
def language(monkeypatch: pytest.MonkeyPatch):
    """The creator's language before they have said anything, as the environment sets it (LOMO_LANGUAGE)."""
    for name in ("LOMO_LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)

    def choose(lang: str) -> None:
        monkeypatch.setenv("LOMO_LANGUAGE", lang)
    return choose


def drawn(welcome: Welcome) -> list[str]:
    """The welcome's lines as drawn on the screen, without its border and padding."""
    width, height = welcome.outer_size
    strips = welcome.render_lines(Region(0, 0, width, height))
    inner = welcome.content_region.x - welcome.region.x
    return [strip.text[inner:].rstrip() for strip in strips]


def paragraph(rows: list[str], mark: str, text: str) -> list[str]:
    """The lines of the item TEXT that starts with MARK ("• ", "→ "): its first line and those hanging under."""
    first = next(i for i, row in enumerate(rows) if row.startswith(f"  {mark}") and text.startswith(row[4:6]))
    out = [rows[first][2:]]
    for row in rows[first + 1:]:
        if not row.startswith("    ") or row.strip() == "":
            break
        out.append(row[2:])
    return out


@pytest.mark.parametrize("lang", ["zh", "ja"])
@pytest.mark.parametrize("size", [(80, 24), (140, 36), (60, 24)], ids=["80x24", "140x36", "60x24"])
async def test_the_welcome_in_cjk_wraps_by_cell_width_under_its_bullets(tmp_path, language, lang, size) -> None:
    language(lang)
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=size) as pilot:
        await until_ready(pilot)
        welcome = app.screen.query_one(Welcome)
        assert welcome.display and welcome.region.right <= size[0]
        rows = drawn(welcome)
        assert all(cell_len(row) <= welcome.content_region.width for row in rows)
        for mark, key in (("• ", "welcome.can"), ("→ ", "welcome.examples")):
            for text in catalogue_lines(key, lang):
                shown = paragraph(rows, mark, text)
                assert shown[0].startswith(mark) and shown[0][2:].strip(), (text, shown)  # never a mark alone
                body = [shown[0][2:], *(row[2:] for row in shown[1:])]
                assert all(not row.startswith(" ") for row in body), shown  # hanging under the text
                assert "".join(body).replace(" ", "") == text.replace(" ", ""), shown  # nothing lost or moved
                assert not any(row[:1] in NO_LINE_START for row in body[1:]), shown
                for word in WORDS.findall(text):
                    assert any(word in row for row in body), (word, shown)


@pytest.mark.parametrize("width", [16, 24, 37])
def test_a_cjk_line_breaks_between_characters_but_not_before_closing_punctuation(width: int) -> None:
    text = "制作图片、短视频、声音和 3D 模型（每次花费都会先问你）。チェックリスト、ファイル"
    rows = wrap(text, width)
    assert all(cell_len(row) <= width for row in rows)
    assert "".join(rows).replace(" ", "") == text.replace(" ", "")
    assert not any(row[:1] in NO_LINE_START for row in rows[1:])
    assert all(any(word in row for row in rows) for word in ("3D", "チェックリスト"))
    assert any(cell_len(row) > width - 3 for row in rows[:-1]) if len(rows) > 1 else True  # not one word a line
