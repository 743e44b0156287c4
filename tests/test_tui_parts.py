"""Small, fast checks of the TUI's parts: read model tolerance, themes, keys, packaging, import boundaries."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from sqlalchemy import Column, MetaData, String, Table

from lomo_tui import views
from lomo_tui.config import Settings
from lomo_tui.tui import keys
from lomo_tui.tui.themes import BUNDLED, discover, load_theme_file

ROOT = Path(__file__).resolve().parent.parent


# ---- read model ------------------------------------------------------------------------------------
@pytest.mark.parametrize("status,archived,wait,gate,expected", [
    ("running", False, None, False, "running"),
    ("active", False, None, False, "running"),
    ("waiting_job", False, "job", False, "waiting_job"),
    ("waiting_gate", False, "gate", False, "waiting_you"),
    ("active", False, None, True, "waiting_you"),
    ("paused", False, None, False, "paused"),
    ("done", False, None, False, "done"),
    ("failed", False, None, False, "failed"),
    ("done", True, None, False, "archived"),
])
def test_card_states_cover_every_task_status(status, archived, wait, gate, expected):
    assert views.card_state(status, archived, wait, gate) == expected
    assert views.STATE_LABELS[expected]


async def test_a_table_that_does_not_exist_yet_reads_as_empty(tmp_path, monkeypatch):
    from lomo_tui.store import migrate
    from lomo_tui.store.engine import Database

    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'lomo.db'}")
    try:
        await migrate.upgrade(db)
        missing = Table("checklist_v9", MetaData(), Column("task_id", String), Column("state", String))
        monkeypatch.setattr(views, "optional_table", lambda *names: missing)
        assert await views.load_checklist_progress(db, ["task-x"]) == {}
        assert await views.load_checklist(db, "task-x") == ()
        assert await views.load_jobs(db, ["task-x"]) == {}
        assert await views.load_charges_by_task(db, ["task-x"]) == {}
    finally:
        await db.close()


def test_budget_terms_follow_governance_config():
    settings = Settings(workspace=Path("/tmp/w"), db_url="sqlite://", model="lomo/local",
                        file={"budget": {"daily_free_cap": 2.5, "currency": "credits"}})
    assert views.budget_terms(settings) == (2.5, "credits")


def test_inbox_labels_say_delivered_read_or_acted():
    base = dict(id="m", text="t", sent_at=0.0, replaces=None)
    assert views.InboxItem(status="pending", consumed_step=None, acted=False, **base).label.startswith("delivered")
    assert "read by the model" in views.InboxItem(status="consumed", consumed_step=2, acted=False, **base).label
    assert "acted upon" in views.InboxItem(status="consumed", consumed_step=2, acted=True, **base).label


def test_views_import_no_textual():
    code = "import sys, lomo_tui.views; print(any(m == 'textual' or m.startswith('textual.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---- themes ---------------------------------------------------------------------------------------
def test_bundled_themes_load_and_the_top_level_folder_is_the_same_files():
    names = {load_theme_file(p).name for p in BUNDLED.glob("*.toml")}
    assert {"lomo-dark", "lomo-light", "lomo-high-contrast"} <= names
    top = ROOT / "themes"
    assert top.is_symlink() and top.resolve() == BUNDLED.resolve()


def test_user_themes_add_to_and_override_bundled_ones(tmp_path):
    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\n', encoding="utf-8")
    (tmp_path / "dark.toml").write_text('name = "lomo-dark"\nprimary = "#00ff00"\n', encoding="utf-8")
    (tmp_path / "broken.toml").write_text('name = "x"\nprimary = \n', encoding="utf-8")
    (tmp_path / "odd.toml").write_text('name = "odd"\nprimary = "#fff"\ncolour = "#000"\n', encoding="utf-8")
    themes, said = discover(tmp_path)
    problems = [p.text("en") for p in said]
    by_name = {t.name: t for t in themes}
    assert by_name["mine"].primary == "#ff0000" and by_name["lomo-dark"].primary == "#00ff00"
    assert any("broken.toml" in p for p in problems) and any("colour" in p for p in problems)


def test_themes_and_stylesheets_ship_in_the_wheel():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["lomo_tui"]
    package = ROOT / "lomo_tui"
    shipped = {p for g in globs for p in package.glob(g)}  # what setuptools picks up
    needed = [*package.glob("themes/*.toml"), *package.glob("tui/**/*.tcss")]
    missing = sorted(p.relative_to(package).as_posix() for p in needed if p not in shipped)
    assert not missing, f"add these to [tool.setuptools.package-data] lomo_tui: {missing}"


# ---- keys -----------------------------------------------------------------------------------------
def test_no_default_key_is_tmux_prefix_and_ids_are_unique():
    assert len(keys.BY_ID) == len(keys.KEYS)
    for key in keys.KEYS:
        assert "ctrl+b" not in key.key.split(","), key


def test_no_two_keys_collide_where_both_work():
    """Within one scope a key means one thing, and a key that works anywhere is bound nowhere else."""
    def pressed(k: keys.Key) -> set[str]:
        return set(k.key.split(","))

    anywhere = [k for k in keys.KEYS if k.scope.startswith("Anywhere")]
    for k in keys.KEYS:
        for other in keys.KEYS:
            if other is k:
                continue
            shared = pressed(k) & pressed(other)
            if other in anywhere or k.scope == other.scope:
                assert not shared, f"{k.id} and {other.id} both use {shared}"


def test_the_memory_and_stats_views_are_in_the_help_and_key_table():
    rows = {what: (where, pressed) for where, pressed, what in keys.help_rows()}
    assert rows["What Lomo remembers (memory view)"] == ("Anywhere", "F2 / Ctrl+r")
    assert rows["Forget (asks first)"] == ("The memory view", "f / Del")
    assert "Stats: verified progress, model calls" in keys.markdown_table()


def test_the_readme_carries_the_current_key_table():
    assert keys.markdown_table() in (ROOT / "README.md").read_text(encoding="utf-8"), \
        "paste keys.markdown_table() into README.md's Keys section"


def test_keymap_from_config_reports_what_it_ignores():
    keymap, problems = keys.keymap_from_config({"keys": {"app.help": "f2", "nope": "f3", "app.quit": "ctrl+b",
                                                         "gate.approve": ""}})
    assert keymap == {"app.help": "f2"}
    assert len(problems) == 3


def test_the_key_table_for_the_readme_lists_every_key():
    table = keys.markdown_table()
    assert all(k.description in table for k in keys.KEYS)


@pytest.mark.parametrize("body,says", [
    ('name = "mine"\nprimary = "not-a-colour"\n', "is not a colour"),
    ('name = "mine"\nprimary = 5\n', "must be a string"),
    ('name = "mine"\nprimary = "#ff0000"\ndark = "yes"\n', "true or false"),
    ('name = "lomo-dark"\nprimary = "#ff0000"\nbackground = "bluish"\n', "is not a colour"),
])
def test_a_bad_user_theme_is_one_line_and_the_bundled_one_stays(tmp_path, body, says):
    (tmp_path / "mine.toml").write_text(body, encoding="utf-8")
    themes, said = discover(tmp_path)
    problems = [p.text("en") for p in said]
    assert len(problems) == 1 and says in problems[0] and "mine.toml" in problems[0]
    assert "\n" not in problems[0] and "Traceback" not in problems[0]
    dark = {t.name: t for t in themes}["lomo-dark"]
    assert dark.primary == load_theme_file(BUNDLED / "dark.toml").primary


async def test_the_app_starts_on_the_built_in_theme_when_the_chosen_one_is_broken(tmp_path):
    from tui_apps.live import notifications, wait_until
    from tui_apps.states import make_app

    themes = tmp_path / "config" / "themes"
    themes.mkdir(parents=True)
    (themes / "dark.toml").write_text('name = "lomo-dark"\nprimary = "#ff0000"\nsurface = "nope"\n', encoding="utf-8")
    (themes / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\n[variables]\nblock-cursor-foreground = "zzz"\n', encoding="utf-8")
    app = make_app(tmp_path, "empty", theme="mine")
    seen = notifications(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.booted, what="the app")
        assert app.is_running and app.theme == "lomo-dark"
        assert app.get_theme("lomo-dark").primary == load_theme_file(BUNDLED / "dark.toml").primary
        assert any("dark.toml" in m and "not a colour" in m for _, m in seen)
