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
from ..linebreak import Para, Paragraphs
from ..strings import creator_language, text
from .composer import redirect_letters


def kind_label(kind: str, lang: str) -> str:
    """The gate kind as the card shows it, in LANG ("which task?", "哪个任务？")."""
    try:
        return message(f"gate.kind_{kind}", lang)
    except KeyError:
        return kind


def gate_prompt(gate: GateView) -> Paragraphs:
    """The gate as its option in the list: question, kind and task, options with their consequences, what it
    blocks and what goes on, each wrapped by cell width under its own text (`linebreak`)."""
    lang = gate.language
    paras = [Para(Content.from_markup("[b]$q[/]", q=gate.question), prefix="⚑ ", lead="[b $warning]$line[/]"),
             Para(f"{kind_label(gate.kind, lang)} · {gate.task_title}", prefix="  ", markup="[$text-muted]$line[/]")]
    for number, option in enumerate(gate.options, 1):
        paras.append(Para(option.label, prefix=f"  {number}. ", lead="[b]$line[/]"))
        if option.consequence:
            paras.append(Para(option.consequence, prefix="    → ", markup="[$text-muted]$line[/]"))
    if gate.blocks:
        paras.append(Para(Content.from_markup("[$text-muted]$w[/] $b", w=message("gate.waits", lang), b=gate.blocks),
                          prefix="  "))
    if gate.continues:
        paras.append(Para(Content.from_markup("[$text-muted]$g[/] $c", g=message("gate.goes_on", lang),
                                              c=gate.continues), prefix="  "))
    return Paragraphs(paras)


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


def gates_hint(lang: str, *more: str) -> Paragraphs:
    """"a approve · r reject · 1–9 choose" (and MORE keys: "Ctrl+G") with each key in bold, wrapped by cell
    width with a "·" never starting a line."""
    parts = []
    for part in text("notify.gates_hint", lang).split(" · ") + list(more):
        key, _, words = part.partition(" ")
        parts.append(Content.from_markup("[b]$k[/] $w" if words else "$k", k=key, w=words))
    return Paragraphs([Para(Content(" · ").join(parts), keep=" · ")])


def gates_empty(lang: str) -> Paragraphs:
    """"Nothing needs you right now.", broken by cell width (never inside a Japanese word)."""
    return Paragraphs([Para(text("gates.empty", lang))])


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
        yield Static(gates_empty(lang), id="gates-empty")
        yield GateList(id="gate-list")
        yield Static(gates_hint(lang), id="gates-hint")

    def show(self, gates: tuple[GateView, ...]) -> None:
        self.query_one(GateList).show(gates)
        lang = creator_language(self.app)
        title = text("gates.title_n", lang, n=len(gates)) if gates else text("gates.title", lang)
        self.query_one("#gates-title", Static).update(title)
        self.query_one("#gates-empty", Static).update(gates_empty(lang))
        self.query_one("#gates-hint", Static).update(gates_hint(lang))
        self.query_one("#gates-empty").display = not gates
        self.query_one(GateList).display = bool(gates)
        self.query_one("#gates-hint").display = bool(gates)
