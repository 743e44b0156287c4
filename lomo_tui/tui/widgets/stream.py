"""A conversation stream: messages, undelivered inbox messages, inline task cards, a live reply.

Long histories stay fast by windowing: only the newest page (120 entries) is mounted, older pages
load on demand ("↑ N earlier", Ctrl+U), and at most MAX_MOUNTED entries stay mounted — the oldest are
pruned as new ones arrive. Rows are plain `Static`s with styled `Content` (about 1 ms each, and
selectable); the database keeps everything.
"""
from __future__ import annotations

from typing import Any, Callable

from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...views import Card, StreamItem, StreamPage
from .. import keys
from ..fmt import message_content
from ..linebreak import Para, Paragraphs
from ..strings import lines, text
from .card import TaskCard
from .composer import redirect_letters

PAGE = 120
MAX_MOUNTED = 400
COLLAPSED_LINES = 6  # a message longer than twice this shows its first lines and "show all"
COLLAPSED_CHARS = 600


class MessageRow(Static):
    DEFAULT_CSS = """
    MessageRow { height: auto; padding: 0 1; margin: 0 0 1 0; }
    MessageRow.-user { border-left: wide $primary; background: $primary 8%; }
    MessageRow.-assistant { border-left: wide $secondary; }
    MessageRow.-pending { border-left: wide $panel; color: $text-muted; }
    MessageRow.-live { border-left: wide $secondary; color: $text-muted; }
    MessageRow.-queued { border-left: wide $warning; }
    MessageRow.-error { border-left: wide $error; background: $error 8%; }
    MessageRow.-routed { margin: 0 0 1 2; padding: 0 1; }
    MessageRow:focus { background: $primary 15%; }
    """

    def __init__(self, item: StreamItem, note: Callable[[], str] | None = None, **kwargs: Any) -> None:
        self.item = item
        self.note = note  # a "routed" row: an extra word about the task now (a job still running…)
        self.expanded = False
        super().__init__(self.content_for(item), classes=f"-{item.kind}", **kwargs)
        self.can_focus = self.collapsible or (item.kind == "error" and bool(item.detail))

    @property
    def collapsible(self) -> bool:
        return is_long(self.item.text)

    def content_for(self, item: StreamItem) -> Content:
        """The row's text; its own words as written, every label in the language of those words."""
        body = item.text
        lang = item.language
        more: Content | None = None
        if is_long(body) and not self.expanded:
            lines = body.splitlines()
            head = "\n".join(lines[:COLLAPSED_LINES])[:COLLAPSED_CHARS]
            body = head.rstrip() + " …"
            more = Content.from_markup("\n[@click=toggle]$all[/]",
                                       all=text("stream.show_all", lang, what=size_words(item.text, lang)))
        elif is_long(body):
            more = Content.from_markup("\n[@click=toggle]$less[/]", less=text("stream.show_less", lang))
        if item.kind == "routed":
            content = Content.from_markup("[$secondary]$sent[/]", sent=text("route.sent", lang, title=item.text))
            note = self.note() if self.note is not None else ""
            if note:
                content += Content.from_markup(" [$warning]· $note[/]", note=note)
            if item.status == "withdrawn":
                content += Content.from_markup(" [i $text-muted]· $w[/]", w=text("route.withdrawn", lang))
            else:
                content += Content.from_markup("  [@click=not_this][u]$n[/u][/]", n=text("route.not_this", lang))
            return content
        if item.kind == "error":
            content = Content.from_markup("[b $error]✗ $reason[/]\n[$text-muted]$todo[/]", reason=body or
                                          text("error.unknown", lang), todo=error_hint(body, lang))
            if item.detail:
                content += Content.from_markup("  [@click=retry]↻ $retry[/] [$text-muted]$enter[/]",
                                               retry=text("error.retry", lang), enter=text("stream.or_enter", lang))
        elif item.kind == "pending":
            content = Content.from_markup("$text [i $text-muted]($note)[/]", text=body,
                                          note=text("stream.pending", lang))
            note = self.note() if self.note is not None else ""
            if note:  # B4: the running job is not changed by this message
                content += Content.from_markup("\n[$warning]△ $note[/]", note=note)
        elif item.kind == "failed":  # a message its turn could not answer; the error row below says why
            content = Content.from_markup("$text [i $error]($note)[/]", text=body,
                                          note=text("stream.not_answered", lang))
        elif item.kind == "queued":
            content = Content.from_markup("$text [i $warning]($note)[/]", text=body,
                                          note=text("composer.queued_row", lang))
        else:
            content = message_content(body)
        return content + more if more is not None else content

    def action_not_this(self) -> None:
        stream = next((a for a in self.ancestors if isinstance(a, StreamView)), None)
        if stream is not None:
            stream.post_message(StreamView.NotThisTask(stream, self.item.detail, self.item.task_id or ""))

    def action_retry(self) -> None:
        stream = next((a for a in self.ancestors if isinstance(a, StreamView)), None)
        if stream is not None and self.item.detail:
            stream.post_message(StreamView.Retry(stream, self.item.detail))

    def action_toggle(self) -> None:
        self.expanded = not self.expanded
        self.update(self.content_for(self.item))

    def key_enter(self) -> None:
        if self.item.kind == "error" and self.item.detail:
            self.action_retry()  # Enter on a failed step sends its words again
        elif self.collapsible:
            self.action_toggle()


