"""The tool registry the runtime uses."""
from __future__ import annotations

from .registry import Registry, Suspend, Tool, ToolContext, ToolError


def default_registry() -> Registry:
    from . import context, core, flows, media, plan, production, tasks

    reg = Registry()
    core.register(reg)
    flows.register(reg)
    media.register(reg)
    production.register(reg)
    production.register_graph(reg)
    plan.register(reg)
    tasks.register(reg)
    context.register(reg)
    return reg


__all__ = ["Registry", "Suspend", "Tool", "ToolContext", "ToolError", "default_registry"]
