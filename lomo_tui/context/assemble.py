"""A step's prompt, in layers, stable first (E1):

  system     rules + core tool names (+ the creator's profile snapshot)  — byte-identical across steps
  tools      core tool definitions first, then the loaded domains'
  summaries  appended history segments (E3)
  history    the messages after the last segment, verbatim
  tail       the task's current state (E4), rebuilt every step
  input      the creator's new messages
  recall     on-demand recall (memory), when given

Provider cache breakpoints go on the last message of the system, summaries and history layers.
"""
from __future__ import annotations

import json
import time
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable

from ..store.engine import fetch
from . import domains as tool_domains
from . import summaries
from .budget import Budget
from .history import Entry, History, Segment
from .tokens import MESSAGE_OVERHEAD, estimate, message_tokens, tools_tokens

if TYPE_CHECKING:  # types only: the tools package stands on this one (tools/context.py)
    from ..tools.registry import Registry, Tool
    from sqlalchemy.ext.asyncio import AsyncConnection

OFFLINE_MODELS = ("lomo/local", "lomo/replay")
LANGUAGES = {"en": "English", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "fr": "French", "de": "German",
             "es": "Spanish", "it": "Italian", "pt": "Portuguese", "ru": "Russian"}
ORIGINAL = "SELECT text FROM inbox WHERE task_id = :task_id ORDER BY sent_at LIMIT 1"
WAITS = ("SELECT 'gate' AS what, id, kind, question AS detail, 0 AS progress FROM gates "
         "WHERE task_id = :task_id AND status = 'pending' UNION ALL "
         "SELECT 'job' AS what, id, kind, status AS detail, progress FROM jobs "
         "WHERE task_id = :task_id AND status IN ('submitting', 'queued', 'running')")
SUMMARY_CHARS = 400


@lru_cache(maxsize=1)
def rules() -> dict[str, str]:
    return tomllib.loads(Path(__file__).with_name("prompts.toml").read_text(encoding="utf-8"))


def system_prompt(kind: str, tools: Iterable[Tool], profile: str = "") -> str:
    """The stable prefix: rules, the core tools' names, and the profile snapshot."""
    names = ", ".join(sorted(t.name for t in tools if t.domain == "core"))
    text = rules()["main" if kind == "main" else "worker"]
    if names:
        text += f"\nCore tools: {names}."
    if profile.strip():
        text += f"\n\nThe creator's profile (what they told you to remember):\n{profile.strip()}"
    return text


@dataclass(frozen=True)
class Layer:
    name: str
    chars: int
    tokens: int


@dataclass
class Prompt:
    """What one step sends: messages, tools, and how they were put together."""

    messages: list[dict[str, Any]]
    tools: list[Tool]
    layers: list[Layer]
    budget: Budget
    domains: frozenset[str]
    breakpoints: list[int]  # message indices ending the system, summaries and history layers
    tail_start: int
    cached_layers: list[str] = field(default_factory=list)
    summarised: int = 0  # segments written while building it
    build_ms: float = 0.0

    @property
    def total_tokens(self) -> int:
        return sum(layer.tokens for layer in self.layers)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools]


@dataclass
class Facts:
    """What the tail shows beyond the scheduler's sections: read once per step, from the database."""

    original: str = ""
    waits: list[Any] = field(default_factory=list)


Summarise = Callable[[list[Entry]], Awaitable[Segment | None]]