def error_hint(reason: str, lang: str = "en") -> str:
    """What to do about a failed turn, from the words of its reason (data: the catalogue, [tui_error])."""
    low = reason.lower()
    for key, words in (("key", ("api key", "api_key", "401", "credentials")), ("rate", ("429", "rate limit")),
                       ("timeout", ("did not answer", "timed out", "timeout")),
                       ("long", ("too long", "context window"))):
        if any(w in low for w in words):
            return text(f"error.todo_{key}", lang)
    return text("error.todo", lang)


def is_long(body: str) -> bool:
    return body.count("\n") >= COLLAPSED_LINES * 2 or len(body) > COLLAPSED_CHARS * 2


def size_words(body: str, lang: str = "en") -> str:
    lines = body.count("\n") + 1
    if lines > 1:
        return text("stream.size_lines", lang, lines=f"{lines:,}", chars=f"{len(body):,}")
    return text("stream.size_chars", lang, chars=f"{len(body):,}")


class EarlierMarker(Static, can_focus=True):
    DEFAULT_CSS = """
    EarlierMarker { height: 1; color: $text-muted; text-align: center; margin-bottom: 1; }
    EarlierMarker:focus, EarlierMarker:hover { color: $primary; }
    """

    class Pressed(Message):
        pass

    def set_count(self, count: int) -> None:
        self.display = count > 0
        self.update(Content.from_markup("[@click=load]$t[/]", t=text("stream.earlier", count=f"{count:,}")))

    def action_load(self) -> None:
        self.post_message(self.Pressed())

    def key_enter(self) -> None:
        self.post_message(self.Pressed())


class Welcome(Widget):
    """The first screen, until the first message: what Lomo can do and a few requests to try.

    Its lines are broken where the terminal's width allows, between CJK characters as well as at spaces
    (`linebreak`), with each bullet's and example's lines hanging under its text."""

    DEFAULT_CSS = """
    Welcome { height: auto; padding: 1 2; margin: 1 0; border-left: wide $accent; }
    """

    class Example(Message):
        def __init__(self, request: str) -> None:
            super().__init__()
            self.request = request

    def render(self) -> Paragraphs:
        paras = [Para(text("welcome.title"), markup="[b $accent]$line[/]")]
        paras += [Para(c, prefix="  • ") for c in lines("welcome.can")]
        paras += [Para(""), Para(text("welcome.try"), markup="[b]$line[/]")]
        paras += [Para(e, prefix="  → ", markup=f"[@click=example({n})]$line[/]")
                  for n, e in enumerate(lines("welcome.examples"))]
        paras += [Para(""), Para(text("welcome.keys"), markup="[$text-muted]$line[/]", keep=" · ")]
        return Paragraphs(paras)

    def action_example(self, number: int) -> None:
        self.post_message(self.Example(lines("welcome.examples")[number]))


