"""Summary segments of a task's history (E3): appended after the previous ones, never rewritten, each
linked to the message ids it covers; one per span (the table's unique span start).

Offline (`lomo/local`, `lomo/replay`) a segment is extractive and deterministic: the creator's own words
(their constraints and decisions), the answers they gave, brief revisions, files made and problems
met. With a remote model it is a recorded model call, with the extractive text as the fallback.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from .history import Entry, Segment
from .tokens import estimate
from .. import clock

SEGMENT_CHARS = 2400
CREATOR_CHARS = 280
MAX_CREATOR_LINES = 14
INSERT = ("INSERT INTO context_summaries (task_id, from_message, to_message, messages, text, method, model, "
          "created_at) VALUES (:task, :first, :last, :count, :text, :method, :model, :at) "
          "ON CONFLICT (task_id, from_message) DO NOTHING")
SPAN = ("SELECT id, from_message, to_message, messages, text, method FROM context_summaries "
        "WHERE task_id = :task AND from_message = :first")
MODEL_CALL = ("INSERT INTO model_calls (task_id, turn_id, step, purpose, model, prompt_tokens, completion_tokens, "
              "cached_tokens, cache_write_tokens, cost, latency_ms, created_at) VALUES (:task, :turn, :step, "
              "'summary', :model, :prompt_tokens, :completion_tokens, :cached_tokens, :cache_write_tokens, :cost, "
              ":latency_ms, :at)")
INSTRUCTIONS = (
    "You summarise one stretch of a creative task's history for the agent that works on it. Keep, in the "
    "creator's own words, every constraint, preference, decision and correction; the answers the creator gave; "
    "each brief revision; the files made or changed (paths and versions); failures and open questions. Do not "
    "invent or generalise. Plain text, at most 250 words.")


def clip(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def header(first: int, last: int, count: int) -> str:
    return (f"Earlier in this task — messages #{first}–#{last} ({count}), summarised; "
            f"read_history({first}, {last}) shows them whole:")


def extractive(span: list[Entry]) -> str:
    """A deterministic summary of SPAN that keeps the creator's words and decisions."""
    creator: list[str] = []
    decisions: list[str] = []
    made: list[str] = []
    problems: list[str] = []
    replies: list[str] = []
    for entry in span:
        chat = entry.chat
        if entry.role == "user":
            creator.append(f"- “{clip(chat.get('content'), CREATOR_CHARS)}” (#{entry.id})")
        elif entry.role == "assistant":
            for call in chat.get("tool_calls") or []:
                name, args = call["function"]["name"], _args(call["function"].get("arguments"))
                if name == "update_plan" and args.get("brief"):
                    decisions.append(f"- brief revised: {clip(args['brief'], 200)}")
                elif name == "complete_step":
                    made.append(f"- step {args.get('step')} done: {clip(args.get('evidence'), 120)}")
                elif name == "ask_user":
                    decisions.append(f"- asked: {clip(args.get('question'), 120)}")
            if chat.get("content") and not chat.get("tool_calls"):
                replies.append(clip(chat["content"], 160))
        elif entry.role == "tool":
            result = _args(chat.get("content"))
            if result.get("answer"):
                decisions.append(f"- the creator answered: {clip(result['answer'], 120)}")
            elif result.get("declined"):
                decisions.append("- the creator declined a question")
            if result.get("error"):
                problems.append(f"- {entry.name or 'a tool'} failed: {clip(result['error'], 140)}")
            elif result.get("outcome_unknown"):
                problems.append(f"- {entry.name or 'a call'}: outcome unknown after an interruption")
            elif isinstance(result.get("path"), str):
                version = f" v{result['version']}" if result.get("version") else ""
                made.append(f"- {entry.name}: {result['path']}{version}")
    if len(creator) > MAX_CREATOR_LINES:
        half = MAX_CREATOR_LINES // 2
        creator = creator[:half] + [f"- … {len(creator) - 2 * half} more messages (read_history)"] + creator[-half:]
    lines = [header(span[0].id, span[-1].id, len(span))]
    for title, items in (("The creator said:", creator), ("Decisions:", _dedupe(decisions)),
                         ("Made or changed:", _dedupe(made)[-12:]), ("Problems:", _dedupe(problems)[-6:])):
        if items:
            lines.append(title)
            lines.extend(items)
    if replies:
        lines.append(f"Last reply: {replies[-1]}")
    text = "\n".join(lines)
    return text if len(text) <= SEGMENT_CHARS else text[:SEGMENT_CHARS - 1] + "…"


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (json.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def transcript(span: list[Entry], budget_tokens: int) -> str:
    """SPAN as text for a summarising model, cut to about BUDGET_TOKENS."""
    lines = []
    used = 0
    for entry in span:
        text = entry.chat.get("content") or ""
        for call in entry.chat.get("tool_calls") or []:
            text += f"\n→ {call['function']['name']}({call['function'].get('arguments')})"
        line = f"#{entry.id} {entry.role}{' ' + entry.name if entry.name else ''}: {clip(text, 1200)}"
        used += estimate(line)
        if used > budget_tokens:
            lines.append("… (later messages cut)")
            break
        lines.append(line)
    return "\n".join(lines)


async def model_summary(model: Any, span: list[Entry], budget_tokens: int) -> tuple[str, dict[str, Any]] | None:
    """A remote model's summary of SPAN and its usage record, or None when the call failed (the caller
    falls back to the extractive summary)."""
    from ..models.base import ModelError, ModelRequest

    request = ModelRequest(messages=[{"role": "system", "content": INSTRUCTIONS},
                                     {"role": "user", "content": transcript(span, budget_tokens)}],
                           purpose="summary", timeout=60.0)
    try:
        reply = await model.complete(request)
    except ModelError:
        return None
    if not (reply.content or "").strip():
        return None
    usage = reply.usage
    text = header(span[0].id, span[-1].id, len(span)) + "\n" + reply.content.strip()
    return text, dict(model=reply.model or model.name, prompt_tokens=usage.prompt_tokens,
                      completion_tokens=usage.completion_tokens, cached_tokens=usage.cached_tokens,
                      cache_write_tokens=usage.cache_write_tokens, cost=usage.cost, latency_ms=reply.latency_ms)


async def store(conn: Any, task_id: str, span: list[Entry], text: str, method: str, model: str | None,
                call: dict[str, Any] | None = None, turn_id: str | None = None, step: int | None = None
                ) -> Segment:
    """Append the segment (and its model call, in the same transaction). A span already summarised keeps
    its first segment: that one is returned and nothing is written."""
    from ..store.engine import fetch, run

    first, last, at = span[0].id, span[-1].id, clock.now()
    written = await run(conn, INSERT, dict(task=task_id, first=first, last=last, count=len(span), text=text,
                                           method=method, model=model, at=at))
    if written and call is not None:
        await run(conn, MODEL_CALL, dict(call, task=task_id, turn=turn_id, step=step, at=at))
    [row] = await fetch(conn, SPAN, {"task": task_id, "first": first})
    return Segment(row.id, row.from_message, row.to_message, row.messages, row.text, row.method)
