"""A database Lomo cannot use is refused with one line, exit 1, and left exactly as it was."""
from __future__ import annotations

import socket
import sqlite3
import subprocess

import pytest

from conftest import LomoEnv

ATTEMPTS = (("--run-once", "hi"), ("inspect", "--json"))


def _refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("lomo: ") and all(word in lines[0] for word in words), lines[0]
    assert proc.stdout == ""


def _a_real_database(lomo: LomoEnv) -> bytes:
    assert lomo.run("inspect", "--json").returncode == 0
    return lomo.db_path.read_bytes()


def _each_attempt_refused_and_file_untouched(lomo: LomoEnv, *words: str) -> None:
    before = lomo.db_path.read_bytes()
    for attempt in ATTEMPTS:
        _refused(lomo.run(*attempt), *words)
        assert lomo.db_path.read_bytes() == before
    assert sorted(p.name for p in lomo.root.iterdir() if p.name.startswith("lomo.db")) == ["lomo.db"]


def test_a_file_that_is_not_a_database_is_refused_untouched(lomo: LomoEnv) -> None:
    lomo.db_path.write_bytes(b"my notes, not a database\n" * 400)
    _each_attempt_refused_and_file_untouched(lomo, str(lomo.db_path), "not a Lomo database")


def test_a_truncated_database_is_refused_untouched(lomo: LomoEnv) -> None:
    whole = _a_real_database(lomo)
    lomo.db_path.write_bytes(whole[: len(whole) // 3])
    _each_attempt_refused_and_file_untouched(lomo, "damaged", "truncated", "restore a backup")


@pytest.mark.slow
@pytest.mark.parametrize("table", ["alembic_version", "tasks"])
def test_a_database_with_a_damaged_page_is_refused_untouched(lomo: LomoEnv, table: str) -> None:
    whole = bytearray(_a_real_database(lomo))
    with sqlite3.connect(lomo.db_path) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    conn.close()
    whole[(root - 1) * page_size: root * page_size] = b"\xde\xad" * (page_size // 2)
    lomo.db_path.write_bytes(bytes(whole))
    _each_attempt_refused_and_file_untouched(lomo, "damaged", "restore a backup")


@pytest.mark.slow
def test_a_database_from_a_newer_lomo_is_refused_untouched(lomo: LomoEnv) -> None:
    _a_real_database(lomo)
    conn = sqlite3.connect(lomo.db_path)
    with conn:
        conn.execute("UPDATE alembic_version SET version_num = '0999'")
    conn.close()
    _each_attempt_refused_and_file_untouched(lomo, "newer Lomo", "0999", "upgrade Lomo")


def test_a_postgres_url_with_nothing_listening_is_refused_in_one_line(lomo: LomoEnv) -> None:
    with socket.socket() as probe:  # a free port: nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    lomo.db_url = f"postgresql+asyncpg://lomo:secret@127.0.0.1:{port}/lomo"
    for attempt in ATTEMPTS:
        proc = lomo.run(*attempt)
        _refused(proc, "cannot reach the database server", f"127.0.0.1:{port}", "connection refused")
        assert "secret" not in proc.stderr
