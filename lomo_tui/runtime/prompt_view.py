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


def _cells(words: str) -> int:
    """WORDS' width in terminal cells (a wide CJK character takes two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in words)


def render(doc: dict[str, Any], lang: str = "en") -> str:
    """The context document for a person in LANG (`lomo context`, the context view F4), its words from the
    catalogue (`[tui_context]`); each layer by its label in [tui_layer], each tool by its label in [tui_tools].
    The messages are what the model reads, shown as they are."""
    from ..language import message, template

    def say(key: str, **fields: Any) -> str:
        return message(f"tui_context.{key}", lang, **fields)

    def word(key: str, raw: str) -> str:
        """The label KEY ("tui_layer.history"), or RAW for an id the catalogue does not know."""
        try:
            return template(key, lang)
        except KeyError:
            return raw

    def cache_line(figures: dict[str, Any]) -> str:
        if not figures.get("calls"):
            return ""
        share = figures["cache_read_share"]
        if share is None:
            return say("cache_none", calls=figures["calls"])
        return say("cache", read=f"{figures['cache_read_tokens']:,}", prompt=f"{figures['prompt_tokens']:,}",
                   share=f"{share:.0%}", write=f"{figures['cache_write_tokens']:,}")

    def right(words: str, width: int) -> str:
        return " " * max(0, width - _cells(words)) + words

    source = word("tui_context.source_" + str(doc["budget_source"]).replace(" ", "_"), str(doc["budget_source"]))
    lines = [say("head", task=doc["task_id"], model=doc["model"], total=f"{doc['total_tokens']:,}",
                 budget=f"{doc['budget_tokens']:,}", reply=f"{doc['reply_tokens']:,}", source=source), ""]
    names = [word("tui_layer." + layer["name"], layer["name"]) for layer in doc["layers"]]
    width = max([10, *(_cells(name) for name in names)])
    head = say("col_layer")
    lines.append(head + " " * max(1, width + 1 - _cells(head)) + right(say("col_chars"), 9) + " "
                 + right(say("col_tokens"), 8))
    for name, layer in zip(names, doc["layers"]):
        lines.append(name + " " * (width + 1 - _cells(name)) + f"{layer['chars']:>9,} {layer['tokens']:>8,}")
    lines.append("")
    lines.append(say("tools", tools=", ".join(word("tui_tools." + t, t) for t in doc["tools"])))
    if doc["summaries"] or doc["pending_summaries"]:
        lines.append(say("summaries", count=doc["summaries"], through=doc["summarised_through"])
                     + (say("summaries_pending", count=doc["pending_summaries"]) if doc["pending_summaries"] else ""))
    for scope, figures in (("task", doc["cache"]["task"]), ("all", doc["cache"]["overall"])):
        line = cache_line(figures)
        if line:
            lines.append(say("cache_scope", line=line, scope=say("scope_" + scope)))
    lines.append("")
    for number, entry in enumerate(doc["messages"]):
        said = entry["content"]
        role = word("tui_context.role_" + entry["role"], entry["role"])
        lines.append(say("message", number=number, role=role, chars=f"{len(said):,}"))
        lines.append(said if len(said) <= 600 else said[:600] + " …")
    return "\n".join(lines)
