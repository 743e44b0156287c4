"""`lomo/local`: the embedded offline planner. Deterministic, no network, no litellm.

It speaks the same protocol as any model: it reads the messages and tool schemas it is given and
answers with content or tool calls. The runtime never branches on its name.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .base import ModelReply, ModelRequest, TokenSink, ToolCall, Usage

FILE_RE = re.compile(r"[\w./-]+\.(?:md|txt|json|ya?ml|csv|flow\.json|png|jpg|gif|webp|gltf|obj|wav)\b")


class LocalModel:
    name = "lomo/local"

    async def complete(self, request: ModelRequest, on_token: TokenSink | None = None) -> ModelReply:
        reply = plan(request)
        if on_token is not None and reply.content:
            for piece in re.findall(r"\S+\s*", reply.content):
                result = on_token(piece)
                if result is not None:
                    await result
        reply.model = self.name
        reply.usage = Usage(prompt_tokens=sum(len(str(m.get("content") or "")) // 4 for m in request.messages),
                            completion_tokens=len(reply.content or "") // 4)
        return reply


def _tool_names(request: ModelRequest) -> set[str]:
    return {t["function"]["name"] for t in request.tools}


def _last_turn(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The latest user message and the tool results that followed it."""
    results: list[dict[str, Any]] = []
    for message in reversed(messages):
        if message["role"] == "tool":
            results.append(message)
        elif message["role"] == "user":
            return str(message.get("content") or ""), list(reversed(results))
    return "", list(reversed(results))


def plan(request: ModelRequest) -> ModelReply:
    text, results = _last_turn(request.messages)
    tools = _tool_names(request)
    if results:
        return ModelReply(content=_summarise(results))
    files = FILE_RE.findall(text)
    if files and "read_file" in tools:
        return ModelReply(content=None, tool_calls=[ToolCall("read_file", {"path": files[0]})])
    if text:
        return ModelReply(content=f"Noted: {text}")
    return ModelReply(content="Ready.")


def _summarise(results: list[dict[str, Any]]) -> str:
    parts = []
    for result in results:
        try:
            data = json.loads(result.get("content") or "{}")
        except json.JSONDecodeError:
            data = {"text": result.get("content")}
        if isinstance(data, dict) and "error" in data:
            parts.append(f"That did not work: {data['error']}")
        elif isinstance(data, dict) and "path" in data and "version" in data:
            parts.append(f"{data['path']} is at version {data['version']}.")
        else:
            parts.append("Done.")
    return " ".join(parts)
