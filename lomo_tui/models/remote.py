"""Real providers through litellm: completions (plain or streamed, with tool calls) and embeddings.

litellm takes seconds to import, so it is imported lazily: `preload()` (call it from a background
thread) or the first call. Retries are ours, not litellm's or the OpenAI SDK's: exponential
backoff with full jitter on 429, 5xx and connection errors, honouring Retry-After; a timeout is
retried once; other 4xx are final. Every failure surfaces as a one-line `ModelError`.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import random
import re
import threading
import time
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from functools import cached_property
from types import ModuleType
from typing import Any, Awaitable, Callable, TypeVar

from lomo_tui.errors import Said
from lomo_tui.models.base import ModelError, ModelReply, ModelRequest, TokenSink, ToolCall, Usage

T = TypeVar("T")

_litellm: ModuleType | None = None
_import_lock = threading.Lock()

_KEY_LIKE = re.compile(r"sk-[\w\-*]{3,}")
_ERROR_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+Error:\s*|\w+Exception\s*-\s*)+")
_CACHE_CONTROL = {"type": "ephemeral"}
_REJECTS_CACHE_CONTROL = frozenset({"azure", "azure_ai"})
_RESERVED = frozenset({"model", "messages", "input", "tools", "stream", "stream_options", "timeout",
                       "max_retries", "num_retries", "api_base", "api_key"})


def _said(key: str, **fields: Any) -> Said:
    return Said(f"provider_error.{key}", fields)


def preload() -> ModuleType:
    """Import and configure litellm (blocking, seconds); safe to call from any thread, repeatedly."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
            import litellm

            litellm.suppress_debug_info = True
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):  # log file only, and quieter
                logging.getLogger(name).setLevel(logging.WARNING)
            if hasattr(litellm, "telemetry"):
                litellm.telemetry = False
            _litellm = litellm
    return _litellm


def is_loaded() -> bool:
    return _litellm is not None


async def _load() -> ModuleType:
    return _litellm if _litellm is not None else await asyncio.to_thread(preload)


@dataclass(frozen=True)
class _Failure:
    """A provider failure classified for the retry loop and the creator."""

    said: Said  # the creator-facing sentence (`.text(lang)`; `message` is its English)
    retryable: bool
    timeout: bool = False
    retry_after: float | None = None
    too_long: bool = False

    @property
    def message(self) -> str:
        return self.said.text("en")


