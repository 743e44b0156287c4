"""The memory view (issue #14 §6, F1–F4): what Lomo remembers, each memory with its sources (the creator's own
words, where and when), its scope, stated or inferred, and its version. On the highlighted memory: e edits it
(the creator's words make a new version), c confirms it, f forgets it — after a dialog that lists what goes.

Everything goes through `lomo_tui.memory` (the same doors as `lomo memory …`). Letters that mean nothing here
go to the input at the bottom, which talks to Main ("I usually like muted colours" is how a memory begins).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...errors import LomoError
from ...memory.actions import CONFIRMED_TEXT, MemoryEntry, Source
from .. import keys
from ..actions import friendly
from ...language import template
from ..strings import current_language, has, text
from ..widgets.composer import Composer, TypesIntoComposer, redirect_letters
from ..widgets.header import HeaderBar
from ..widgets.footer import KeyFooter

NARROW = 100


def _word(group: str, value: str) -> str:
    """A role, kind or scope in the creator's language (`tui_memory_words.<group>_<value>`), else as stored."""
    return text(f"memory_words.{group}_{value}") if has(f"memory_words.{group}_{value}") else value


def status_word(status: str) -> str:
    """A version's status ("superseded") in the creator's language (`memory_words.status_<status>`, as
    `lomo memory …` words it), else as stored."""
    try:
        return template(f"memory_words.status_{status}", current_language())
    except KeyError:
        return status


def scope_words(entry: MemoryEntry) -> str:
    if entry.scope == "creator":
        return text("memory.scope_creator")
    title = text("context.main") if entry.scope_title is None else entry.scope_title  # None: the main thread
    return text("memory.scope_task", scope=_word("scope", entry.scope), title=title)


def said_words(entry: MemoryEntry) -> str:
    return text("memory.stated") if entry.stated else text("memory.inferred")


def entry_prompt(entry: MemoryEntry) -> Content:
    """Two lines in the list: the memory, then its scope, who said it, its version and how many sources."""
    count = len(entry.sources.get(entry.version_id, []))
    first = Content.from_markup("[b]$kind[/] $body", kind=_word("kind", entry.kind).ljust(10), body=entry.text)
    facts = [scope_words(entry), said_words(entry), f"v{entry.version}",
             text("memory_words.sources_one" if count == 1 else "memory_words.sources", n=count)]
    return Content("\n").join([first, Content.from_markup("[$text-muted]$pad$f[/]", pad=" " * 11,
                                                           f=" · ".join(facts))])


def source_line(source: Source, clock: Any) -> Content:
    when = clock(source.at) if source.at else ""
    role = _word("role", source.role)
    if source.in_view and source.text == CONFIRMED_TEXT:
        words, where = Content.from_markup("[i]$w[/]", w=text("memory.confirmed_here")), ""
    else:
        words = Content.from_markup("“$w”", w=source.text) if source.text else Content(text("memory.no_text"))
        where = text("memory.edited_here") if source.in_view else text("context.main") if source.main \
            else source.task_title
    meta = " · ".join(p for p in (where, when) if p)
    gone = "" if source.eligible else " " + text("memory.revoked")
    return Content.from_markup("  [b]$role[/] ", role=role.ljust(9)) + words + Content.from_markup(
        "\n             [$text-muted]$meta$gone[/]", meta=meta, gone=gone)


def detail_content(entry: MemoryEntry | None, clock: Any) -> Content:
    if entry is None:
        return Content.from_markup("[$text-muted]$t[/]", t=text("memory.empty"))
    earlier = len(entry.versions) - 1
    facts = [_word("kind", entry.kind), scope_words(entry), said_words(entry), text("memory.version", n=entry.version)
             + (text("memory.earlier", n=earlier) if earlier else "")]
    lines = [Content.from_markup("[b]$t[/]", t=entry.text),
             Content.from_markup("[$text-muted]$f[/]", f=" · ".join(facts)), Content(""),
             Content.from_markup("[b $primary]$t[/]", t=text("memory.sources"))]
    lines += [source_line(src, clock) for src in entry.sources.get(entry.version_id, [])] or [
        Content.from_markup("  [$text-muted]$t[/]", t=text("memory.no_sources"))]
    older = [v for v in reversed(entry.versions) if v["version_id"] != entry.version_id]
    if older:
        lines += [Content(""), Content.from_markup("[b $primary]$t[/]", t=text("memory.versions"))]
        for v in older:
            body = v["text"] or text("memory.forgotten_version")
            lines.append(Content.from_markup("  [b]v$n[/] [$text-muted]$status[/] $body", n=str(v["version"]),
                                             status=status_word(v["status"]), body=body))
    lines += [Content(""), Content.from_markup("[$text-muted]$t[/]", t=text("memory.keys_hint"))]
    return Content("\n").join(lines)


