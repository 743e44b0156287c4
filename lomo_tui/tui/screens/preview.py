"""Preview of a workspace file (K4): pictures in the terminal, Markdown rendered, flows as a node
tree, other text read-only (selectable). `e` opens the file in $EDITOR."""
from __future__ import annotations

import asyncio
import struct
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import keys
from ..strings import text as say
from ..widgets.footer import KeyFooter

MAX_TEXT = 400_000


def _read(path: Path) -> tuple[str, str | None]:
    """(kind, text) — text is None for binary files."""
    from ...workspace.files import is_text, kind_for

    kind = kind_for(path)
    if kind in ("image", "video", "3d"):
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
    BINDINGS = keys.bindings("preview.edit", "preview.next", "preview.previous", "preview.play", "preview.close")

    def __init__(self, path: Path, siblings: list[Path] | None = None) -> None:
        super().__init__()
        self.path = path
        self.results = [p for p in (siblings or []) if p.is_file()] or [path]
        if path not in self.results:
            self.results.insert(0, path)
        self.frames: list[Any] = []
        self.frame = 0
        self.playing = False
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title(), id="preview-title", markup=False)
            yield VerticalScroll(id="preview-body")
            yield KeyFooter()

    def _title(self) -> str:
        app: Any = self.app
        try:
            title = self.path.relative_to(app.workspace_root).as_posix()
        except ValueError:
            title = self.path.name
        if len(self.results) > 1:
            title += "   " + say("preview.step", n=self.results.index(self.path) + 1, total=len(self.results))
        return title

    # ---- stepping through a task's results -----------------------------------------------------------
    async def action_step(self, by: int) -> None:
        if len(self.results) < 2:
            self.app.notify(say("preview.nothing_to_step"), severity="information")
            return
        self.path = self.results[(self.results.index(self.path) + by) % len(self.results)]
        self.query_one("#preview-title", Static).update(self._title())
        await self.show()

    def action_play(self) -> None:
        if len(self.frames) > 1:
            self.playing = not self.playing

    async def on_mount(self) -> None:
        await self.show()

    async def show(self) -> None:
        body = self.query_one("#preview-body")
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.frames, self.frame, self.playing = [], 0, False
        await body.remove_children()
        try:
            kind, text = await asyncio.to_thread(_read, self.path)
        except Exception as exc:  # noqa: BLE001 — a file that cannot be read is a sentence, not a crash
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            await body.mount(Static(say("preview.unreadable", why=why), markup=False))
            return
        if kind == "3d" and self.path.suffix.lower() in (".gltf", ".glb"):
            await self._model(body)
        elif kind in ("image", "video"):
            await self._picture(body)
        elif text is None:
            size = self.path.stat().st_size if self.path.exists() else 0
            await body.mount(Static(say("preview.binary", kind=kind, size=f"{size:,}"), markup=False))
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
        clip = await asyncio.to_thread(clip_frames, self.path)
        if clip is not None:  # an animated GIF or WebP: it plays (Space pauses); its frames and length are said
            frames, seconds, delay = clip
            self.frames = frames
            info = Static(say("preview.clip", frames=len(frames), seconds=f"{seconds:.2f}", width=frames[0].width,
                              height=frames[0].height, off="" if cls is not None else say("preview.pictures_off")),
                          markup=False, id="preview-info")
            if cls is None:
                await body.mount(info)
                return
            widget = cls(frames[0], id="preview-picture")
            await body.mount(info, widget)
            self.playing = True
            self._timer = self.set_interval(max(delay, 0.1), self._next_frame, name="clip")
            return
        picture = await load_picture(self.path, (1600, 1600)) if cls is not None else None
        if picture is None:
            await body.mount(Static(say("preview.no_picture"), markup=False))
            return
        await body.mount(Static(say("preview.scaled", width=picture.width, height=picture.height), markup=False),
                         cls(picture, id="preview-picture"))

    def _next_frame(self) -> None:
        if not self.playing or len(self.frames) < 2:
            return
        self.frame = (self.frame + 1) % len(self.frames)
        for widget in self.query("#preview-picture"):
            widget.image = self.frames[self.frame]  # type: ignore[attr-defined]

    async def _model(self, body: Any) -> None:
        """A glTF model: a rendered still (never its JSON and base64)."""
        from ..images import widget_class
        from ..meshview import MeshError, render_still

        app: Any = self.app
        try:
            still, count = await asyncio.to_thread(render_still, self.path)
        except (MeshError, OSError, ValueError, KeyError, IndexError, struct.error) as exc:
            why = (exc.said() if isinstance(exc, MeshError)
                   else say("preview.mesh_unreadable", error=exc.strerror or exc) if isinstance(exc, OSError)
                   else say("preview.mesh_broken"))
            await body.mount(Static(say("preview.no_model", error=why), markup=False))
            return
        cls = await widget_class(app.image_mode)
        info = Static(say("preview.model", count=f"{count:,}"), markup=False, id="preview-info")
        await body.mount(info, *([cls(still, id="preview-picture")] if cls is not None else []))

    async def _flow(self, body: Any, text: str) -> None:
        from textual.widgets import Tree

        from ...workspace.errors import FlowError
        from ...workspace.flows import parse_flow, summarise

        try:
            flow = parse_flow(text)
        except FlowError as exc:
            await body.mount(Static(say("preview.bad_flow", error=exc), markup=False))
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


MAX_FRAMES = 240


def clip_frames(path: Path, max_px: tuple[int, int] = (960, 720)) -> tuple[list[Any], float, float] | None:
    """(frames, seconds, seconds per frame) of an animated picture; None for a still one or another file."""
    try:
        from PIL import Image as PILImage

        with PILImage.open(path) as img:
            count = getattr(img, "n_frames", 1)
            if count < 2:
                return None
            frames, total = [], 0
            for index in range(min(count, MAX_FRAMES)):
                img.seek(index)
                frame = img.convert("RGB")  # loads the frame: a WebP says its duration only then
                total += int(img.info.get("duration", 100) or 100)
                frame.thumbnail(max_px)
                frames.append(frame)
    except Exception:  # noqa: BLE001 — not a picture Pillow can read: a video (MP4) or shown some other way
        return video_frames(path, max_px)
    return frames, total / 1000, total / 1000 / len(frames)


def video_frames(path: Path, max_px: tuple[int, int]) -> tuple[list[Any], float, float] | None:
    """(frames, seconds, seconds per frame) of a video the studio reads (MP4 through PyAV); None otherwise."""
    from ...studio.video import read_clip

    try:
        clip = read_clip(path)
    except (OSError, ValueError):
        return None
    frames = clip.frames[:MAX_FRAMES]
    for frame in frames:
        frame.thumbnail(max_px)
    seconds = sum(clip.durations)
    return (frames, seconds, seconds / len(clip.frames)) if len(frames) > 1 else None
