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


class PathOutsideWorkspace(WorkspaceError):
    def __init__(self, path: str, how: str = "") -> None:
        self.path = path
        detail = f" ({how})" if how else ""
        super().__init__(
            f"'{path}' is outside the workspace{detail}; use a path inside the workspace folder, "
            "such as 'notes/idea.md'."
        )


class ReservedPath(WorkspaceError):
    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"'{path}' is inside Lomo's own state folder (.lomo/), which cannot be read or "
            "written as a workspace file; choose a path elsewhere in the workspace."
        )


class InvalidPath(WorkspaceError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(
            f"{path!r} is not a usable file path ({reason}); use a plain relative path such as "
            "'notes/idea.md'."
        )


class NoSuchFile(WorkspaceError):
    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"'{path}' does not exist; check the name, or create the file first.")


class NotAFile(WorkspaceError):
    def __init__(self, path: str, what: str = "a folder") -> None:
        self.path = path
        super().__init__(f"'{path}' is {what}, not a regular file; name a file instead.")


class FileTooLarge(WorkspaceError):
    def __init__(self, path: str, size: int, limit: int) -> None:
        self.path, self.size, self.limit = path, size, limit
        super().__init__(
            f"'{path}' is {human_size(size)}, over the {human_size(limit)} limit for reading it "
            "as text; refer to it by path instead, or split it into smaller files."
        )


class BinaryFile(WorkspaceError):
    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"'{path}' is a binary file, not UTF-8 text; refer to it by path (for example as a "
            "generation input) instead of reading it."
        )


class WorkspacePermissionError(WorkspaceError):
    def __init__(self, path: str, action: str, reason: str = "permission denied") -> None:
        self.path = path
        super().__init__(
            f"Cannot {action} '{path}': {reason}; check the permissions of the file and its "
            "folder, or choose another location."
        )


class WorkspaceIOError(WorkspaceError):
    """Any other operating-system failure, explained."""

    def __init__(self, path: str, action: str, reason: str, hint: str) -> None:
        self.path = path
        super().__init__(f"Cannot {action} '{path}': {reason}; {hint}.")


class EditError(WorkspaceError):
    """An exact-snippet edit could not be applied; no edit was applied."""


class SnippetNotFound(EditError):
    def __init__(self, edit_no: int, old: str) -> None:
        self.edit_no = edit_no
        super().__init__(
            f"Edit {edit_no}: the text to replace ('{_preview(old)}') was not found, so no edit "
            "was applied; re-read the file and copy the text exactly, including spaces and "
            "line breaks."
        )


class SnippetNotUnique(EditError):
    def __init__(self, edit_no: int, old: str, count: int) -> None:
        self.edit_no, self.count = edit_no, count
        super().__init__(
            f"Edit {edit_no}: the text to replace ('{_preview(old)}') occurs {count} times, so "
            "no edit was applied; include more surrounding text so it matches exactly once."
        )


class EditsOverlap(EditError):
    def __init__(self, first: int, second: int) -> None:
        self.edits = (first, second)
        super().__init__(
            f"Edits {first} and {second} change overlapping text, so no edit was applied; "
            "combine them into one edit."
        )


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
