"""The idempotency keys of a production graph's jobs: ``prod/<graph hash>/<node>/<input hash>``, and
``…/m<n>`` when the same node is made again from the same inputs (its result was lost). One place for the
format: the engine orders under these keys, and the metrics tell new work from a repeat by them."""
from __future__ import annotations

import hashlib
import re

PREFIX = "prod/"
_REMAKE = re.compile(r"/m\d+$")


def graph_prefix(graph_path: str) -> str:
    return f"{PREFIX}{hashlib.sha1(graph_path.encode()).hexdigest()[:12]}/"


def job_key(graph_path: str, node_id: str, key: str) -> str:
    return f"{graph_prefix(graph_path)}{node_id[:60]}/{key[:24]}"


def remake_key(key: str, n: int) -> str:
    """The key to make KEY's node again under, the Nth time its result was lost."""
    return f"{key}/m{n}"


def work_of(idempotency_key: str | None) -> str | None:
    """The work a production job does (its key without a remake's suffix); None for any other job."""
    key = idempotency_key or ""
    return _REMAKE.sub("", key) if key.startswith(PREFIX) else None
