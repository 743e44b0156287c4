"""config.toml and the environment knobs are checked when loaded: one line naming the key and the file, exit 1."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import LomoEnv
from lomo_tui.config import load_settings
from lomo_tui.errors import LomoError

pytestmark = pytest.mark.fresh_db  # bad settings must not even create the database file

README = Path(__file__).resolve().parents[1] / "README.md"


def _config(lomo: LomoEnv, text: str) -> Path:
    path = lomo.root / "cfg" / "lomo" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _refused(lomo: LomoEnv, **env: str) -> str:
    """Run a message through run-once; it must be refused with one line, before anything is delivered."""
    done = lomo.run("--run-once", "a picture of a cat", model="lomo/local", **env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert not lomo.db_path.exists(), "nothing may be delivered when the settings are bad"
    assert not any(lomo.workspace.iterdir())
    return lines[0]


@pytest.mark.parametrize(("text", "expected"), [
    ('[runtime]\nworkers = "four"\n', r"\[runtime\] workers must be a whole number, not \"four\""),
    ("[runtime]\nworkers = 0\n", r"\[runtime\] workers must be at least 1, not 0"),
    ("[runtime]\nlease_seconds = -3\n", r"\[runtime\] lease_seconds must be above 0, not -3"),
    ("[runtime]\nwatchdog_seconds = nan\n", r"\[runtime\] watchdog_seconds must be a finite number"),
    ('modle = "openai/gpt-4o"\n', r"unknown setting 'modle'; did you mean 'model'\?"),
    ("workers = 4\n", r"unknown setting 'workers'; it belongs in \[runtime\]"),
    ('[studio]\nprovider = "bogus"\n', r"\[studio\] provider must be one of embedded, litellm, not \"bogus\""),
    ('[studio]\nprovider = "litelm"\n', r"did you mean 'litellm'\?"),
    ('[providers.openai]\napi_kye = "sk-x"\n',
     r"unknown setting 'api_kye' in \[providers.openai\]; did you mean 'api_key'"),
    ('[budget]\nfree_per_call = "cheap"\n', r"\[budget\] free_per_call must be a number"),
    ('tui = "dark"\n', r"tui must be a section \(\[tui\]\)"),
    ("model = \n", r"is not valid TOML"),
])
def test_a_bad_config_value_is_one_line_naming_the_key_and_the_file(lomo: LomoEnv, text: str, expected: str) -> None:
    path = _config(lomo, text)
    line = _refused(lomo)
    assert str(path) in line
    assert re.search(expected, line), line


def test_a_folder_where_config_toml_should_be_is_refused(lomo: LomoEnv) -> None:
    folder = lomo.root / "cfg" / "lomo" / "config.toml"
    folder.mkdir(parents=True)
    line = _refused(lomo)
    assert line == f"lomo: config file {folder} is a folder; remove it or put a config.toml file there"


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("LOMO_TIME_SCALE", "nan", "must be a finite number"),
    ("LOMO_TIME_SCALE", "inf", "must be a finite number"),
    ("LOMO_TIME_SCALE", "-1", "must be at least 0"),
    ("LOMO_LEASE_SECONDS", "0", "must be above 0"),
    ("LOMO_LEASE_SECONDS", "-5", "must be above 0"),
    ("LOMO_WATCHDOG_SECONDS", "0", "must be above 0"),
    ("LOMO_WATCHDOG_SECONDS", "soon", "must be a number"),
])
def test_an_environment_knob_out_of_range_is_refused(lomo: LomoEnv, name: str, value: str, expected: str) -> None:
    line = _refused(lomo, **{name: value})
    assert line.startswith(f"lomo: {name}='{value}' {expected}"), line


def test_the_readme_example_config_is_valid_and_means_what_it_says(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    example = re.search(r"```toml\n# ~/.config/lomo/config.toml\n(.*?)```", text, re.S)
    assert example, "the README's Configuration section shows a config.toml"
    path = tmp_path / "config.toml"
    path.write_text(example.group(1), encoding="utf-8")
    settings = load_settings(env={}, config_path=path)
    assert settings.workers == 4 and settings.sync_window == 0.2
    assert settings.value("studio.provider") == "embedded" and settings.value("tui.images") == "auto"


def test_every_setting_the_code_reads_has_a_schema_line() -> None:
    from lomo_tui.config import schema

    package = Path(__file__).resolve().parents[1] / "lomo_tui"
    read = set()
    for source in package.rglob("*.py"):
        code = source.read_text(encoding="utf-8")
        for section, body in re.findall(r'section\("(\w+)"\)((?:\.get\("\w+"[^)]*\))?)', code):
            key = re.match(r'\.get\("(\w+)"', body)
            if key and section != "providers":
                read.add(f"{section}.{key.group(1)}")
    assert read, "the code reads settings through Settings.section"
    assert read <= set(schema()), sorted(read - set(schema()))


def test_environment_beats_the_file_and_is_checked_like_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[runtime]\nlease_seconds = 12\ntime_scale = 0.5\n", encoding="utf-8")
    settings = load_settings(env={"LOMO_LEASE_SECONDS": "7"}, config_path=path)
    assert (settings.lease_seconds, settings.time_scale, settings.watchdog_seconds) == (7.0, 0.5, 10.0)
    with pytest.raises(LomoError, match="LOMO_TIME_SCALE='inf'"):
        load_settings(env={"LOMO_TIME_SCALE": "inf"}, config_path=path)
