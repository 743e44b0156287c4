"""Where the runtime asks the router: a direct target before any model call (A4), and the Router's
view of the task landscape for a main-thread step (A6)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..governance.budget import spent_today
from ..language import Parsed
from . import deterministic, index, memory

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

TASK_WORDS = re.compile(r"task|job|project|任务|任務|事项|项目|タスク|仕事|プロジェクト|задач|задани|проект", re.I)


async def direct_target(conn: AsyncConnection, message: str | Parsed) -> str | None:
    """A task this main-thread message unambiguously belongs to (no model call), or None."""
    return await deterministic.target(conn, message)


async def main_context(conn: AsyncConnection, task: Any, pending: list[str],
                       similar: list[tuple[str, float]] | None = None, parsed: Parsed | None = None
                       ) -> tuple[list[str], dict[str, Any]]:
    """Dynamic-tail sections and hints for a main-thread step: the index of tasks the Router may pick.

    hints["task_index"]: [{id, title, goal, summary, status, kind, files, language, updated_at, recency,
    retrieved, score, file_match, memory}] — recent tasks first (recency 0 = most recent), then tasks
    found by search or named in the message. hints["mentions"]: {"files": {name: [task ids]},
    "tasks": [ids], "memory": [[task id, similarity]], "missing_files": [names no workspace object has]}.
    hints["task_counts"]: {status: n}, only when the message talks about tasks. hints["spent_today"]:
    today's charges. A message naming files that do not exist gets a section saying so (A8). PARSED: the
    pending message as parsed on arrival (its file names are read from it, not parsed again).
    """
    text = "\n".join(pending)
    message: str | Parsed = parsed if parsed is not None and parsed.text == text else text
    mentioned: dict[str, dict[str, Any]] = {}
    files: dict[str, list[str]] = {}
    named: list[str] = []
    remembered: list[tuple[str, float]] = []
    missing: list[str] = []
    if text.strip():
        for name, rows in (await deterministic.file_bindings(conn, message)).items():
            files[name] = list(dict.fromkeys(r.task_id for r in rows))
            for task_id in files[name]:
                mentioned.setdefault(task_id, {})["file_match"] = True
        missing = await deterministic.missing_files(conn, message)
        named = [r.id for r in await deterministic.named_tasks(conn, text) if r.kind != "main"]
        for task_id in named:
            mentioned.setdefault(task_id, {})
        remembered = await memory.recall(conn, text)
        for task_id, score in remembered[:index.MENTIONED]:
            mentioned.setdefault(task_id, {})["memory"] = score
    entries = await index.build(conn, pending, mentioned=mentioned, similar=similar)
    hints: dict[str, Any] = {
        "task_index": [e.hint() for e in entries],
        "mentions": {"files": files, "tasks": named, "memory": [list(m) for m in remembered[:index.MENTIONED]],
                     "missing_files": missing},
    }
    if TASK_WORDS.search(text):  # "how many tasks…": counting scans the table, so only when asked
        hints["task_counts"] = await index.status_counts(conn)
    try:
        hints["spent_today"] = await spent_today(conn)
    except Exception:  # noqa: BLE001 — a fact for simple answers, never a reason to fail a step
        pass
    sections = [index.render(entries)]
    if missing:  # A8: the creator points at something that is not there — ask rather than guess
        sections.append("Files the message names that are not in the workspace: "
                        + ", ".join(missing[:index.MENTIONED])
                        + ". Unless the message asks to create them, ask with clarify(missing_files=…).")
    return sections, hints
