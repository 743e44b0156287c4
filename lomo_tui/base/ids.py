"""Readable ids that cannot collide in practice ("task-01jf3q8w0m7x2k4c9v5n6r8t1a").

A prefix, then a ULID in lowercase Crockford base32: 48 bits of milliseconds (ids sort by creation time) and
80 random bits (two ids made in the same millisecond collide with odds of 1 in 2^80). Ids are plain text:
older, shorter ids ("task-3f9a1c2b") stay valid beside these.
"""
from __future__ import annotations

import secrets
from .. import clock

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"  # ascending in ASCII: ids sort as their numbers do
_PAIRS = [high + low for high in CROCKFORD for low in CROCKFORD]  # 10 bits -> two digits
_SHIFTS = range(120, -1, -10)  # 13 pairs: the 128-bit value as 26 digits (the first holds 3 bits)


def new_id(prefix: str) -> str:
    value = int(clock.now() * 1000) << 80 | secrets.randbits(80)
    return f"{prefix}-{''.join([_PAIRS[value >> shift & 1023] for shift in _SHIFTS])}"


def call_key(turn_id: str, step: int, seq: int) -> str:
    """The ledger id and idempotency key of a tool call: turn + step + call_seq (C3, C7)."""
    return f"{turn_id}/{step}/{seq}"
