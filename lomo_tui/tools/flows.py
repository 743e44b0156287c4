"""Flow tools (H4): read a node graph, read one node, edit nodes with per-node conflict checks."""
from __future__ import annotations

from typing import Any

from ..errors import Phrase, Said
from ..workspace.errors import FlowError
from ..workspace.flows import Node, changed_nodes, dump_flow, merge_node_edits, parse_flow, summarise
from .registry import Registry, ToolContext, ToolError, obj, tool

STR = {"type": "string"}
FLOW = {"type": "string", "description": "workspace path of the flow file"}


async def _flow_at(ctx: ToolContext, path: str, version: int) -> Any:
    text = await ctx.services.workspace.version_content(path, version)
    if text is None:
        raise ToolError.said("version_not_kept", version=version, path=path)
    return parse_flow(text)


def _refused(said: Said | None, english: str) -> ToolError:
    """A flow edit refused: the model reads the ENGLISH, the creator SAID (its catalogue form) in their language."""
    return ToolError.said(said.key, **said.fields) if said is not None else ToolError(english)


def register(reg: Registry) -> None:
    @tool(reg, "read_flow", "Read a flow (node graph): summary, nodes, and what changed since you last read it.",
          obj({"path": FLOW}, ["path"]), side_effect="read", idempotent=True, domain="flows")
    async def read_flow(ctx: ToolContext, path: str) -> dict[str, Any]:
        workspace = ctx.services.workspace
        previous = await workspace.last_read(path, ctx.task_id)
        read = await workspace.read(path, ctx.task_id)
        flow = parse_flow(read["content"])
        result: dict[str, Any] = {"path": read["path"], "version": read["version"], "summary": summarise(flow),
                                  "nodes": [{"id": n.id, "type": n.type, "label": n.label} for n in flow.nodes]}
        if previous is not None and previous != read["version"]:
            before = await workspace.version_content(read["path"], previous)
            if before is not None:
                result["changed_since_your_last_read"] = changed_nodes(parse_flow(before), flow).describe()
        return result

    @tool(reg, "read_flow_node", "Read one node of a flow with its params.",
          obj({"path": FLOW, "node_id": {"type": "string", "description": "the node's id (from read_flow)"}},
              ["path", "node_id"]), side_effect="read", idempotent=True,
          domain="flows")
    async def read_flow_node(ctx: ToolContext, path: str, node_id: str) -> dict[str, Any]:
        read = await ctx.services.workspace.read(path, ctx.task_id)
        node = parse_flow(read["content"]).node(node_id)
        if node is None:
            raise ToolError.said("no_node", path=path, node=repr(node_id))
        return {"path": read["path"], "version": read["version"], "node": node.to_json()}

    @tool(reg, "edit_flow_nodes", "Edit flow nodes against the version you read: edits maps node id to a params "
          "patch (object), a whole node (with id and type), or null to remove it. Nodes the creator changed since "
          "are refused; other edits apply on the latest version.",
          obj({"path": FLOW, "edits": {"type": "object", "description": "node id → params patch, whole node, or "
                                                                    "null to remove"},
               "base_version": {"type": "integer", "description": "the version read_flow returned"}},
              ["path", "edits", "base_version"]), side_effect="write", idempotent=True, domain="flows")
    async def edit_flow_nodes(ctx: ToolContext, path: str, edits: dict[str, Any], base_version: int) -> dict[str, Any]:
        workspace = ctx.services.workspace
        base = await _flow_at(ctx, path, base_version)
        latest_read = await workspace.read(path, ctx.task_id)
        latest = parse_flow(latest_read["content"])
        node_edits: dict[str, Any] = {}
        for node_id, edit in edits.items():
            if isinstance(edit, dict) and "type" in edit and "id" in edit:
                node_edits[node_id] = Node.from_json(edit, Phrase(Said("edit_merge.where_edit", {"node": node_id})))
            elif edit is None or isinstance(edit, dict):
                node_edits[node_id] = edit
            else:
                raise ToolError.said("node_edit_shape", node=repr(node_id))
        try:
            merged = merge_node_edits(base, latest, node_edits)
        except FlowError as exc:
            raise _refused(exc.said_as, str(exc)) from None
        if not merged.ok or merged.flow is None:
            raise _refused(merged.said(), merged.describe())
        written = await workspace.write(path, dump_flow(merged.flow), latest_read["version"], ctx.task_id, ctx.key)
        return {"path": written["path"], "version": written["version"], "notice": merged.describe()}
