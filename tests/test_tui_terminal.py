"""The TUI in a real terminal (tmux runs `lomo`), and what the first paint waits for (nothing heavy)."""
from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")


def lomo_command() -> list[str]:
    found = shutil.which("lomo")
    return [found] if found else [sys.executable, "-m", "lomo_tui"]


def isolated_env(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOMO_", "XDG_", "TMUX"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_STATE_HOME=str(home / ".local/state"), XDG_CACHE_HOME=str(home / ".cache"),
               LOMO_TIME_SCALE="0.01", TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    return env


class Tmux:
    def __init__(self, tmp: Path) -> None:
        self.socket = f"lomo-test-{os.getpid()}-{time.monotonic_ns()}"

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True,
                              check=check, timeout=10)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "lomo", check=False).stdout

    def wait_for(self, predicate, timeout: float, what: str) -> str:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.screen()
            if predicate(text):
                return text
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{self.screen()}")

    def alive(self) -> bool:
        return self.run("has-session", "-t", "lomo", check=False).returncode == 0


def main_reply(db: Path) -> str | None:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            row = conn.execute("SELECT content FROM messages m JOIN tasks t ON t.id = m.task_id WHERE t.kind = 'main' "
                               "AND m.role = 'assistant' AND m.content IS NOT NULL ORDER BY m.id DESC").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it: apt-get install tmux)")
def test_lomo_in_tmux_paints_and_a_message_round_trips(tmp_path):
    env = isolated_env(tmp_path)
    db = tmp_path / "lomo.db"
    command = [*lomo_command(), "--workspace", str(tmp_path / "ws"), "--db", f"sqlite+aiosqlite:///{db}"]
    shell = "env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " " + shlex.join(command)
    tmux = Tmux(tmp_path)
    started = time.monotonic()
    tmux.run("new-session", "-d", "-s", "lomo", "-x", "100", "-y", "30", shell)
    try:
        tmux.wait_for(lambda s: "→ Main" in s, 20, "the first screen")
        painted = time.monotonic() - started
        tmux.wait_for(lambda s: "gates waiting" in s or "gate waits" in s or "gates wait" in s, 20,
                      "the runtime's state in the header")
        tmux.run("send-keys", "-t", "lomo", "-l", "hello from tmux")
        tmux.run("send-keys", "-t", "lomo", "Enter")
        tmux.wait_for(lambda s: "hello from tmux" in s, 10, "the message in the stream")
        deadline = time.monotonic() + 20
        while (reply := main_reply(db)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reply, "the main thread never answered"
        first_line = reply.strip().splitlines()[0][:30]
        tmux.wait_for(lambda s: first_line in s, 10, f"the reply {first_line!r} on screen")
        tmux.run("send-keys", "-t", "lomo", "C-q")
        deadline = time.monotonic() + 15
        while tmux.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not tmux.alive(), "lomo did not quit on Ctrl+Q"
        assert painted < 15
    finally:
        tmux.run("kill-server", check=False)


FIRST_PAINT = textwrap.dedent("""
    import asyncio, os, sys
    from pathlib import Path
    from lomo_tui.config import Settings
    from lomo_tui.tui.app import LomoApp
    from lomo_tui.tui.widgets.header import HeaderBar

    tmp = Path(sys.argv[1])
    settings = Settings(workspace=tmp / "ws", db_url=f"sqlite+aiosqlite:///{tmp / 'lomo.db'}",
                        model="openai/gpt-4o-mini", file={})
    seen = {}

    class Probe(LomoApp):
        def _start(self):
            seen["litellm at first paint"] = "litellm" in sys.modules
            seen["runtime at first paint"] = "lomo_tui.runtime.scheduler" in sys.modules
            super()._start()

    async def main():
        app = Probe(settings, config_dir=tmp / "config", images="off")
        async with app.run_test(size=(100, 30)) as pilot:
            while not app.booted and not app.boot_error:
                await pilot.pause(0.02)
            header = app.screen.query_one(HeaderBar)
            seen["header"] = str(header.render())
        print(seen, flush=True)
        os._exit(0)  # litellm may still be importing in its thread; nothing to wait for

    asyncio.run(main())
""")


def test_first_paint_comes_before_the_runtime_and_litellm_with_a_remote_model(tmp_path):
    env = isolated_env(tmp_path)
    probe = tmp_path / "probe.py"  # a file: Textual resolves CSS paths from the app's source file
    probe.write_text(FIRST_PAINT, encoding="utf-8")
    out = subprocess.run([sys.executable, str(probe), str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 — our own dict literal
    assert seen["litellm at first paint"] is False
    assert seen["runtime at first paint"] is False
    assert "openai/gpt-4o-mini" in seen["header"] and "loading" in seen["header"]


def main_inbox(db: Path) -> list[str]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return [r[0] for r in conn.execute("SELECT i.text FROM inbox i JOIN tasks t ON t.id = i.task_id "
                                               "WHERE t.kind = 'main' ORDER BY i.sent_at")]
    except sqlite3.Error:
        return []


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it: apt-get install tmux)")
def test_in_a_real_terminal_a_bracketed_paste_keeps_every_line_and_ctrl_j_breaks_a_line(tmp_path):
    env = isolated_env(tmp_path)
    db = tmp_path / "lomo.db"
    command = [*lomo_command(), "--workspace", str(tmp_path / "ws"), "--db", f"sqlite+aiosqlite:///{db}"]
    shell = "env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " " + shlex.join(command)
    brief = "".join(f"line {n}: gold on navy, art deco\n" for n in range(1, 41))
    (tmp_path / "brief.txt").write_text(brief, encoding="utf-8")
    tmux = Tmux(tmp_path)
    tmux.run("new-session", "-d", "-s", "lomo", "-x", "120", "-y", "40", shell)
    try:
        tmux.wait_for(lambda s: "gates waiting" in s or "gate waits" in s or "gates wait" in s, 30,
                      "the runtime's state in the header")
        tmux.run("load-buffer", "-b", "brief", str(tmp_path / "brief.txt"))
        tmux.run("paste-buffer", "-p", "-b", "brief", "-t", "lomo")  # -p: bracketed, as terminals paste
        tmux.wait_for(lambda s: "[pasted 40 lines]" in s, 10, "the paste chip")
        tmux.run("send-keys", "-t", "lomo", "Enter")
        deadline = time.monotonic() + 15
        while not main_inbox(db) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert main_inbox(db) == [brief.strip()]
        tmux.run("send-keys", "-t", "lomo", "-l", "first")
        tmux.run("send-keys", "-t", "lomo", "C-j")
        tmux.run("send-keys", "-t", "lomo", "-l", "second")
        tmux.run("send-keys", "-t", "lomo", "Enter")
        deadline = time.monotonic() + 15
        while len(main_inbox(db)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert main_inbox(db)[1:] == ["first\nsecond"]
    finally:
        tmux.run("kill-server", check=False)
