"""What a task's next step would send, without sending it (issue #13 §9): its messages and tools, each layer's
size, the budget, and what is cached. `lomo context` prints it; the TUI's context view (F4) shows it."""
from __future__ import annotations

from typing import Any

TASK = "SELECT * FROM tasks WHERE id = :task_id"
CACHEABLE = ("system", "summaries", "history")


async def describe(runtime: Any, task_id: str | None) -> dict[str, Any]:
    """The context document of TASK_ID (the main thread when None); LomoError for an unknown task."""
    from ..context.tokens import message_text
    from ..context.usage import cache_usage
    from ..errors import LomoError
    from .context import TurnContext
    from ..store.engine import fetch

    task_id = task_id or await runtime.ledger.main_task_id()
    async with runtime.db.read() as conn:
        rows = await fetch(conn, TASK, {"task_id": task_id})
        if not rows:
            raise LomoError.said("cli_error.no_task", id=task_id)
        task = rows[0]
        context = TurnContext(runtime, task.id)
        await context.refresh(conn, task)
        unread = await runtime.readable_inbox(conn, task)  # what the next step reads (Main: one message)
        pending = [m.text for m in unread]
        extra, hints = await runtime.context_extras(conn, task, unread)
        usage = {"task": await cache_usage(conn, task.id), "overall": await cache_usage(conn)}
    profile, recall, _ = await context.memory_inputs(task, list(pending))
    prompt = await context.build(task, extra, hints, pending, profile=profile, recall=recall)
    marks = bool(getattr(runtime.model, "_takes_cache_breakpoints", False))
    present = {layer.name for layer in prompt.layers if layer.chars}
    return {
        "task_id": task.id, "model": runtime.model.name, "budget_tokens": prompt.budget.tokens,
        "total_tokens": prompt.total_tokens,
        "layers": [{"name": layer.name, "chars": layer.chars, "tokens": layer.tokens} for layer in prompt.layers],
        "messages": [{"role": m["role"], "content": message_text(m)} for m in prompt.messages],
        "tools": [t.name for t in prompt.tools],
        "window_tokens": prompt.budget.window, "reply_tokens": prompt.budget.reply,
        "budget_source": prompt.budget.source, "tool_domains": sorted(prompt.domains),
        "summaries": len(context.history.segments), "summarised_through": context.history.boundary,
        "pending_summaries": prompt.summarised,
        "cache_breakpoints": [name for name in CACHEABLE if name in present],
        "cached": [name for name in ("tools", *CACHEABLE) if marks and (name in present or name == "tools")],
        "cache": usage,
    }


def render(doc: dict[str, Any]) -> str:
    from ..context.usage import render_cache

    lines = [f"Task {doc['task_id']} · {doc['model']} · about {doc['total_tokens']:,} of {doc['budget_tokens']:,} "
             f"tokens ({doc['reply_tokens']:,} kept for the reply; budget from {doc['budget_source']})", ""]
    lines.append(f"{'layer':<10} {'chars':>9} {'tokens':>8}")
    for layer in doc["layers"]:
        lines.append(f"{layer['name']:<10} {layer['chars']:>9,} {layer['tokens']:>8,}")
    lines.append("")
    lines.append("Tools: " + ", ".join(doc["tools"]))
    if doc["summaries"] or doc["pending_summaries"]:
        lines.append(f"Summaries: {doc['summaries']} segments, through message #{doc['summarised_through']}"
                     + (f" ({doc['pending_summaries']} to be written by the next step)" if doc["pending_summaries"]
                        else ""))
    for scope, figures in (("this task", doc["cache"]["task"]), ("all tasks", doc["cache"]["overall"])):
        line = render_cache(figures)
        if line:
            lines.append(f"{line} — {scope}")
    lines.append("")
    for number, message in enumerate(doc["messages"]):
        text = message["content"]
        lines.append(f"--- {number} {message['role']} ({len(text):,} chars)")
        lines.append(text if len(text) <= 600 else text[:600] + " …")
    return "\n".join(lines)