class MemoryList(OptionList):
    """The memories, newest change first. Letters without a key here go to the input."""

    BINDINGS = keys.bindings("memory.edit", "memory.confirm", "memory.forget")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries: dict[str, MemoryEntry] = {}

    def show(self, entries: list[MemoryEntry]) -> None:
        if list(self.entries) == [e.id for e in entries] and all(self.entries[e.id] == e for e in entries):
            return
        current = self.highlighted_entry
        index = self.highlighted or 0
        self.entries = {e.id: e for e in entries}
        self.clear_options()
        self.add_options([Option(entry_prompt(e), id=e.id) for e in entries])
        if entries:
            ids = [e.id for e in entries]
            self.highlighted = ids.index(current.id) if current is not None and current.id in ids else min(
                index, len(entries) - 1)

    @property
    def highlighted_entry(self) -> MemoryEntry | None:
        if self.highlighted is None or not self.option_count:
            return None
        return self.entries.get(self.get_option_at_index(self.highlighted).id or "")

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)

    def action_edit(self) -> None:
        self.screen.ask_edit()  # type: ignore[attr-defined]

    async def action_confirm(self) -> None:
        await self.screen.confirm_highlighted()  # type: ignore[attr-defined]

    async def action_forget(self) -> None:
        await self.screen.ask_forget()  # type: ignore[attr-defined]


