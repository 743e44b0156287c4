"""Flow files: format, validation, diffs and per-node merging (DESIGN H4)."""

from __future__ import annotations

import json

import pytest

from lomo_tui.workspace.errors import FlowError
from lomo_tui.workspace.flows import (
    Edge,
    Flow,
    Node,
    changed_nodes,
    dump_flow,
    merge_node_edits,
    parse_flow,
    summarise,
)

BASE = Flow(
    nodes=(
        Node("brief", "prompt", {"text": "A fox at dawn"}, label="Brief"),
        Node("shot1", "generate_image", {"size": "1024x576", "seed": 7}),
        Node("shot2", "generate_image", {"size": "1024x576"}, extra={"ui": {"x": 40, "y": 0}}),
        Node("cut", "edit_video", {"fps": 24}),
    ),
    edges=(
        Edge("brief.text", "shot1.prompt"),
        Edge("brief.text", "shot2.prompt"),
        Edge("shot1.image", "cut.clips"),
        Edge("shot2.image", "cut.clips"),
    ),
    extra={"title": "狐狸 / Fox"},
)


def test_unchanged_flow_round_trips_byte_for_byte() -> None:
    text = dump_flow(BASE)
    assert parse_flow(text) == BASE
    assert dump_flow(parse_flow(text)) == text
    assert text.endswith("\n") and '\n  "lomo_flow": 1,' in text
    assert "狐狸" in text  # readable, not \u-escaped


def test_dump_keeps_node_order_and_sorts_keys() -> None:
    data = json.loads(dump_flow(BASE))
    assert [n["id"] for n in data["nodes"]] == ["brief", "shot1", "shot2", "cut"]
    assert list(data) == sorted(data)
    assert list(data["nodes"][0]) == ["id", "label", "params", "type"]


def test_hand_written_flow_with_defaults_parses() -> None:
    flow = parse_flow('{"lomo_flow": 1, "nodes": [{"id": "a", "type": "prompt"}]}')
    assert flow.nodes == (Node("a", "prompt"),) and flow.edges == ()


def test_bad_json_reports_line_and_column() -> None:
    with pytest.raises(FlowError, match=r"line 3, column 3") as caught:
        parse_flow('{\n  "lomo_flow": 1\n  "nodes": []\n}')
    assert str(caught.value).startswith("The flow is not valid: it is not valid JSON")


def test_every_validation_problem_is_listed() -> None:
    text = json.dumps({
        "lomo_flow": 1,
        "nodes": [
            {"id": "a", "type": "prompt"},
            {"id": "a", "type": "prompt"},
            {"id": "b.c", "type": "x"},
            {"type": "x"},
            {"id": "d", "type": "x", "params": []},
        ],
        "edges": [{"from": "a.out", "to": "ghost.in"}, {"from": "a", "to": "b.in"}],
    })
    with pytest.raises(FlowError) as caught:
        parse_flow(text)
    problems = caught.value.problems
    assert "node id 'a' is used 2 times" in problems
    assert "node id 'b.c' must not contain '.'" in problems
    assert 'node 4 needs an "id" (a non-empty string)' in problems
    assert 'node 5: "params" must be an object' in problems
    assert "edge a.out → ghost.in refers to missing node 'ghost'" in problems
    assert 'edge 2: "from" and "to" must look like "node.port"' in problems


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "the top level must be a JSON object"),
        ('{"nodes": []}', '"lomo_flow": 1 is missing'),
        ('{"lomo_flow": 2}', "newer than this Lomo understands"),
        ('{"lomo_flow": true}', '"lomo_flow" must be 1, not true'),
        ('{"lomo_flow": 1, "nodes": {}}', '"nodes" must be a list'),
        ('{"lomo_flow": 1, "edges": [{"from": "a.x", "to": "b.y", "w": 1}]}', "exactly"),
    ],
)
def test_structural_problems(text: str, problem: str) -> None:
    with pytest.raises(FlowError, match=problem.replace(".", r"\.")):
        parse_flow(text)


def _edited(flow: Flow, node_id: str, **params: object) -> Flow:
    nodes = tuple(n.with_params(params) if n.id == node_id else n for n in flow.nodes)
    return Flow(nodes, flow.edges, flow.extra)


