"""Tools by domain (E2): core tools always; once a task has a plan, a domain's tools when an open checklist
step declares one of them, when the model asked with `load_tools`, or when a tool of it was called in the verbatim history.
At a summary boundary the history that loaded a domain is summarised and the domain drops out.
Visibility is never permission: governance still decides what executes."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # types only: the tools package stands on this one (tools/context.py)
    from ..tools.registry import Registry, Tool

OPEN_STEP = ("pending", "active")


def all_domains(registry: Registry) -> frozenset[str]:
    return frozenset(t.domain for t in registry.tools.values() if t.domain != "core")


def active(registry: Registry, kind: str, checklist: Iterable[dict[str, Any]], called: Iterable[str],
           loaded: Iterable[str]) -> frozenset[str]:
    """The domains a step of a task of KIND sees. CALLED: the tools the verbatim history calls; LOADED: the
    domains it asked for with load_tools."""
    if kind == "main":
        return frozenset()
    known = all_domains(registry)
    checklist = list(checklist)
    if kind == "lightweight" or not checklist:  # a one-shot, or a task before its plan: the creator's words
        return known                            # choose the medium, and there is no step to declare it
    found: set[str] = set(loaded)
    for item in checklist:
        tool = registry.get(item.get("tool") or "")
        if tool is not None and item.get("state") in OPEN_STEP:
            found.add(tool.domain)
    for name in called:
        tool = registry.get(name)
        if tool is not None:
            found.add(tool.domain)
    return frozenset(found & known)


def tools(registry: Registry, kind: str, domains: frozenset[str]) -> list[Tool]:
    """The visible tools, core first (registration order) then the loaded domains': the definitions the
    model sees first never move when a domain comes or goes."""
    visible = registry.visible(kind, set(domains))
    return [t for t in visible if t.domain == "core"] + sorted(
        (t for t in visible if t.domain != "core"), key=lambda t: (t.domain, t.name))