class MemoryScreen(TypesIntoComposer, Screen):
    CSS_PATH = Path(__file__).with_name("memory.tcss")
    BINDINGS = keys.bindings("memory.back")
    AUTO_FOCUS = "#memory-list"

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[MemoryEntry] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        app: Any = self.app
        yield HeaderBar.of(app)
        yield Static(id="memory-title")
        with Horizontal(id="memory-body"):
            yield MemoryList(id="memory-list")
            with VerticalScroll(id="memory-detail-box"):
                yield Static(id="memory-detail")
        yield Composer(text("memory.placeholder"), id="composer", away_hint=text("memory.away"))
        yield KeyFooter()

    def on_resize(self, event: Any) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    async def on_mount(self) -> None:
        app: Any = self.app
        self.query_one(HeaderBar).follow(app)
        await self.reload()

    async def reload(self) -> None:
        app: Any = self.app
        if not app.session.opened:
            self.show([])
            return
        from ...memory.actions import memory_entries

        async with app.session.db.read() as conn:
            entries = await memory_entries(conn)
        self.show(entries)
        self.loaded = True

    def show(self, entries: list[MemoryEntry]) -> None:
        self.entries = entries
        listing = self.query_one(MemoryList)
        listing.show(entries)
        listing.display = bool(entries)
        count = len(entries)
        self.query_one("#memory-title", Static).update(Content.from_markup(
            "[b $primary]$t[/]  [$text-muted]$n[/]", t=text("memory.title"),
            n=text("memory.count", n=count) if count else text("memory.none")))
        self.show_detail()

    def show_detail(self) -> None:
        entry = self.query_one(MemoryList).highlighted_entry
        self.query_one("#memory-detail", Static).update(detail_content(entry, self.app.clock))  # type: ignore

    @on(OptionList.OptionHighlighted, "#memory-list")
    def highlighted(self) -> None:
        self.show_detail()

    async def apply_snapshot(self, snap: Any, *, tasks: set[str | None], everything: bool) -> None:
        self.query_one(HeaderBar).header = snap.header
        await self.reload()

    async def on_screen_resume(self) -> None:
        await self.reload()

    def _chosen(self) -> MemoryEntry | None:
        entry = self.query_one(MemoryList).highlighted_entry
        if entry is None:
            self.app.notify(text("memory.nothing"), severity="information")
        return entry

    def _need_runtime(self) -> None:
        self.app._need_runtime()  # type: ignore[attr-defined]

    # ---- edit ------------------------------------------------------------------------------------------
    def ask_edit(self) -> None:
        entry = self._chosen()
        if entry is None:
            return
        from .prompt import PromptScreen

        async def edited(value: str | None) -> None:
            if value:
                await self.do_edit(entry, value)

        self.app.push_screen(PromptScreen(text("memory.edit_title"), text("memory.edit_hint", n=entry.version + 1),
                                          entry.text), edited)

    @friendly("edit_memory")
    async def do_edit(self, entry: MemoryEntry, value: str) -> None:
        self._need_runtime()
        from ...memory.actions import edit_memory

        done = await edit_memory(self.app.session.db, entry.id, value)  # type: ignore[attr-defined]
        self.app.notify(text("memory.unchanged") if done["unchanged"] else text("memory.edited", n=done["version"]),
                        severity="information")
        await self.reload()

    # ---- confirm ----------------------------------------------------------------------------------------
    async def confirm_highlighted(self) -> None:
        entry = self._chosen()
        if entry is not None:
            await self.do_confirm(entry)

    @friendly("confirm_memory")
    async def do_confirm(self, entry: MemoryEntry) -> None:
        self._need_runtime()
        from ...memory.actions import confirm_memory

        await confirm_memory(self.app.session.db, entry.id)  # type: ignore[attr-defined]
        self.app.notify(text("memory.confirmed", n=entry.version), severity="information")
        await self.reload()

    # ---- forget ------------------------------------------------------------------------------------------
    async def ask_forget(self) -> None:
        entry = self._chosen()
        if entry is None:
            return
        await self.preview_forget(entry)

    @friendly("forget_memory")
    async def preview_forget(self, entry: MemoryEntry) -> None:
        self._need_runtime()
        from ...memory.actions import forget_preview

        app: Any = self.app
        async with app.session.db.read() as conn:
            preview = await forget_preview(conn, entry.id)
        await app.confirm(text("memory.forget_q"), forget_detail(preview), text("memory.forget_verb"),
                          lambda: self.do_forget(entry))

    @friendly("forget_memory")
    async def do_forget(self, entry: MemoryEntry) -> None:
        self._need_runtime()
        from ...memory.forget import forget

        result = await forget(self.app.session.db, memory_ids=[entry.id])  # type: ignore[attr-defined]
        if entry.id not in result["forgotten"]:
            raise LomoError(text("notify.not_forgotten"))
        rebuilt = [m for m in result["rebuilt"] if m != entry.id]
        self.app.notify(text("memory.forgotten") + (" " + text("memory.rebuilt", n=len(rebuilt)) if rebuilt else ""),
                        severity="information")
        await self.reload()

    # ---- the input: talk to Main ----------------------------------------------------------------------------
    @on(Composer.Submitted)
    async def send(self, event: Composer.Submitted) -> None:
        if await self.app.submit(event.text, None):  # type: ignore[attr-defined]
            event.composer.accept()
            self.app.notify(text("memory.sent"), severity="information")

    def action_back(self) -> None:
        self.app.pop_screen()


def forget_detail(preview: dict[str, Any]) -> str:
    """The dialog's list of what goes (every version's words), what changes with it, and what stays."""
    lines = [text("memory.forget_goes")]
    lines += [text("memory_version.forget_line", n=number, status=status_word(status), body=body)
              for number, status, body in preview["versions"]]
    also = []
    if preview["profile"]:
        also.append(text("memory.forget_profile"))
    if preview["summaries"]:
        also.append(text("memory.forget_summaries", n=preview["summaries"]))
    if preview["contexts"]:
        also.append(text("memory.forget_contexts", n=preview["contexts"]))
    lines += [f"  · {a}" for a in also]
    lines.append(text("memory.forget_stays"))
    return "\n".join(lines)
