"""`lomo/replay`: recorded responses, line k for the k-th model call recorded in the database (CONTRACTS §5)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Awaitable, Callable

from .base import ModelError, ModelReply, ModelRequest, TokenSink, ToolCall

EXHAUSTED = {"content": "done", "tool_calls": []}


class ReplayModel:
    name = "lomo/replay"
    wants_recorded_count = True  # the runtime passes the count of recorded calls in the request's hints

    def __init__(self, path: Path | None, count_recorded: Callable[[], Awaitable[int]]) -> None:
        if path is None:
            raise ModelError("--model lomo/replay needs LOMO_REPLAY_FILE=path/to/responses.jsonl")
        self.path = path
        self._count_recorded = count_recorded
        self._next_local = 0  # calls handed out by this process but maybe not yet recorded
        self._cache: tuple[tuple[int, int], list[str]] | None = None

    def _lines(self) -> list[str]:
        """The file's lines (re-read only when the file changed)."""
        try:
            st = self.path.stat()
            if self._cache is None or self._cache[0] != (st.st_mtime_ns, st.st_size):
                self._cache = ((st.st_mtime_ns, st.st_size), self.path.read_text(encoding="utf-8").splitlines())
            return self._cache[1]
        except OSError as exc:
            raise ModelError(f"cannot read the replay file {self.path}: {exc.strerror}") from None

    async def complete(self, request: ModelRequest, on_token: TokenSink | None = None) -> ModelReply:
        recorded = request.hints.get("model_calls_recorded")
        k = max(recorded if recorded is not None else await self._count_recorded(), self._next_local)
        self._next_local = k + 1
        lines = self._lines()
        data = json.loads(lines[k]) if k < len(lines) and _valid(lines[k]) else None
        if k < len(lines) and data is None:
            raise ModelError(f"replay file {self.path} line {k + 1} is not a valid response "
                             "(expected {\"content\": ..., \"tool_calls\": [{\"name\", \"arguments\"}]})")
        data = data if data is not None else EXHAUSTED
        reply = _parse(data, self.path, k)
        if on_token is not None and reply.content:
            result = on_token(reply.content)
            if result is not None:
                await result
        return reply


def _valid(line: str) -> bool:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict)


def _parse(data: dict, path: Path, k: int) -> ModelReply:
    calls = []
    for call in data.get("tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not isinstance(
                call.get("arguments", {}), dict):
            raise ModelError(f"replay file {path} line {k + 1}: a tool call needs a name and an arguments object")
        calls.append(ToolCall(call["name"], dict(call.get("arguments") or {})))
    content = data.get("content")
    if content is not None and not isinstance(content, str):
        raise ModelError(f"replay file {path} line {k + 1}: content must be a string or null")
    return ModelReply(content=content, tool_calls=calls, model="lomo/replay")
