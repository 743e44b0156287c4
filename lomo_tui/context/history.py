"""A task's history as the prompt carries it: appended summary segments, then the messages after the
last segment verbatim. Loaded incrementally: each step reads only the rows written since the last."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..base.ids import call_key
from . import outputs
from .tokens import MESSAGE_OVERHEAD, estimate, message_text

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

from ..store.engine import fetch
from ..store.schema import RUNTIME_NOTE

NEWER = "SELECT * FROM messages WHERE task_id = :task_id AND id > :after ORDER BY id"
SUMMARIES = ("SELECT id, from_message, to_message, messages, text, method FROM context_summaries "
             "WHERE task_id = :task_id AND id > :after ORDER BY to_message")


@dataclass(frozen=True)
class Entry:
    """One history message: its id, its chat form and its estimated tokens."""

    id: int
    role: str
    chat: dict[str, Any]
    tokens: int
    chars: int
    name: str | None = None  # the tool of a tool result
    calls: tuple[str, ...] = ()  # the tools an assistant message calls
    loads: tuple[str, ...] = ()  # the domains it asked for with load_tools


@dataclass(frozen=True)
class Segment:
    id: int
    from_message: int
    to_message: int
    messages: int
    text: str
    method: str

    def chat(self) -> dict[str, Any]:
        return {"role": "system", "content": self.text}


def _calls(raw: Any) -> list[dict[str, Any]]:
    calls = json.loads(raw) if isinstance(raw, str) else raw
    return calls or []


def as_chat(row: Any, large_output_chars: int) -> dict[str, Any]:
    """One messages row as an OpenAI chat message; an over-long tool result (from before results were
    kept outside the context) becomes its stand-in here too."""
    if row.role == "assistant":
        message: dict[str, Any] = {"role": "assistant", "content": row.content}
        calls = _calls(row.tool_calls)
        if calls:
            message["tool_calls"] = [
                {"id": call_key(row.turn_id, row.step, seq), "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {},
                                                                         ensure_ascii=False)}}
                for seq, c in enumerate(calls)]
        return message
    if row.role == "tool":
        content = row.content or ""
        if len(content) > large_output_chars:
            try:
                result: Any = json.loads(content)
            except json.JSONDecodeError:
                result = content
            content = outputs.tool_message(result, row.tool_call_id, large_output_chars)
        return {"role": "tool", "tool_call_id": row.tool_call_id, "content": content}
    if row.name == RUNTIME_NOTE:  # the runtime's note to the model: in place, as user text (a provider would
        return {"role": "user", "content": row.content or ""}  # lift a system message into the system prompt)
    return {"role": row.role, "content": row.content or ""}


def entry_role(row: Any) -> str:
    """The role a history entry has: a runtime note is "system" (older rows stored it as "user")."""
    return "system" if row.name == RUNTIME_NOTE else row.role


class History:
    """Summary segments and the verbatim messages after them, for one task."""

    def __init__(self, task_id: str, large_output_chars: int = outputs.PAGE_CHARS * 2) -> None:
        self.task_id = task_id
        self.large_output_chars = large_output_chars
        self.segments: list[Segment] = []
        self.recent: list[Entry] = []
        self.chats: list[dict[str, Any]] = []  # the recent messages' chat forms (copied per step at C speed)
        self.called: Counter[str] = Counter()  # tools the recent messages call
        self.loaded_domains: Counter[str] = Counter()  # domains they asked for with load_tools
        self.tokens = 0  # of the recent messages
        self.chars = 0
        self._last_message = 0
        self._last_segment = 0
        self.loaded = False

    @property
    def boundary(self) -> int:
        """The last message id a summary covers (0: none)."""
        return self.segments[-1].to_message if self.segments else 0

    async def refresh(self, conn: AsyncConnection) -> None:
        """Read what is new. Segments are read once: later ones are this holder's own (a turn's claim is
        the only writer of its task's summaries), added with `add_segment`."""
        for row in [] if self.loaded else await fetch(conn, SUMMARIES, {"task_id": self.task_id,
                                                                          "after": self._last_segment}):
            self._last_segment = max(self._last_segment, row.id)
            if row.to_message > self.boundary:
                self.segments.append(Segment(row.id, row.from_message, row.to_message, row.messages, row.text,
                                             row.method))
        after = max(self._last_message, self.boundary)
        rows = await fetch(conn, NEWER, {"task_id": self.task_id, "after": after})
        for row in rows:
            self._append(as_chat(row, self.large_output_chars), row.id, entry_role(row), row.name)
        if rows:
            self._last_message = rows[-1].id
        self.drop_summarised()
        self.loaded = True

    def _append(self, chat: dict[str, Any], id: int, role: str, name: str | None) -> None:
        text = message_text(chat)
        calls: tuple[str, ...] = ()
        loads: list[str] = []
        for call in chat.get("tool_calls") or ():
            calls += (call["function"]["name"],)
            if calls[-1] == "load_tools":
                loads.extend(_domains(call["function"].get("arguments")))
        entry = Entry(id, role, chat, estimate(text) + MESSAGE_OVERHEAD, len(text), name, calls, tuple(loads))
        self.recent.append(entry)
        self.chats.append(chat)
        self.tokens += entry.tokens
        self.chars += entry.chars
        self.called.update(calls)
        self.loaded_domains.update(loads)

    def drop_summarised(self) -> None:
        boundary = self.boundary
        if self.recent and self.recent[0].id <= boundary:
            self.recent = [e for e in self.recent if e.id > boundary]
            self._recount()

    def exclude(self, ids: set[int]) -> None:
        """Leave out messages whose step carried a since-forgotten memory (F4): a step's reply and its tool
        results go together, so no call is left without its result."""
        if ids and any(e.id in ids for e in self.recent):
            self.recent = [e for e in self.recent if e.id not in ids]
            self._recount()

    def _recount(self) -> None:
        self.chats = [e.chat for e in self.recent]
        self.called = Counter(name for e in self.recent for name in e.calls)
        self.loaded_domains = Counter(d for e in self.recent for d in e.loads)
        self.tokens = sum(e.tokens for e in self.recent)
        self.chars = sum(e.chars for e in self.recent)

    async def reread_segments(self, conn: AsyncConnection) -> None:
        """Take the current text of the segments held (a forget rewrites a segment in place, F4)."""
        if not self.segments:
            return
        rows = {r.id: r for r in await fetch(conn, SUMMARIES, {"task_id": self.task_id, "after": 0})}
        self.segments = [Segment(seg.id, seg.from_message, seg.to_message, seg.messages, rows[seg.id].text,
                                 rows[seg.id].method) if seg.id in rows else seg for seg in self.segments]

    def add_segment(self, segment: Segment) -> None:
        self.segments.append(segment)
        self._last_segment = max(self._last_segment, segment.id)
        self.drop_summarised()

    def verbatim(self) -> list[Entry]:
        """The recent messages, never starting with tool results whose call is not in view."""
        start = 0
        while start < len(self.recent) and self.recent[start].role == "tool":
            start += 1
        return self.recent[start:] if start else self.recent

    def _orphans(self) -> int:
        start = 0
        while start < len(self.recent) and self.recent[start].role == "tool":
            start += 1
        return start

    def verbatim_tokens(self) -> int:
        return self.tokens - sum(e.tokens for e in self.recent[:self._orphans()])

    def verbatim_layer(self) -> tuple[list[dict[str, Any]], int, int]:
        """The verbatim messages' chat forms, characters and tokens."""
        start = self._orphans()
        if not start:
            return list(self.chats), self.chars, self.tokens
        skipped = self.recent[:start]
        return (self.chats[start:], self.chars - sum(e.chars for e in skipped),
                self.tokens - sum(e.tokens for e in skipped))


def _domains(arguments: Any) -> list[str]:
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments or {})
    except (json.JSONDecodeError, TypeError, ValueError):
        return []
    domains = args.get("domains") if isinstance(args, dict) else None
    return [str(d) for d in domains] if isinstance(domains, list) else []
