"""The production graph (DESIGN I1): a flow file whose nodes are the steps of a film.

A production graph *is* a flow (`workspace.flows`, format 1): the same file, versioned and checked node by node
(H4). This module gives its node types a meaning:

==================  =====================================  ==========================================
type                makes                                  input ports (edge ``to`` ends)
==================  =====================================  ==========================================
``brief``           the request's text (``params.text``)    —
``storyboard``      one value per shot (``shot1`` …) and    ``brief``
                    ``durations``, read from the Markdown
                    file ``params.path``
``character_sheet`` an image (``params.prompt``)            ``brief``
``scene_reference`` an image (``params.prompt``)            ``brief``
``key_frame``       an image from its references            ``shot``, ``character``, ``scene``
``shot_clip``       a video moving from its key frame       ``key_frame``, ``shot``
``sound``           a WAV (``params.prompt``, seconds)      ``brief``, ``durations``
``review``          a checkpoint the creator answers        any
``assembly``        the cut: clips in port order + sound    ``clip1`` … ``clipN``, ``audio``
==================  =====================================  ==========================================

Output ports are named freely on edges (``character.image``); a storyboard's port names the shot it carries.
Params a node may have besides: ``output`` (workspace path of its result), ``size``, ``seconds``, ``seed``,
``take`` (bump it to make the node again with unchanged inputs).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import Said
from ..workspace.flows import Edge, Flow, Node, dump_flow

BRIEF, STORYBOARD, CHARACTER, SCENE = "brief", "storyboard", "character_sheet", "scene_reference"
KEY_FRAME, CLIP, SOUND, REVIEW, ASSEMBLY = "key_frame", "shot_clip", "sound", "review", "assembly"
NODE_TYPES = (BRIEF, STORYBOARD, CHARACTER, SCENE, KEY_FRAME, CLIP, SOUND, REVIEW, ASSEMBLY)
SOURCES = (BRIEF, STORYBOARD)  # read, never run: always current
STUDIO_KIND = {CHARACTER: "image", SCENE: "image", KEY_FRAME: "image", CLIP: "video", SOUND: "audio"}
LOCAL = (ASSEMBLY, REVIEW)  # run here, no order, no charge


class GraphError(ValueError):
    """A flow that is not a production graph: one sentence for the creator (`said_as`, worded in their
    language by `text(lang)`); `str()` is its English, what the model reads."""

    def __init__(self, said: Said) -> None:
        super().__init__(said.text("en"))
        self.said_as = said

    def text(self, lang: str) -> str:
        return self.said_as.text(lang)


@dataclass(frozen=True)
class Graph:
    """A flow read as a production graph: nodes in topological order, each with its incoming edges."""

    flow: Flow
    order: tuple[str, ...]
    inputs: dict[str, tuple[Edge, ...]]
    ports: dict[str, tuple[tuple[str, str, str], ...]]  # per node: (source node, its port, this node's port)

    def node(self, node_id: str) -> Node:
        return self._nodes[node_id]

    def params_text(self, node_id: str) -> str:
        """The node's params as canonical JSON (what its key hashes), computed once per graph read."""
        cache = self.__dict__.setdefault("_params_text", {})
        if node_id not in cache:
            cache[node_id] = json.dumps(self._nodes[node_id].params, sort_keys=True, ensure_ascii=False, default=str)
        return cache[node_id]

    @property
    def _nodes(self) -> dict[str, Node]:
        cached = self.__dict__.get("_by_id")
        if cached is None:
            cached = {n.id: n for n in self.flow.nodes}
            object.__setattr__(self, "_by_id", cached)
        return cached

    def dependents(self, node_id: str) -> set[str]:
        """Every node downstream of NODE_ID."""
        out: set[str] = set()
        frontier = [node_id]
        while frontier:
            current = frontier.pop()
            for other, edges in self.inputs.items():
                if other not in out and any(e.source_node == current for e in edges):
                    out.add(other)
                    frontier.append(other)
        return out


def as_graph(flow: Flow) -> Graph:
    """Check a flow's node types and that it has no cycle; raises `GraphError` with one sentence."""
    unknown = sorted({n.type for n in flow.nodes if n.type not in NODE_TYPES})
    if unknown:
        raise GraphError(Said("wording.graph_unknown_type", {"types": ", ".join(unknown),
                                                             "known": ", ".join(NODE_TYPES)}))
    inputs: dict[str, list[Edge]] = {n.id: [] for n in flow.nodes}
    for edge in flow.edges:
        inputs[edge.target_node].append(edge)
    order: list[str] = []
    placed: set[str] = set()
    remaining = [n.id for n in flow.nodes]
    while remaining:
        ready = [i for i in remaining if all(e.source_node in placed for e in inputs[i])]
        if not ready:
            raise GraphError(Said("wording.graph_cycle", {"nodes": ", ".join(remaining[:3])}))
        order += ready
        placed.update(ready)
        remaining = [i for i in remaining if i not in placed]
    ports = {k: tuple((e.source_node, e.source.split(".", 1)[1], e.target.split(".", 1)[1]) for e in v)
             for k, v in inputs.items()}
    return Graph(flow, tuple(order), {k: tuple(v) for k, v in inputs.items()}, ports)


