"""The context view (issue #13 §9): what the open task's next step would send its model — each layer's size in
characters and estimated tokens, the budget, the tools, which parts are cached, the prompt cache's figures, and
the messages themselves. The same document as `lomo context TASK_ID` (runtime/prompt_view.py)."""
from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from .. import keys
from ..strings import current_language, text
from ..widgets.header import HeaderBar
from ..widgets.footer import KeyFooter


def context_text(doc: dict[str, Any], lang: str | None = None) -> str:
    """The context document in LANG (the creator's when None), as `lomo context` prints it
    (runtime/prompt_view.py `render`)."""
    from ...runtime.prompt_view import render

    return render(doc, lang or current_language())


class ContextScreen(Screen):
    DEFAULT_CSS = """
    ContextScreen #context-title { height: auto; padding: 0 1; background: $boost; }
    ContextScreen #context-body { height: 1fr; padding: 0 1; }
    """
    BINDINGS = keys.bindings("context.back")

    def __init__(self, task_id: str | None = None, title: str = "") -> None:
        super().__init__()
        self.task_id = task_id  # None: the main thread
        self.task_title = title
        self.doc: dict[str, Any] | None = None
        self.loaded = False

    def compose(self) -> ComposeResult:
        app: Any = self.app
        yield HeaderBar.of(app)
        yield Static(id="context-title")
        with VerticalScroll(id="context-body"):
            yield Static(id="context-text")
        yield KeyFooter()

    async def on_mount(self) -> None:
        app: Any = self.app
        self.query_one(HeaderBar).follow(app)
        self.query_one("#context-title", Static).update(Content.from_markup(
            "[b $primary]$t[/]  [$text-muted]$who · $hint[/]", t=text("context.title"),
            who=self.task_title or text("context.main"), hint=text("context.hint")))
        await self.reload()

    async def reload(self) -> None:
        from ...errors import LomoError
        from ...runtime.prompt_view import describe

        app: Any = self.app
        body = self.query_one("#context-text", Static)
        runtime = getattr(app.session, "runtime", None)
        if runtime is None or not app.session.opened:
            body.update(text("context.not_ready"))
            return
        try:
            self.doc = await describe(runtime, self.task_id)
        except LomoError as exc:
            body.update(str(exc))
            return
        body.update(Content(context_text(self.doc)))
        self.loaded = True

    def action_back(self) -> None:
        self.app.pop_screen()
