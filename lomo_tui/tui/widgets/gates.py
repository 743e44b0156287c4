"""The gate inbox (K3): each pending gate with its question, options and their consequences, what it
blocks and what continues meanwhile. Single keys on the highlighted gate: a (or y) approves,
r (or n) rejects, 1–9 chooses an option. Resolved gates leave the list on the next refresh."""
from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...language import message
from ...views import GateView
from .. import keys
from ..strings import creator_language, text
from .composer import redirect_letters

def kind_label(kind: str, lang: str) -> str:
    """The gate kind as the card shows it, in LANG ("which task?", "哪个任务？")."""
    try:
        return message(f"gate.kind_{kind}", lang)
    except KeyError:
        return kind


def gate_prompt(gate: GateView) -> Content:
    lang = gate.language
    lines = [Content.from_markup("[b $warning]⚑[/] [b]$q[/]", q=gate.question),
             Content.from_markup("  [$text-muted]$kind · $task[/]", kind=kind_label(gate.kind, lang),
                                 task=gate.task_title)]
    for number, option in enumerate(gate.options, 1):
        lines.append(Content.from_markup("  [b]$n.[/] $label", n=str(number), label=option.label))
        if option.consequence:
            lines.append(Content.from_markup("    [$text-muted]→ $cons[/]", cons=option.consequence))
    if gate.blocks:
        lines.append(Content.from_markup("  [$text-muted]$w[/] $b", w=message("gate.waits", lang), b=gate.blocks))
    if gate.continues:
        lines.append(Content.from_markup("  [$text-muted]$g[/] $c", g=message("gate.goes_on", lang),
                                         c=gate.continues))
    return Content("\n").join(lines)


class GateList(OptionList):
    BINDINGS = keys.bindings("gate.approve", "gate.reject", "gate.open")  # digits: see on_key

    class Resolve(Message):
        def __init__(self, gate: GateView, approve: bool, option: int | None) -> None:
            super().__init__()
            self.gate = gate
            self.approve = approve
            self.option = option

    class OpenTask(Message):
        def __init__(self, gate: GateView) -> None:
            super().__init__()
            self.gate = gate

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gates: dict[str, GateView] = {}

    def show(self, gates: tuple[GateView, ...]) -> None:
        ids = [g.id for g in gates]
        if ids == list(self.gates) and all(self.gates[g.id] == g for g in gates):
            return
        current, index = self.highlighted_gate, self.highlighted
        self.gates = {g.id: g for g in gates}
        self.clear_options()
        self.add_options([Option(gate_prompt(g), id=g.id) for g in gates])
        if gates:
            if current is not None and current.id in ids:
                keep = ids.index(current.id)
            else:  # the highlighted gate was answered: the next one (the one below it) takes its place
                keep = min(index or 0, len(gates) - 1)
            self.highlighted = keep

    @property
    def highlighted_gate(self) -> GateView | None:
        if self.highlighted is None or not self.option_count:
            return None
        option = self.get_option_at_index(self.highlighted)
        return self.gates.get(option.id or "")

    def _resolve(self, approve: bool, option: int | None) -> None:
        gate = self.highlighted_gate
        if gate is None:
            self.app.notify(text("notify.no_gate", creator_language(self.app)), severity="information")
            return
        if option is not None and not 1 <= option <= max(len(gate.options), 1):
            self.app.notify(text("notify.gate_options", gate.language, n=len(gate.options)), severity="warning")
            return
        self.post_message(self.Resolve(gate, approve, option))

    def action_approve(self) -> None:
        self._resolve(True, None)

    def action_reject(self) -> None:
        self._resolve(False, None)

    def on_key(self, event: Any) -> None:
        if event.character and event.character.isdigit() and event.character != "0" and self.gates:
            event.stop()
            event.prevent_default()
            self._resolve(True, int(event.character))
            return
        redirect_letters(self, event)

    def action_open_task(self) -> None:
        gate = self.highlighted_gate
        if gate is not None and gate.task_id:
            self.post_message(self.OpenTask(gate))


def gates_hint(lang: str) -> Content:
    """"a approve · r reject · 1–9 choose" with each key in bold."""
    parts = []
    for part in text("notify.gates_hint", lang).split(" · "):
        key, _, words = part.partition(" ")
        parts.append(Content.from_markup("[b]$k[/] $w", k=key, w=words))
    return Content(" · ").join(parts)


class GateInbox(Vertical):
    DEFAULT_CSS = """
    GateInbox { width: 36; border-left: tall $panel; }
    GateInbox #gates-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    GateInbox GateList { height: 1fr; border: none; padding: 0; background: $surface; scrollbar-size-vertical: 1; }
    GateInbox GateList:focus { background-tint: $primary 5%; }
    GateInbox #gates-hint { height: auto; padding: 0 1; color: $text-muted; }
    GateInbox #gates-empty { padding: 1 1; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        lang = creator_language(self.app)
        yield Static(text("gates.title", lang), id="gates-title")
        yield Static(text("gates.empty", lang), id="gates-empty")
        yield GateList(id="gate-list")
        yield Static(gates_hint(lang), id="gates-hint")

    def show(self, gates: tuple[GateView, ...]) -> None:
        self.query_one(GateList).show(gates)
        lang = creator_language(self.app)
        title = text("gates.title_n", lang, n=len(gates)) if gates else text("gates.title", lang)
        self.query_one("#gates-title", Static).update(title)
        self.query_one("#gates-empty", Static).update(text("gates.empty", lang))
        self.query_one("#gates-hint", Static).update(gates_hint(lang))
        self.query_one("#gates-empty").display = not gates
        self.query_one(GateList).display = bool(gates)
        self.query_one("#gates-hint").display = bool(gates)
