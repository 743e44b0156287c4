"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests.

Tests enqueue responses (built with `reply`, `tool_call`, `stream`, `error`, `embeddings`,
optionally wrapped in `delayed`) and read back what the server received from `stub.requests`.
Each request consumes the next scripted response, whichever endpoint it hits — except memory's extraction
readings (`lomo_tui.memory.models`), which run beside the task's own calls and take theirs from a queue of
their own (`enqueue_memory`), so a script's order does not depend on which of the two asks first.
"""
from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

from lomo_tui.memory.extract import EXTRACTION_PROMPT

DEFAULT_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@dataclass(frozen=True)
class Scripted:
    """One scripted HTTP answer: a JSON body, or SSE chunks when `chunks` is set."""

    status: int = 200
    body: dict[str, Any] | None = None
    chunks: list[dict[str, Any]] | None = None
    usage: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    cut_after: int | None = None


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


def _completion(message: dict[str, Any], finish: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "stub-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage or DEFAULT_USAGE,
    }


def _arguments(arguments: str | dict[str, Any]) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def reply(content: str, *, usage: dict[str, Any] | None = None) -> Scripted:
    """A plain assistant message."""
    return Scripted(body=_completion({"role": "assistant", "content": content}, "stop", usage))


def tool_call(name: str, arguments: str | dict[str, Any], *, call_id: str = "call_1",
              content: str | None = None) -> Scripted:
    """An assistant message with one function call; a str `arguments` is sent verbatim."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": _arguments(arguments)}}
    message = {"role": "assistant", "content": content, "tool_calls": [call]}
    return Scripted(body=_completion(message, "tool_calls", None))


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "stub-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _tool_call_chunks(name: str, arguments: str, call_id: str) -> list[dict[str, Any]]:
    head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    pieces = [arguments[i:i + 5] for i in range(0, len(arguments), 5)]
    return [_chunk({"tool_calls": [head]})] + [
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces
    ]


def stream(tokens: list[str], *, tool: tuple[str, str | dict[str, Any]] | None = None,
           usage: dict[str, Any] | None = None, cut_after: int | None = None) -> Scripted:
    """An SSE stream of content tokens, then optionally one function call split into fragments.

    A usage chunk is appended when the request asks for `stream_options.include_usage`.
    `cut_after=n` resets the connection after n chunks (the role chunk counts).
    """
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": t}) for t in tokens]
    if tool is not None:
        chunks += _tool_call_chunks(tool[0], _arguments(tool[1]), "call_1")
    chunks.append(_chunk({}, "tool_calls" if tool else "stop"))
    return Scripted(chunks=chunks, usage=usage or DEFAULT_USAGE, cut_after=cut_after)


def error(status: int, message: str, *, headers: dict[str, str] | None = None) -> Scripted:
    """An OpenAI-style error body with the given HTTP status."""
    body = {"error": {"message": message, "type": "stub_error", "param": None, "code": None}}
    return Scripted(status=status, body=body, headers=headers or {})


def embeddings(vectors: list[list[float]]) -> Scripted:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    usage = {"prompt_tokens": 3, "total_tokens": 3}
    return Scripted(body={"object": "list", "data": data, "model": "stub-embed", "usage": usage})


def delayed(response: Scripted, seconds: float) -> Scripted:
    """`response`, sent only after `seconds` (the stub stops waiting when it shuts down)."""
    return replace(response, delay=seconds)


def is_memory_reading(body: dict[str, Any]) -> bool:
    """Whether a request is memory's extraction reading (its system prompt is memory's)."""
    messages = body.get("messages") or [{}]
    first = messages[0].get("content") if isinstance(messages[0], dict) else ""
    if isinstance(first, list):  # content blocks
        first = " ".join(b.get("text", "") for b in first if isinstance(b, dict))
    return isinstance(first, str) and first.startswith(EXTRACTION_PROMPT[:60])


def memory_reading(body: dict[str, Any]) -> list[dict[str, str]]:
    """The evidence a memory reading sent: [{"evidence_id", "text"}] (from its last user message's JSON)."""
    for message in reversed(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        try:
            return list(json.loads(content)["messages"])
        except (TypeError, ValueError, KeyError):
            continue
    return []


def candidates_json(body: dict[str, Any], candidates: tuple[dict[str, Any], ...]) -> str:
    """A model's extraction answer to BODY: CANDIDATES, each citing the reading's first message unless it
    names its own evidence_id."""
    evidence = memory_reading(body)
    first = evidence[0]["evidence_id"] if evidence else ""
    return json.dumps({"candidates": [{"evidence_id": first, **c} for c in candidates]})


def memory_answer(*candidates: dict[str, Any]) -> Callable[[dict[str, Any]], Scripted]:
    """For `enqueue_memory`: the answer naming CANDIDATES (none: "nothing here lasts")."""
    return lambda body: reply(candidates_json(body, candidates))


class OpenAIStub:
    """The server. Use as a context manager or call `start()` / `stop()`."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: deque[Scripted] = deque()
        self._memory: deque[Union[Scripted, Callable[[dict[str, Any]], Scripted]]] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "OpenAIStub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "OpenAIStub":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, *responses: Scripted) -> None:
        with self._lock:
            self._script.extend(responses)

    def enqueue_memory(self, *responses: "Scripted | Callable[[dict[str, Any]], Scripted]") -> None:
        """Answers for memory's extraction readings, in order (none left: a 400, and the reading is retried);
        a callable builds its answer from the request (`memory_answer`: the message ids are not known ahead)."""
        with self._lock:
            self._memory.extend(responses)

    def reset(self) -> None:
        """Forget received requests and any unconsumed script."""
        with self._lock:
            self.requests.clear()
            self._script.clear()
            self._memory.clear()

    @property
    def memory_requests(self) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if is_memory_reading(r.body)]

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def _take(self, received: Received) -> Scripted:
        with self._lock:
            self.requests.append(received)
            if is_memory_reading(received.body):
                if not self._memory:
                    return error(400, "openai stub: no memory answer left")
                answer = self._memory.popleft()
                return answer(received.body) if callable(answer) else answer
            if self._script:
                return self._script.popleft()
        return error(400, "openai stub: no scripted response left")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                scripted = stub._take(Received(self.path, headers, body, time.monotonic()))
                if scripted.delay and stub._closing.wait(scripted.delay):
                    return
                try:
                    if scripted.chunks is not None:
                        self._send_stream(scripted, body)
                    else:
                        self._send_json(scripted)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

            def _send_json(self, scripted: Scripted) -> None:
                data = json.dumps(scripted.body).encode()
                self.send_response(scripted.status)
                for key, value in scripted.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, scripted: Scripted, request: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                chunks = list(scripted.chunks or [])
                if (request.get("stream_options") or {}).get("include_usage"):
                    chunks.append({**_chunk({}), "choices": [], "usage": scripted.usage})
                for sent, chunk in enumerate(chunks):
                    if sent == scripted.cut_after:
                        self._reset()
                        return
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _reset(self) -> None:
                """Abort the connection with a TCP reset, as a crashed upstream would."""
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        return Handler
