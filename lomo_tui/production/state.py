"""What each node of a production graph is now: its key, its inputs' values, and its state.

A node's *key* is a hash of the graph's path, the node's id, type and params, and the digest of every value on
its input ports. Values are digests of what is there now: a storyboard port is the text of its own shot's
section, an image port the bytes of the file the upstream node made (or the creator saved over it). So a node
is stale exactly when something it reads changed — the creator's edit of the character sheet, of Shot 2's text,
or the agent's edit of a node's params — and a node whose inputs did not change keeps its key and its result.

States: ``waiting`` (an input is not made yet), ``ready`` (never made), ``running``, ``done``, ``stale`` (made
from inputs that changed since, or its result file is gone: ``missing``), ``failed``, ``skipped``.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import Said, column_value
from ..language import message
from .graph import BRIEF, CLIP, KEY_FRAME, SOURCES, STORYBOARD, Graph, Shot, parse_storyboard

TO_RUN = ("ready", "stale")


@dataclass
class Value:
    digest: str
    payload: Any = None  # text, a Shot, a durations list, or a workspace path


@dataclass
class NodeState:
    id: str
    type: str
    state: str
    key: str | None = None
    inputs: dict[str, Value] = field(default_factory=dict)  # by input port
    outputs: dict[str, Value] = field(default_factory=dict)  # by output port (done sources and results)
    artifact: str | None = None
    record: Any = None
    error: str | None = None  # a `Phrase` (English; worded in the reader's language) or a provider's own words
    missing: bool = False  # stale because its result file is gone (the creator deleted it): made or restored again


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_text(text: str) -> str:
    return digest_bytes(text.encode("utf-8"))


def node_key(graph_path: str, node_id: str, type_: str, params: Mapping[str, Any] | str,
             inputs: Mapping[str, Value]) -> str:
    """The node's identity for reuse: same key, same result (never made, ordered or charged again). PARAMS may be
    given as their canonical JSON text already (`Graph.params_text`)."""
    text = params if isinstance(params, str) else json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)
    memo = (graph_path, node_id, type_, text, *(f"{port}={value.digest}" for port, value in sorted(inputs.items())))
    key = _KEYS.get(memo)
    if key is None:
        if len(_KEYS) >= _DIGESTS_MAX:
            _KEYS.clear()
        key = _KEYS[memo] = digest_text("\x00".join(memo[:4]) + "\x00" + "\x00".join(memo[4:]))
    return key


_KEYS: dict[tuple[str, ...], str] = {}  # a node's key once per (params, input digests): a wake re-keys nothing


_DIGESTS: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) → digest: a file is hashed once per change
_DIGESTS_MAX = 4096


def _file_digest(root: Path, rel: str | None, cache: dict[str, str | None]) -> str | None:
    if not rel:
        return None
    if rel not in cache:
        path = os.path.join(root, rel)
        try:
            stat = os.stat(path)
            seen = (path, stat.st_mtime_ns, stat.st_size)
            if seen not in _DIGESTS:
                if len(_DIGESTS) >= _DIGESTS_MAX:
                    _DIGESTS.clear()
                with open(path, "rb") as fh:
                    _DIGESTS[seen] = digest_bytes(fh.read())
            cache[rel] = _DIGESTS[seen]
        except OSError:
            cache[rel] = None
    return cache[rel]


_BOARDS: dict[tuple[str, int, int], tuple[dict[str, Value], str | None]] = {}  # (path, mtime_ns, size) → parsed


def _source_outputs(node: Any, root: Path) -> tuple[dict[str, Value], str | None]:
    if node.type == BRIEF:
        text = str(node.params.get("text", ""))
        return {"text": Value(digest_text(text), text)}, None
    path = str(node.params.get("path") or "")
    try:
        full = os.path.join(root, path)
        stat = os.stat(full) if path else None
    except OSError:
        stat = None
    seen = (full, stat.st_mtime_ns, stat.st_size) if stat is not None else None
    if seen is not None and seen in _BOARDS:  # a storyboard is read and parsed once per change
        outputs, error = _BOARDS[seen]
        return dict(outputs), error
    parsed = _parse_board(root, path)
    if seen is not None:
        if len(_BOARDS) >= 64:
            _BOARDS.clear()
        _BOARDS[seen] = parsed
    return dict(parsed[0]), parsed[1]


def _parse_board(root: Path, path: str) -> tuple[dict[str, Value], str | None]:
    try:
        text = (root / path).read_text(encoding="utf-8") if path else ""
    except (OSError, UnicodeDecodeError):
        return {}, Said("wording.board_unreadable", {"path": path or Said("wording.board_no_path")}).phrase()
    shots = parse_storyboard(text)
    if not shots:
        return {}, Said("wording.board_no_shots", {"path": path}).phrase()
    outputs = {f"shot{n}": Value(digest_text(shot.text), shot) for n, shot in shots.items()}
    durations = [shots[n].seconds for n in sorted(shots)]
    outputs["durations"] = Value(digest_text(json.dumps(durations)), durations)
    return outputs, None


_READ: dict[tuple[str, str], str] = {}  # (node type, section digest) → the digest of what that node reads of it


def _as_read_by(type_: str, value: Value) -> Value:
    """A shot's section as a node reads it: a key frame its picture (not its duration or sound), a clip its picture
    and duration; so a shot made longer redoes its clip and not its key frame."""
    shot = value.payload
    if not isinstance(shot, Shot) or type_ not in (KEY_FRAME, CLIP):
        return value
    memo = (type_, value.digest)
    if memo not in _READ:
        if len(_READ) >= _DIGESTS_MAX:
            _READ.clear()
        _READ[memo] = digest_text(shot.prompt() if type_ == KEY_FRAME else f"{shot.prompt()}\x00{shot.seconds}")
    return Value(_READ[memo], shot)


def evaluate(graph: Graph, records: Mapping[str, Any], root: Path, graph_path: str) -> dict[str, NodeState]:
    """Every node's state, in topological order, from the graph, the stored results and the files as they are."""
    states: dict[str, NodeState] = {}
    files: dict[str, str | None] = {}
    for node_id in graph.order:
        node = graph.node(node_id)
        record = records.get(node_id)
        if node.type in SOURCES:
            outputs, error = _source_outputs(node, root)
            states[node_id] = NodeState(node_id, node.type, "failed" if error else "done", outputs=outputs,
                                        error=error, artifact=node.params.get("path"))
            continue
        inputs: dict[str, Value] = {}
        missing = False
        for source, out_port, port in graph.ports[node_id]:
            upstream = states[source]
            value = None
            if upstream.state in ("done", "skipped"):
                value = upstream.outputs.get(out_port)
                if value is None and upstream.type not in SOURCES and upstream.outputs:
                    value = next(iter(upstream.outputs.values()))  # a made node has one result, by any port name
            if value is None:
                missing = True
            else:
                inputs[port] = _as_read_by(node.type, value)
        state = NodeState(node_id, node.type, "waiting", inputs=inputs, record=record)
        states[node_id] = state
        if missing:
            if record is not None and record.status in ("done", "running", "skipped"):
                state.state = "stale"
            blocked = [e.source for e in graph.inputs[node_id] if states[e.source_node].state == "failed"
                       or (states[e.source_node].type in SOURCES
                           and e.source.split(".", 1)[1] not in states[e.source_node].outputs)]
            if blocked:
                state.error = Said("wording.input_missing", {"nodes": ", ".join(blocked)}).phrase()
            continue
        state.key = node_key(graph_path, node_id, node.type, graph.params_text(node_id), inputs)
        if node.params.get("skip"):  # the creator (or the agent) left this node out: nothing made, nothing passed on
            state.state, state.outputs = "skipped", {"out": Value(f"skipped:{state.key}", None)}
            continue
        if record is None or record.key != state.key:
            state.state = "stale" if record is not None and record.status in ("done", "running", "skipped") else "ready"
            if record is not None and record.status == "declined" and record.key == state.key:
                state.state = "failed"
            continue
        state.state = {"done": "done", "running": "running"}.get(record.status, "failed")
        state.error = column_value(record.error) if state.state == "failed" else None  # a `Phrase` or verbatim
        if state.state == "done" and not record.artifact:  # a review: it passes its key on
            state.outputs = {"out": Value(f"{node.type}:{state.key}", None)}
        elif state.state == "done":
            state.artifact = record.artifact
            digest = _file_digest(root, record.artifact, files)
            if digest is None:  # deleted (by the creator): stale, made (or restored from the results store) again
                state.state, state.missing = "stale", True
            else:
                state.outputs = {"out": Value(digest, record.artifact)}
    return states


def shot_of(state: NodeState) -> Shot | None:
    value = state.inputs.get("shot")
    return value.payload if value is not None and isinstance(value.payload, Shot) else None


def summary(states: Mapping[str, NodeState]) -> dict[str, int]:
    out: dict[str, int] = {}
    for st in states.values():
        out[st.state] = out.get(st.state, 0) + 1
    return out


def describe(states: Mapping[str, NodeState], ids: list[str], lang: str = "en") -> str:
    """``"shot2_frame, shot2 and cut"`` in LANG (a card's words: its task's language)."""
    names = [i for i in ids if i in states]
    if len(names) < 2:
        return names[0] if names else message("production_error.no_nodes", lang)
    return message("production_error.nodes_and", lang, nodes=message("reply.list_sep", lang).join(names[:-1]),
                   last=names[-1])


__all__ = ["NodeState", "Value", "evaluate", "node_key", "summary", "TO_RUN", "shot_of", "CLIP", "KEY_FRAME",
           "STORYBOARD"]
