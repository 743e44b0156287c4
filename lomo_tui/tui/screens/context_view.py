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

from rich.cells import cell_len

from .. import keys
from ..strings import current_language, has, text
from ..widgets.header import HeaderBar
from ..widgets.footer import KeyFooter


def _word(key: str, raw: str, lang: str) -> str:
    """The catalogue's label KEY ("layer.history"), or RAW for an id it does not know."""
    return text(key, lang) if has(key) else raw


def _right(words: str, width: int) -> str:
    """WORDS right-aligned in WIDTH terminal cells."""
    return " " * max(0, width - cell_len(words)) + words


def _cache_line(figures: dict[str, Any], lang: str) -> str:
    """The prompt cache's figures as one line ("" before any model call), as `render_cache` words them."""
    if not figures.get("calls"):
        return ""
    share = figures["cache_read_share"]
    if share is None:
        return text("context.cache_none", lang, calls=figures["calls"])
    return text("context.cache", lang, read=f"{figures['cache_read_tokens']:,}", prompt=f"{figures['prompt_tokens']:,}",
                share=f"{share:.0%}", write=f"{figures['cache_write_tokens']:,}")


def context_text(doc: dict[str, Any], lang: str | None = None) -> str:
    """The context document in LANG (the creator's when None): `lomo context`'s layout (runtime/prompt_view.py),
    its words from the catalogue; each layer by its label in [tui_layer], each tool by its label in [tui_tools].
    The messages are what the model reads, shown as they are."""
    lang = lang or current_language()
    source = _word("context.source_" + str(doc["budget_source"]).replace(" ", "_"), str(doc["budget_source"]), lang)
    lines = [text("context.head", lang, task=doc["task_id"], model=doc["model"], total=f"{doc['total_tokens']:,}",
                  budget=f"{doc['budget_tokens']:,}", reply=f"{doc['reply_tokens']:,}", source=source), ""]
    names = [_word("layer." + layer["name"], layer["name"], lang) for layer in doc["layers"]]
    width = max([10, *(cell_len(name) for name in names)])
    head = text("context.col_layer", lang)
    lines.append(head + " " * max(1, width + 1 - cell_len(head)) + _right(text("context.col_chars", lang), 9) + " "
                 + _right(text("context.col_tokens", lang), 8))
    for name, layer in zip(names, doc["layers"]):
        lines.append(name + " " * (width + 1 - cell_len(name)) + f"{layer['chars']:>9,} {layer['tokens']:>8,}")
    lines.append("")
    lines.append(text("context.tools", lang, tools=", ".join(_word("tools." + t, t, lang) for t in doc["tools"])))
    if doc["summaries"] or doc["pending_summaries"]:
        lines.append(text("context.summaries", lang, count=doc["summaries"], through=doc["summarised_through"])
                     + (text("context.summaries_pending", lang, count=doc["pending_summaries"])
                        if doc["pending_summaries"] else ""))
    for scope, figures in (("task", doc["cache"]["task"]), ("all", doc["cache"]["overall"])):
        line = _cache_line(figures, lang)
        if line:
            lines.append(text("context.cache_scope", lang, line=line, scope=text("context.scope_" + scope, lang)))
    lines.append("")
    for number, message in enumerate(doc["messages"]):
        said = message["content"]
        role = _word("context.role_" + message["role"], message["role"], lang)
        lines.append(text("context.message", lang, number=number, role=role, chars=f"{len(said):,}"))
        lines.append(said if len(said) <= 600 else said[:600] + " …")
    return "\n".join(lines)


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
