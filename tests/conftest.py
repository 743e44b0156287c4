"""Shared fixtures: every test gets its own workspace, database and XDG dirs; no network."""
from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

LOMO = [sys.executable, "-m", "lomo_tui"]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile the package once: hundreds of tests start `lomo` as a subprocess, and where
    PYTHONDONTWRITEBYTECODE is set (some CI images do) each of them would otherwise compile every module
    again (measured: tests/test_cli.py 19.5 s -> 14.4 s). Up-to-date files are skipped."""
    import compileall

    import lomo_tui

    compileall.compile_dir(Path(lomo_tui.__file__).parent, quiet=1)


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.02, what: str = "") -> Any:
    """Poll PREDICATE until it returns something truthy, or fail after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(interval)


async def async_wait_for(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.02,
                         what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        await asyncio.sleep(interval)



def lomo_in_language(tmp_path: Path, lang: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`lomo ARGS` in a subprocess that speaks LANG (LOMO_LANGUAGE; no locale of this machine leaks in), with its
    config and data under TMP_PATH."""
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "LOMO_"))}
    env.update(LOMO_LANGUAGE=lang, COLUMNS="100", PYTHONPATH=str(root), XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_STATE_HOME=str(tmp_path / "state"))
    return subprocess.run([sys.executable, "-m", "lomo_tui", *args], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)

def process_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


class LomoEnv:
    """A sandbox for one test: workspace folder, SQLite file, replay file, isolated XDG dirs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.workspace.mkdir()
        self.db_path = root / "lomo.db"
        self.db_url = f"sqlite+aiosqlite:///{self.db_path}"
        self.replay_file = root / "replay.jsonl"
        self.replay_file.write_text("")
        self.env = dict(os.environ, LOMO_TIME_SCALE="0.01", LOMO_REPLAY_FILE=str(self.replay_file),
                        XDG_CONFIG_HOME=str(root / "cfg"), XDG_DATA_HOME=str(root / "data"),
                        XDG_STATE_HOME=str(root / "state"), XDG_CACHE_HOME=str(root / "cache"))
        for key in ("LOMO_FAULTS", "LOMO_MODEL", "LOMO_DB_URL", "LOMO_WORKSPACE", "LOMO_LANGUAGE", "LC_ALL",
                    "LC_MESSAGES"):
            self.env.pop(key, None)
        self.env["LANG"] = "C.UTF-8"  # the CLI speaks the locale's language: English unless a test says otherwise

    def replay(self, *lines: dict[str, Any]) -> None:
        self.replay_file.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))

    def argv(self, *args: str, model: str = "lomo/replay") -> list[str]:
        return LOMO + ["--workspace", str(self.workspace), "--db", self.db_url, "--model", model, *args]

    def environ(self, faults: str | None = None, **extra: str) -> dict[str, str]:
        env = dict(self.env, **extra)
        if faults:
            env["LOMO_FAULTS"] = faults
        return env

    def run(self, *args: str, faults: str | None = None, model: str = "lomo/replay", timeout: float = 90,
            **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args, model=model), env=self.environ(faults, **extra), capture_output=True,
                              text=True, timeout=timeout)

    def popen(self, *args: str, faults: str | None = None, model: str = "lomo/replay",
              **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args, model=model), env=self.environ(faults, **extra),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def new_task(self, title: str = "Test task") -> str:
        proc = self.run("task", "new", title, "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["id"]

    def inspect(self) -> dict[str, Any]:
        proc = self.run("inspect", "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def settings(self, **overrides: Any) -> Any:
        from lomo_tui.config import load_settings

        env = self.environ()
        env.update({k: str(v) for k, v in overrides.pop("env", {}).items()})
        settings = load_settings(workspace=str(self.workspace), db=self.db_url,
                                 model=overrides.pop("model", "lomo/replay"), env=env,
                                 config_path=self.root / "cfg" / "config.toml")
        for key, value in overrides.items():
            setattr(settings, key, value)
        return settings


def _loopback_only(connect: Any) -> Any:
    def guarded(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not ipaddress.ip_address(address[0]).is_loopback:
            raise AssertionError(f"test tried to reach {address[0]} (off loopback)")
        return connect(sock, address)
    return guarded


@pytest.fixture(scope="module")
def loopback_only() -> Iterator[None]:
    """Fail any socket connection off 127.0.0.1/::1 while a module's tests run (litellm import included)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _loopback_only(socket.socket.connect))
        patch.setattr(socket.socket, "connect_ex", _loopback_only(socket.socket.connect_ex))
        yield


_MIGRATED: dict[str, bytes] = {}


def _migrate_in_a_thread(url: str) -> None:
    """Bring the database at URL to HEAD (in a thread of its own: a test's event loop may be running here)."""
    import threading

    from lomo_tui.store import migrate
    from lomo_tui.store.engine import Database

    async def build() -> None:
        db = Database(url)
        try:
            await migrate.upgrade(db)
        finally:
            await db.close()

    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(build())
        except BaseException as exc:  # noqa: BLE001 — re-raised in the caller's thread
            failures.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if failures:
        raise failures[0]


def migrated_database() -> bytes:
    """The bytes of an empty SQLite database at the schema's HEAD, migrated once per test session.

    Starting every test from it spares each one the migration of a fresh file (a second of a subprocess
    test's start); the migrations themselves are tested from empty files (marker `fresh_db`)."""
    if "db" not in _MIGRATED:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="lomo-template-") as root:
            path = Path(root) / "template.db"
            _migrate_in_a_thread(f"sqlite+aiosqlite:///{path}")
            assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
            _MIGRATED["db"] = path.read_bytes()
    return _MIGRATED["db"]


@pytest.fixture
def lomo(tmp_path: Path, request: pytest.FixtureRequest) -> LomoEnv:
    env = LomoEnv(tmp_path)
    if request.node.get_closest_marker("fresh_db") is None:
        env.db_path.write_bytes(migrated_database())
    return env


@pytest.fixture
def kill_on_exit():
    """Processes a test started are killed (and continued, if stopped) when it ends."""
    procs: list[subprocess.Popen[str]] = []
    yield procs.append
    for proc in procs:
        if proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)


# ---- PostgreSQL: a real server started for the session (scale-out path) ------------------------------


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next((str(p / name) for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"))
                                        if (p / name).exists()), None)
    if found is None:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return found


def _as_postgres(*argv: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else list(argv)


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL cluster on a free loopback port; yields a URL factory per database."""
    import socket

    import tempfile

    root = Path(tempfile.mkdtemp(prefix="lomo-pg-"))  # outside pytest's 0700 tree: the server runs as postgres
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    subprocess.run(_as_postgres(_pg_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "lomo", "-E", "UTF8"),
                   check=True, capture_output=True, timeout=120)
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(_as_postgres(_pg_bin("pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(root / "log"),
                                "start"), check=True, capture_output=True, timeout=120)
    counter = iter(range(10_000))
    template: list[str] = []

    def createdb(name: str, *options: str) -> str:
        subprocess.run(_as_postgres(_pg_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "lomo", *options,
                                    name), check=True, capture_output=True, timeout=60)
        return f"postgresql+asyncpg://lomo@127.0.0.1:{port}/{name}"

    def new_database(migrated: bool = False) -> str:
        """A new empty database; MIGRATED: a copy of one migrated to HEAD once per session."""
        if migrated and not template:
            _migrate_in_a_thread(createdb("lomo_template"))
            template.append("lomo_template")
        return createdb(f"lomo_{next(counter)}", *(("-T", template[0]) if migrated else ()))

    yield new_database
    subprocess.run(_as_postgres(_pg_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"),
                   capture_output=True, timeout=60)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_lomo(lomo: LomoEnv, postgres_server, request: pytest.FixtureRequest) -> LomoEnv:
    """A LomoEnv whose database is a fresh PostgreSQL database."""
    lomo.db_url = postgres_server(migrated=request.node.get_closest_marker("fresh_db") is None)
    return lomo
