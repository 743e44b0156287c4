"""The main screen (K1): workspace tree | unified stream with inline task cards + input | gate inbox."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from ... import views
from ...base.bus import Notice
from ...language import detect_language
from .. import keys
from ..strings import creator_language, text
from ..widgets.card import TaskCard
from ..widgets.composer import Composer, TypesIntoComposer
from ..widgets.gates import GateInbox, GateList
from ..widgets.header import HeaderBar
from ..widgets.stream import PAGE, StreamView, Welcome
from ..widgets.tree import WorkspaceTree
from ..widgets.footer import KeyFooter

NARROW = 100  # below: one pane at a time (80×24 works)
WIDE = 118  # from here: tree, stream and gates side by side


class MainScreen(TypesIntoComposer, Screen):
    CSS_PATH = Path(__file__).with_name("main.tcss")
    BINDINGS = keys.bindings("app.input")
    AUTO_FOCUS = "#composer-input"

    def compose(self) -> ComposeResult:
        app: Any = self.app
        yield HeaderBar(app.workspace_root, app.settings.model, id="header")
        with Horizontal(id="body"):
            with Vertical(id="tree-pane"):
                yield Static(text("files.pane_title"), classes="pane-title", id="tree-title")
                yield WorkspaceTree(app.workspace_root, id="tree")
            with Vertical(id="centre"):
                yield Static(id="gate-strip")
                yield StreamView(id="stream", card_for=self._card, welcome=True)
                yield Composer(id="composer")
            yield GateInbox(id="gates")
        yield KeyFooter()

    def _card(self, task_id: str) -> views.Card | None:
        snap = getattr(self.app, "snap", None)
        return snap.cards.get(task_id) if snap is not None else None

    # ---- layout ----------------------------------------------------------------------------------
    def on_resize(self, event: Any) -> None:
        width = event.size.width
        self.set_class(width < NARROW, "-narrow")
        self.set_class(NARROW <= width < WIDE, "-medium")
        self.set_class(width >= WIDE, "-wide")

    def focus_gates(self) -> None:
        if self.has_class("-narrow"):
            showing = self.has_class("-show-gates")
            self.remove_class("-show-tree")
            self.set_class(not showing, "-show-gates")
            if showing:
                self.query_one("#composer-input").focus()
                return
        gates = self.query_one(GateList)
        if gates.option_count:
            gates.focus()
        else:
            self.app.notify(text("gates.empty", creator_language(self.app)))

    def focus_tree(self) -> None:
        if self.has_class("-narrow") or self.has_class("-medium"):
            showing = self.has_class("-show-tree")
            self.remove_class("-show-gates")
            self.set_class(not showing, "-show-tree")
            if showing:
                self.query_one("#composer-input").focus()
                return
        self.query_one(WorkspaceTree).focus()

    def action_focus_input(self) -> None:
        composer = self.query_one(Composer)
        if self.has_class("-show-gates") or self.has_class("-show-tree"):
            self.remove_class("-show-gates", "-show-tree")
        elif composer.input.has_focus and composer.task_id:
            composer.set_target(None, "Main")
        composer.input.focus()

    # ---- live state ------------------------------------------------------------------------------
    async def apply_snapshot(self, snap: views.Snapshot, *, tasks: set[str | None], everything: bool) -> None:
        app: Any = self.app
        self.query_one(GateInbox).show(snap.gates)
        count = len(snap.gates)
        self.set_class(count > 0, "-has-gates")
        if count:
            lang = creator_language(app)
            said = text("notify.strip_one", lang) if count == 1 else text("notify.strip_many", lang, n=count)
            self.query_one("#gate-strip", Static).update(
                Content.from_markup("[b]$said[/] — $keys", said=said, keys=text("notify.strip_keys", lang)))
        self.query_one("#tree-title", Static).update(text("files.pane_title", creator_language(app)))
        tree = self.query_one(WorkspaceTree)
        reload = set(snap.marks) != set(tree.marks)
        tree.set_marks(snap.marks)
        if reload:
            await tree.reload()
        page = await views.load_stream(app.session.db, app.session.main_id, limit=PAGE)
        await self.query_one(StreamView).show_page(page)
        composer = self.query_one(Composer)
        if composer.task_id and composer.task_id not in snap.cards:
            composer.set_target(None, "Main")

    async def on_live_token(self, notice: Any) -> None:
        if notice.task_id == self.app.session.main_id:
            stream = self.query_one(StreamView)
            if notice.type == Notice.TOKEN:
                await stream.live_token(notice.data.get("text", ""))
            else:
                await stream.live_thinking()

    async def on_live_end(self, notice: Any) -> None:
        if notice.task_id == self.app.session.main_id and notice.type != Notice.STEP_COMMITTED:
            await self.query_one(StreamView).end_live()

    # ---- creator input ---------------------------------------------------------------------------
    @on(Composer.Submitted)
    async def send(self, event: Composer.Submitted) -> None:
        result = await self.app.submit(event.text, event.task_id)  # type: ignore[attr-defined]
        if result is None:
            return  # not accepted: the text stays in the composer and a notification says why
        event.composer.accept()
        if result == "sent" and event.task_id:
            self.app.notify(text("notify.sent_to", detect_language(event.text), title=event.composer.target_title))

    @on(TaskCard.Action)
    async def card_action(self, event: TaskCard.Action) -> None:
        event.stop()
        if event.action == "reply":
            card = event.task_card.card
            composer = self.query_one(Composer)
            composer.set_target(event.task_id, card.title if card else event.task_id)
            composer.input.focus()
            return
        await self.app.do_card_action(event.task_id, event.action)  # type: ignore[attr-defined]

    @on(GateList.Resolve)
    async def resolve(self, event: GateList.Resolve) -> None:
        await self.app.ask_resolve(event.gate, event.approve, event.option)  # type: ignore[attr-defined]

    @on(GateList.OpenTask)
    async def open_gate_task(self, event: GateList.OpenTask) -> None:
        if event.gate.task_id:
            await self.app.open_task(event.gate.task_id)  # type: ignore[attr-defined]

    @on(WorkspaceTree.FileSelected)
    async def preview_selected(self, event: WorkspaceTree.FileSelected) -> None:
        if not event.path.is_file():  # a workspace that is missing or not a folder selects "itself"
            return
        tree = self.query_one(WorkspaceTree)
        await self.app.open_file(event.path, tree.files_beside(event.path))  # type: ignore[attr-defined]

    @on(WorkspaceTree.Preview)
    async def preview(self, event: WorkspaceTree.Preview) -> None:
        tree = self.query_one(WorkspaceTree)
        await self.app.open_file(event.path, tree.files_beside(event.path))  # type: ignore[attr-defined]

    @on(WorkspaceTree.Edit)
    def edit(self, event: WorkspaceTree.Edit) -> None:
        self.app.edit_file(event.path)  # type: ignore[attr-defined]

    @on(StreamView.Retry)
    async def retry(self, event: StreamView.Retry) -> None:
        event.stop()
        await self.app.submit(event.words, None)  # type: ignore[attr-defined]

    @on(Welcome.Example)
    def example(self, event: Welcome.Example) -> None:
        field = self.query_one(Composer).input
        field.value = event.request
        field.focus()

    @on(StreamView.NotThisTask)
    async def not_this_task(self, event: StreamView.NotThisTask) -> None:
        event.stop()
        await self.app.do_not_this_task(event.inbox_id)  # type: ignore[attr-defined]

    @on(StreamView.LoadEarlier)
    async def load_earlier(self, event: StreamView.LoadEarlier) -> None:
        app: Any = self.app
        page = await views.load_stream(app.session.db, app.session.main_id, before=event.before, limit=PAGE)
        await event.stream.show_earlier(page)

    async def on_screen_resume(self) -> None:
        if getattr(self.app, "booted", False):
            self.app.live.schedule(everything=True)