def test_changed_nodes_names_added_removed_changed_and_edges() -> None:
    latest = _edited(BASE, "shot2", size="2048x1152")
    latest = Flow(
        (*(n for n in latest.nodes if n.id != "cut"), Node("grade", "color")),
        (*latest.edges[:2], Edge("shot1.image", "grade.in")),
    )
    diff = changed_nodes(BASE, latest)
    assert (diff.added, diff.removed, diff.changed) == (("grade",), ("cut",), ("shot2",))
    assert diff.edges_added == (Edge("shot1.image", "grade.in"),)
    assert diff.edges_removed == BASE.edges[2:]
    assert diff.describe() == (
        "shot2 changed; grade added; cut removed; 1 edge added; 2 edges removed"
    )
    assert changed_nodes(BASE, BASE).empty


def test_moving_a_node_in_the_ui_counts_as_a_change() -> None:
    moved = Flow(
        tuple(Node(n.id, n.type, n.params, n.label, {"ui": {"x": 99}}) if n.id == "shot2" else n
              for n in BASE.nodes),
        BASE.edges, BASE.extra,
    )
    assert changed_nodes(BASE, moved).changed == ("shot2",)


def test_edit_of_a_node_the_creator_changed_is_refused_and_nothing_applies() -> None:
    latest = _edited(BASE, "shot2", size="2048x1152")
    result = merge_node_edits(BASE, latest, {"shot1": {"seed": 8}, "shot2": {"seed": 1}})
    assert not result.ok and result.flow is None
    assert result.conflicts == ("shot2",) and result.applied == ()
    assert result.describe().startswith("Not applied: shot2 changed since the version you read")


def test_edit_of_a_node_the_creator_removed_or_added_is_refused() -> None:
    latest = Flow(
        (*(n for n in BASE.nodes if n.id != "cut"), Node("grade", "color")),
        BASE.edges[:2],
    )
    result = merge_node_edits(BASE, latest, {"cut": {"fps": 30}, "grade": {"lut": "warm"}})
    assert result.conflicts == ("cut", "grade")


def test_edits_of_other_nodes_apply_on_latest_with_a_notice() -> None:
    latest = _edited(BASE, "shot2", size="2048x1152")
    result = merge_node_edits(
        BASE, latest,
        {
            "shot1": {"seed": 8, "style": {"grain": 0.2}},
            "brief": Node("brief", "prompt", {"text": "A fox at dusk"}),
            "music": Node("music", "generate_audio", {"mood": "calm"}),
        },
    )
    assert result.ok and result.flow is not None
    merged = result.flow
    assert merged.node("shot1").params == {"size": "1024x576", "seed": 8, "style": {"grain": 0.2}}
    assert merged.node("shot2").params == {"size": "2048x1152"}  # the creator's edit is kept
    assert merged.node("brief").params == {"text": "A fox at dusk"}
    assert [n.id for n in merged.nodes] == ["brief", "shot1", "shot2", "cut", "music"]
    assert result.notice.changed == ("shot2",)
    assert result.applied == ("shot1", "brief", "music")
    assert "Also changed since you read it: shot2 changed" in result.describe()
    assert dump_flow(parse_flow(dump_flow(merged))) == dump_flow(merged)


def test_params_patch_null_removes_a_key_and_removing_a_node_drops_its_edges() -> None:
    result = merge_node_edits(BASE, BASE, {"shot1": {"seed": None}, "shot2": None})
    assert result.ok and result.flow is not None
    assert result.flow.node("shot1").params == {"size": "1024x576"}
    assert result.flow.node("shot2") is None
    assert all("shot2" not in (e.source_node, e.target_node) for e in result.flow.edges)
    assert result.notice.empty
    assert result.describe() == "Applied your edits to shot1, shot2."


def test_edit_of_an_unknown_node_is_an_error() -> None:
    with pytest.raises(FlowError, match="there is no node 'ghost' to edit"):
        merge_node_edits(BASE, BASE, {"ghost": {"x": 1}})
    with pytest.raises(FlowError, match="carries a node with id 'other'"):
        merge_node_edits(BASE, BASE, {"shot1": Node("other", "x")})
    with pytest.raises(FlowError, match="must not contain"):
        merge_node_edits(BASE, BASE, {"a.b": Node("a.b", "x")})


def test_node_from_json_validates() -> None:
    assert Node.from_json({"id": "n", "type": "t", "ui": {"x": 1}}).extra == {"ui": {"x": 1}}
    with pytest.raises(FlowError, match='needs a "type"'):
        Node.from_json({"id": "n"})


def test_summary_is_short_and_human() -> None:
    assert summarise(BASE) == (
        "4 nodes, 4 edges: prompt, generate_image ×2, edit_video; from brief to cut"
    )
    assert summarise(Flow()) == "an empty flow"
    assert summarise(Flow((Node("a", "prompt"),))) == "1 node, 0 edges: prompt"
