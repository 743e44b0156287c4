"""The stats view (issue #16 §5, DESIGN J5): the figures `lomo stats` prints (`lomo_tui.metrics`), and charts
where a chart reads better than numbers — verified steps and model calls per day, model calls per task — plus
the prompt cache's share (issue #13). `p` changes the period; every figure is counted from the ledgers."""
from __future__ import annotations

from typing import Any

from rich.cells import cell_len, set_cell_size
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from ... import clock
from .. import keys
from ..strings import current_language, text
from ..widgets.header import HeaderBar
from ..widgets.footer import KeyFooter

BLOCKS = "▁▂▃▄▅▆▇█"
PERIODS: tuple[tuple[str, float | None], ...] = (("all", None), ("24h", 86400.0), ("7d", 7 * 86400.0),
                                                 ("30d", 30 * 86400.0))
CHART_DAYS = 14
BAR_WIDTH = 24


def spark(values: list[int], top: int | None = None) -> str:
    """One cell pair per value: '··' for nothing, else a block from ▁ to █ against TOP (the largest value)."""
    top = max(values + [0]) if top is None else top
    cells = []
    for value in values:
        if value <= 0 or top <= 0:
            cells.append("· ")
        else:
            level = max(1, round(len(BLOCKS) * value / top))
            cells.append(BLOCKS[min(level, len(BLOCKS)) - 1] * 2)
    return "".join(cells)


def hbar(value: int, top: int, width: int = BAR_WIDTH) -> str:
    """A horizontal bar of WIDTH cells for VALUE out of TOP (at least one cell for anything above zero)."""
    if top <= 0 or value <= 0:
        return ""
    return "█" * max(1, round(width * value / top))


def padded(words: str, width: int) -> str:
    """WORDS padded to WIDTH terminal cells (a Chinese character takes two)."""
    return words + " " * max(0, width - cell_len(words))


def figures_content(doc: dict[str, Any], cache: dict[str, Any]) -> Content:
    from ... import metrics

    rows = metrics.rows(doc, current_language())
    width = max(cell_len(name) for name, _ in rows)
    lines = [Content.from_markup("[b $primary]$t[/]  [$text-muted]$n[/]", t=text("stats.figures"),
                                 n=text("stats.dash"))]
    for name, value in rows:
        shown = Content.from_markup("[$text-muted]$v[/]", v=value) if value.startswith("—") else Content(value)
        lines.append(Content.from_markup("  [b]$n[/]  ", n=padded(name, width)) + shown)
    share = cache.get("cache_read_share")
    lines += [Content(""), Content.from_markup("[b $primary]$t[/]", t=text("stats.cache")),
              Content("  " + text("stats.cache_line", prompt=f"{cache['prompt_tokens']:,}",
                                  read=f"{cache['cache_read_tokens']:,}",
                                  share=f" ({share:.0%})" if share is not None else "",
                                  write=f"{cache['cache_write_tokens']:,}"))]
    return Content("\n").join(lines)


def task_words(task: dict[str, Any]) -> str:
    """"31 model calls · 5/7 steps verified" (no steps: the calls only)."""
    calls = text("stats.call_one" if task["model_calls"] == 1 else "stats.call_many", n=task["model_calls"])
    if not task["claimed"]:
        return calls
    return text("stats.task_row", calls=calls, verified=task["verified"], claimed=task["claimed"])


def axis_content(days: int) -> Content:
    """The time axis under the day charts (one 2-cell column a day): "13d ago" under the first column,
    "today" ending under the last. Each label is a span of its own, so it is drawn at its own column
    (an SVG export places each span; a run of spaces inside one is only as wide as a font draws it)."""
    width = 2 * days
    ago, today = text("stats.ago", n=days - 1), text("stats.today")
    pad = max(1, width - cell_len(ago) - cell_len(today))
    return (Content.from_markup("[$text-muted]$a[/]", a=ago) + Content(" " * pad)
            + Content.from_markup("[b $text-muted]$t[/]", t=today))


