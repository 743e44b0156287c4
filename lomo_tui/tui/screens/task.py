"""The task view: brief, checklist, artifacts with previews, the inbox (withdraw / replace), the
ledger's activity timeline, and the task's own conversation. What is typed here goes to this task
directly, by id (A4): no Router, no model call to decide where it belongs."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Markdown, Static

from ... import views
from ...base.bus import Notice
from ...errors import LomoError
from .. import keys
from ..fmt import STATE_ICON, STATE_STYLE, bar
from ..strings import text
from ..widgets.card import label, spend_text
from ..widgets.composer import Composer, TypesIntoComposer
from ..widgets.gates import GateList, gates_hint
from ..widgets.graph import GraphList
from ..widgets.header import HeaderBar
from ..widgets.stream import PAGE, StreamView
from ..widgets.task_parts import ArtifactList, ArtifactRow, InboxList, TimelineList, checklist_content
from ..widgets.footer import KeyFooter

NARROW = 100


def title_line(card: views.Card, currency: str = "credits") -> Content:
    """The task's title and facts; the labels in the task's language."""
    lang = card.language
    style = STATE_STYLE.get(card.state, "$foreground")
    facts = [label("kind", card.kind, lang), label("state", card.state, lang), spend_text(card, currency)]
    if card.checklist_total:
        facts.append(f"{bar(card.checklist_done, card.checklist_total)} {card.checklist_done}/{card.checklist_total}")
    icon = STATE_ICON.get(card.state, "•")
    line = Content.from_markup(f"[{style}]{icon}[/] [b]$title[/]  [$text-muted]$facts · $id[/]",
                               title=card.title, facts=" · ".join(facts), id=card.id)
    extra = [Content.from_markup("[$warning]△ $n[/]", n=n) for n in card.notices[:3]]
    if card.state == "failed" and card.reason:
        extra.append(Content.from_markup("[$error]$r[/] [$text-muted]$hint[/]", r=card.reason,
                                         hint=text("task.resumes_hint", lang)))
    return Content("\n").join([line, *extra])


def cache_line(usage: dict[str, Any], lang: str = "en") -> Content | None:
    """The task's model calls and prompt cache (issue #13): prompt tokens, read from the cache, written to it."""
    if not usage.get("calls"):
        return None
    share = usage.get("cache_read_share")
    calls = usage["calls"]
    line = text("stats.cache_line", lang, prompt=f"{usage['prompt_tokens']:,}",
                read=f"{usage['cache_read_tokens']:,}", share=f" ({share:.0%})" if share is not None else "",
                write=f"{usage['cache_write_tokens']:,}")
    calls_said = text("task.model_call_one" if calls == 1 else "task.model_call_many", lang, n=calls)
    return Content.from_markup("[$text-muted]$t[/]", t=text("stats.task_cache", lang, calls=calls_said, line=line))


