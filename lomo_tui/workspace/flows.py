"""Flows: node graphs kept as JSON files in the workspace, checked and merged per node.

Format, version 1 (as written by `dump_flow`: sorted keys, 2-space indent, UTF-8, final
newline)::

    {
      "edges": [
        {"from": "brief.text", "to": "shot1.prompt"}
      ],
      "lomo_flow": 1,
      "nodes": [
        {"id": "brief", "label": "Brief", "params": {"text": "A fox at dawn"}, "type": "prompt"},
        {"id": "shot1", "params": {"size": "1024x576"}, "type": "generate_image"}
      ]
    }

- ``lomo_flow`` — the format version, the integer ``1``. Its presence marks a JSON file as a
  flow; files named ``*.flow.json`` are flows too.
- ``nodes`` — a list of objects, kept in the order given. Each has ``id`` (unique, non-empty,
  no ``.``), ``type`` (non-empty string), ``params`` (object, default ``{}``) and an optional
  ``label`` (string). Any other key on a node (say ``"ui": {"x": 0, "y": 0}``) is kept as is
  and counts as part of the node.
- ``edges`` — a list of ``{"from": "<node>.<port>", "to": "<node>.<port>"}``: both ends name
  an existing node and a non-empty port; nothing else is allowed on an edge.
- Other top-level keys are kept as is.

Concurrency (DESIGN H4): the agent edits nodes against the version it read (*base*). An edit of
a node that someone else changed since (*latest*) is refused; edits of other nodes apply on
top of *latest*, with a notice of what else changed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lomo_tui.errors import Phrase, Said
from lomo_tui.workspace.errors import FlowError

FORMAT_VERSION = 1


def _said(key: str, /, **fields: Any) -> Phrase:
    """A flow problem: its English, keeping the catalogue form (`edit_merge.KEY`) the creator reads."""
    return Phrase(Said(f"edit_merge.{key}", fields))
_NODE_KEYS = ("id", "type", "params", "label")
_TOP_KEYS = ("lomo_flow", "nodes", "edges")


@dataclass(frozen=True)
class Node:
    id: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Any, where: str | None = None) -> Node:
        """Build a node from its JSON object; raises `FlowError` if it is malformed. WHERE names it in a problem
        (default "node")."""
        problems: list[str] = []
        node = _node_from_json(obj, where or _said("where_node"), problems)
        if node is None or problems:
            raise FlowError(problems)
        return node

    def to_json(self) -> dict[str, Any]:
        obj = {**self.extra, "id": self.id, "type": self.type, "params": self.params}
        if self.label is not None:
            obj["label"] = self.label
        return obj

    def with_params(self, patch: Mapping[str, Any]) -> Node:
        """A copy with `patch` merged into params (JSON merge patch: ``null`` removes a key)."""
        return replace(self, params=_merge_patch(self.params, patch))


@dataclass(frozen=True)
class Edge:
    source: str
    """``"<node>.<port>"`` the value comes from."""
    target: str
    """``"<node>.<port>"`` the value goes to."""

    @property
    def source_node(self) -> str:
        return self.source.split(".", 1)[0]

    @property
    def target_node(self) -> str:
        return self.target.split(".", 1)[0]

    def __str__(self) -> str:
        return f"{self.source} → {self.target}"


@dataclass(frozen=True)
class Flow:
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def node(self, node_id: str) -> Node | None:
        return next((n for n in self.nodes if n.id == node_id), None)


@dataclass(frozen=True)
class FlowDiff:
    """Node ids added, removed and changed from one flow to another, and edge changes."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    edges_added: tuple[Edge, ...] = ()
    edges_removed: tuple[Edge, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.edges_added
                    or self.edges_removed)

    @property
    def nodes(self) -> frozenset[str]:
        """Every node id that was added, removed or changed."""
        return frozenset(self.added + self.removed + self.changed)

    def describe(self) -> str:
        """``"shot2 changed; shot4 added; 1 edge removed"``, or ``"no changes"`` (what the model reads)."""
        parts = [
            f"{', '.join(ids)} {verb}"
            for ids, verb in ((self.changed, "changed"), (self.added, "added"),
                              (self.removed, "removed"))
            if ids
        ]
        parts += [
            f"{len(edges)} {'edge' if len(edges) == 1 else 'edges'} {verb}"
            for edges, verb in ((self.edges_added, "added"), (self.edges_removed, "removed"))
            if edges
        ]
        return "; ".join(parts) or "no changes"


