"""Tools by domain (E2): core tools always; a domain's tools when an open checklist step declares one of
them, when the model asked with `load_tools`, or when a tool of it was called in the verbatim history.
At a summary boundary the history that loaded a domain is summarised and the domain drops out.
Visibility is never permission: governance still decides what executes."""
from __future__ import annotations

import json
from typing import Any, Iterable

from ..tools.registry import Registry, Tool
from .history import Entry

OPEN_STEP = ("pending", "active")
LOAD_TOOLS = "load_tools"


def all_domains(registry: Registry) -> frozenset[str]:
    return frozenset(t.domain for t in registry.tools.values() if t.domain != "core")


def active(registry: Registry, kind: str, checklist: Iterable[dict[str, Any]], recent: Iterable[Entry]
           ) -> frozenset[str]:
    """The domains a step of a task of KIND sees."""
    if kind == "main":
        return frozenset()
    known = all_domains(registry)
    if kind == "lightweight":  # a one-shot: the router already chose its medium; it runs for a step or two
        return known
    found: set[str] = set()
    for item in checklist:
        tool = registry.get(item.get("tool") or "")
        if tool is not None and item.get("state") in OPEN_STEP:
            found.add(tool.domain)
    for entry in recent:
        for call in entry.chat.get("tool_calls") or []:
            name = call["function"]["name"]
            if name == LOAD_TOOLS:
                found.update(_requested(call["function"].get("arguments")))
            else:
                tool = registry.get(name)
                if tool is not None:
                    found.add(tool.domain)
    return frozenset(found & known)


def _requested(arguments: Any) -> list[str]:
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments or {})
    except (json.JSONDecodeError, TypeError, ValueError):
        return []
    domains = args.get("domains") if isinstance(args, dict) else None
    return [str(d) for d in domains] if isinstance(domains, list) else []


def tools(registry: Registry, kind: str, domains: frozenset[str]) -> list[Tool]:
    """The visible tools, core first (registration order) then the loaded domains': the definitions the
    model sees first never move when a domain comes or goes."""
    visible = registry.visible(kind, set(domains))
    return [t for t in visible if t.domain == "core"] + sorted(
        (t for t in visible if t.domain != "core"), key=lambda t: (t.domain, t.name))
