"""The package as published (issue #12 §7): a LICENSE file that the wheel carries, and project URLs."""
from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
URLS = ("Homepage", "Repository", "Issues", "Documentation")


def test_the_project_names_its_urls_and_licence() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    urls = project.get("urls", {})
    assert set(URLS) <= set(urls), urls
    home = urls["Homepage"]
    assert home.startswith("https://") and all(urls[k].startswith(home) for k in URLS)  # one place, consistently
    assert project["license"] == {"text": "MIT"}
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


@pytest.mark.slow
def test_the_built_wheel_carries_the_licence_urls_and_the_catalogue(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("lomo_tui-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.endswith("dist-info/licenses/LICENSE") or n.endswith("dist-info/LICENSE") for n in names), names
    for key in URLS:
        assert f"Project-URL: {key}, https://" in metadata, key
    assert {f"lomo_tui/language/messages/{lang}.toml" for lang in ("en", "zh", "ja", "ru")} <= set(names)


def test_the_readme_starts_with_a_venv_installs_offline_without_test_extras_and_names_ollama_chat() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.split("## Start", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("#")[0].strip() for line in start.splitlines() if "pip install" in line or "venv" in line]
    venv = next(n for n, line in enumerate(lines) if "-m venv" in line)
    first_install = next(n for n, line in enumerate(lines) if "pip install" in line)
    assert venv < first_install  # a bare `pip install` fails on system Pythons
    assert "pip install -e . " in lines[first_install] + " " and "[dev]" not in lines[first_install]
    assert "`ollama_chat/" in readme and "ollama/` pastes the tools" in readme