def charts_content(activity: dict[str, Any]) -> Content:
    days = activity["days"]
    verified = [d["verified"] for d in days]
    claimed = [d["claimed"] for d in days]
    calls = [d["model_calls"] for d in days]
    steps_top = max(claimed + [0])
    label = max(cell_len(text("stats.verified")), cell_len(text("stats.claimed")), cell_len(text("stats.calls")))

    def row(name: str, values: list[int], top: int, style: str) -> Content:
        return Content.from_markup(f"  $n  [{style}]$s[/]  [b]$total[/]", n=padded(name, label),
                                   s=spark(values, top), total=str(sum(values)))

    axis = axis_content(len(days))
    lines = [Content.from_markup("[b $primary]$t[/]", t=text("stats.per_day", days=len(days))),
             row(text("stats.verified"), verified, steps_top, "$success"),
             row(text("stats.claimed"), claimed, steps_top, "$secondary"),
             row(text("stats.calls"), calls, max(calls + [0]), "$accent"),
             Content("  " + " " * label + "  ") + axis, Content(""),
             Content.from_markup("[b $primary]$t[/]", t=text("stats.per_task"))]
    tasks = [t for t in activity["tasks"] if t["model_calls"] or t["claimed"]]
    if not tasks:
        lines.append(Content.from_markup("  [$text-muted]$t[/]", t=text("stats.no_calls")))
    top = max([t["model_calls"] for t in tasks] + [0])
    name_width = min(22, max([cell_len(t["title"]) for t in tasks] + [4]))
    for t in tasks:
        title = t["title"] if cell_len(t["title"]) <= name_width else set_cell_size(t["title"], name_width - 1) + "…"
        bar = hbar(t["model_calls"], top)
        lines.append(Content.from_markup("  $n  [$accent]$b[/]$gap[$text-muted]$what[/]", n=padded(title, name_width),
                                         b=bar, gap=" " * (BAR_WIDTH - len(bar) + 1),
                                         what=task_words(t)))
    return Content("\n").join(lines)


class StatsScreen(Screen):
    DEFAULT_CSS = """
    StatsScreen #stats-title { height: auto; padding: 0 1; background: $boost; }
    StatsScreen #stats-body { height: 1fr; padding: 0 1; }
    StatsScreen #stats-body > Static { height: auto; margin-bottom: 1; }
    """
    BINDINGS = keys.bindings("stats.period", "stats.back")

    def __init__(self, task_id: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.period = 0
        self.doc: dict[str, Any] | None = None
        self.activity: dict[str, Any] | None = None
        self.loaded = False

    def compose(self) -> ComposeResult:
        app: Any = self.app
        yield HeaderBar.of(app)
        yield Static(id="stats-title")
        with VerticalScroll(id="stats-body"):
            yield Static(id="stats-numbers")
            yield Static(id="stats-chart")
        yield KeyFooter()

    async def on_mount(self) -> None:
        app: Any = self.app
        self.query_one(HeaderBar).follow(app)
        await self.reload()

    async def reload(self) -> None:
        app: Any = self.app
        name, span = PERIODS[self.period]
        words = text(f"stats.period_{name}")
        self.query_one("#stats-title", Static).update(Content.from_markup(
            "[b $primary]$t[/]  [$text-muted]$scope · $hint[/]", t=text("stats.title"),
            scope=(text("stats.scope_task", id=self.task_id) + " · " if self.task_id else "") + words,
            hint=text("stats.hint")))
        if not app.session.opened:
            self.query_one("#stats-numbers", Static).update(text("stats.no_tasks"))
            return
        from ... import metrics
        from ...context.usage import cache_usage

        now = clock.now()
        since = None if span is None else now - span
        async with app.session.db.read() as conn:
            doc = await metrics.compute(conn, task_id=self.task_id, since=since)
            activity = await metrics.activity(conn, days=CHART_DAYS, now=now, task_id=self.task_id, since=since,
                                              lang=current_language())
            cache = await cache_usage(conn, self.task_id)
        self.doc, self.activity = doc, activity
        self.query_one("#stats-numbers", Static).update(figures_content(doc, cache))
        self.query_one("#stats-chart", Static).update(charts_content(activity))
        self.loaded = True

    async def apply_snapshot(self, snap: Any, *, tasks: set[str | None], everything: bool) -> None:
        self.query_one(HeaderBar).header = snap.header
        await self.reload()

    async def action_period(self) -> None:
        self.period = (self.period + 1) % len(PERIODS)
        await self.reload()

    def action_back(self) -> None:
        self.app.pop_screen()
