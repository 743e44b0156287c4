"""Prompt-cache figures from the recorded model calls (usage fields), per task and overall."""
from __future__ import annotations

from typing import Any

from ..store.engine import fetch

TOTALS = ("SELECT count(*) AS calls, coalesce(sum(prompt_tokens), 0) AS prompt_tokens, "
          "coalesce(sum(cached_tokens), 0) AS cache_read_tokens, "
          "coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens FROM model_calls")


async def cache_usage(conn: Any, task_id: str | None = None) -> dict[str, Any]:
    """{"calls", "prompt_tokens", "cache_read_tokens", "cache_write_tokens", "cache_read_share"} for TASK_ID's
    model calls (all calls when None). The share is null before anything was measured."""
    sql, params = (TOTALS + " WHERE task_id = :task_id", {"task_id": task_id}) if task_id else (TOTALS, {})
    [row] = await fetch(conn, sql, params)
    out = {k: int(row[k] or 0) for k in ("calls", "prompt_tokens", "cache_read_tokens", "cache_write_tokens")}
    out["cache_read_share"] = round(out["cache_read_tokens"] / out["prompt_tokens"], 4) if out["prompt_tokens"] else None
    return out
