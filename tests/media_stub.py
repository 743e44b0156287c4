"""A stateful OpenAI-compatible media server on 127.0.0.1 for tests: images, videos, speech.

It speaks the paths and fields litellm 1.110's OpenAI adapters use:

- `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart) → `{"data": [{"b64_json"}]}`
  (or `[{"url"}]` with `image_as_url`, served at `GET /v1/files/image.png`)
- `POST /v1/videos` (multipart form: model, prompt, seconds, size, input_reference file) → a video object
- `GET /v1/videos/{id}` → the video object; each GET advances the video one step along `video_steps`
- `GET /v1/videos/{id}/content` → the MP4 bytes once the video is complete
- `POST /v1/audio/speech` (JSON) → WAV bytes when `response_format` is "wav", MP3-like bytes otherwise

Videos live in the server, not in a client, so a fresh client can pick one up by id (a restart).
Faults: `delay(path, seconds)` holds the next request to a path; `fail(path, status, message)` answers
the next request to a path with an OpenAI-style error; `require_key` answers 401 to any other key.
Everything received is in `requests` (method, path, headers, JSON body or multipart fields).
"""
from __future__ import annotations

import base64
import io
import json
import struct
import threading
import time
import wave
import zlib
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00\x00\x00\x08free" + b"stub-video" * 50
MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 64
DEFAULT_STEPS = (("queued", 0), ("in_progress", 30), ("in_progress", 70), ("completed", 100))