class TaskScreen(TypesIntoComposer, Screen):
    CSS_PATH = Path(__file__).with_name("task.tcss")
    BINDINGS = keys.bindings("task.back")
    AUTO_FOCUS = "#composer-input"

    def __init__(self, task_id: str) -> None:
        super().__init__()
        self.task_id = task_id
        self.detail: views.TaskDetail | None = None
        self.usage: dict[str, Any] = {}
        self.loaded = False
        self.lang = "en"  # the task's language, once its detail is read: the view's titles speak it

    def compose(self) -> ComposeResult:
        app: Any = self.app
        yield HeaderBar.of(app)
        yield Static(id="task-title")
        with Horizontal(id="task-body"):
            with Vertical(id="task-left"):
                with VerticalScroll(id="task-info"):
                    yield Static(text("task.brief"), classes="section-title", id="brief-title")
                    yield Markdown(id="brief")
                    yield Static(text("task.checklist"), classes="section-title", id="checklist-title")
                    yield Static(id="checklist")
                    yield Static(text("task.artifacts"), classes="section-title", id="artifacts-title")
                    yield ArtifactList(app.workspace_root, id="artifacts")
                    yield Static(text("task.graph"), classes="section-title", id="graph-title")
                    yield GraphList(app.workspace_root, id="graph")
                yield StreamView(id="task-stream", card_for=self._card)
            with Vertical(id="task-right"):
                with Vertical(id="task-gates-box"):
                    yield Static(text("task.gates_title"), classes="pane-title", id="task-gates-title")
                    yield GateList(id="task-gates")
                    yield Static(gates_hint("en", "Ctrl+G"), id="task-gates-hint")
                with Vertical(id="inbox-box"):
                    yield Static(text("task.inbox"), classes="pane-title", id="inbox-title")
                    yield InboxList(app.clock, id="inbox")
                with Vertical(id="timeline-box"):
                    yield Static(text("task.activity"), classes="pane-title", id="timeline-title")
                    yield TimelineList(app.clock, id="timeline")
        yield Composer(text("composer.placeholder_task"), id="composer", task_id=self.task_id, fixed=True,
                       title="…")
        yield KeyFooter()

    def speak(self, lang: str) -> None:
        """Put the view's titles in LANG (the task's language)."""
        self.lang = lang
        for widget, key in (("#brief-title", "task.brief"), ("#checklist-title", "task.checklist"),
                            ("#artifacts-title", "task.artifacts"), ("#graph-title", "task.graph"),
                            ("#inbox-title", "task.inbox"), ("#timeline-title", "task.activity")):
            self.query_one(widget, Static).update(text(key, lang))
        self.query_one("#task-gates-hint", Static).update(gates_hint(lang, "Ctrl+G"))
        self.query_one(Composer).set_placeholder(text("composer.placeholder_task", lang), text("composer.away", lang))
        if self.app.snap is not None:  # type: ignore[attr-defined]
            self.show_gates(self.app.snap.gates)  # type: ignore[attr-defined]

    def _card(self, task_id: str) -> views.Card | None:
        snap = getattr(self.app, "snap", None)
        return snap.cards.get(task_id) if snap is not None else None

    def on_resize(self, event: Any) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    async def on_mount(self) -> None:
        app: Any = self.app
        self.query_one(HeaderBar).follow(app)
        if app.snap is not None:
            self.show_gates(app.snap.gates)
        await self.refresh_task()

    async def refresh_task(self) -> None:
        app: Any = self.app
        if not app.session.opened:
            return
        try:
            detail = await views.load_task(app.session.db, self.task_id)
        except LomoError as exc:
            app.notify(str(exc), title=text("task.notice_title"), severity="error")
            app.pop_screen()
            return
        page = await views.load_stream(app.session.db, self.task_id, limit=PAGE, with_cards=False)
        from ...context.usage import cache_usage

        async with app.session.db.read() as conn:
            self.usage = await cache_usage(conn, self.task_id)
        self.detail = detail
        card = detail.card
        if card.language != self.lang:
            self.speak(card.language)
        cache = cache_line(self.usage, self.lang)
        title = title_line(card, app.currency)
        self.query_one("#task-title", Static).update(title if cache is None else Content("\n").join([title, cache]))
        composer = self.query_one(Composer)
        composer.target_title = card.title
        brief = detail.brief or detail.goal or text("task.no_brief", self.lang)
        markdown = self.query_one("#brief", Markdown)
        if getattr(markdown, "_lomo_source", None) != brief:
            markdown._lomo_source = brief  # type: ignore[attr-defined]
            await markdown.update(brief)
        self.query_one("#checklist", Static).update(checklist_content(detail.checklist, self.lang))
        await self.query_one(ArtifactList).show(detail.artifacts, self.lang)
        from ...production.report import graph_states

        graphs = await graph_states(app.session.db, self.task_id)
        self.query_one(GraphList).show(graphs, self.lang)
        self.set_class(bool(graphs), "-has-graph")
        self.query_one(InboxList).show(detail.inbox)
        self.query_one(TimelineList).show(detail.timeline)
        await self.query_one("#task-stream", StreamView).show_page(page)
        self.loaded = True

    async def apply_snapshot(self, snap: views.Snapshot, *, tasks: set[str | None], everything: bool) -> None:
        self.show_gates(snap.gates)
        if everything or self.task_id in tasks or None in tasks:
            await self.refresh_task()

    # ---- the gates this task waits on ---------------------------------------------------------------
    def show_gates(self, gates: tuple[views.GateView, ...]) -> None:
        mine = tuple(g for g in gates if g.task_id == self.task_id)
        self.query_one("#task-gates", GateList).show(mine)
        self.query_one("#task-gates-title", Static).update(
            Content.from_markup("[b $warning]⚑[/] $t", t=text("task.gates_title_n", self.lang, n=len(mine))))
        self.set_class(bool(mine), "-has-gates")

    def focus_gates(self) -> None:
        gates = self.query_one("#task-gates", GateList)
        if gates.option_count:
            gates.focus()
        else:
            self.app.notify(text("notify.not_waiting", self.lang))

    @on(GateList.Resolve)
    async def resolve(self, event: GateList.Resolve) -> None:
        await self.app.ask_resolve(event.gate, event.approve, event.option)  # type: ignore[attr-defined]

    @on(GateList.OpenTask)
    def gate_task(self, event: GateList.OpenTask) -> None:
        event.stop()  # already here

    async def on_live_token(self, notice: Any) -> None:
        streams = self.query("#task-stream")
        if notice.task_id == self.task_id and streams:
            stream = streams.first(StreamView)
            if notice.type == Notice.TOKEN:
                await stream.live_token(notice.data.get("text", ""))
            else:
                await stream.live_thinking()

    async def on_live_end(self, notice: Any) -> None:
        if notice.task_id == self.task_id and notice.type != Notice.STEP_COMMITTED:
            for stream in self.query("#task-stream").results(StreamView):
                await stream.end_live()

    @on(Composer.Submitted)
    async def send(self, event: Composer.Submitted) -> None:
        if await self.app.submit(event.text, self.task_id):  # type: ignore[attr-defined]
            event.composer.accept()

    @on(InboxList.Change)
    async def change_message(self, event: InboxList.Change) -> None:
        app: Any = self.app
        if not event.replace:
            await app.do_withdraw(event.item.id)
            return
        from .prompt import PromptScreen

        async def replaced(text: str | None) -> None:
            if text:
                await app.do_withdraw(event.item.id, text)

        ask = PromptScreen(text("preview.replace_title", self.lang), text("preview.replace_ask", self.lang),
                           event.item.text)
        await app.push_screen(ask, replaced)

    @on(ArtifactRow.Chosen)
    async def artifact(self, event: ArtifactRow.Chosen) -> None:
        if event.edit:
            self.app.edit_file(event.path)  # type: ignore[attr-defined]
        else:
            results = [self.app.workspace_root / a.path for a in self.detail.artifacts] if self.detail else None
            await self.app.open_file(event.path, results)  # type: ignore[attr-defined]

    @on(StreamView.Retry)
    async def retry(self, event: StreamView.Retry) -> None:
        event.stop()
        await self.app.submit(event.words, self.task_id)  # type: ignore[attr-defined]

    @on(StreamView.LoadEarlier)
    async def load_earlier(self, event: StreamView.LoadEarlier) -> None:
        app: Any = self.app
        page = await views.load_stream(app.session.db, self.task_id, before=event.before, limit=PAGE,
                                       with_cards=False)
        await event.stream.show_earlier(page)

    def action_back(self) -> None:
        self.app.pop_screen()