@dataclass(frozen=True)
class MergeResult:
    """Outcome of `merge_node_edits`: the merged flow, or the conflicting nodes (then `flow`
    is None and nothing was applied). `notice` is what changed between base and latest."""

    flow: Flow | None
    applied: tuple[str, ...]
    conflicts: tuple[str, ...]
    notice: FlowDiff

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def said(self) -> Said | None:
        """The refusal as catalogue text (`edit_merge.nodes_conflict`), None when the edits applied."""
        return Said("edit_merge.nodes_conflict", {"nodes": ", ".join(self.conflicts)}) if self.conflicts else None

    def describe(self) -> str:
        said = self.said()
        if said is not None:
            return said.text("en")
        text = f"Applied your edits to {', '.join(self.applied) or 'no nodes'}."
        if not self.notice.empty:
            text += (
                f" Also changed since you read it: {self.notice.describe()}; re-read those "
                "nodes before relying on them."
            )
        return text


def parse_flow(text: str) -> Flow:
    """Parse and validate a flow; raises `FlowError` listing every problem found."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlowError([_said("not_json", why=exc.msg, line=exc.lineno, column=exc.colno)]) from exc
    if not isinstance(data, dict):
        raise FlowError([_said("top_not_object")])
    problems = _version_problems(data.get("lomo_flow"))
    nodes = _list_of(data, "nodes", problems)
    edges = _list_of(data, "edges", problems)
    flow = Flow(
        nodes=tuple(n for i, raw in enumerate(nodes, 1)
                    if (n := _node_from_json(raw, _said("where_node_n", n=i), problems))),
        edges=tuple(e for i, raw in enumerate(edges, 1)
                    if (e := _edge_from_json(raw, _said("where_edge_n", n=i), problems))),
        extra={k: v for k, v in data.items() if k not in _TOP_KEYS},
    )
    problems += validate(flow)
    if problems:
        raise FlowError(problems)
    return flow


def _version_problems(version: Any) -> list[str]:
    if version == FORMAT_VERSION and type(version) is int:
        return []
    if version is None:
        return [_said("version_missing")]
    if type(version) is int and version > FORMAT_VERSION:
        return [_said("version_newer", version=version)]
    return [_said("version_wrong", value=json.dumps(version))]


def _list_of(data: dict[str, Any], key: str, problems: list[str]) -> list[Any]:
    value = data.get(key, [])
    if isinstance(value, list):
        return value
    problems.append(_said("not_list", key=key))
    return []


def _node_from_json(obj: Any, where: str, problems: list[str]) -> Node | None:
    if not isinstance(obj, dict):
        problems.append(_said("node_not_object", where=where))
        return None
    node_id: Any = obj.get("id")
    node_type: Any = obj.get("type")
    params: Any = obj.get("params", {})
    label: Any = obj.get("label")
    before = len(problems)
    if not isinstance(node_id, str) or not node_id:
        problems.append(_said("node_needs_id", where=where))
    if not isinstance(node_type, str) or not node_type:
        problems.append(_said("node_needs_type", where=where))
    if not isinstance(params, dict):
        problems.append(_said("params_not_object", where=where))
    if label is not None and not isinstance(label, str):
        problems.append(_said("label_not_string", where=where))
    if len(problems) > before:
        return None
    extra = {k: v for k, v in obj.items() if k not in _NODE_KEYS}
    return Node(node_id, node_type, params, label, extra)


def _edge_from_json(obj: Any, where: str, problems: list[str]) -> Edge | None:
    if not isinstance(obj, dict) or set(obj) != {"from", "to"}:
        problems.append(_said("edge_shape", where=where))
        return None
    ends = obj["from"], obj["to"]
    if not all(isinstance(end, str) and _is_port_ref(end) for end in ends):
        problems.append(_said("edge_ends", where=where))
        return None
    return Edge(*ends)


def _is_port_ref(text: str) -> bool:
    node, dot, port = text.partition(".")
    return bool(node and dot and port)


def validate(flow: Flow) -> list[str]:
    """Problems with a flow's graph: bad or duplicate node ids, edges to missing nodes."""
    problems = [_said("id_dot", id=repr(n.id)) for n in flow.nodes if "." in n.id]
    counts = Counter(n.id for n in flow.nodes)
    problems += [_said("id_twice", id=repr(i), n=c) for i, c in counts.items() if c > 1]
    problems += [
        _said("edge_missing_node", edge=str(edge), node=repr(end))
        for edge in flow.edges
        for end in dict.fromkeys((edge.source_node, edge.target_node))
        if end not in counts
    ]
    return problems


