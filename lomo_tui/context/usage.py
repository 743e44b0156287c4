"""Prompt-cache figures from the recorded model calls (usage fields), per task and overall (E1).

- `cache_usage(conn, task_id=None, since=None)`: inside a read transaction;
- `load_cache_usage(db, task_id=None)`: opens its own read (for the TUI's task view);
- `render_cache(figures)`: one line for a person ("" before anything was measured).
"""
from __future__ import annotations

from typing import Any

from ..store.engine import fetch

TOTALS = ("SELECT count(*) AS calls, coalesce(sum(prompt_tokens), 0) AS prompt_tokens, "
          "coalesce(sum(cached_tokens), 0) AS cache_read_tokens, "
          "coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens FROM model_calls")
FIGURES = ("calls", "prompt_tokens", "cache_read_tokens", "cache_write_tokens")


async def cache_usage(conn: Any, task_id: str | None = None, since: float | None = None) -> dict[str, Any]:
    """{"calls", "prompt_tokens", "cache_read_tokens", "cache_write_tokens", "cache_read_share"} for TASK_ID's
    model calls (all calls when None; those made at or after SINCE when given). The share is null before
    anything was measured."""
    where, params = [], {}
    if task_id:
        where.append("task_id = :task_id")
        params["task_id"] = task_id
    if since is not None:
        where.append("created_at >= :since")
        params["since"] = since
    [row] = await fetch(conn, TOTALS + (" WHERE " + " AND ".join(where) if where else ""), params)
    out: dict[str, Any] = {k: int(row[k] or 0) for k in FIGURES}
    out["cache_read_share"] = round(out["cache_read_tokens"] / out["prompt_tokens"], 4) if out["prompt_tokens"] else None
    return out


async def load_cache_usage(db: Any, task_id: str | None = None) -> dict[str, Any]:
    """`cache_usage` in a read transaction of its own: the task view's cache figures for TASK_ID (every
    task's when None)."""
    async with db.read() as conn:
        return await cache_usage(conn, task_id)


def render_cache(figures: dict[str, Any], lang: str = "en") -> str:
    """The figures as one line for a person in LANG (`tui_context.cache`); "" when no model call was recorded."""
    from ..language import message

    if not figures.get("calls"):
        return ""
    share = figures["cache_read_share"]
    if share is None:
        return message("tui_context.cache_none", lang, calls=figures["calls"])
    return message("tui_context.cache", lang, read=f"{figures['cache_read_tokens']:,}",
                   prompt=f"{figures['prompt_tokens']:,}", share=f"{share:.0%}",
                   write=f"{figures['cache_write_tokens']:,}")
