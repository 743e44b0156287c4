"""Which workspace the running code serves. A task belongs to the folder it was created in
(`tasks.workspace_id`, 0017): a process opened on another folder does not run its turns, route messages
to it or show its card, so a task never reads or writes files in the wrong folder.

The runtime sets `SERVING` when it opens its workspace, in the context that opened it and in each of its
worker tasks; views set it from their database (`Database.workspace_id`). Unset (None) means unscoped:
every task, as the command line's listings and code outside a runtime see them.

    select(s.tasks).where(scope.tasks_here())
"""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from sqlalchemy import or_, true

from ..store import schema as s

SERVING: ContextVar[str | None] = ContextVar("lomo_serving_workspace", default=None)


def serving() -> str | None:
    """The id of the workspace this code serves (None: unscoped)."""
    return SERVING.get()


def serve(workspace_id: str | None) -> None:
    """Serve WORKSPACE_ID from here on, in this context (a task's own context ends with the task)."""
    SERVING.set(workspace_id)


def tasks_of(workspace_id: str | None, column: Any = None) -> Any:
    """A clause: the task (its `workspace_id` COLUMN, `tasks.workspace_id` by default) belongs to WORKSPACE_ID
    — or to none (the main thread, a task not adopted yet). Always true for None (unscoped)."""
    if workspace_id is None:
        return true()
    column = s.tasks.c.workspace_id if column is None else column
    return or_(column.is_(None), column == workspace_id)


def tasks_here(column: Any = None) -> Any:
    """`tasks_of` the workspace served."""
    return tasks_of(SERVING.get(), column)


def belongs_to(workspace_id: str | None, task_workspace: str | None) -> bool:
    """Whether a task whose `workspace_id` is TASK_WORKSPACE belongs to WORKSPACE_ID (`tasks_of`, for one row)."""
    return workspace_id is None or task_workspace is None or task_workspace == workspace_id


def belongs_here(task_workspace: str | None) -> bool:
    """`belongs_to` the workspace served."""
    return belongs_to(SERVING.get(), task_workspace)
