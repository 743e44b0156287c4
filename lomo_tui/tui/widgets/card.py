"""A task card (K2): title, kind, state, checklist progress, spend, jobs, latest artifacts (with a
thumbnail where the terminal can show one), change notices, the latest reply, and actions."""
from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from ...views import Card
from .. import keys
from ..strings import has, text
from .composer import redirect_letters
from ..fmt import STATE_ICON, STATE_STYLE, bar, distinct_names, money

RUNNING = ("running", "waiting_job", "waiting_you", "idle")


def card_actions(card: Card) -> list[tuple[str, str]]:
    """(action, label) pairs offered for CARD in its current state, labelled in the task's language."""
    acts = ["open", "reply"]
    if card.state in ("paused",) or card.status == "failed":
        acts.append("resume")
    elif card.state not in ("done", "stopped", "archived"):
        acts.append("pause")
    if card.state not in ("done", "stopped", "archived", "failed"):
        acts.append("stop")
    if card.kind == "lightweight":
        acts.append("promote")
    if card.state not in ("running", "archived"):
        acts.append("archive")
    return [("pause" if a == "resume" else a, text(f"card.act_{a}", card.language)) for a in acts]


def label(group: str, value: str, lang: str) -> str:
    """A catalogue label ("card.state_done") in LANG, or VALUE itself where the catalogue has none."""
    return text(f"card.{group}_{value}", lang) if has(f"card.{group}_{value}") else value


RUNNING_JOB = ("submitting", "queued", "running", "in_progress", "processing")


def running_job_note(kind: str, lang: str = "en") -> str:
    """"the running clip keeps the old prompt; your change applies to the next step" (in LANG)."""
    thing = text(f"job.{kind}", lang) if kind in ("video", "image", "3d", "audio") else text("job.other", lang)
    return text("job.keeps_old", lang, thing=thing)


def spend_text(card: Card, currency: str) -> str:
    spent = money(card.spend, currency)
    if not card.model_cost:
        return spent
    return f"{spent} + " + text("card.model", card.language, cost=money(card.model_cost))


def card_body(card: Card, currency: str = "credits") -> Content:
    """The card's text; every label in the task's language (`card.language`)."""
    lang = card.language
    icon, style = STATE_ICON.get(card.state, "•"), STATE_STYLE.get(card.state, "$foreground")
    lines = [Content.from_markup(f"[{style}]{icon}[/] [b]$title[/]  [$text-muted]$kind ·[/] [{style}]$state[/]",
                                 title=card.title, kind=label("kind", card.kind, lang),
                                 state=label("state", card.state, lang))]
    facts = []
    if card.checklist_total:
        facts.append(f"{bar(card.checklist_done, card.checklist_total)} {card.checklist_done}/{card.checklist_total}")
    facts.append(spend_text(card, currency))
    for job in card.jobs[:2]:
        status = text(f"card.job_cancel_{job.cancel}", lang) if job.cancel else label("job", job.status, lang)
        words = f"{label('job', job.kind, lang)} {status}"
        if job.progress is not None and job.status not in ("submitting", "queued"):
            pct = round(job.progress * 100)
            facts.append(f"{words} {bar(pct, 100, 6)} {pct}%")
        else:
            facts.append(words)
    lines.append(Content.from_markup("[$text-muted]$facts[/]", facts=" · ".join(facts)))
    if card.artifacts:
        short = distinct_names([a.name for a in card.artifacts], 26)  # told apart, not all "poster-…"
        names = " · ".join(f"{name} v{a.version}" for name, a in zip(short[:2], card.artifacts))
        more = len(card.artifacts) - 2
        if more > 0:
            names += " · " + text("card.more", lang, n=more)
        lines.append(Content.from_markup("[$secondary]↳ $names[/]", names=names))
    for notice in card.notices[:2]:
        lines.append(Content.from_markup("[$warning]△ $notice[/]", notice=notice))
    running = [j for j in card.jobs if j.status in RUNNING_JOB]
    if running and card.waiting_messages:  # B4: a change never alters a job already running
        lines.append(Content.from_markup("[$warning]△ $note[/]", note=running_job_note(running[0].kind, lang)))
    if card.state == "failed" and card.reason:
        lines.append(Content.from_markup("[$error]$reason[/]", reason=card.reason))
    elif card.outcome:
        lines.append(Content.from_markup("[$error]✗ $outcome[/]", outcome=card.outcome))
    elif card.reply:
        reply = card.reply if len(card.reply) <= 96 else card.reply[:95] + "…"
        lines.append(Content.from_markup("[i $text-muted]“$reply”[/]", reply=reply))
    return Content("\n").join(lines)