def png(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 120, 40)) -> bytes:
    """A tiny valid PNG (no Pillow needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def wav(seconds: float = 0.1, rate: int = 8000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x00\x00" * int(seconds * rate))
    return out.getvalue()


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    files: dict[str, bytes]
    at: float
    uploads: tuple[tuple[str, bytes], ...] = ()  # every file part in order (repeated names such as image[] too)


@dataclass
class Video:
    id: str
    model: str
    prompt: str
    seconds: str
    size: str
    steps: list[tuple[str, int]]
    step: int = 0
    error: dict[str, Any] | None = None
    created_at: int = field(default_factory=lambda: int(time.time()))

    def view(self) -> dict[str, Any]:
        status, progress = self.steps[min(self.step, len(self.steps) - 1)]
        body = {"id": self.id, "object": "video", "status": status, "progress": progress, "model": self.model,
                "seconds": self.seconds, "size": self.size, "created_at": self.created_at}
        if status in ("failed", "error", "cancelled") and self.error is not None:
            body["error"] = self.error
        return body

    @property
    def complete(self) -> bool:
        return self.steps[min(self.step, len(self.steps) - 1)][1] >= 100


class MediaStub:
    """The server. Use as a context manager or call `start()` / `stop()`."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.videos: dict[str, Video] = {}
        self.video_steps: list[tuple[str, int]] = list(DEFAULT_STEPS)
        self.image = png()
        self.image_as_url = False  # answer images with a download url instead of b64_json
        self.image_by_prompt = False  # answer each prompt with its own picture
        self.require_key: str | None = None
        self.video_error: dict[str, Any] = {"code": "moderation_blocked", "message": "The prompt was blocked."}
        self._delays: dict[str, float] = {}
        self._failures: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._count = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="media-stub", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "MediaStub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "MediaStub":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.videos.clear()
            self._delays.clear()
            self._failures.clear()
            self.video_steps = list(DEFAULT_STEPS)
            self.image = png()
            self.image_as_url = False
            self.image_by_prompt = False
            self.require_key = None
            self.video_error = {"code": "moderation_blocked", "message": "The prompt was blocked."}

    def delay(self, path: str, seconds: float) -> None:
        """Hold the next request to `path` (e.g. "/v1/videos") for `seconds` before answering."""
        with self._lock:
            self._delays[path] = seconds

    def fail(self, path: str, status: int, message: str) -> None:
        """Answer the next request to `path` with an OpenAI-style error."""
        with self._lock:
            self._failures[path] = (status, message)

    def hits(self, method: str, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path == path]

    # ---- request handling -----------------------------------------------------------------------
    def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, str, bytes]:
        body, files = _decode(headers.get("content-type", ""), raw)
        uploads = _uploads(headers.get("content-type", ""), raw)
        with self._lock:
            self.requests.append(Received(method, path, headers, body, files, time.monotonic(), uploads))
            delay = self._delays.pop(path, 0.0)
            failure = self._failures.pop(path, None)
        if delay and self._closing.wait(delay):
            return 0, "", b""
        if failure is not None:
            return _error(*failure)
        if self.require_key is not None and headers.get("authorization") != f"Bearer {self.require_key}":
            given = headers.get("authorization", "").removeprefix("Bearer ")
            return _error(401, f"Incorrect API key provided: {given}. You can find your API key at "
                               "https://platform.openai.com/account/api-keys.", "invalid_api_key")
        return self._route(method, path, body, files)

    def _route(self, method: str, path: str, body: dict[str, Any], files: dict[str, bytes]) -> tuple[int, str, bytes]:
        if method == "POST" and path in ("/v1/images/generations", "/v1/images/edits"):
            image = self.image
            if self.image_by_prompt:  # a picture of its own per prompt (so references can be told apart)
                shade = zlib.crc32(str(body.get("prompt", "")).encode())
                image = png(4, 3, (shade & 255, (shade >> 8) & 255, (shade >> 16) & 255))
            item = ({"url": f"{self.base_url}/files/image.png"} if self.image_as_url
                    else {"b64_json": base64.b64encode(image).decode()})
            data = [{**item, "revised_prompt": body.get("prompt")}]
            return _json(200, {"created": int(time.time()), "data": data})
        if method == "GET" and path == "/v1/files/image.png":
            return 200, "image/png", self.image
        if method == "POST" and path == "/v1/audio/speech":
            if body.get("response_format") == "wav":
                return 200, "audio/wav", wav()
            return 200, "audio/mpeg", MP3
        if method == "POST" and path == "/v1/videos":
            with self._lock:
                self._count += 1
                video = Video(f"video_stub{self._count:04d}", str(body.get("model", "")), str(body.get("prompt", "")),
                              str(body.get("seconds", "4")), str(body.get("size", "720x1280")), list(self.video_steps),
                              error=dict(self.video_error))
                self.videos[video.id] = video
                return _json(200, video.view())
        parts = path.strip("/").split("/")
        if method == "GET" and len(parts) in (3, 4) and parts[:2] == ["v1", "videos"]:
            with self._lock:
                video = self.videos.get(parts[2])
                if video is None:
                    return _error(404, f"Video with id '{parts[2]}' not found.", "video_not_found")
                if len(parts) == 3:
                    view = video.view()
                    video.step += 1
                    return _json(200, view)
                if parts[3] == "content":
                    if not video.complete:
                        return _error(400, "Video is not ready yet.", "video_not_ready")
                    return 200, "video/mp4", MP4
        return _error(404, f"media stub: no route for {method} {path}", "not_found")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server naming)
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, kind, data = stub._handle(method, self.path.split("?", 1)[0], headers, raw)
                if status == 0:
                    self.close_connection = True
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        return Handler


def _json(status: int, body: dict[str, Any]) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(body).encode()


def _error(status: int, message: str, code: str | None = None) -> tuple[int, str, bytes]:
    return _json(status, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}})


def _uploads(content_type: str, raw: bytes) -> tuple[tuple[str, bytes], ...]:
    if not content_type.startswith("multipart/form-data"):
        return ()
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    return tuple((str(part.get_param("name", header="content-disposition")), part.get_payload(decode=True) or b"")
                 for part in message.iter_parts() if part.get_filename())


def _decode(content_type: str, raw: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A JSON body, or the fields and files of a multipart form."""
    if content_type.startswith("multipart/form-data"):
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, Any] = {}
        files: dict[str, bytes] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if part.get_filename():
                files[str(name)] = payload
            else:
                fields[str(name)] = payload.decode()
        return fields, files
    if not raw:
        return {}, {}
    try:
        return json.loads(raw), {}
    except ValueError:
        return {"_raw": raw.decode(errors="replace")}, {}
