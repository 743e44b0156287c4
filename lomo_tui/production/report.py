"""A task's production graphs as the state document shows them (`lomo task show --json`, the task view)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from ..errors import LomoError, Said, worded

from ..store import schema as s
from ..workspace.errors import FlowError
from ..workspace.flows import parse_flow
from .engine import load_records
from .graph import GraphError, as_graph
from .state import evaluate, summary


async def graph_states(db: Any, task_id: str) -> list[dict[str, Any]]:
    """Each graph TASK_ID ran: its nodes with type, state (waiting/ready/running/done/stale/failed/skipped), key,
    result, job and how often it was made; read from the flow and the files as they are now. An `error` (a node's,
    or the graph's when it cannot be read) is a `Phrase` where Lomo worded it (English in JSON, any language with
    `worded`), a provider's words as they are; `error_text` says it in the task's language."""
    try:
        async with db.read() as conn:
            rows = (await conn.execute(select(s.production_nodes.c.workspace, s.production_nodes.c.graph).where(
                s.production_nodes.c.task_id == task_id).distinct())).all()
            lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
    except (SQLAlchemyError, LomoError) as exc:  # a database from before production graphs (not migrated yet)
        if "production_nodes" not in str(exc):
            raise
        return []
    out = []
    for workspace, graph_path in sorted(set(rows)):
        root = Path(workspace)
        entry: dict[str, Any] = {"path": graph_path}
        try:
            graph = as_graph(parse_flow((root / graph_path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, FlowError, GraphError) as exc:
            detail = getattr(exc, "said_as", None) or str(exc)  # a FlowError's or GraphError's catalogue form
            error = Said("wording.graph_unreadable", {"detail": detail}).phrase()
            out.append(dict(entry, error=error, error_text=worded(error, lang), nodes=[]))
            continue
        records = await load_records(db, workspace, graph_path)
        states = evaluate(graph, records, root, graph_path)
        entry["nodes"] = [{"id": st.id, "type": st.type, "label": graph.node(st.id).label, "state": st.state,
                           "key": st.key[:16] if st.key else None, "result": st.artifact,
                           "job_id": st.record.job_id if st.record is not None else None,
                           "runs": st.record.runs if st.record is not None else 0, "error": st.error,
                           "error_text": worded(st.error, lang) if st.error else None, "missing": st.missing}
                          for st in states.values()]
        entry["summary"] = summary(states)
        out.append(entry)
    return out


async def stale_results(db: Any, workspace: Any = None) -> set[str]:
    """The workspace paths of graph results that are stale now (the tree marks them)."""
    import os

    query = select(s.production_nodes.c.workspace, s.production_nodes.c.graph).distinct()
    if workspace is not None:
        query = query.where(s.production_nodes.c.workspace.in_({str(workspace), os.path.realpath(workspace)}))
    try:
        async with db.read() as conn:
            graphs = (await conn.execute(query)).all()
    except (SQLAlchemyError, LomoError) as exc:  # a database from before production graphs (not migrated yet)
        if "production_nodes" not in str(exc):
            raise
        return set()
    out: set[str] = set()
    for root_text, graph_path in graphs:
        root = Path(root_text)
        try:
            graph = as_graph(parse_flow((root / graph_path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, FlowError, GraphError):
            continue
        records = await load_records(db, root_text, graph_path)
        states = evaluate(graph, records, root, graph_path)
        out |= {r.artifact for i, r in records.items() if r.artifact and i in states and states[i].state == "stale"}
    return out
