"""The workspace tree (K4): the real folder, with version badges and "changed by you" marks from the
read model. It follows the runtime's file watcher through `object_changed` notices (no polling)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import DirectoryTree
from textual.widgets._directory_tree import DirEntry
from textual.widgets._tree import TreeNode

from ...views import FileMark
from ...workspace.paths import is_ignored
from .. import keys
from ..fmt import distinct_names
from .composer import redirect_letters


class WorkspaceTree(DirectoryTree):
    DEFAULT_CSS = """
    WorkspaceTree { background: $surface; }
    WorkspaceTree > .workspace-tree--version { color: $secondary; }
    WorkspaceTree > .workspace-tree--changed { color: $warning; text-style: bold; }
    WorkspaceTree > .workspace-tree--notice { color: $accent; }
    """
    COMPONENT_CLASSES = DirectoryTree.COMPONENT_CLASSES | {
        "workspace-tree--version", "workspace-tree--changed", "workspace-tree--notice"}
    BINDINGS = keys.bindings("tree.edit", "tree.preview")

    class Edit(Message):
        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    class Preview(Message):
        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    def __init__(self, path: str | Path, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.root_path = Path(path)
        self.marks: dict[str, FileMark] = {}

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root_path.resolve()).as_posix()
        except ValueError:
            return path.name

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return sorted((p for p in paths if not is_ignored(self.rel(p))),
                      key=lambda p: (not self._safe_is_dir(p), p.name.lower()))

    def files_beside(self, path: Path) -> list[Path]:
        """The files in PATH's folder, in the tree's order (what a preview steps through)."""
        try:
            return [p for p in self.filter_paths(path.parent.iterdir()) if p.is_file()]
        except OSError:
            return [path]

    def set_marks(self, marks: dict[str, FileMark]) -> None:
        if marks == self.marks:
            return
        self.marks = marks
        self._clear_line_cache()
        self.refresh()

    def render_label(self, node: TreeNode[DirEntry], base_style: Style, style: Style) -> Text:
        label = super().render_label(node, base_style, style)
        if node.data is None or node._allow_expand or not self.is_mounted:
            return label
        mark = self.marks.get(self.rel(node.data.path))
        badges = (len(f" v{mark.version}") + (6 if mark.changed_by_you else 0) + (8 if mark.stale else 0)
                  + (len(f" △{mark.notices}") if mark.notices else 0)) if mark else 0
        label = self._distinct(node, label, badges)
        if mark is None:
            return label
        label.append(f" v{mark.version}", self.get_component_rich_style("workspace-tree--version", partial=True))
        if mark.changed_by_you:
            label.append(" ✎ you", self.get_component_rich_style("workspace-tree--changed", partial=True))
        if mark.stale:
            label.append(" ⟳ stale", self.get_component_rich_style("workspace-tree--changed", partial=True))
        if mark.notices:
            label.append(f" △{mark.notices}", self.get_component_rich_style("workspace-tree--notice", partial=True))
        return label

    def _distinct(self, node: TreeNode[DirEntry], label: Text, badges: int) -> Text:
        """Shorten a long file name so it stays told apart from its siblings (the shared part elided)."""
        name = node.data.path.name if node.data is not None else ""
        depth, up = 0, node.parent
        while up is not None:
            depth, up = depth + 1, up.parent
        room = self.scrollable_content_region.width - self.guide_depth * depth - 3 - badges - 1
        if room < 8 or len(name) <= room or not label.plain.endswith(name) or node.parent is None:
            return label
        siblings = [c.data.path.name for c in node.parent.children if c.data is not None and not c._allow_expand]
        if name not in siblings:
            return label
        short = distinct_names(siblings, room)[siblings.index(name)]
        head = label.plain[: len(label.plain) - len(name)]
        name_style = label.spans[-1].style if label.spans else ""
        out = Text(head, style=label.style)
        out.append(short, name_style)
        return out

    def label_text(self, rel: str) -> str | None:
        """The rendered label of the node for REL (for tests and the tmux check), None if not shown."""
        for line in range(self.last_line + 1):
            node = self.get_node_at_line(line)
            if node is not None and node.data is not None and self.rel(node.data.path) == rel:
                return self.render_label(node, Style(), Style()).plain
        return None

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)

    def _selected_path(self) -> Path | None:
        node = self.cursor_node
        if node is None or node.data is None or node._allow_expand:
            return None
        return node.data.path

    def action_edit(self) -> None:
        path = self._selected_path()
        if path is not None:
            self.post_message(self.Edit(path))

    def action_preview(self) -> None:
        node = self.cursor_node
        if node is not None and node._allow_expand:
            node.toggle()  # on a folder, space keeps its usual meaning
            return
        path = self._selected_path()
        if path is not None:
            self.post_message(self.Preview(path))