# ---- storyboards ----------------------------------------------------------------------------------------------
_HEADING = re.compile(r"^##\s+\D*?(\d+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"^-\s*([^:：]+)[:：]\s*(.*)$", re.MULTILINE)
_SECONDS = re.compile(r"^(\d+(?:[.,]\d+)?)\s*(?:s|sec|秒|с|секунд\w*)?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Shot:
    n: int
    text: str  # the section as written (what its digest covers)
    fields: tuple[tuple[str, str], ...]  # (name, value) in order: Frame, Action, Sound … in any language
    seconds: float | None

    def prompt(self) -> str:
        """The picture the shot asks for: every field but its duration and sound, joined."""
        return "; ".join(v for k, v in self.fields if v and not _SECONDS.match(v) and k != self.sound_field())

    def sound_field(self) -> str:
        return self.fields[-1][0] if len(self.fields) >= 3 else ""


@lru_cache(maxsize=64)
def parse_storyboard(text: str) -> dict[int, Shot]:
    """The shots of a storyboard: each ``## Shot N`` section (any language: the heading's number counts). Cached
    by text: callers must not change the dict."""
    marks = list(_HEADING.finditer(text))
    shots: dict[int, Shot] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end():end].strip()
        fields = tuple((m.group(1).strip(), m.group(2).strip()) for m in _FIELD.finditer(body))
        seconds = next((float(m.group(1).replace(",", ".")) for _, v in fields if (m := _SECONDS.match(v))), None)
        shots.setdefault(int(mark.group(1)), Shot(int(mark.group(1)), body, fields, seconds))
    return shots


# ---- the film template the planner uses ------------------------------------------------------------------------
def film_flow(*, brief: str, subject: str, storyboard: str, shots: int, folder: str, seconds: float | None = None,
              clip_ext: str = "mp4") -> Flow:
    """The ViMax-shaped graph of a film: brief → storyboard, character sheet and scene reference → one key frame
    and one clip per shot → the cut, with one sound under it. SECONDS fixes the sound's length (default: the
    storyboard's durations, so a shot made longer lengthens the sound too)."""
    nodes = [Node("brief", BRIEF, {"text": brief}, label="Brief"),
             Node("storyboard", STORYBOARD, {"path": storyboard}, label="Storyboard"),
             Node("character", CHARACTER, {"prompt": f"character sheet: {subject}, full figure, plain backdrop",
                                           "size": "square", "output": f"{folder}/character.png"},
                  label="Character sheet"),
             Node("scene", SCENE, {"prompt": f"scene reference: {subject}, the setting without the character",
                                   "size": "wide", "output": f"{folder}/scene.png"}, label="Scene reference"),
             Node("sound", SOUND, {"prompt": f"score for {subject}", "output": f"{folder}/score.wav"},
                  label="Sound")]  # as long as the storyboard's shots together (its durations port)
    if seconds:
        nodes[-1] = nodes[-1].with_params({"seconds": seconds})
    edges = [Edge("brief.text", "storyboard.brief"), Edge("brief.text", "character.brief"),
             Edge("brief.text", "scene.brief"), Edge("brief.text", "sound.brief"),
             Edge("storyboard.durations", "sound.durations")]
    for n in range(1, shots + 1):
        nodes += [Node(f"shot{n}_frame", KEY_FRAME, {"shot": n, "size": "wide", "output": f"{folder}/shot{n}.png"},
                       label=f"Shot {n} key frame"),
                  Node(f"shot{n}", CLIP, {"shot": n, "output": f"{folder}/shot{n}.{clip_ext}"}, label=f"Shot {n}")]
        edges += [Edge(f"storyboard.shot{n}", f"shot{n}_frame.shot"), Edge("character.image", f"shot{n}_frame.character"),
                  Edge("scene.image", f"shot{n}_frame.scene"), Edge(f"shot{n}_frame.image", f"shot{n}.key_frame"),
                  Edge(f"storyboard.shot{n}", f"shot{n}.shot"), Edge(f"shot{n}.clip", f"cut.clip{n}")]
    nodes.append(Node("cut", ASSEMBLY, {"output": f"{folder}/film.mp4"}, label="Final cut"))
    edges.append(Edge("sound.audio", "cut.audio"))
    return Flow(tuple(nodes), tuple(edges), {"production": {"title": subject}})


def film_text(**kwargs: Any) -> str:
    return dump_flow(film_flow(**kwargs))


def shot_node(graph: Graph, n: int, kind: str = CLIP) -> str | None:
    """The node of KIND that makes shot N (params.shot == N)."""
    return next((i for i in graph.order if graph.node(i).type == kind and graph.node(i).params.get("shot") == n), None)
