"""Tools: name, schema, side-effect class, idempotency — and one registry the runtime asks.

Visibility is not permission (E2): the runtime shows a task the tools of its active domains, and
governance decides at execution time what may run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..errors import Said

if TYPE_CHECKING:
    from ..ledger import Claim
    from .services import Services

SIDE_EFFECTS = ("read", "write", "paid", "irreversible", "gate", "control")


class ToolError(Exception):
    """A tool refused or failed; the message goes back to the model (and the creator) as is.

    KIND names the sort of failure (the stop check stops a task that fails the same way twice, G3):
    `refused`, `declined`, `invalid_arguments`, `bad_input`, `job_failed`, `job_expired`, `job_unknown`,
    `internal`, `transient` (the stop check backs those off and tries again instead)."""

    said_as: Said | None = None  # the creator's wording (catalogue `tool_error.*`); `str()` is what the model reads

    def __init__(self, message: str, *, kind: str = "refused") -> None:
        super().__init__(message)
        self.kind = kind

    @classmethod
    def said(cls, key: str, /, *, kind: str = "refused", **fields: Any) -> ToolError:
        """This error worded by the catalogue's KEY ("tool_error.KEY" when it names no section): the model reads
        its English (`str()`), the creator any language (`text(lang)`)."""
        said = Said(key if "." in key else f"tool_error.{key}", fields)
        exc = cls(said.text("en"), kind=kind)
        exc.said_as = said
        return exc

    def text(self, lang: str) -> str:
        """The message in LANG (as raised where it has no catalogue key)."""
        return self.said_as.text(lang) if self.said_as is not None else str(self)


_PY_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b:?|Traceback \(most recent call last\)")


def plain_error(text: str | None, fallback: str, *, keep_detail: bool = False) -> str:
    """TEXT if it reads as a sentence for the creator; FALLBACK if it carries Python exception text
    (a class name such as `UnidentifiedImageError: …`, a traceback). With KEEP_DETAIL the class names
    are cut out and the rest is kept (a provider's own words: "invalid api key"). The log keeps it all."""
    text = (text or "").strip()
    if not text or "Traceback (most recent call last)" in text:
        return fallback
    if not _PY_ERROR.search(text):
        return text
    if not keep_detail:
        return fallback
    cut = re.sub(r"\s*\(\s*[\w.]*(?:Error|Exception)\s*\)", "", text)
    cut = re.sub(r"\b[\w.]*(?:Error|Exception|Exit|Interrupt)\b:?\s*", "", cut).strip(" :;-")
    return cut or fallback


def refusal_why(exc: BaseException) -> Said | str:
    """Why a path was refused, for a `ToolError`'s `why`: the exception's catalogue form where it has one (a
    workspace error), else its plain English, else "it is outside"."""
    said = getattr(exc, "said_as", None)
    if isinstance(said, Said):
        return said
    return plain_error(str(exc), "") or Said("tool_error.outside")


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: Any, path: str = "") -> tuple[Any, str | None]:
    """VALUE with lone UTF-16 surrogates replaced by U+FFFD (they cannot be stored or sent), and the
    path of the first place one was found (None when there was none)."""
    if isinstance(value, str):
        return (_SURROGATE.sub("\ufffd", value), path or "text") if _SURROGATE.search(value) else (value, None)
    if isinstance(value, list):
        out, where = [], None
        for i, item in enumerate(value):
            item, found = scrub_surrogates(item, f"{path}[{i}]")
            out.append(item)
            where = where or found
        return out, where
    if isinstance(value, dict):
        items, where = {}, None
        for key, item in value.items():
            key, bad_key = scrub_surrogates(key, path) if isinstance(key, str) else (key, None)
            item, found = scrub_surrogates(item, f"{path}.{key}" if path else str(key))
            items[key] = item
            where = where or bad_key or found
        return items, where
    return value, None


@dataclass(frozen=True)
class Suspend:
    """The tool waits on something outside the turn (a gate, a job); it is re-run when that resolves."""

    kind: str  # "gate" | "job"
    ref: str
    task_status: str  # waiting_gate | waiting_job
    defer: bool = False  # let the step's other calls run first; the turn waits at the end of the step
    refs: tuple[str, ...] = ()  # kind "any": the jobs of which the first to settle wakes the turn
    holds: bool = False  # the gate covers only this call (G4): a task's turn goes on without it meanwhile


@dataclass
class ToolContext:
    services: "Services"  # what the tool may use (tools/services.py)
    claim: "Claim"
    step: int
    seq: int
    key: str  # idempotency key: turn/step/seq

    @property
    def task_id(self) -> str:
        return self.claim.task_id


