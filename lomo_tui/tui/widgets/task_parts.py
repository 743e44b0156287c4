"""Parts of the task view: checklist, artifacts (with thumbnails), inbox (withdraw / replace), timeline."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...language import detect_language
from ...views import Artifact, ChecklistItem, InboxItem, TimelineEntry
from .. import keys
from ..strings import has, text
from .composer import redirect_letters

TIMELINE_ICON = {"step": "◆", "tool": "⚙", "job": "◔", "gate": "⚑", "event": "·"}


CHECK_MARK = {"done": "[$success]☑[/]", "skipped": "[$text-muted]⊘[/]", "active": "[$primary]▸[/]"}


def checklist_content(items: tuple[ChecklistItem, ...], lang: str = "en") -> Content:
    if not items:
        return Content.from_markup("[$text-muted]$t[/]", t=text("task.no_checklist", lang))
    lines = []
    for item in items:
        state = item.status.lower()
        mark = CHECK_MARK.get(state, "[$text-muted]☐[/]")
        note = " [$warning]$ok[/]" if item.needs_confirmation and not item.done else ""
        if item.why:  # re-opened, or to be checked again after a file it was checked on changed
            note += " [$warning]($why)[/]"
        style = "$text-muted" if state == "skipped" else ("b" if state == "active" else "")
        title = f"[{style}]$title[/]" if style else "$title"
        lines.append(Content.from_markup(f"{mark} {title}{note}", title=item.title, why=item.why,
                                         ok=text("task.needs_ok", lang)))
    return Content("\n").join(lines)


def kind_word(kind: str, lang: str = "en") -> str:
    """A file's kind ("image", "3d") in LANG; a kind the catalogue does not know as it is."""
    return text("files.kind_" + kind, lang) if has("files.kind_" + kind) else kind


class ArtifactRow(Horizontal, can_focus=True):
    DEFAULT_CSS = """
    ArtifactRow { height: auto; padding: 0 1; }
    ArtifactRow:focus { background: $primary 10%; }
    ArtifactRow .thumb { width: 16; height: 6; margin-right: 1; }
    ArtifactRow .name { width: 1fr; height: auto; }
    """
    BINDINGS = keys.bindings("artifact.preview", "artifact.edit")

    class Chosen(Message):
        def __init__(self, path: Path, edit: bool) -> None:
            super().__init__()
            self.path = path
            self.edit = edit

    def __init__(self, artifact: Artifact, root: Path, lang: str = "en") -> None:
        super().__init__()
        self.artifact = artifact
        self.root = root
        self.lang = lang  # the task's: its kind word speaks it

    def compose(self) -> ComposeResult:
        a = self.artifact
        yield Static(Content.from_markup("[@click=preview]$name[/] [$text-muted]v$v · $kind[/]", name=a.path,
                                         v=str(a.version), kind=kind_word(a.kind, self.lang)), classes="name")

    async def on_mount(self) -> None:
        if self.artifact.is_image:
            self.run_worker(self._thumb(), exit_on_error=False)

    async def _thumb(self) -> None:
        from ..images import load_picture, widget_class

        cls = await widget_class(getattr(self.app, "image_mode", "auto"))
        if cls is None:
            return
        picture = await load_picture(self.root / self.artifact.path, (256, 192))
        if picture is not None and self.is_mounted:
            await self.mount(cls(picture, classes="thumb"), before=0)

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)

    def action_preview(self) -> None:
        self.post_message(self.Chosen(self.root / self.artifact.path, False))

    def action_edit(self) -> None:
        self.post_message(self.Chosen(self.root / self.artifact.path, True))


class ArtifactList(Vertical):
    DEFAULT_CSS = "ArtifactList { height: auto; }"

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.shown: tuple[Artifact, ...] | None = None

    async def show(self, artifacts: tuple[Artifact, ...], lang: str = "en") -> None:
        if artifacts == self.shown:
            return
        self.shown = artifacts
        await self.remove_children()
        if not artifacts:
            await self.mount(Static(Content.from_markup("[$text-muted]$t[/]", t=text("task.nothing_made", lang))))
            return
        await self.mount_all([ArtifactRow(a, self.root, lang) for a in artifacts[:12]])


class InboxList(OptionList):
    """The task's inbox, oldest first. w withdraws, e replaces a message the task has not read yet (B2)."""

    BINDINGS = keys.bindings("inbox.withdraw", "inbox.replace")

    class Change(Message):
        def __init__(self, item: InboxItem, replace: bool) -> None:
            super().__init__()
            self.item = item
            self.replace = replace

    def __init__(self, clock: Callable[[float], str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock
        self.items: dict[str, InboxItem] = {}

    def show(self, items: tuple[InboxItem, ...]) -> None:
        if tuple(self.items.values()) == items:
            return
        highlighted = self.highlighted
        self.items = {i.id: i for i in items}
        self.clear_options()
        for item in items:
            style = "$warning" if item.can_change else "$text-muted"
            prompt = Content.from_markup(f"$text\n  [{style}]$time · $label[/]", text=item.text,
                                         time=self.clock(item.sent_at), label=item.label)
            self.add_option(Option(prompt, id=item.id, disabled=False))
        if items:
            pending = [n for n, i in enumerate(items) if i.can_change]
            self.highlighted = min(highlighted, len(items) - 1) if highlighted is not None else (
                pending[0] if pending else len(items) - 1)

    def _current(self) -> InboxItem | None:
        if self.highlighted is None or not self.option_count:
            return None
        return self.items.get(self.get_option_at_index(self.highlighted).id or "")

    def _change(self, replace: bool) -> None:
        item = self._current()
        if item is None:
            return
        if not item.can_change:
            lang = detect_language(item.text)
            self.app.notify(text("inbox.already", lang, label=item.label_in(lang).split(" (")[0].split("（")[0]),
                            severity="warning")
            return
        self.post_message(self.Change(item, replace))

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)

    def action_withdraw(self) -> None:
        self._change(False)

    def action_replace(self) -> None:
        self._change(True)


class TimelineList(OptionList):
    """The ledger's story of the task: steps, tool calls, jobs, gates, lifecycle events. Virtual list."""

    def __init__(self, clock: Callable[[float], str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock
        self.entries: tuple[TimelineEntry, ...] = ()

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)

    def show(self, entries: tuple[TimelineEntry, ...]) -> None:
        if entries == self.entries:
            return
        follow = self.highlighted is None or self.highlighted >= self.option_count - 1
        self.entries = entries
        self.clear_options()
        style = {"failed": "$error", "outcome_unknown": "$warning", "rejected": "$error"}
        self.add_options([Option(Content.from_markup(
            f"[$text-muted]$t[/] {TIMELINE_ICON.get(e.kind, '·')} [{style.get(e.status, '$foreground')}]$text[/]",
            t=self.clock(e.at), text=e.text)) for e in entries])
        if entries and follow:
            self.highlighted = len(entries) - 1
