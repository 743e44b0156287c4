"""The TUI's chrome speaks the creator's language from the first screen (issue #12 §5): a bad `[keys]` entry or
theme file is a notice in the configured language (`language` / LOMO_LANGUAGE, else the locale), and so are
the command palette's placeholder, its "No matches found", the theme search and Textual's system commands."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.command import CommandInput, CommandList, CommandPalette

from lomo_tui.tui.palette import SYSTEM_WORDS
from tui_apps.live import notifications, wait_until
from tui_apps.states import make_app

WORD = re.compile(r"[A-Za-z][A-Za-z']+")
KEEP = {"keys", "nope", "app", "quit", "ctrl", "tmux", "id", "f", "k", "name", "primary", "navy", "zz", "toml",
        "tmp", "config", "themes", "mine", "lomo", "svg", "true", "false"}


def english(text: str) -> list[str]:
    """TEXT's English words, leaving out paths and the names and values quoted from the creator's files."""
    text = re.sub(r"\S*/\S*|'[^']*'|\"[^\"]*\"|`[^`]*`", " ", text)
    return [w for w in WORD.findall(text) if w.lower() not in KEEP]


@pytest.fixture
def language(monkeypatch: pytest.MonkeyPatch):
    """Set the creator's language as the environment does (LOMO_LANGUAGE; None: the locale, English)."""
    for name in ("LOMO_LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")

    def choose(lang: str | None) -> None:
        if lang:
            monkeypatch.setenv("LOMO_LANGUAGE", lang)
    return choose


def _bad_config(tmp_path: Path) -> dict:
    themes = tmp_path / "config" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('name = "mine"\nprimary = "zz"\n', encoding="utf-8")
    return {"keys": {"nope": "f3", "app.quit": "ctrl+b"}}


async def _mount_notices(tmp_path: Path, **file) -> tuple[object, list[tuple[str, str]]]:
    app = make_app(tmp_path, "empty", **file)
    seen = notifications(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: len(seen) >= 3, what="the mount notices")
        return app, list(seen)


@pytest.mark.parametrize("lang,title,says", [("zh", "配置", "不是按键 id"), ("ja", "設定", "キー id ではありません"),
                                             ("ru", "Настройки", "не id клавиши")])
async def test_key_and_theme_problems_at_mount_speak_the_configured_language(tmp_path, language, lang, title,
                                                                            says) -> None:
    language(lang)
    app, seen = await _mount_notices(tmp_path, **_bad_config(tmp_path))
    assert app.session.language == lang  # before the creator has said anything
    assert {t for t, _ in seen} == {title}, seen
    shown = [m for _, m in seen]
    assert any(says in m and "'nope'" in m for m in shown), shown
    assert any("mine.toml" in m and "'zz'" in m for m in shown), shown
    assert any("ctrl+b" in m and "tmux" in m for m in shown), shown
    for message in shown:
        assert english(message) == [], message


async def test_config_language_words_the_mount_notices_when_the_env_does_not(tmp_path, language) -> None:
    language(None)
    app, seen = await _mount_notices(tmp_path, language="ru", **_bad_config(tmp_path))
    assert any("— не id клавиши" in m for _, m in seen), seen


async def test_english_mount_notices_read_as_before(tmp_path, language) -> None:
    language(None)
    app, seen = await _mount_notices(tmp_path, **_bad_config(tmp_path))
    assert app.session.language == "en"
    shown = [m for _, m in seen]
    assert "[keys] 'nope' is not a key id (see the help screen, F1)" in shown
    assert "[keys] 'app.quit': ctrl+b is tmux's prefix; choose another key" in shown
    assert any(m.startswith("theme ") and m.endswith("mine.toml: `primary` = 'zz' is not a colour (use a name such "
                                                      "as \"navy\" or a hex value such as \"#1e90ff\")") for m in shown)


async def _palette(pilot) -> CommandPalette:
    app = pilot.app
    return await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen.query(CommandInput)
                            and app.screen, what="the palette")


def _prompts(palette: CommandPalette) -> list[str]:
    results = palette.query_one(CommandList)
    return [str(getattr(o.prompt, "plain", o.prompt)) for o in results.options]


async def test_the_command_palette_speaks_the_creators_language(tmp_path, language) -> None:
    from lomo_tui.language import message

    lang = "zh"
    language(lang)
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.booted, what="the app")
        await pilot.press("ctrl+p")
        palette = await _palette(pilot)
        assert palette.query_one(CommandInput).placeholder == message("tui_palette.placeholder", lang)
        theme, quit_ = message("tui_palette.theme", lang), message("tui_palette.quit", lang)
        shown = await wait_until(pilot, lambda: [p for p in _prompts(palette) if theme in p or quit_ in p],
                                 what="the system commands")
        assert not [p for p in _prompts(palette) if any(w in p for w in [*SYSTEM_WORDS, "Keys"])], _prompts(palette)
        assert shown and any(message("tui_palette.help", lang) in p for p in _prompts(palette))  # Lomo's own keys
        await pilot.press(*"qqqzzz")
        nothing = message("tui_palette.no_matches", lang)
        await wait_until(pilot, lambda: any(nothing in p for p in _prompts(palette)), what="no matches")
        assert not any("No matches" in p for p in _prompts(palette))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette), what="the palette to close")
        app.search_themes()
        themes = await _palette(pilot)
        assert themes.query_one(CommandInput).placeholder == message("tui_palette.themes_placeholder", lang)


async def test_the_english_palette_reads_as_textuals(tmp_path, language) -> None:
    language(None)
    app = make_app(tmp_path, "empty")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.booted, what="the app")
        await pilot.press("ctrl+p")
        palette = await _palette(pilot)
        assert palette.query_one(CommandInput).placeholder == "Search for commands…"
        await wait_until(pilot, lambda: any("Quit the application as soon as possible" in p
                                            for p in _prompts(palette)), what="Textual's Quit")