class CardActions(Static):
    """The clickable action row; each word is a link that runs the card's action."""

    def show(self, card: Card, focused: bool = False) -> None:
        parts = [f"[@click=act('{name}')]{label}[/]" for name, label in card_actions(card)]
        line = Content.from_markup(" · ".join(parts))
        if focused:  # unmistakable: this card has the keys, and says which
            line += Content.from_markup("   [i $text-muted]$keys[/]", keys=text("card.keys", card.language))
        self.update(line)

    def action_act(self, name: str) -> None:
        card = self.query_ancestor(TaskCard)
        card.post_message(TaskCard.Action(card, name))


class TaskCard(Vertical, can_focus=True):
    DEFAULT_CSS = """
    TaskCard { height: auto; margin: 0 0 1 0; padding: 0 1; border-left: wide $panel; background: $boost; }
    TaskCard:focus { border-left: thick $primary; background: $primary 18%; }
    TaskCard.-waiting_you { border-left: wide $warning; }
    TaskCard.-failed { border-left: wide $error; }
    TaskCard #card-row { height: auto; }
    TaskCard #thumb { width: 12; height: 5; margin-right: 1; }
    TaskCard #card-text { height: auto; width: 1fr; }
    TaskCard CardActions { color: $text-muted; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    TaskCard CardActions:hover { color: $foreground; }
    TaskCard:focus CardActions { color: $primary; text-style: bold; }
    """
    BINDINGS = keys.bindings("card.open", "card.reply", "card.pause", "card.stop", "card.promote", "card.archive")

    card: reactive[Card | None] = reactive(None, always_update=False)

    class Action(Message):
        def __init__(self, card: "TaskCard", action: str) -> None:
            super().__init__()
            self.task_card = card
            self.action = action

        @property
        def task_id(self) -> str:
            return self.task_card.task_id

    def __init__(self, card: Card, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task_id = card.id
        self.set_reactive(TaskCard.card, card)
        self._thumb_key: tuple[str, int] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="card-row"):
            yield Static(id="card-text")
        yield CardActions()

    def on_mount(self) -> None:
        self._show()

    def watch_card(self) -> None:
        if self.is_mounted:
            self._show()

    def _show(self) -> None:
        card = self.card
        if card is None or not self.query("#card-text"):  # not composed (yet), or being removed
            return
        self.set_classes(["-" + card.state])
        self.query_one("#card-text", Static).update(card_body(card, getattr(self.app, "currency", "credits")))
        self.query_one(CardActions).show(card, focused=self.has_focus)
        self.tooltip = f"{card.title} — {card.id}"
        self._show_thumb(card)

    def _show_thumb(self, card: Card) -> None:
        image = next((a for a in card.artifacts if a.is_image), None)
        key = (image.path, image.version) if image else None
        if key == self._thumb_key:
            return
        self._thumb_key = key
        for old in self.query("#thumb"):
            old.remove()
        self.query_one("#card-row").styles.min_height = 5 if image is not None else None  # no jump when it loads
        if image is not None:
            self.run_worker(self._mount_thumb(image.path), group="thumb", exclusive=True, exit_on_error=False)

    async def _mount_thumb(self, rel: str) -> None:
        from ..images import load_picture, widget_class

        cls = await widget_class(getattr(self.app, "image_mode", "auto"))
        root = getattr(self.app, "workspace_root", None)
        if cls is None or root is None:
            return
        picture = await load_picture(root / rel, (192, 160))
        if picture is None or not self.is_mounted:
            return
        row = self.query_one("#card-row")
        await row.mount(cls(picture, id="thumb"), before=0)

    def on_key(self, event: Any) -> None:
        redirect_letters(self, event)

    def on_focus(self) -> None:
        if self.card is not None:
            self.query_one(CardActions).show(self.card, focused=True)

    def on_blur(self) -> None:
        if self.card is not None:
            self.query_one(CardActions).show(self.card)

    def action_open(self) -> None:
        self.post_message(self.Action(self, "open"))

    def action_reply(self) -> None:
        self.post_message(self.Action(self, "reply"))

    def action_pause(self) -> None:
        self.post_message(self.Action(self, "pause"))

    def action_stop(self) -> None:
        self.post_message(self.Action(self, "stop"))

    def action_promote(self) -> None:
        self.post_message(self.Action(self, "promote"))

    def action_archive(self) -> None:
        self.post_message(self.Action(self, "archive"))
