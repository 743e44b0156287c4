"""The one-line header: workspace, model (and whether it is loaded), today's spend against the cap,
how many gates wait for the creator."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ...views import Header
from ..fmt import compact_path, money, short_path
from ..strings import text


class HeaderBar(Widget):
    DEFAULT_CSS = """
    HeaderBar { dock: top; height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    header: reactive[Header | None] = reactive(None)
    status: reactive[str] = reactive("")
    model_state: reactive[str] = reactive("ready")
    missing_key: reactive[str] = reactive("")  # the environment variable to set, when the model has no key

    @classmethod
    def of(cls, app: Any) -> "HeaderBar":
        """The header of a screen of APP (its workspace, its session's model)."""
        return cls(app.workspace_root, app.session.model_name, id="header")

    def follow(self, app: Any) -> None:
        """Show APP's current state: its snapshot's header, the model's state, whether the runtime is up."""
        if app.snap is not None:
            self.header = app.snap.header
        self.model_state = app.session.model_state
        self.status = "" if app.booted else text("header.starting")

    def __init__(self, workspace: Path, model: str, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.model = model
        self.tooltip = text("header.tooltip", path=short_path(workspace), model=model)
        self.set_reactive(HeaderBar.status, text("header.starting"))

    def on_mount(self) -> None:
        check = getattr(self.app, "key_missing", None)
        self.missing_key = (check() if check is not None else None) or ""

    def render(self) -> Content:
        full = self._line(compact=False)
        return full if full.cell_length <= self.size.width - 2 or not self.size.width else self._line(compact=True)

    def _line(self, compact: bool) -> Content:
        h = self.header
        model = h.model if h else self.model
        width = 18 if compact else 34
        parts = [Content.from_markup("[b $primary]Lomo[/]"),
                 Content.from_markup("$path", path=compact_path(self.workspace, width,
                                                                getattr(self.app, "path_home", None)))]
        state = {"loading": " [$warning]$s[/]", "unavailable": " [$error]$s[/]"}.get(self.model_state, "")
        if self.missing_key:
            state += " [b $error]$nokey[/]"
        said = text(f"header.{self.model_state}") if self.model_state in ("loading", "unavailable") else ""
        parts.append(Content.from_markup("$model" + state, model=model, s=said,
                                         nokey=text("header.no_key", env=self.missing_key)))
        if h is not None:
            cap = f" / {money(h.cap, h.currency)}" if h.cap is not None else ""
            over = h.cap is not None and h.spend_today > h.cap
            spent = money(h.spend_today, h.currency)
            if cap and h.currency.upper() not in ("USD", "$"):
                spent = spent.rsplit(" ", 1)[0]  # "0.40 / 1.00 credits", the unit once
            spend = f"{spent}{cap}" if compact else text("header.today", spend=f"{spent}{cap}")
            if h.model_cost_today and not compact:
                spend += " · " + text("card.model", cost=money(h.model_cost_today))
            parts.append(Content.from_markup("[$error]$spend[/]" if over else "$spend", spend=spend))
            if h.gates:
                key = "header.gates_one" if h.gates == 1 else "header.gates_many"
                said = text(key + ("_short" if compact else ""), n=h.gates)
                parts.append(Content.from_markup("[b $warning]$g[/]", g=said))
            elif not compact:
                parts.append(Content.from_markup("[$text-muted]$g[/]", g=text("header.no_gates")))
        if self.status:
            parts.append(Content.from_markup("[$text-muted]$status[/]", status=self.status))
        return Content(" │ ").join(parts)
