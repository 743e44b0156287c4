"""Core tools for the context itself (E2, E3): load a tool domain, page back a stored tool result or
summarised history. All read-only: they change what the model sees, never what exists."""
from __future__ import annotations

import json
from typing import Any

from ..context import outputs
from ..context.domains import all_domains
from ..store.engine import fetch
from ..errors import for_model
from .registry import Registry, ToolContext, ToolError, obj, tool

OUTPUT = ("SELECT c.result FROM tool_calls c JOIN turns t ON t.id = c.turn_id "
          "WHERE c.id = :id AND t.task_id = :task_id")
HISTORY = ("SELECT id, role, name, content, tool_calls FROM messages WHERE task_id = :task_id "
           "AND id >= :first AND id <= :last ORDER BY id")
HISTORY_CHARS = 12000


def register(reg: Registry) -> None:
    @tool(reg, "load_tools", "Make the tools of one or more domains visible from your next step on (they drop "
          "again when the history that asked for them is summarised). Core tools are always visible.",
          obj({"domains": {"type": "array", "items": {"type": "string"},
                           "description": "domains to load: images, video, 3d, audio, flows"}}, ["domains"]),
          side_effect="read", idempotent=True)
    async def load_tools(ctx: ToolContext, domains: list[str]) -> dict[str, Any]:
        known = all_domains(ctx.services.registry)
        unknown = sorted(set(domains) - known)
        if unknown:
            raise ToolError.said("no_domain", unknown=", ".join(unknown), known=", ".join(sorted(known)))
        names = sorted(t.name for t in ctx.services.registry.tools.values() if t.domain in domains)
        return {"loaded": sorted(set(domains)), "tools": names, "note": "visible from your next step"}

    @tool(reg, "read_output", "Page back a tool result that was too long for the context (its stand-in names "
          "the id).", obj({
              "id": {"type": "string", "description": "the output_id from the result's stand-in"},
              "offset": {"type": "integer", "description": "first character to return (default 0)"},
              "limit": {"type": "integer", "description": f"characters to return (default {outputs.PAGE_CHARS}, "
                                                         f"at most {outputs.MAX_PAGE_CHARS})"}}, ["id"]),
          side_effect="read", idempotent=True)
    async def read_output(ctx: ToolContext, id: str, offset: int = 0, limit: int = outputs.PAGE_CHARS
                          ) -> dict[str, Any]:
        async with ctx.services.db.read() as conn:
            rows = await fetch(conn, OUTPUT, {"id": id, "task_id": ctx.task_id})
        if not rows or rows[0].result is None:
            raise ToolError.said("no_output", id=repr(id))
        raw = rows[0].result
        return outputs.page(for_model(json.loads(raw) if isinstance(raw, str) else raw), id, offset, limit)

    @tool(reg, "read_history", "Show this task's messages between two message ids whole (summaries name the "
          "ranges they cover).", obj({
              "from_message": {"type": "integer", "description": "first message id (from a summary's #range)"},
              "to_message": {"type": "integer", "description": "last message id, inclusive"}},
              ["from_message", "to_message"]),
          side_effect="read", idempotent=True)
    async def read_history(ctx: ToolContext, from_message: int, to_message: int) -> dict[str, Any]:
        if to_message < from_message:
            raise ToolError.said("history_order")
        async with ctx.services.db.read() as conn:
            rows = await fetch(conn, HISTORY, {"task_id": ctx.task_id, "first": from_message, "last": to_message})
        lines: list[str] = []
        used = 0
        next_from = None
        for row in rows:
            text = row.content or ""
            calls = json.loads(row.tool_calls) if isinstance(row.tool_calls, str) else row.tool_calls
            for call in calls or []:
                text += f"\n→ {call['name']}({json.dumps(call.get('arguments') or {}, ensure_ascii=False)})"
            line = f"#{row.id} {row.role}{' ' + row.name if row.name else ''}: {text}"
            if lines and used + len(line) > HISTORY_CHARS:
                next_from = row.id
                break
            lines.append(line[:HISTORY_CHARS])
            used += len(line)
        return {"messages": "\n".join(lines), "count": len(lines), "next_from": next_from,
                "truncated": next_from is not None}