@dataclass(frozen=True)
class Endpoint:
    """Where one call goes and how hard to try; shared by completions and embeddings."""

    model: str
    api_base: str | None
    api_key: str | None
    timeout: float
    max_attempts: int
    backoff_base: float
    backoff_cap: float

    def kwargs(self) -> dict[str, Any]:
        """litellm arguments: an explicit timeout and no SDK retries (the loop below retries)."""
        args: dict[str, Any] = {"model": self.model, "timeout": self.timeout, "max_retries": 0}
        if self.api_base:
            args["api_base"] = self.api_base
        if self.api_key:
            args["api_key"] = self.api_key
        return args

    async def call(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run `attempt` with our retry policy; raise ModelError when it finally fails."""
        timeouts = 0
        for number in range(1, self.max_attempts + 1):
            try:
                return await attempt()
            except ModelError:
                raise
            except Exception as exc:  # noqa: BLE001 — every provider failure is classified
                failure = self.classify(exc)
                timeouts += failure.timeout
                if not failure.retryable or number == self.max_attempts or timeouts > 1:
                    raise self.error(failure, number) from None
                await asyncio.sleep(self.backoff(number, failure.retry_after))
        raise AssertionError("unreachable: max_attempts < 1")

    def backoff(self, number: int, retry_after: float | None) -> float:
        """Seconds before attempt `number + 1`: Retry-After (capped) or full-jitter exponential."""
        if retry_after is not None:
            return min(retry_after, self.backoff_cap)
        return random.uniform(0, min(self.backoff_cap, self.backoff_base * 2 ** (number - 1)))

    def error(self, failure: _Failure, attempts: int) -> ModelError:
        said = failure.said
        if failure.retryable and attempts > 1:
            said = _said("gave_up", text=said, n=attempts)
        return ModelError(said.text("en"), retryable=failure.retryable, context_too_long=failure.too_long, said=said)

    def classify(self, exc: Exception) -> _Failure:
        """Turn a litellm/httpx exception into a one-line, key-free explanation (catalogue [provider_error])."""
        lt = preload()
        status = getattr(exc, "status_code", None)
        model = self.model
        if caused_by(exc, timeout_kinds()):
            return _Failure(_said("timeout", model=model, seconds=f"{self.timeout:g}"), True, timeout=True)
        if isinstance(exc, lt.AuthenticationError) or status == 401:
            return _Failure(_said("bad_key", env=self._key_env()), False)
        if _MISSING_KEY.search(str(exc)):  # raised before any request; litellm may wrap it as a 500
            return _Failure(_said("no_key", model=model, env=self._key_env(), provider=model.split("/", 1)[0]), False)
        if isinstance(exc, lt.RateLimitError) or status == 429:
            return _Failure(_said("rate_limit"), True, retry_after=_retry_after(exc))
        if isinstance(exc, lt.ContextWindowExceededError) or _TOO_LONG.search(str(exc)):
            return _Failure(_said("too_long", model=model), False, too_long=True)
        if isinstance(exc, lt.ContentPolicyViolationError):
            return _Failure(_said("policy", detail=self.detail(exc)), False)
        if caused_by(exc, connection_kinds()):  # litellm may report these as a 500
            where = self.api_base or _said("the_provider")
            return _Failure(_said("unreachable", where=where, model=model, detail=self.detail(exc)), True)
        return self._by_status(exc, status)

    def _by_status(self, exc: Exception, status: int | None) -> _Failure:
        if status == 403:
            return _Failure(_said("denied", model=self.model), False)
        if status == 404:
            return _Failure(_said("not_found", model=self.model), False)
        if isinstance(status, int) and status >= 500:
            return _Failure(_said("server", status=status, detail=self.detail(exc)), True,
                            retry_after=_retry_after(exc))
        if isinstance(status, int) and 400 <= status < 500:
            return _Failure(_said("rejected", status=status, detail=self.detail(exc)), False)
        return _Failure(_said("failed", model=self.model, kind=type(exc).__name__, detail=self.detail(exc)), False)

    def detail(self, exc: Exception) -> str:
        """The provider's own words: one line, without litellm's prefixes or anything key-like."""
        text = " ".join(str(getattr(exc, "message", "") or exc).split())
        text = _ERROR_PREFIX.sub("", text)
        if self.api_key and len(self.api_key) >= 4:
            text = text.replace(self.api_key, "***")
        text = _KEY_LIKE.sub("sk-***", text)
        return text[:200] + ("…" if len(text) > 200 else "")

    def _key_env(self) -> str:
        try:
            provider = preload().get_llm_provider(self.model)[1]
        except Exception:  # noqa: BLE001 — only used to word a hint
            provider = self.model.split("/", 1)[0]
        return f"{provider.upper()}_API_KEY"


_TOO_LONG = re.compile(r"context[_ ]length[_ ]exceeded|maximum context length|prompt is too long|"
                       r"context window", re.I)
_MISSING_KEY = re.compile(r"missing credentials|api_key client option must be set|no api key", re.I)


def caused_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether `exc` or anything in its cause/context chain is one of `kinds`."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kinds):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def timeout_kinds() -> tuple[type[BaseException], ...]:
    import httpx
    import openai  # both already imported by litellm; litellm.Timeout is an APITimeoutError

    return (openai.APITimeoutError, httpx.TimeoutException, TimeoutError)


def connection_kinds() -> tuple[type[BaseException], ...]:
    import httpx
    import openai

    return (openai.APIConnectionError, httpx.TransportError, ConnectionError)


def _retry_after(exc: Exception) -> float | None:
    """Seconds the provider asked us to wait (retry-after-ms or Retry-After), if it said."""
    for source in (getattr(getattr(exc, "response", None), "headers", None),
                   getattr(exc, "litellm_response_headers", None), getattr(exc, "headers", None)):
        headers = {str(k).lower(): str(v) for k, v in dict(source or {}).items()}
        if "retry-after-ms" in headers:
            return _seconds(headers["retry-after-ms"], scale=0.001)
        if "retry-after" in headers:
            return _seconds(headers["retry-after"])
    return None


def _seconds(value: str, scale: float = 1.0) -> float | None:
    try:
        return max(0.0, float(value) * scale)
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _marked(message: dict[str, Any]) -> dict[str, Any] | None:
    """MESSAGE with cache_control on its last content block (None if it has no text to mark)."""
    content = message.get("content")
    if isinstance(content, str) and content:
        blocks = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        blocks = list(content)
    else:
        return None
    blocks[-1] = {**blocks[-1], "cache_control": dict(_CACHE_CONTROL)}
    return {**message, "content": blocks}


def _with_breakpoints(messages: list[dict[str, Any]], breakpoints: list[int],
                      tail_start: int | None) -> list[dict[str, Any]]:
    """A copy of MESSAGES with cache_control on each breakpoint message (at most four, the provider's limit),
    and the dynamic tail sent as user text: a provider that lifts every system message into one system prompt
    (Anthropic) would otherwise put the changing tail before the history and no cached prefix would hold."""
    out = list(messages)
    if tail_start is not None:
        for index in range(tail_start, len(out)):
            if out[index].get("role") == "system":
                out[index] = {"role": "user", "content": f"[Lomo runtime — the task's current state]\n"
                                                         f"{out[index].get('content') or ''}"}
    for index in sorted(set(breakpoints))[-4:]:
        if 0 <= index < len(out):
            marked = _marked(out[index])
            if marked is not None:
                out[index] = marked
    return out


_WIRE_ID = re.compile(r"[^A-Za-z0-9_-]")


def _wire_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MESSAGES with tool-call ids in the alphabet every provider takes (Anthropic: [A-Za-z0-9_-]); the
    ledger's ids ("turn-…/3/0") map one to one."""
    out = messages
    for index, message in enumerate(messages):
        if message.get("tool_calls"):
            calls = [{**c, "id": _WIRE_ID.sub("_", str(c.get("id")))} for c in message["tool_calls"]]
            changed: dict[str, Any] = {**message, "tool_calls": calls}
        elif message.get("role") == "tool" and message.get("tool_call_id"):
            changed = {**message, "tool_call_id": _WIRE_ID.sub("_", str(message["tool_call_id"]))}
        else:
            continue
        if out is messages:
            out = list(messages)
        out[index] = changed
    return out


def _with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of `messages` whose last leading system message ends with a cache_control block."""
    last = None
    for index, message in enumerate(messages):
        if message.get("role") != "system":
            break
        last = index
    if last is None:
        return messages
    content = messages[last].get("content")
    if isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        blocks = list(content)
    else:
        return messages
    blocks[-1] = {**blocks[-1], "cache_control": dict(_CACHE_CONTROL)}
    marked = list(messages)
    marked[last] = {**messages[last], "content": blocks}
    return marked


def _checked_extra(extra: dict[str, Any] | None) -> dict[str, Any]:
    """Extra litellm arguments (temperature, headers…); not ones this module owns, like retries."""
    clash = sorted(_RESERVED.intersection(extra or {}))
    if clash:
        raise ValueError(f"extra may not set {', '.join(clash)}: LiteLLMModel/embed manage them")
    return dict(extra or {})


def _field(obj: Any, name: str, default: Any = None) -> Any:
    """Read `name` from a litellm object or a plain dict."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _parse_tool_calls(raw_calls: list[Any] | None) -> list[ToolCall]:
    calls = []
    for raw in raw_calls or []:
        function = _field(raw, "function")
        name = _field(function, "name") or "?"
        text = _field(function, "arguments") or ""
        try:
            arguments = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ModelError(f"model returned malformed tool-call arguments for {name}: {exc.msg} "
                             f"at char {exc.pos} in {text[:80]!r}", retryable=False) from None
        if not isinstance(arguments, dict):
            raise ModelError(f"model returned malformed tool-call arguments for {name}: expected a JSON "
                             f"object, got {type(arguments).__name__}", retryable=False)
        calls.append(ToolCall(name=name, arguments=arguments, id=_field(raw, "id")))
    return calls


def _usage(response: Any) -> Usage:
    usage = _field(response, "usage")
    if usage is None:
        return Usage()
    details = _field(usage, "prompt_tokens_details")
    cached = _field(details, "cached_tokens") if details is not None else None
    written = _field(details, "cache_creation_tokens") if details is not None else None
    return Usage(
        prompt_tokens=_field(usage, "prompt_tokens") or 0,
        completion_tokens=_field(usage, "completion_tokens") or 0,
        cached_tokens=cached or _field(usage, "cache_read_input_tokens") or 0,
        cache_write_tokens=written or _field(usage, "cache_creation_input_tokens") or 0,
        cost=_cost(response),
    )


def _cost(response: Any) -> float | None:
    try:
        return float(preload().completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 — unknown models have no price; that is not an error
        return None


async def _emit(on_token: TokenSink, text: str) -> None:
    result = on_token(text)
    if inspect.isawaitable(result):
        await result


class LiteLLMModel:
    """A `ModelClient` for any litellm model name ("openai/gpt-4o-mini", "anthropic/…", "ollama/…")."""

    def __init__(self, name: str, *, api_base: str | None = None, api_key: str | None = None,
                 timeout: float = 120, max_attempts: int = 4, extra: dict[str, Any] | None = None,
                 backoff_base: float = 0.5, backoff_cap: float = 30.0) -> None:
        self.name = name
        self.extra = _checked_extra(extra)
        self._endpoint = Endpoint(name, api_base, api_key, timeout, max(1, max_attempts),
                                   backoff_base, backoff_cap)
        self._window: tuple[int, int | None] | tuple[()] | None = None

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.name!r}, api_base={self._endpoint.api_base!r})"

    async def complete(self, request: ModelRequest, on_token: TokenSink | None = None) -> ModelReply:
        """One inference; streamed to `on_token` when given. Timeout: the smaller of ours and the request's."""
        await _load()
        endpoint = replace(self._endpoint, timeout=min(self._endpoint.timeout, request.timeout))
        kwargs = {**self.extra, **endpoint.kwargs(), "messages": self._messages(request)}
        if request.tools:
            kwargs["tools"] = request.tools
        started = time.perf_counter()
        if on_token is None:
            response = await endpoint.call(lambda: preload().acompletion(**kwargs))
        else:
            response = await self._stream(endpoint, kwargs, on_token)
        message = response.choices[0].message
        return ModelReply(
            content=_field(message, "content"),
            tool_calls=_parse_tool_calls(_field(message, "tool_calls")),
            usage=_usage(response),
            model=self.name,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    async def _stream(self, endpoint: Endpoint, kwargs: dict[str, Any], on_token: TokenSink) -> Any:
        """Stream one completion, forwarding content deltas; return litellm's assembled response."""
        lt = preload()
        kwargs = {**kwargs, "stream": True}
        if self._streams_usage:
            kwargs["stream_options"] = {"include_usage": True}
        emitted = False

        async def attempt() -> Any:
            nonlocal emitted
            chunks = []
            try:
                async for chunk in await lt.acompletion(**kwargs):
                    chunks.append(chunk)
                    text = _field(chunk.choices[0].delta, "content") if chunk.choices else None
                    if text:
                        emitted = True
                        await _emit(on_token, text)
            except Exception as exc:
                if not emitted:
                    raise  # nothing reached the creator yet: the retry loop may try again
                raise ModelError.said(_said("broke_off", model=self.name, detail=endpoint.detail(exc)),
                                      retryable=True) from None
            if not chunks:
                raise ModelError.said(_said("empty_stream", model=self.name), retryable=True)
            return lt.stream_chunk_builder(chunks, messages=kwargs["messages"])

        return await endpoint.call(attempt)

    def _messages(self, request: ModelRequest) -> list[dict[str, Any]]:
        messages = _wire_ids(request.messages)
        if not self._takes_cache_breakpoints:
            return messages
        request = replace(request, messages=messages)
        if request.breakpoints is None:
            return _with_cache_breakpoint(request.messages)
        return _with_breakpoints(request.messages, request.breakpoints, request.tail_start)

    @cached_property
    def _takes_cache_breakpoints(self) -> bool:
        """Every model litellm says supports prompt caching takes explicit `cache_control` marks, except on
        providers that cache by themselves and reject the field (Azure)."""
        try:
            provider = preload().get_llm_provider(self.name)[1]
        except Exception:  # noqa: BLE001 — unknown provider: judge by the model alone
            provider = self.name.split("/", 1)[0]
        if provider in _REJECTS_CACHE_CONTROL:
            return False
        try:
            return bool(preload().utils.supports_prompt_caching(model=self.name))
        except Exception:  # noqa: BLE001 — unknown model: no caching
            return False

    async def context_window(self) -> tuple[int, int | None] | None:
        """(input window, most output tokens) from litellm's model info, or None when it does not know."""
        if self._window is None:
            await _load()
            try:
                info = preload().get_model_info(self.name)
            except Exception:  # noqa: BLE001 — an unregistered model: the budget's default applies
                info = {}
            window = info.get("max_input_tokens") or info.get("max_tokens")
            self._window = (int(window), info.get("max_output_tokens")) if window else ()
        return self._window or None

    @cached_property
    def _streams_usage(self) -> bool:
        """Whether the provider takes `stream_options` (to report usage at the end of a stream)."""
        try:
            return "stream_options" in (preload().get_supported_openai_params(model=self.name) or [])
        except Exception:  # noqa: BLE001 — unknown provider: send only the basics
            return False


async def embed(texts: list[str], model: str, *, api_base: str | None = None, api_key: str | None = None,
                timeout: float = 60, max_attempts: int = 4, backoff_base: float = 0.5,
                backoff_cap: float = 30.0, extra: dict[str, Any] | None = None) -> list[list[float]]:
    """Embedding vectors for `texts`, in order, via `litellm.aembedding` (same retries and errors)."""
    if not texts:
        return []
    lt = await _load()
    endpoint = Endpoint(model, api_base, api_key, timeout, max(1, max_attempts), backoff_base, backoff_cap)
    kwargs = {**_checked_extra(extra), **endpoint.kwargs(), "input": list(texts)}
    response = await endpoint.call(lambda: lt.aembedding(**kwargs))
    items = sorted(response.data, key=lambda item: _field(item, "index", 0))
    vectors = [list(_field(item, "embedding") or []) for item in items]
    if len(vectors) != len(texts):
        raise ModelError(f"{model} returned {len(vectors)} embeddings for {len(texts)} texts", retryable=True)
    return vectors
