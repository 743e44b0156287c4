"""The one model interface: OpenAI-style messages in, a reply with tool calls out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from ..errors import Said

if TYPE_CHECKING:
    from ..language import Parsed

TokenSink = Callable[[str], Awaitable[None] | None]


class ModelError(Exception):
    """A model call failed in a way the task should hear about (bad output, dead provider). SAID: its sentence
    as catalogue text (`text(lang)` words it for the reader; `str()` is the English)."""

    def __init__(self, message: str, *, retryable: bool = False, context_too_long: bool = False,
                 said: Said | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.context_too_long = context_too_long  # the provider said the prompt exceeds its window
        self.said_as = said

    @classmethod
    def said(cls, said: Said, **kwargs: Any) -> ModelError:
        return cls(said.text("en"), said=said, **kwargs)

    def text(self, lang: str) -> str:
        return self.said_as.text(lang) if self.said_as is not None else str(self)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens read from the provider's prompt cache
    cache_write_tokens: int = 0  # prompt tokens written to it by this call
    cost: float | None = None


@dataclass
class ModelReply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    latency_ms: float = 0.0

    def to_decision(self) -> dict[str, Any]:
        """The persisted form of this reply (what the step ledger stores)."""
        return {"content": self.content, "tool_calls": [c.to_dict() for c in self.tool_calls]}

    @classmethod
    def from_decision(cls, data: dict[str, Any]) -> "ModelReply":
        calls = [ToolCall(c["name"], dict(c.get("arguments") or {})) for c in data.get("tool_calls") or []]
        return cls(content=data.get("content"), tool_calls=calls)


@dataclass
class ModelRequest:
    """What a model is asked.

    messages: OpenAI chat messages (system first). tools: OpenAI function schemas.
    purpose: "worker" or "router". hints: structured facts the runtime already knows
    (task kind, language, brief, checklist...) — models may ignore them; `lomo/local` uses them.
    breakpoints: indices of the messages that end a cacheable layer (the stable prefix, the last
    summary segment, the verbatim history); None: the leading system messages are the prefix.
    tail_start: index of the first message after the history (dynamic tail, this step's input).
    message: the creator's new message(s) of this step, parsed once on arrival (language.Parsed), or None.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    purpose: str = "worker"
    task_id: str | None = None
    hints: dict[str, Any] = field(default_factory=dict)
    timeout: float = 120.0
    breakpoints: list[int] | None = None
    tail_start: int | None = None
    message: Parsed | None = None


class ModelClient(Protocol):
    """`context_window()` (optional, async): the model's input window in tokens, or None if unknown."""

    name: str

    async def complete(self, request: ModelRequest, on_token: TokenSink | None = None) -> ModelReply: ...
