"""Tools: name, schema, side-effect class, idempotency — and one registry the runtime asks.

Visibility is not permission (E2): the runtime shows a task the tools of its active domains, and
governance decides at execution time what may run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:
    from ..runtime.ledger import Claim
    from ..runtime.scheduler import Runtime

SIDE_EFFECTS = ("read", "write", "paid", "irreversible", "gate", "control")


class ToolError(Exception):
    """A tool refused or failed; the message goes back to the model (and the creator) as is."""


@dataclass(frozen=True)
class Suspend:
    """The tool waits on something outside the turn (a gate, a job); it is re-run when that resolves."""

    kind: str  # "gate" | "job"
    ref: str
    task_status: str  # waiting_gate | waiting_job
    defer: bool = False  # let the step's other calls run first; the turn waits at the end of the step


@dataclass
class ToolContext:
    runtime: "Runtime"
    claim: "Claim"
    step: int
    seq: int
    key: str  # idempotency key: turn/step/seq

    @property
    def task_id(self) -> str:
        return self.claim.task_id


ToolFn = Callable[..., Awaitable[Any]]
_SCHEMAS: dict[str, tuple["Tool", dict[str, Any]]] = {}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    side_effect: str
    idempotent: bool
    fn: ToolFn
    domain: str = "core"
    kinds: tuple[str, ...] = ("lightweight", "persistent")  # which task kinds see it
    ends_turn: bool = False  # a step made only of such calls completes the turn without another inference

    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema (built once: the stable prompt prefix stays byte-identical)."""
        cached = _SCHEMAS.get(self.name)
        if cached is None or cached[0] is not self:
            cached = _SCHEMAS[self.name] = (self, {"type": "function", "function": {
                "name": self.name, "description": self.description, "parameters": self.parameters}})
        return cached[1]


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    _visible: dict[Any, list[Tool]] = field(default_factory=dict, repr=False)

    def add(self, tool: Tool) -> Tool:
        if tool.side_effect not in SIDE_EFFECTS:
            raise ValueError(f"{tool.name}: unknown side-effect class {tool.side_effect}")
        self.tools[tool.name] = tool
        self._visible.clear()
        return tool

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def visible(self, task_kind: str, domains: set[str] | None = None) -> list[Tool]:
        key = (task_kind, frozenset(domains) if domains is not None else None)
        found = self._visible.get(key)
        if found is None:
            found = self._visible[key] = [t for t in self.tools.values() if task_kind in t.kinds and (
                t.domain == "core" or domains is None or t.domain in domains)]
        return found


def tool(registry: Registry, name: str, description: str, parameters: dict[str, Any], *, side_effect: str,
         idempotent: bool, domain: str = "core", kinds: tuple[str, ...] = ("lightweight", "persistent"),
         ends_turn: bool = False) -> Callable[[ToolFn], ToolFn]:
    """Decorator: register an async tool function `fn(ctx, **arguments)`."""

    def wrap(fn: ToolFn) -> ToolFn:
        registry.add(Tool(name, description, parameters, side_effect, idempotent, fn, domain, kinds, ends_turn))
        return fn

    return wrap


def obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}
