"""The results store: every production-graph result's bytes, by content hash (`.lomo/results/<sha256>.<ext>`).

A node's output path holds only its newest render; a change reverted to an old key, or a result the creator
deleted, is put back from here instead of being made (and charged) again, and never confused with the render
that replaced it. Written once per hash, atomically; read back only when the bytes still hash to their name.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..workspace.files import atomic_write

FOLDER = Path(".lomo") / "results"


def kept_path(root: Path, digest: str, ext: str) -> Path:
    return root / FOLDER / f"{digest}.{ext.lstrip('.').lower()}"


def keep(root: Path, data: bytes, ext: str, digest: str | None = None) -> str:
    """Store DATA under its hash (once); returns the hash."""
    digest = digest or hashlib.sha256(data).hexdigest()
    path = kept_path(root, digest, ext)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    return digest


def kept(root: Path, digest: str, ext: str) -> bytes | None:
    """The bytes stored under DIGEST, or None when they are not there (or do not hash to it any more)."""
    try:
        data = kept_path(root, digest, ext).read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == digest else None