class StreamView(VerticalScroll):
    DEFAULT_CSS = """
    StreamView { padding: 0 1; }
    """
    BINDINGS = keys.bindings("stream.earlier")

    class NotThisTask(Message):
        """The creator says a routed follow-up went to the wrong task."""

        def __init__(self, stream: "StreamView", inbox_id: str, task_id: str) -> None:
            super().__init__()
            self.stream = stream
            self.inbox_id = inbox_id
            self.task_id = task_id

    class Retry(Message):
        """Send these words again (the creator pressed "retry" on a failed turn)."""

        def __init__(self, stream: "StreamView", words: str) -> None:
            super().__init__()
            self.stream = stream
            self.words = words

    class LoadEarlier(Message):
        def __init__(self, stream: "StreamView", before: int | None) -> None:
            super().__init__()
            self.stream = stream
            self.before = before

    def __init__(self, *, card_for: Callable[[str], Card | None] | None = None, welcome: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.welcome = welcome
        self.card_for = card_for or (lambda _id: None)
        self.keys: list[str] = []
        self.rows: dict[str, Widget] = {}
        self.earlier = 0
        self.oldest_id: int | None = None
        self.live: MessageRow | None = None
        self._live_text = ""
        self._queued: list[MessageRow] = []

    def compose(self):  # type: ignore[no-untyped-def]
        marker = EarlierMarker(id="earlier")
        marker.display = False
        yield marker
        if self.welcome:
            yield Welcome(id="welcome")

    def _show_welcome(self) -> None:
        for welcome in self.query(Welcome):
            welcome.display = not self.keys and not self._queued

    def on_mount(self) -> None:
        self.anchor()  # stay at the newest entry while content grows, until the creator scrolls up

    # ---- building rows -------------------------------------------------------------------------
    def _row(self, item: StreamItem) -> Widget | None:
        if item.kind == "card":
            card = self.card_for(item.task_id or "")
            return TaskCard(card) if card is not None else None
        if item.kind in ("routed", "pending"):
            return MessageRow(item, note=lambda: self._job_note(item.task_id, item.language))
        return MessageRow(item)

    def _job_note(self, task_id: str | None, lang: str = "en") -> str:
        from .card import RUNNING_JOB, running_job_note

        card = self.card_for(task_id or "")
        running = [j for j in card.jobs if j.status in RUNNING_JOB] if card is not None else []
        return running_job_note(running[0].kind, lang) if running else ""

    @property
    def mounted_rows(self) -> int:
        return len(self.keys)

    def _at_bottom(self) -> bool:
        return self.max_scroll_y == 0 or self.scroll_y >= self.max_scroll_y - 1

    def show_queued(self, messages: list[str]) -> None:
        """Rows for messages typed before the runtime was ready (they leave once sent)."""
        for row in self._queued:
            row.remove()
        self._queued = [MessageRow(StreamItem(f"q:{n}", "queued", m, 0.0)) for n, m in enumerate(messages)]
        if self._queued:
            self.mount_all(self._queued)
            self.scroll_end(animate=False)
        self._show_welcome()

    async def show_page(self, page: StreamPage) -> None:
        """Bring the newest part of the stream up to date with PAGE (the latest page from the read model)."""
        follow = self._at_bottom()
        items = list(page.items)
        if not self.keys or not any(item.key in self.rows for item in items):
            await self._replace(items, page)
        else:
            await self._merge(items)
        await self._keep_live_last(items)
        self._show_welcome()
        if follow:  # prune only while following the newest rows, never under a reader's eyes
            await self._prune()
            self.scroll_end(animate=False)

    async def _replace(self, items: list[StreamItem], page: StreamPage) -> None:
        for widget in list(self.rows.values()):
            await widget.remove()
        built = [(item.key, self._row(item)) for item in items]
        built = [(k, w) for k, w in built if w is not None]
        self.keys = [k for k, _ in built]
        self.rows = dict(built)  # type: ignore[arg-type]
        if built:
            await self.mount_all([w for _, w in built], after=self.query_one("#earlier"))
        self.earlier = page.earlier
        self.oldest_id = page.oldest_id
        self.query_one(EarlierMarker).set_count(self.earlier)

    async def _merge(self, items: list[StreamItem]) -> None:
        """Reconcile the tail the page covers: drop rows that left it, add new ones in order, update cards."""
        wanted = {i.key for i in items}
        start = min(self.keys.index(i.key) for i in items if i.key in self.rows)
        for key in self.keys[start:]:
            if key not in wanted:
                await self.rows.pop(key).remove()
        self.keys = self.keys[:start] + [k for k in self.keys[start:] if k in wanted]
        index = start  # where the next new row goes in self.keys
        for item in items:
            widget = self.rows.get(item.key)
            if widget is not None:
                index = self.keys.index(item.key) + 1
                if isinstance(widget, TaskCard):
                    card = self.card_for(widget.task_id)
                    if card is not None:
                        widget.card = card
                elif isinstance(widget, MessageRow) and item.kind == "routed":
                    widget.item = item  # its status (withdrawn) and the task's jobs may have moved on
                    widget.update(widget.content_for(item))
                continue
            widget = self._row(item)
            if widget is None:
                continue
            if index < len(self.keys):
                await self.mount(widget, before=self.rows[self.keys[index]])
            elif self.keys:
                await self.mount(widget, after=self.rows[self.keys[-1]])
            else:
                await self.mount(widget, after=self.query_one("#earlier"))
            self.keys.insert(index, item.key)
            self.rows[item.key] = widget
            index += 1

    async def _prune(self) -> None:
        excess = len(self.keys) - MAX_MOUNTED
        if excess <= 0:
            return
        for key in self.keys[:excess]:
            await self.rows.pop(key).remove()
            if key.startswith("m:"):
                self.earlier += 1
        self.keys = self.keys[excess:]
        first_msg = next((k for k in self.keys if k.startswith("m:")), None)
        if first_msg is not None:
            self.oldest_id = int(first_msg[2:])
        self.query_one(EarlierMarker).set_count(self.earlier)

    async def show_earlier(self, page: StreamPage) -> None:
        """Prepend an older page (from "load earlier"), keeping the view where it was."""
        items = [i for i in page.items if i.key not in self.rows]
        built = [(i.key, self._row(i)) for i in items]
        built = [(k, w) for k, w in built if w is not None]
        if built:
            before = self.rows[self.keys[0]] if self.keys else None
            height = self.virtual_size.height
            await self.mount_all([w for _, w in built], before=before) if before else await self.mount_all(
                [w for _, w in built], after=self.query_one("#earlier"))
            self.keys = [k for k, _ in built] + self.keys
            self.rows.update(dict(built))
            self.call_after_refresh(lambda: self.scroll_to(y=self.virtual_size.height - height, animate=False))
        self.earlier = page.earlier
        self.oldest_id = page.oldest_id
        self.query_one(EarlierMarker).set_count(self.earlier)

    # ---- live reply (streamed tokens) ----------------------------------------------------------------
    async def live_token(self, text: str) -> None:
        follow = self._at_bottom()
        if self.live is None:
            self._live_text = ""
            self.live = MessageRow(StreamItem("live", "live", "…", 0.0), id="live-reply")
            await self.mount(self.live)
        self._live_text += text
        self.live.update(message_content(self._live_text))
        if follow:
            self.scroll_end(animate=False)

    async def live_thinking(self) -> None:
        if self.live is None:
            self._live_text = ""
            self.live = MessageRow(StreamItem("live", "live", "…", 0.0), id="live-reply")
            await self.mount(self.live)
            if self._at_bottom():
                self.scroll_end(animate=False)

    async def end_live(self) -> None:
        if self.live is not None:
            live, self.live = self.live, None
            await live.remove()

    async def _keep_live_last(self, items: list[StreamItem]) -> None:
        """End the live row once its reply is committed; otherwise keep it below the newest row."""
        if self.live is None:
            return
        if self._live_text and any(i.kind == "assistant" and i.text.strip() == self._live_text.strip()
                                   for i in items[-4:]):
            await self.end_live()
        elif self.keys and self.children and self.children[-1] is not self.live:
            live, text = self.live, self._live_text
            self.live = None
            await live.remove()
            self._live_text = ""
            if text:
                await self.live_token(text)
            else:
                await self.live_thinking()

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)  # the stream or a folded message has the focus: letters are for the input

    def on_earlier_marker_pressed(self, event: EarlierMarker.Pressed) -> None:
        event.stop()
        self.action_load_earlier()

    def action_load_earlier(self) -> None:
        if self.earlier > 0:
            self.post_message(self.LoadEarlier(self, self.oldest_id))