ToolFn = Callable[..., Awaitable[Any]]
_SCHEMAS: dict[str, tuple["Tool", dict[str, Any]]] = {}
_VALIDATORS: dict[str, tuple["Tool", Any]] = {}
_TYPE_WORDS = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
               "array": "a list", "object": "an object", "null": "null"}


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

    def check(self, args: Any) -> str | None:
        """Why ARGS do not fit this tool's JSON Schema (one sentence the model can act on), or None.
        A null for an optional argument counts as leaving it out."""
        if not isinstance(args, dict):
            return f"{self.name} takes an object of named arguments, not {_short(args)}"
        properties = self.parameters.get("properties", {})
        unknown = [p for p in args if p not in properties]
        if unknown:
            return f"{self.name} does not take {', '.join(unknown)}; it takes {', '.join(properties) or 'nothing'}"
        value = _without_nulls(args, self.parameters)
        if _in_subset(self.parameters):  # the keywords the tools use: checked here in a few µs
            return _first_error(self.name, value, self.parameters, "")
        cached = _VALIDATORS.get(self.name)  # any other schema: the jsonschema library (~100 µs a call)
        if cached is None or cached[0] is not self:
            from jsonschema import Draft7Validator  # lazily: only for a tool whose schema needs it

            cached = _VALIDATORS[self.name] = (self, Draft7Validator(self.parameters))
        errors = sorted(cached[1].iter_errors(value),
                        key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
        return _explain(self.name, errors[0]) if errors else None


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


def _without_nulls(value: Any, schema: dict[str, Any]) -> Any:
    """VALUE with nulls of optional object properties dropped (models send null for "not given")."""
    if isinstance(value, dict) and schema.get("type") == "object":
        properties, required = schema.get("properties", {}), set(schema.get("required", ()))
        return {k: _without_nulls(v, properties.get(k, {})) for k, v in value.items()
                if v is not None or k in required}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_without_nulls(v, schema["items"]) for v in value]
    return value


SUBSET = frozenset({"type", "properties", "required", "items", "enum", "description", "minimum", "maximum"})
_PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                          "boolean": (bool,), "array": (list,), "object": (dict,),
                                          "null": (type(None),)}
_SUBSET_CACHE: dict[int, bool] = {}


def _in_subset(schema: Any) -> bool:
    """Whether SCHEMA uses only the keywords `_first_error` checks (cached per schema object)."""
    key = id(schema)
    if key not in _SUBSET_CACHE:
        _SUBSET_CACHE[key] = _subset(schema)
    return _SUBSET_CACHE[key]


def _subset(schema: Any) -> bool:
    if not isinstance(schema, dict) or not set(schema) <= SUBSET:
        return False
    types = schema.get("type", [])
    if any(t not in _PY_TYPES for t in (types if isinstance(types, list) else [types])):
        return False
    return all(_subset(s) for s in schema.get("properties", {}).values()) and (
        "items" not in schema or _subset(schema["items"]))


def _is(value: Any, type_name: str) -> bool:
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False  # JSON Schema: true is not a number
    if type_name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PY_TYPES[type_name])


def _first_error(tool_name: str, value: Any, schema: dict[str, Any], where: str) -> str | None:
    """The first way VALUE breaks SCHEMA (the SUBSET of JSON Schema), worded like `_explain`; None if none."""
    subject = f"{tool_name}: {where}" if where else tool_name
    wanted = schema.get("type")
    if wanted is not None:
        types = wanted if isinstance(wanted, list) else [wanted]
        if not any(_is(value, t) for t in types):
            return f"{subject} must be {' or '.join(_TYPE_WORDS.get(t, t) for t in types)}, not {_short(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{subject} must be one of {', '.join(map(str, schema['enum']))}, not {_short(value)}"
    for bound, outside in (("minimum", lambda v, b: v < b), ("maximum", lambda v, b: v > b)):
        if bound in schema and isinstance(value, (int, float)) and outside(value, schema[bound]):
            return f"{subject} is out of range ({bound} {schema[bound]}), not {_short(value)}"
    if isinstance(value, dict):
        missing = [p for p in schema.get("required", ()) if p not in value]
        if missing:
            return f"{subject} needs {', '.join(missing)}"
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key in properties:
                found = _first_error(tool_name, item, properties[key], f"{where}.{key}" if where else key)
                if found:
                    return found
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            found = _first_error(tool_name, item, schema["items"], f"{where}[{i}]")
            if found:
                return found
    return None


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _explain(tool_name: str, error: Any) -> str:
    """A jsonschema error as one plain sentence: where, what was expected, what came."""
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    subject = f"{tool_name}: {where}" if where else tool_name
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        return f"{subject} needs {', '.join(missing) or 'more arguments'}"
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        words = " or ".join(_TYPE_WORDS.get(w, w) for w in wanted)
        return f"{subject} must be {words}, not {_short(error.instance)}"
    if error.validator == "enum":
        return f"{subject} must be one of {', '.join(map(str, error.validator_value))}, not {_short(error.instance)}"
    if error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return f"{subject} is out of range ({error.validator} {error.validator_value}), not {_short(error.instance)}"
    return f"{subject}: {error.message[:160]}"
