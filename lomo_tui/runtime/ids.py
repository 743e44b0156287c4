"""Short, readable, collision-resistant ids ("task-3f9a1c2b")."""
from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


def call_key(turn_id: str, step: int, seq: int) -> str:
    """The ledger id and idempotency key of a tool call: turn + step + call_seq (C3, C7)."""
    return f"{turn_id}/{step}/{seq}"
