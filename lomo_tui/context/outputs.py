"""Large tool results live outside the context (E3): the ledger's `tool_calls.result` keeps the whole
result, the history gets a short stand-in with the call's id, and `read_output` pages it back."""
from __future__ import annotations

import json
from typing import Any

PREVIEW_CHARS = 600
SMALL_FIELD_CHARS = 200
PAGE_CHARS = 4000
MAX_PAGE_CHARS = 20000
NOTE = ("This result is too long for the context and is stored outside it: read_output(id=\"{key}\", offset, "
        "limit) pages it back.")


def as_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def tool_message(result: Any, key: str, limit: int) -> str:
    """The history's text of a tool result: the result itself, or a handle when it is over LIMIT chars."""
    text = as_text(result)
    if len(text) <= limit:
        return text
    return json.dumps(stand_in(result, text, key), ensure_ascii=False, default=str)


def stand_in(result: Any, text: str, key: str) -> dict[str, Any]:
    """Small fields kept as they are (version, path, error, answer…), big ones named with their size,
    a preview of the biggest, and the handle."""
    out: dict[str, Any] = {}
    field, body = dominant(result, text)
    if isinstance(result, dict):
        for name, value in result.items():
            rendered = as_text(value)
            if len(rendered) <= SMALL_FIELD_CHARS:
                out[name] = value
            elif isinstance(value, list):
                out[name] = f"({len(value)} items, {len(rendered)} chars: in the stored output)"
            else:
                out[name] = f"({len(rendered)} chars: in the stored output)"
    out.update(output_id=key, total_chars=len(body), field=field, preview=body[:PREVIEW_CHARS],
               note=NOTE.format(key=key))
    return out


def dominant(result: Any, text: str) -> tuple[str | None, str]:
    """The text worth paging: a string field holding most of the result (a file's content), else the
    whole result as JSON."""
    if isinstance(result, dict):
        name, value = max(((k, v) for k, v in result.items() if isinstance(v, str)), key=lambda kv: len(kv[1]),
                          default=(None, ""))
        if name is not None and len(value) * 2 >= len(text):
            return name, value
    return None, text


def page(result: Any, key: str, offset: int = 0, limit: int = PAGE_CHARS) -> dict[str, Any]:
    """One page of a stored result."""
    field, body = dominant(result, as_text(result))
    offset = max(0, int(offset))
    limit = max(1, min(int(limit), MAX_PAGE_CHARS))
    chunk = body[offset:offset + limit]
    end = offset + len(chunk)
    return {"id": key, "field": field, "offset": offset, "total_chars": len(body), "text": chunk,
            "next_offset": end if end < len(body) else None, "truncated": end < len(body)}
