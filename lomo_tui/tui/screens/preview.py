"""Preview of a workspace file (K4): pictures in the terminal, Markdown rendered, flows as a node
tree, other text read-only (selectable). `e` opens the file in $EDITOR."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from .. import keys

MAX_TEXT = 400_000


def _read(path: Path) -> tuple[str, str | None]:
    """(kind, text) — text is None for binary files."""
    from ...workspace.files import is_text, kind_for

    kind = kind_for(path)
    if kind in ("image", "video"):
        return kind, None
    if not is_text(path):
        return kind, None
    with open(path, "rb") as fh:
        data = fh.read(MAX_TEXT + 1)
    text = data[:MAX_TEXT].decode("utf-8", errors="replace")
    if len(data) > MAX_TEXT:
        text += "\n… (truncated; open it in your editor to see everything)"
    return kind, text


class PreviewScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    PreviewScreen { align: center middle; }
    PreviewScreen > Vertical { width: 92%; height: 90%; background: $surface; border: tall $primary; }
    PreviewScreen #preview-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    PreviewScreen #preview-body { height: 1fr; padding: 0 1; }
    PreviewScreen #preview-picture { width: auto; height: 1fr; }
    PreviewScreen TextArea { height: 1fr; border: none; }
    """
    BINDINGS = keys.bindings("preview.edit", "preview.close")

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        app: Any = self.app
        try:
            title = self.path.relative_to(app.workspace_root).as_posix()
        except ValueError:
            title = self.path.name
        with Vertical():
            yield Static(title, id="preview-title", markup=False)
            yield VerticalScroll(id="preview-body")
            yield Footer()

    async def on_mount(self) -> None:
        body = self.query_one("#preview-body")
        try:
            kind, text = await asyncio.to_thread(_read, self.path)
        except OSError as exc:
            await body.mount(Static(f"Cannot read this file: {exc.strerror}. It may have been moved.", markup=False))
            return
        if kind in ("image", "video"):
            await self._picture(body)
        elif text is None:
            size = self.path.stat().st_size if self.path.exists() else 0
            await body.mount(Static(f"A {kind} file of {size:,} bytes. Press e to open it in your editor.",
                                    markup=False))
        elif kind == "flow":
            await self._flow(body, text)
        elif self.path.suffix.lower() in (".md", ".markdown"):
            from textual.widgets import Markdown

            await body.mount(Markdown(text))
        else:
            from textual.widgets import TextArea

            await body.mount(TextArea(text, read_only=True, soft_wrap=True, show_line_numbers=True))

    async def _picture(self, body: Any) -> None:
        from ..images import load_picture, widget_class

        app: Any = self.app
        cls = await widget_class(app.image_mode)
        picture = await load_picture(self.path, (1600, 1600)) if cls is not None else None
        if picture is None:
            await body.mount(Static("This picture cannot be shown here; press e to open it in your editor.",
                                    markup=False))
            return
        await body.mount(Static(f"{picture.width}×{picture.height} (scaled to fit)", markup=False),
                         cls(picture, id="preview-picture"))

    async def _flow(self, body: Any, text: str) -> None:
        from textual.widgets import Tree

        from ...workspace.errors import FlowError
        from ...workspace.flows import parse_flow, summarise

        try:
            flow = parse_flow(text)
        except FlowError as exc:
            await body.mount(Static(f"This flow does not parse: {exc}", markup=False))
            return
        from rich.text import Text

        tree: Tree[str] = Tree(Text(summarise(flow)))
        incoming: dict[str, list[str]] = {}
        for edge in flow.edges:
            incoming.setdefault(edge.target_node, []).append(str(edge))
        for node in flow.nodes:
            branch = tree.root.add(Text(f"{node.label or node.id}  ({node.type})"), expand=True)
            for key, value in node.params.items():
                branch.add_leaf(Text(f"{key} = {value!r}"[:200]))
            for edge in incoming.get(node.id, []):
                branch.add_leaf(Text(f"← {edge}"))
        tree.root.expand()
        await body.mount(tree)

    def action_edit(self) -> None:
        self.app.edit_file(self.path)  # type: ignore[attr-defined]