def dump_flow(flow: Flow) -> str:
    """The canonical text of a flow: an unchanged flow round-trips byte for byte."""
    obj = {
        **flow.extra,
        "lomo_flow": FORMAT_VERSION,
        "nodes": [n.to_json() for n in flow.nodes],
        "edges": [{"from": e.source, "to": e.target} for e in flow.edges],
    }
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def changed_nodes(old: Flow, new: Flow) -> FlowDiff:
    """What changed from `old` to `new`, node by node (any field of a node counts)."""
    before = {n.id: n for n in old.nodes}
    after = {n.id: n for n in new.nodes}
    old_edges, new_edges = set(old.edges), set(new.edges)
    return FlowDiff(
        added=tuple(i for i in after if i not in before),
        removed=tuple(i for i in before if i not in after),
        changed=tuple(i for i, n in after.items() if i in before and before[i] != n),
        edges_added=tuple(e for e in new.edges if e not in old_edges),
        edges_removed=tuple(e for e in old.edges if e not in new_edges),
    )


def summarise(flow: Flow) -> str:
    """A one-line summary: ``"4 nodes, 3 edges: prompt, generate_image ×2, edit; from brief
    to cut"``."""
    if not flow.nodes:
        return "an empty flow"
    types = Counter(n.type for n in flow.nodes)
    kinds = ", ".join(t if c == 1 else f"{t} ×{c}" for t, c in types.items())
    text = f"{_count(flow.nodes, 'node')}, {_count(flow.edges, 'edge')}: {kinds}"
    if flow.edges:
        targets = {e.target_node for e in flow.edges}
        sources = {e.source_node for e in flow.edges}
        starts = [n.id for n in flow.nodes if n.id not in targets]
        ends = [n.id for n in flow.nodes if n.id not in sources]
        text += f"; from {_names(starts)} to {_names(ends)}"
    return text


def _count(items: tuple[Any, ...], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _names(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "") or "nothing"


NodeEdit = Mapping[str, Any] | Node | None
"""A params merge patch, a whole replacement (or new) node, or None to remove the node."""


def merge_node_edits(base: Flow, latest: Flow, edits: Mapping[str, NodeEdit]) -> MergeResult:
    """Apply the agent's node edits, made against `base`, on top of `latest` (DESIGN H4).

    If any edited node was added, removed or changed between base and latest, nothing is
    applied and `MergeResult.conflicts` names those nodes. Otherwise the edits are applied to
    latest (edges touching a removed node go too) and `notice` lists what else changed.
    Raises `FlowError` when an edit names a node that is not there or leaves the flow invalid.
    """
    notice = changed_nodes(base, latest)
    conflicts = tuple(node_id for node_id in edits if node_id in notice.nodes)
    if conflicts:
        return MergeResult(None, (), conflicts, notice)
    nodes = {n.id: n for n in latest.nodes}
    for node_id, edit in edits.items():
        _apply_edit(nodes, node_id, edit)
    kept = nodes.keys()
    merged = Flow(
        nodes=tuple(nodes.values()),
        edges=tuple(e for e in latest.edges if {e.source_node, e.target_node} <= kept),
        extra=latest.extra,
    )
    if problems := validate(merged):
        raise FlowError(problems)
    return MergeResult(merged, tuple(edits), (), notice)


def _apply_edit(nodes: dict[str, Node], node_id: str, edit: NodeEdit) -> None:
    if isinstance(edit, Node):
        if edit.id != node_id:
            raise FlowError([_said("edit_other_id", node=repr(node_id), id=repr(edit.id))])
        nodes[node_id] = edit
    elif node_id not in nodes:
        raise FlowError([_said("no_node_to_remove" if edit is None else "no_node_to_edit", node=repr(node_id))])
    elif edit is None:
        del nodes[node_id]
    else:
        nodes[node_id] = nodes[node_id].with_params(edit)


def _merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7386 JSON merge patch of two objects."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge_patch(merged[key], value)
        else:
            merged[key] = value
    return merged