class StepContext:
    """One task's context across the steps of a claim: its history, budget and task facts."""

    def __init__(self, task_id: str, registry: Registry) -> None:
        self.task_id = task_id
        self.registry = registry
        self.history = History(task_id)
        self.facts = Facts()
        self.budget: Budget | None = None
        self.scale = 1.0  # shrinks after a provider said the prompt was too long
        self._original: str | None = None
        self._known = tool_domains.all_domains(registry)
        self._names: dict[tuple[str, frozenset[str]], frozenset[str]] = {}
        self._stable: dict[tuple[str, frozenset[str], str], tuple[list[Tool], str, int, int]] = {}

    def visible_names(self, kind: str, domains: Iterable[str]) -> frozenset[str]:
        """The names of the tools a step with DOMAINS showed (what the runtime lets it call)."""
        key = (kind, frozenset(domains))
        found = self._names.get(key)
        if found is None:
            found = self._names[key] = frozenset(t.name for t in self.registry.visible(kind, set(key[1])))
        return found

    def stable(self, kind: str, domains: frozenset[str], profile: str) -> tuple[list[Tool], str, int, int]:
        """The tools, the system text, their tokens and the tools' characters (built once per kind,
        domains and profile)."""
        key = (kind, domains, profile)
        found = self._stable.get(key)
        if found is None:
            tools = tool_domains.tools(self.registry, kind, domains)
            system = system_prompt(kind, tools, profile)
            cost = estimate(system) + MESSAGE_OVERHEAD + tools_tokens([t.schema() for t in tools])
            chars = sum(len(json.dumps(t.schema(), ensure_ascii=False, separators=(",", ":"))) for t in tools)
            found = self._stable[key] = (tools, system, cost, chars)
        return found

    async def refresh(self, conn: AsyncConnection, task: Any) -> None:
        """Read what changed since the last step (inside the step's read transaction)."""
        await self.history.refresh(conn)
        if task.kind == "main":
            return
        if self._original is None:
            rows = await fetch(conn, ORIGINAL, {"task_id": task.id})
            self._original = rows[0].text if rows else ""
        self.facts = Facts(self._original, await fetch(conn, WAITS, {"task_id": task.id}))

    async def resolve_budget(self, model: Any, section: dict[str, Any]) -> Budget:
        if self.budget is None:
            from .budget import resolve

            self.budget = await resolve(model, section)
            self.history.large_output_chars = self.budget.large_output_chars
        return self.budget.scaled(self.scale) if self.scale != 1.0 else self.budget

    async def assemble(self, task: Any, extra: list[str], checklist: list[dict[str, Any]], pending: list[str],
                       budget: Budget, summarise: Summarise | None, *, profile: str = "",
                       recall: Iterable[str] = (), force_summary: bool = False) -> Prompt:
        """Build the prompt; when the verbatim history overflows its share, SUMMARISE its oldest span
        first (it returns the stored segment, or None when it could not)."""
        started = time.perf_counter()
        kind = "main" if task.kind == "main" else task.kind
        written = 0
        while True:
            domains = tool_domains.active(self.registry, kind, checklist, self.history.called,
                                          self.history.loaded_domains)
            tools, system, stable_tokens, tools_chars = self.stable(kind, domains, profile)
            tail = dynamic_tail(task, extra, self.facts, domains, self._known, self.history)
            inputs = [{"role": "user", "content": text} for text in pending]
            recalled = [{"role": "system", "content": "Recalled for this step:\n" + "\n".join(
                f"- {r}" for r in recall)}] if recall else []
            shown, hidden = self._segments(budget)
            fixed = (stable_tokens + estimate(tail) + MESSAGE_OVERHEAD + sum(message_tokens(m) for m in inputs + recalled)
                     + sum(estimate(s.text) + MESSAGE_OVERHEAD for s in shown)
                     + (estimate(hidden) + MESSAGE_OVERHEAD if hidden else 0))
            room = budget.tokens - fixed
            used = self.history.verbatim_tokens()
            if summarise is None or not (used > room or (force_summary and not written)):
                break
            span = self._span(self.history.verbatim(), target=max(0, room // 2) if used > room else used // 2)
            if not span:
                break
            segment = await summarise(span)
            if segment is None:
                break
            self.history.add_segment(segment)
            written += 1
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        breakpoints = [0]
        system_tokens = estimate(system) + MESSAGE_OVERHEAD
        layers = [Layer("system", len(system), system_tokens),
                  Layer("tools", tools_chars, stable_tokens - system_tokens)]
        summary_messages = ([{"role": "system", "content": hidden}] if hidden else []) + [s.chat() for s in shown]
        messages.extend(summary_messages)
        layers.append(_layer("summaries", summary_messages))
        if summary_messages:
            breakpoints.append(len(messages) - 1)
        history, history_chars, history_tokens = self.history.verbatim_layer()
        messages.extend(history)
        layers.append(Layer("history", history_chars, history_tokens))
        if history:
            breakpoints.append(len(messages) - 1)
        tail_start = len(messages)
        messages.append({"role": "system", "content": tail})
        layers.append(Layer("tail", len(tail), estimate(tail) + MESSAGE_OVERHEAD))
        messages.extend(inputs)
        layers.append(_layer("input", inputs))
        if recalled:
            messages.extend(recalled)
            layers.append(_layer("recall", recalled))
        return Prompt(messages, tools, layers, budget, domains, breakpoints, tail_start, summarised=written,
                      build_ms=(time.perf_counter() - started) * 1000)

    def _segments(self, budget: Budget) -> tuple[list[Segment], str]:
        """The newest segments that fit the summaries' share, and a note naming the older ones."""
        segments = self.history.segments
        shown: list[Segment] = []
        used = 0
        for segment in reversed(segments):
            cost = estimate(segment.text) + MESSAGE_OVERHEAD
            if shown and used + cost > budget.summaries:
                break
            shown.append(segment)
            used += cost
        shown.reverse()
        older = segments[:len(segments) - len(shown)]
        hidden = ""
        if older:
            hidden = (f"Messages #{older[0].from_message}–#{older[-1].to_message} of this task are summarised in "
                      f"{len(older)} earlier segments not shown here; read_history(from_message, to_message) pages "
                      "them back. The brief and the creator's original request below still hold.")
        return shown, hidden

    @staticmethod
    def _span(verbatim: list[Entry], target: int) -> list[Entry]:
        """The oldest messages to summarise so that at most TARGET tokens stay verbatim: whole steps only
        (never a call without its results), and never the latest step."""
        last_step = max((i for i, e in enumerate(verbatim) if e.role == "assistant"), default=0)
        remaining = sum(e.tokens for e in verbatim)
        cut = 0
        for i, entry in enumerate(verbatim):
            if i > last_step:
                break
            if entry.role != "tool" and i > 0:
                cut = i
                if remaining <= target:
                    break
            remaining -= entry.tokens
        return verbatim[:cut]


def _layer(name: str, messages: list[dict[str, Any]]) -> Layer:
    from .tokens import message_text

    return Layer(name, sum(len(message_text(m)) for m in messages), sum(message_tokens(m) for m in messages))


def dynamic_tail(task: Any, extra: list[str], facts: Facts, domains: frozenset[str], known: frozenset[str],
                 history: History) -> str:
    """Always-in-view facts (E4): the task, the creator's original words, brief, the scheduler's sections
    (checklist with artifacts, budget and autonomy, changed files), waits, tools, where history went."""
    language = LANGUAGES.get(task.language, task.language)
    parts = [f"Task: {task.title} ({task.kind}, status {task.status}); language: {language}"
             + (f"; autonomy: {task.autonomy}" if task.kind != "main" else "")]
    if facts.original:
        parts.append(f"The creator's original request: “{summaries.clip(facts.original, 1200)}”")
    goal = (getattr(task, "goal", "") or "").strip()
    if goal and goal not in (task.title.strip(), (facts.original or "").strip()):  # J1: the current goal
        parts.append(f"Goal (current): {summaries.clip(goal, 1200)}")
    if task.brief:
        parts.append(f"Brief:\n{task.brief}")
    parts.extend(extra)
    if facts.waits:
        lines = ["Waiting on:"]
        for w in facts.waits:
            if w.what == "gate":
                lines.append(f"- gate {w.id} ({w.kind}): {summaries.clip(w.detail, 160)}")
            else:
                lines.append(f"- job {w.id} ({w.kind}): {w.detail} {int((w.progress or 0) * 100)}%")
        parts.append("\n".join(lines))
    if task.kind != "main" and known:
        others = sorted(known - domains)
        parts.append("Tool domains loaded: " + (", ".join(sorted(domains)) or "none (core only)")
                     + (f". Others on request: load_tools(domains=[…]) with {', '.join(others)}." if others else "."))
    if history.segments:
        parts.append(f"Messages up to #{history.boundary} are summarised above; read_history(from_message, "
                     "to_message) pages the originals, read_output(id) a stored tool result.")
    return "\n\n".join(parts)


def task_summary(task: Any, checklist: list[dict[str, Any]], segments: list[Segment]) -> str:
    """The task's one-paragraph summary for the router's index (A6): goal, progress, what was made."""
    head = (task.goal or task.title or "").strip()
    parts = [summaries.clip(head, 160)] if head else []
    if checklist:
        done = [i for i in checklist if i.get("state") in ("done", "skipped")]
        open_ = [i for i in checklist if i.get("state") in ("pending", "active")]
        parts.append(f"{len(done)}/{len(checklist)} steps done" + (f"; next: {summaries.clip(open_[0]['title'], 80)}"
                                                                   if open_ else ""))
        made = [a for i in checklist for a in i.get("artifacts") or []]
        if made:
            parts.append("made: " + ", ".join(made[-4:]))
    if segments:
        latest = [line[2:] for line in segments[-1].text.splitlines() if line.startswith("- “")]
        if latest:
            parts.append("latest request: " + summaries.clip(latest[-1], 120))
    return summaries.clip(". ".join(parts), SUMMARY_CHARS)
