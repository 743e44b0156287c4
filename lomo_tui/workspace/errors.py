"""Workspace errors.

Every message is one sentence that says what happened and what to do; the creator sees it in
the TUI and the model sees it as a tool result, so neither gets a traceback.
"""

from __future__ import annotations

from lomo_tui.errors import LomoError, Said


def human_size(n: int) -> str:
    """Format a byte count for people: ``512 bytes``, ``3.2 MB``."""
    if n < 1000:
        return f"{n} bytes"
    value = n / 1000
    for unit in ("KB", "MB", "GB"):
        if value < 1000:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def _preview(text: str, limit: int = 60) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class WorkspaceError(Exception):
    """Base class: a workspace operation could not be done. `said_as`: its catalogue form, where it has one (the
    creator reads it in their task's language; `str()` is the English the model reads)."""

    said_as: Said | None = None

    def _say(self, key: str, /, **fields: object) -> str:
        """Keep the catalogue form `workspace_error.KEY` and return its English (the exception's message)."""
        self.said_as = Said(f"workspace_error.{key}", fields)
        return self.said_as.text("en")


class PathOutsideWorkspace(WorkspaceError):
    def __init__(self, path: str, how: str = "") -> None:
        self.path = path
        detail = Said("workspace_error.how", {"how": how}) if how else ""
        super().__init__(self._say("outside", path=path, detail=detail))


class ReservedPath(WorkspaceError):
    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(self._say("reserved", path=path))


class InvalidPath(WorkspaceError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(self._say("invalid_path", path=repr(path), reason=reason))


class NoSuchFile(WorkspaceError):
    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(self._say("no_such_file", path=path))


class NotAFile(WorkspaceError):
    def __init__(self, path: str, what: str | None = None) -> None:
        self.path = path
        super().__init__(self._say("not_a_file", path=path, what=what or Said("workspace_error.a_folder")))


class FileTooLarge(WorkspaceError):
    def __init__(self, path: str, size: int, limit: int) -> None:
        self.path, self.size, self.limit = path, size, limit
        super().__init__(self._say("too_large", path=path, size=human_size(size), limit=human_size(limit)))


class BinaryFile(WorkspaceError):
    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(self._say("binary", path=path))


ACTIONS = ("read", "write")  # what a file operation was doing, each worded as `workspace_error.action_NAME`


def _action(action: str) -> Said | str:
    return Said(f"workspace_error.action_{action}") if action in ACTIONS else action


class WorkspacePermissionError(WorkspaceError):
    def __init__(self, path: str, action: str, reason: str | None = None) -> None:
        self.path = path
        super().__init__(self._say("no_permission", action=_action(action), path=path,
                                   reason=reason or Said("workspace_error.permission_denied")))


class WorkspaceIOError(WorkspaceError):
    """Any other operating-system failure, explained (REASON and HINT: a `Phrase` where Lomo words them)."""

    def __init__(self, path: str, action: str, reason: str, hint: str) -> None:
        self.path = path
        super().__init__(self._say("io_failed", action=_action(action), path=path, reason=reason, hint=hint))


class EditError(WorkspaceError):
    """An exact-snippet edit could not be applied; no edit was applied."""


class SnippetNotFound(EditError):
    def __init__(self, edit_no: int, old: str) -> None:
        self.edit_no = edit_no
        super().__init__(self._say("snippet_not_found", n=edit_no, old=_preview(old)))


class SnippetNotUnique(EditError):
    def __init__(self, edit_no: int, old: str, count: int) -> None:
        self.edit_no, self.count = edit_no, count
        super().__init__(self._say("snippet_not_unique", n=edit_no, old=_preview(old), count=count))


class EditsOverlap(EditError):
    def __init__(self, first: int, second: int) -> None:
        self.edits = (first, second)
        super().__init__(self._say("edits_overlap", first=first, second=second))


class FlowError(WorkspaceError):
    """A flow file is malformed, or a flow edit names something that is not there."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = Said("edit_merge.and_more", {"n": len(problems) - 8}) if len(problems) > 8 else ""
        self.said_as = Said("edit_merge.flow_invalid", {"problems": problems[:8], "more": more})
        super().__init__(self.said_as.text("en"))


class WorkspaceUnusable(WorkspaceError, LomoError):
    """The workspace folder itself cannot be used (a file, a system folder, read-only)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(
            f"the workspace {path} cannot be used: {reason}; pass a writable folder with --workspace "
            "(or LOMO_WORKSPACE)"
        )
