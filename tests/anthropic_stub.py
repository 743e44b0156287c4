"""An Anthropic-style Messages API server on 127.0.0.1 for tests and bench/context.py, with a prompt cache
that behaves like the provider's: a request's content is a sequence of blocks (tools, then system, then
messages); a block marked `cache_control` writes the prefix that ends there; a later request reads the
longest written prefix it starts with. Usage reports `cache_read_input_tokens` and
`cache_creation_input_tokens` (input_tokens excludes both), in plain and streamed answers.

Tests enqueue answers (`text(...)`, `tools(...)`) and read `stub.requests`. A request whose system starts
with "You summarise" (the runtime's summary call) is answered by `summary_text` without using the script;
one of memory's extraction readings takes its answer from `enqueue_memory` (none left: a 400).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

from lomo_tui.memory.extract import EXTRACTION_PROMPT
from openai_stub import candidates_json

SUMMARY_MARK = "You summarise"
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")  # what the real API accepts for tool_use ids


def bad_ids(body: dict[str, Any]) -> list[str]:
    ids = []
    for message in body.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            ref = block.get("id") if block.get("type") == "tool_use" else block.get("tool_use_id")
            if ref is not None and not TOOL_ID.match(str(ref)):
                ids.append(str(ref))
    return ids


@dataclass(frozen=True)
class Answer:
    blocks: list[dict[str, Any]]  # text / tool_use content blocks

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def text(content: str) -> Answer:
    return Answer([{"type": "text", "text": content}])


def tools(*calls: tuple[str, dict[str, Any]], content: str | None = None) -> Answer:
    blocks = [{"type": "text", "text": content}] if content else []
    blocks += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a} for i, (n, a) in enumerate(calls)]
    return Answer(blocks)


def memory_text(*candidates: dict[str, Any]) -> Callable[[dict[str, Any]], Answer]:
    """For `enqueue_memory`: the extraction answer naming CANDIDATES (each cites the reading's message)."""
    return lambda body: text(candidates_json(body, candidates))


def _tokens(block: Any) -> int:
    return max(1, len(json.dumps(block, ensure_ascii=False, sort_keys=True)) // 4)


def strip(block: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """BLOCK without cache_control marks (a tool_result's nested content included), and whether it had one."""
    marked = "cache_control" in block
    clean = {k: v for k, v in block.items() if k != "cache_control"}
    if isinstance(clean.get("content"), list):
        inner = [strip(c) if isinstance(c, dict) else (c, False) for c in clean["content"]]
        clean["content"] = [c for c, _ in inner]
        marked = marked or any(m for _, m in inner)
    return clean, marked


def blocks_of(body: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """(block without cache_control, marked?) in the provider's prefix order: tools, system, messages."""
    out: list[tuple[dict[str, Any], bool]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict):
            out.append(strip(block))
        else:
            out.append(({"type": "text", "text": str(block)}, False))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    for block in ([system] if isinstance(system, str) else system or []):
        add(block)
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in ([content] if isinstance(content, str) else content or []):
            add({"role": message["role"], **block} if isinstance(block, dict) else {"role": message["role"],
                                                                                     "text": block})
    return out


class PromptCache:
    def __init__(self) -> None:
        self.prefixes: set[str] = set()

    def use(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(input tokens not cached, cache read, cache written) for BODY, updating the cache."""
        blocks = blocks_of(body)
        sizes = [_tokens(b) for b, _ in blocks]
        digest = hashlib.sha256()
        hashes = []
        for block, _ in blocks:
            digest.update(json.dumps(block, ensure_ascii=False, sort_keys=True).encode())
            hashes.append(digest.copy().hexdigest())
        read_upto = max((i + 1 for i, h in enumerate(hashes) if h in self.prefixes), default=0)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        write_upto = max(marks, default=-1) + 1
        for i in marks:
            self.prefixes.add(hashes[i])
        read = sum(sizes[:read_upto])
        written = sum(sizes[read_upto:write_upto]) if write_upto > read_upto else 0
        return sum(sizes) - read - written, read, written


class AnthropicStub:
    def __init__(self, summary_text: str = "The creator asked for teal and cream posters.") -> None:
        self.requests: list[dict[str, Any]] = []
        self.summary_text = summary_text
        self.cache = PromptCache()
        self._script: deque[Answer] = deque()
        self._memory: deque[Union[Answer, Callable[[dict[str, Any]], Answer]]] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="anthropic-stub", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "AnthropicStub":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def enqueue(self, *answers: Answer) -> None:
        with self._lock:
            self._script.extend(answers)

    def enqueue_memory(self, *answers: "Answer | Callable[[dict[str, Any]], Answer]") -> None:
        with self._lock:
            self._memory.extend(answers)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    @staticmethod
    def system_text(body: dict[str, Any]) -> str:
        system = body.get("system")
        return system if isinstance(system, str) else (system or [{}])[0].get("text", "")

    def is_memory_reading(self, body: dict[str, Any]) -> bool:
        return self.system_text(body).startswith(EXTRACTION_PROMPT[:60])

    def _answer(self, body: dict[str, Any]) -> tuple[Answer | None, tuple[int, int, int]]:
        with self._lock:
            self.requests.append(body)
            first = self.system_text(body)
            if self.is_memory_reading(body):
                if not self._memory:
                    return None, (0, 0, 0)
                answer = self._memory.popleft()
                return (answer(body) if callable(answer) else answer), self.cache.use(body)
            if first.startswith(SUMMARY_MARK):
                answer = text(self.summary_text)
            else:
                answer = self._script.popleft() if self._script else text("done")
            return answer, self.cache.use(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if bad_ids(body):
                    self._refuse(f"tool_use ids {bad_ids(body)} do not match ^[a-zA-Z0-9_-]+$")
                    return
                answer, (fresh, read, written) = stub._answer(body)
                if answer is None:
                    self._refuse("anthropic stub: no memory answer left")
                    return
                usage = {"input_tokens": fresh, "output_tokens": 9, "cache_read_input_tokens": read,
                         "cache_creation_input_tokens": written}
                message = {"id": "msg_stub", "type": "message", "role": "assistant", "model": body.get("model"),
                           "content": answer.blocks, "stop_reason": answer.stop_reason, "stop_sequence": None,
                           "usage": usage}
                if body.get("stream"):
                    self._stream(message)
                else:
                    data = json.dumps(message).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            def _refuse(self, reason: str) -> None:
                data = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                              "message": reason}}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                usage = message["usage"]
                start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
                events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start",
                                                                               "message": start})]
                for index, block in enumerate(message["content"]):
                    if block["type"] == "text":
                        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                               "content_block": {"type": "text", "text": ""}}))
                        events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                               "delta": {"type": "text_delta",
                                                                         "text": block["text"]}}))
                    else:
                        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                               "content_block": {**block, "input": {}}}))
                        events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                               "delta": {"type": "input_json_delta",
                                                                         "partial_json": json.dumps(block["input"])}}))
                    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
                events.append(("message_delta", {"type": "message_delta",
                                                 "delta": {"stop_reason": message["stop_reason"],
                                                           "stop_sequence": None},
                                                 "usage": {"output_tokens": usage["output_tokens"]}}))
                events.append(("message_stop", {"type": "message_stop"}))
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        return Handler
