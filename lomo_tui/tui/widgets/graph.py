"""The task view's production graph (DESIGN I1): one line per node with its state and key.

enter opens a node's result; r marks the node to be made again (a new ``take`` in its params) and s skips it or
takes it back: both are the creator's own edits of the flow file, so the nodes downstream show stale at once and
the task redoes only those when it next runs the graph ("update the film").
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...errors import worded
from ...workspace.files import atomic_write
from ...workspace.flows import dump_flow, parse_flow
from .. import keys
from ..strings import has, text
from .task_parts import ArtifactRow

STATE_MARK = {"done": "[$success]●[/]", "running": "[$primary]◔[/]", "ready": "[$text-muted]○[/]",
              "waiting": "[$text-muted]·[/]", "stale": "[$warning]△[/]", "failed": "[$error]✗[/]",
              "skipped": "[$text-muted]⊘[/]"}


def node_line(node: dict[str, Any], lang: str = "en") -> Content:
    """One node: its id, type, state (in LANG), key, how often it was made, and why it failed or waits (in LANG)."""
    key = node.get("key") or "—"
    line = (f"{STATE_MARK.get(node['state'], '?')} [b]$id[/] [$text-muted]$type · $state · $key"
            + (" · $runs×" if node.get("runs") else "") + (" — $why" if node.get("error") else "") + "[/]")
    state = text(f"task.node_{node['state']}", lang) if has(f"task.node_{node['state']}") else node["state"]
    if node.get("missing"):
        state = text("task.node_missing", lang, state=state)
    return Content.from_markup(line, id=node["id"], type=node["type"], state=state, key=key[:8],
                               runs=str(node.get("runs", 0)), why=str(worded(node.get("error") or "", lang)))


class GraphList(OptionList):
    """The nodes of the task's production graphs."""

    DEFAULT_CSS = "GraphList { height: auto; max-height: 16; }"
    BINDINGS = keys.bindings("graph.open", "graph.rerun", "graph.skip")

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.rows: list[tuple[str, dict[str, Any]]] = []
        self.shown: Any = None
        self.lang = "en"  # the task's language (the task view passes it)

    def show(self, graphs: list[dict[str, Any]], lang: str = "en") -> None:
        self.lang = lang
        if graphs == self.shown:
            return
        self.shown = graphs
        self.rows = [(g["path"], n) for g in graphs for n in g.get("nodes", ())]
        self.clear_options()
        unread = [Option(Content.from_markup("[$error]✗[/] [b]$path[/] [$text-muted]$why[/]", path=g["path"],
                                             why=worded(g["error"], lang)), disabled=True)
                  for g in graphs if g.get("error")]  # a graph that cannot be read: after the nodes (rows index them)
        if not self.rows and unread:
            self.add_options(unread)
            return
        if not self.rows:
            self.add_option(Option(Content.from_markup("[$text-muted]$t[/]", t=text("task.no_graph", lang)),
                                   disabled=True))
            return
        self.add_options([Option(node_line(n, lang)) for _, n in self.rows] + unread)

    def _chosen(self) -> tuple[str, dict[str, Any]] | None:
        index = self.highlighted
        return self.rows[index] if index is not None and index < len(self.rows) else None

    def action_open(self) -> None:
        chosen = self._chosen()
        if chosen and chosen[1].get("result"):
            self.post_message(ArtifactRow.Chosen(self.root / chosen[1]["result"], False))
        elif chosen:
            self.app.notify(text("task.graph_no_result", self.lang, id=chosen[1]["id"], state=chosen[1]["state"]),
                            title=text("task.graph_notice", self.lang))

    def _edit(self, patch: dict[str, Any], said: str) -> None:
        """Edit the highlighted node's params in its flow file; SAID: the notice's key ("task.graph_rerun")."""
        chosen = self._chosen()
        if chosen is None:
            return
        graph, node = chosen
        path = self.root / graph
        try:
            flow = parse_flow(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            self.app.notify(text("task.graph_cannot_edit", self.lang, graph=graph, error=exc),
                            title=text("task.graph_notice", self.lang), severity="error")
            return
        current = flow.node(node["id"])
        if current is None:
            return
        if "take" in patch:
            patch = {"take": int(current.params.get("take") or 1) + 1}
        if "skip" in patch:
            patch = {"skip": None if current.params.get("skip") else True}
        edited = type(flow)(tuple(n.with_params(patch) if n.id == node["id"] else n for n in flow.nodes),
                            flow.edges, flow.extra)
        atomic_write(path, dump_flow(edited).encode("utf-8"))
        self.app.notify(text(said, self.lang, id=node["id"]), title=text("task.graph_notice", self.lang))

    def action_rerun(self) -> None:
        self._edit({"take": True}, "task.graph_rerun")

    def action_skip(self) -> None:
        self._edit({"skip": True}, "task.graph_skip")
