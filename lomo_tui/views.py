"""The read model: database rows turned into view models (cards, task detail, gates, tree marks, header).

One place for every query a live view makes, so new runtime features (checklists, media jobs,
charges, change notices) are added here once. No Textual import: the CLI or a web view may reuse it.

Tolerance: a table or column that a later subsystem adds (checklists, jobs, charges) may be
missing; such a section is simply empty. Each optional section runs in its own read transaction,
so a failing query cannot spoil the others (PostgreSQL aborts a transaction on any error).
"""
from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from functools import wraps
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, TypeVar

from .errors import ERROR_SAID, LomoError, Said, UnknownId, error_words, shown
from . import clock
from .language import detect_language, message

if TYPE_CHECKING:
    from sqlalchemy import Table, func, or_, select
    from sqlalchemy.exc import SQLAlchemyError

    from .store import schema as s

log = logging.getLogger("lomo.views")
T = TypeVar("T")

MAIN_KIND = "main"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
REMOVED = ("removed", "deleted")
DONE_WORDS = frozenset({"done", "completed", "complete", "verified", "skipped", "succeeded"})
RUNNING_WORDS = frozenset({"running", "active", "queued", "in_progress", "submitted", "started"})

# Display state of a card (K2) -> label shown to the creator.
CARD_STATES = ("running", "waiting_job", "waiting_you", "paused", "done", "failed", "stopped", "idle", "archived")
STATE_LABELS = {state: message(f"tui_card.state_{state}", "en") for state in CARD_STATES}  # a card speaks its
# task's language: tui_card.state_<state> in the catalogue; these are the English words (the CLI's)


# ---- view models --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Header:
    workspace: str
    model: str
    spend_today: float  # paid generation charged today, in `currency` (what the daily cap governs)
    cap: float | None
    gates: int
    running: int
    currency: str = "credits"
    model_cost_today: float = 0.0  # model tokens, USD as the provider reports them (0 for lomo/local)


@dataclass(frozen=True)
class Artifact:
    path: str
    version: int
    kind: str
    author: str = "agent"

    @property
    def is_image(self) -> bool:
        return self.kind == "image" or self.path.lower().endswith(IMAGE_SUFFIXES)

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


@dataclass(frozen=True)
class Job:
    id: str
    kind: str
    status: str
    progress: float | None  # 0..1, None when unknown
    cancel: str = ""  # a cancel the provider could not honour ("unsupported", "kept_aside"): the card says so


@dataclass(frozen=True)
class Card:
    id: str
    title: str
    kind: str
    status: str  # the raw task status
    state: str  # a key of STATE_LABELS
    checklist_done: int = 0
    checklist_total: int = 0
    spend: float = 0.0  # charges for paid generation, in the budget's currency
    model_cost: float = 0.0  # USD of model tokens
    artifacts: tuple[Artifact, ...] = ()
    notices: tuple[str, ...] = ()
    jobs: tuple[Job, ...] = ()
    reply: str = ""
    reason: str = ""
    outcome: str = ""  # why the calls the last step announced did not happen (a declined spend…), if so
    waiting_messages: int = 0  # creator messages the task has not read yet
    archived: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
    language: str = "en"  # the task's language: the card's labels speak it

    @property
    def state_label(self) -> str:
        return STATE_LABELS.get(self.state, self.state)

    @property
    def can_resume(self) -> bool:
        return self.status in ("paused", "failed")


@dataclass(frozen=True)
class StreamItem:
    """One entry of a conversation stream: a message, an undelivered inbox message, or a task card."""

    key: str  # unique and stable: "m:<message id>", "i:<inbox id>", "c:<task id>"
    kind: str  # user | assistant | pending | failed (not answered) | card | tool | error (a failed turn) | routed
    text: str
    at: float
    task_id: str | None = None
    status: str = ""
    detail: str = ""  # "error": the words the failed turn was answering; "routed": the inbox id
    language: str = "en"  # of the creator's words it concerns: its labels ("not this task"…) speak it


@dataclass(frozen=True)
class StreamPage:
    items: tuple[StreamItem, ...]
    earlier: int  # how many older messages exist before this page
    oldest_id: int | None  # keyset cursor for the next older page


@dataclass(frozen=True)
class GateOption:
    label: str
    consequence: str


@dataclass(frozen=True)
class GateView:
    id: str
    kind: str
    question: str
    options: tuple[GateOption, ...]
    task_id: str | None
    task_title: str
    blocks: str
    continues: str
    created_at: float
    language: str = "en"  # the task's (or the routed message's) language: the card's labels speak it


@dataclass(frozen=True)
class ChecklistItem:
    title: str
    status: str
    needs_confirmation: bool = False
    why: str = ""  # to be checked again, or re-opened: the reason (tasks.evidence, J2)

    @property
    def done(self) -> bool:
        return self.status.lower() in DONE_WORDS


@dataclass(frozen=True)
class InboxItem:
    id: str
    text: str
    status: str  # pending | consumed | withdrawn
    sent_at: float
    consumed_step: int | None
    acted: bool
    replaces: str | None

    @property
    def label(self) -> str:
        """B3: delivered / read by the model / acted upon (in the language of the message's words)."""
        return self.label_in(detect_language(self.text))

    def label_in(self, lang: str) -> str:
        if self.status in ("pending", "withdrawn", "failed"):
            return message(f"tui_inbox.{self.status}", lang)
        return message("tui_inbox.acted" if self.acted else "tui_inbox.read", lang, step=self.consumed_step)

    @property
    def can_change(self) -> bool:
        return self.status == "pending"


@dataclass(frozen=True)
class TimelineEntry:
    at: float
    kind: str  # step | tool | job | gate | event
    text: str
    status: str = ""


@dataclass(frozen=True)
class TaskDetail:
    card: Card
    goal: str
    brief: str
    language: str
    checklist: tuple[ChecklistItem, ...]
    artifacts: tuple[Artifact, ...]
    inbox: tuple[InboxItem, ...]
    timeline: tuple[TimelineEntry, ...]


@dataclass(frozen=True)
class FileMark:
    path: str
    version: int
    author: str  # who made the latest version: creator | agent
    changed_by_you: bool  # the creator edited a file that existed before
    notices: int = 0
    stale: bool = False  # a production graph's result made from inputs that changed since (I1)


@dataclass(frozen=True)
class TaskChoice:
    id: str
    title: str
    kind: str
    status: str


@dataclass
class Snapshot:
    """Everything the main screen shows, read in one go."""

    header: Header
    cards: dict[str, Card] = field(default_factory=dict)
    gates: tuple[GateView, ...] = ()
    marks: dict[str, FileMark] = field(default_factory=dict)


# ---- helpers ------------------------------------------------------------------------------------
def _load_sqlalchemy() -> None:
    """Bring SQLAlchemy and the schema in on the first query. The view models above need neither, so a
    screen can be drawn (first paint) before the ~150 ms these imports cost."""
    if "select" in globals():
        return
    import sqlalchemy
    from sqlalchemy import exc

    from .store import schema
    from .workspace import scope

    globals().update(Table=sqlalchemy.Table, func=sqlalchemy.func, or_=sqlalchemy.or_, select=sqlalchemy.select,
                     SQLAlchemyError=exc.SQLAlchemyError, s=schema, scope=scope)


F = TypeVar("F", bound=Callable[..., Any])


def query(fn: F) -> F:
    """A view query: SQLAlchemy loaded, and scoped to the workspace its database serves (the runtime's: only
    that folder's tasks are shown; a database no runtime opened shows every task)."""
    @wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        _load_sqlalchemy()
        db = args[0] if args else kwargs.get("db")
        token = scope.SERVING.set(getattr(db, "workspace_id", None))
        try:
            return await fn(*args, **kwargs)
        finally:
            scope.SERVING.reset(token)
    return wrapper  # type: ignore[return-value]


def optional_table(*names: str) -> Table | None:
    """A table a later subsystem adds (None until it exists in the schema)."""
    _load_sqlalchemy()
    for name in names:
        table = getattr(s, name, None)
        if isinstance(table, Table):
            return table
        table = s.metadata.tables.get(name)
        if table is not None:
            return table
    return None


def column(table: Table, *names: str) -> Any:
    for name in names:
        if name in table.c:
            return table.c[name]
    return None


@query
async def guarded(db: Any, fn: Callable[[Any], Awaitable[T]], default: T) -> T:
    """Run FN(conn) in its own read transaction; a missing table/column gives DEFAULT."""
    try:
        async with db.read() as conn:
            return await fn(conn)
    except (SQLAlchemyError, LomoError) as exc:
        log.debug("optional view section skipped: %s", exc)
        return default


def start_of_today(now: float | None = None) -> float:
    today = dt.datetime.fromtimestamp(now if now is not None else clock.now()).date()
    return dt.datetime.combine(today, dt.time()).timestamp()


def budget_terms(settings: Any) -> tuple[float | None, str]:
    """(daily cap, currency) as governance reads them from `[budget]` (daily_free_cap, currency)."""
    section = settings.section("budget") if hasattr(settings, "section") else {}
    try:
        from .governance.budget import Budget

        budget = Budget.from_config(section)
        return budget.daily_free_cap, budget.currency
    except (ImportError, AttributeError, TypeError, ValueError):
        pass
    for key in ("daily_free_cap", "daily_cap", "daily_limit"):
        if section.get(key) not in (None, ""):
            try:
                return float(section[key]), str(section.get("currency", "credits"))
            except (TypeError, ValueError):
                break
    return None, str(section.get("currency", "credits"))


def card_state(status: str, archived: bool, wait_kind: str | None, pending_gate: bool) -> str:
    """Map a task's status (plus its active turn's wait) to the card state of K2."""
    if archived:
        return "archived"
    status = status or "idle"
    if status in ("paused", "done", "failed", "stopped"):
        return status
    if wait_kind == "job" or "job" in status:
        return "waiting_job"
    if wait_kind == "gate" or pending_gate or status.startswith("waiting"):
        return "waiting_you"
    if status in RUNNING_WORDS:
        return "running"
    return "idle" if status == "idle" else status


def _progress(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(1.0, number / 100 if number > 1 else number))


def _tool_error(content: str | None, lang: str = "en", stored: Any = None, name: str | None = None) -> str:
    """What became of a failed call, for its card in LANG (from a tool result's JSON text CONTENT, or the
    ledger's STORED result, which also keeps the error's catalogue form), or "". A declined spend and a
    generation that was not made are said in the catalogue's words; other errors in LANG where they have a
    catalogue form (`tool_error.*`, `call_error.*`), else as they are. A call the runtime refused before it started
    (a tool this task cannot use: no ledger row keeps its wording) is said by its tool NAME."""
    data = stored if isinstance(stored, dict) else None
    if data is None:
        try:
            data = json.loads(content or "")
        except ValueError:
            return ""
    if not isinstance(data, dict) or not data.get("error"):
        return ""
    kind = str(data.get("error_kind") or "")
    if kind == "declined":
        return message("tui_card.outcome_declined", lang)
    said = Said.load(data.get(ERROR_SAID))
    if kind == "unknown_tool" and said is None and name:
        return message("call_error.not_available", lang, tool=worded("tui_tools." + name, name, lang))
    if kind.startswith("job_") and kind != "job_unknown":
        if said is not None and said.key == "tool_error.not_made":
            reason = "".join(shown("", v, lang) if isinstance(v, Said) else str(v)
                             for v in (said.fields.get("reason", ""), said.fields.get("refund", "")))
        else:
            reason = str(data["error"]).split("): ", 1)[-1]
        return message("tui_card.outcome_not_made", lang, reason=reason)
    return error_words(data, lang)


def _loaded(result: Any) -> Any:
    """A ledger result column's value (JSON text on some rows)."""
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return None
    return result


def _short(text: str | None, limit: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- header ---------------------------------------------------------------------------------------
@query
async def load_header(db: Any, settings: Any, now: float | None = None) -> Header:
    since = start_of_today(now)
    async with db.read() as conn:
        gates = (await conn.execute(select(func.count()).select_from(s.gates).outerjoin(
            s.tasks, s.tasks.c.id == s.gates.c.task_id).where(
            s.gates.c.status == "pending", scope.tasks_here()))).scalar() or 0
        running = (await conn.execute(select(func.count()).select_from(s.tasks).where(
            s.tasks.c.kind != MAIN_KIND, s.tasks.c.status.in_(tuple(RUNNING_WORDS)), scope.tasks_here()))).scalar() or 0
        model_cost = (await conn.execute(select(func.coalesce(func.sum(s.model_calls.c.cost), 0.0)).where(
            s.model_calls.c.created_at >= since))).scalar() or 0.0
    charges = optional_table("charges")
    spend = 0.0
    if charges is not None and column(charges, "amount") is not None:
        async def q(conn: Any) -> float:
            query = select(func.coalesce(func.sum(column(charges, "amount")), 0.0))
            at = column(charges, "created_at", "at")
            if at is not None:
                query = query.where(at >= since)
            return float((await conn.execute(_charged(query, charges))).scalar() or 0.0)
        spend = await guarded(db, q, 0.0)
    cap, currency = budget_terms(settings)
    return Header(workspace=str(settings.workspace), model=settings.model, spend_today=spend, cap=cap,
                  gates=int(gates), running=int(running), currency=currency, model_cost_today=float(model_cost))


def _charged(query: Any, charges: Table) -> Any:
    """Only charges that stand (not refunded or voided)."""
    status = column(charges, "status")
    if status is None:
        return query
    return query.where(or_(status.is_(None), status.notin_(("refunded", "void", "voided", "cancelled"))))


# ---- cards ----------------------------------------------------------------------------------------
@query
async def load_cards(db: Any, task_ids: Iterable[str] | None = None, *, include_archived: bool = False,
                     limit: int = 500) -> dict[str, Card]:
    """Cards for every non-main task (or just TASK_IDS), oldest first, in one batch of queries."""
    wanted = list(task_ids) if task_ids is not None else None
    async with db.read() as conn:
        query = select(s.tasks).where(s.tasks.c.kind != MAIN_KIND)
        if wanted is not None:
            query = query.where(s.tasks.c.id.in_(wanted))
        else:
            query = query.where(scope.tasks_here())
            if not include_archived:
                query = query.where(s.tasks.c.archived.is_(False))
        rows = (await conn.execute(query.order_by(s.tasks.c.created_at.desc()).limit(limit))).all()
        ids = [r.id for r in rows]
        if not ids:
            return {}
        waits = {r.task_id: r.wait_kind for r in (await conn.execute(select(
            s.turns.c.task_id, s.turns.c.wait_kind).where(
            s.turns.c.task_id.in_(ids), s.turns.c.status == "waiting"))).all()}
        gated = set((await conn.execute(select(s.gates.c.task_id).where(
            s.gates.c.task_id.in_(ids), s.gates.c.status == "pending"))).scalars())
        cost = func.coalesce(func.sum(s.model_calls.c.cost), 0.0)
        model_cost = dict((await conn.execute(select(s.model_calls.c.task_id, cost).where(
            s.model_calls.c.task_id.in_(ids)).group_by(s.model_calls.c.task_id))).all())
        artifacts: dict[str, list[Artifact]] = {}
        for a in (await conn.execute(select(s.task_objects.c.task_id, s.objects.c.path, s.objects.c.version,
                                            s.objects.c.kind, s.objects.c.last_author).join(
                s.objects, s.objects.c.id == s.task_objects.c.object_id).where(
                s.task_objects.c.task_id.in_(ids), s.task_objects.c.role == "output",
                s.objects.c.deleted.is_(False)).order_by(s.task_objects.c.updated_at.desc(),
                                                         s.objects.c.path))).all():
            artifacts.setdefault(a.task_id, []).append(Artifact(a.path, a.version, a.kind, a.last_author))
        waiting = dict((await conn.execute(select(s.inbox.c.task_id, func.count()).where(
            s.inbox.c.task_id.in_(ids), s.inbox.c.status == "pending").group_by(s.inbox.c.task_id))).all())
        notices: dict[str, list[str]] = {}
        languages = {r.id: r.language or "en" for r in rows}
        for n in (await conn.execute(select(s.notices).where(
                s.notices.c.task_id.in_(ids), s.notices.c.status == "open").order_by(s.notices.c.id))).all():
            notices.setdefault(n.task_id, []).append(await _notice_text(conn, n, languages[n.task_id]))
        last = select(s.messages.c.task_id, func.max(s.messages.c.id).label("mid")).where(
            s.messages.c.task_id.in_(ids), s.messages.c.role == "assistant",
            s.messages.c.content.is_not(None)).group_by(s.messages.c.task_id).subquery()
        replies: dict[str, str] = {}
        outcomes: dict[str, str] = {}  # what became of the calls a "Generating…" preamble announced
        for r in (await conn.execute(select(last.c.task_id, s.messages.c.id, s.messages.c.content,
                                            s.messages.c.tool_calls).join(
                s.messages, s.messages.c.id == last.c.mid))).all():
            replies[r.task_id] = r.content
            if r.tool_calls:
                replies[r.task_id] = ""  # a preamble to tool calls, not a reply: it goes stale once they ran
                results = (await conn.execute(select(s.messages.c.content, s.messages.c.name,
                                                     s.tool_calls.c.result).outerjoin(
                    s.tool_calls, s.tool_calls.c.id == s.messages.c.tool_call_id).where(
                    s.messages.c.task_id == r.task_id, s.messages.c.role == "tool",
                    s.messages.c.id > r.id).order_by(s.messages.c.id))).all()
                lang = languages[r.task_id]
                outcomes[r.task_id] = next((e for e in (_tool_error(c.content, lang, _loaded(c.result), c.name)
                                                        for c in results) if e), "")
                if not results:
                    replies[r.task_id] = r.content  # the calls have not run yet: the preamble is still true
    checklists = await load_checklist_progress(db, ids)
    jobs = await load_jobs(db, ids)
    charges = await load_charges_by_task(db, ids)
    cards = {}
    for r in reversed(rows):
        done, total = checklists.get(r.id, (0, 0))
        cards[r.id] = Card(
            id=r.id, title=r.title, kind=r.kind, status=r.status,
            state=card_state(r.status, bool(r.archived), waits.get(r.id), r.id in gated),
            checklist_done=done, checklist_total=total,
            spend=charges.get(r.id, 0.0), model_cost=float(model_cost.get(r.id) or 0.0),
            artifacts=tuple(artifacts.get(r.id, [])[:4]), notices=tuple(notices.get(r.id, [])),
            jobs=tuple(jobs.get(r.id, [])), reply=_short(replies.get(r.id)), reason=r.status_reason or "",
            outcome=_short(outcomes.get(r.id)), waiting_messages=waiting.get(r.id, 0),
            archived=bool(r.archived), created_at=r.created_at, updated_at=r.updated_at,
            language=r.language or "en")
    return cards


async def _notice_text(conn: Any, notice: Any, lang: str) -> str:
    """A change notice as the task's card says it, in LANG ("storyboard.md v1 → v2: 'Shot 2' changed; …"):
    the creator's file, the versions, what changed (read again from the two versions' text)."""
    from .workspace.objects import change_parts

    texts = dict((await conn.execute(select(s.object_versions.c.version, s.object_versions.c.content).where(
        s.object_versions.c.object_id == notice.object_id,
        s.object_versions.c.version.in_((notice.from_version, notice.to_version))))).all())
    old, new = texts.get(notice.from_version), texts.get(notice.to_version)
    if isinstance(old, str) and isinstance(new, str):
        headings, added, removed = change_parts(old, new)
        what = (", ".join(message("tui_card.notice_heading", lang, heading=repr(h)) for h in headings) if headings
                else message("tui_card.notice_lines", lang, added=added, removed=removed))
    else:
        what = message("tui_card.notice_changed", lang)
    return message("tui_card.notice", lang, path=notice.path, old=notice.from_version, new=notice.to_version,
                   what=what)


def _checklist_table() -> tuple[Table, Any, Any, Any, Any] | None:
    table = optional_table("checklist_items", "checklist", "checklists", "checklist_steps")
    if table is None:
        return None
    task = column(table, "task_id")
    status = column(table, "status", "state")
    if task is None or status is None:
        return None
    title = column(table, "title", "text", "step", "description", "name")
    order = column(table, "position", "seq", "ord", "idx", "number", "id")
    return table, task, status, title, order


@query
async def load_checklist_progress(db: Any, ids: list[str]) -> dict[str, tuple[int, int]]:
    found = _checklist_table()
    if found is None:
        return {}
    table, task, status, _, _ = found

    async def q(conn: Any) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = {}
        for task_id, state, count in (await conn.execute(select(task, status, func.count()).where(
                task.in_(ids), status.notin_(REMOVED)).group_by(task, status))).all():
            entry = out.setdefault(task_id, [0, 0])
            entry[1] += count
            if str(state or "").lower() in DONE_WORDS:
                entry[0] += count
        return {k: (v[0], v[1]) for k, v in out.items()}

    return await guarded(db, q, {})


@query
async def load_checklist(db: Any, task_id: str) -> tuple[ChecklistItem, ...]:
    found = _checklist_table()
    if found is None:
        return ()
    table, task, status, title, order = found

    async def q(conn: Any) -> tuple[ChecklistItem, ...]:
        query = select(table).where(task == task_id, status.notin_(REMOVED))
        if order is not None:
            query = query.order_by(order)
        rows = (await conn.execute(query)).all()
        confirm = column(table, "needs_confirmation")
        why = await _checklist_why(conn, task_id, rows)
        return tuple(ChecklistItem(str(getattr(r, title.name) if title is not None else "step"),
                                   str(getattr(r, status.name) or ""),
                                   bool(getattr(r, confirm.name)) if confirm is not None else False,
                                   why.get(getattr(r, "id", None), "")) for r in rows)

    return await guarded(db, q, ())


async def _checklist_why(conn: Any, task_id: str, rows: list[Any]) -> dict[str, str]:
    """Steps to check again (their evidence went stale) or re-opened, and why."""
    if optional_table("step_evidence") is None:
        return {}
    from .tasks import evidence, replan
    from .tasks.checklist import REOPENED

    out = await replan.outdated(conn, task_id)  # planned for an older goal (J1): to re-plan
    reopened = {r.id: str(r.evidence).removeprefix(REOPENED).strip() for r in rows
                if str(getattr(r, "evidence", "")).startswith(REOPENED)}
    stale = await evidence.why_stale(conn, task_id)
    if reopened or stale:
        lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
        out.update({item: message("evidence.reopened", lang, why=why) for item, why in reopened.items()})
        out.update({item: message("evidence.check_again", lang, why=why) for item, why in stale.items()})
    return out


# A cancelled job the provider could not stop stays on the card, saying so (issue 11 §1): the catalogue's
# [tui_card] job_cancel_<state>.
CANCEL_NOTES = ("unsupported", "kept_aside")


def cancel_note(state: str | None, lang: str = "en") -> str:
    """What a job whose cancel_state is STATE says on its card ("" for a job not cancelled that way)."""
    return message(f"tui_card.job_cancel_{state}", lang) if state in CANCEL_NOTES else ""


@query
async def load_jobs(db: Any, ids: list[str]) -> dict[str, list[Job]]:
    """Generation jobs still in flight, per task (empty until the studio's table exists)."""
    jobs = optional_table("jobs", "generation_jobs")
    if jobs is None or column(jobs, "task_id") is None:
        return {}
    task, status = column(jobs, "task_id"), column(jobs, "status", "state")
    kind, progress = column(jobs, "kind"), column(jobs, "progress")

    async def q(conn: Any) -> dict[str, list[Job]]:
        out: dict[str, list[Job]] = {}
        query = select(jobs).where(task.in_(ids))
        cancel = column(jobs, "cancel_state")
        if status is not None:
            ended = status.notin_(tuple(DONE_WORDS | {"failed", "cancelled", "canceled", "refunded", "expired"}))
            query = query.where(ended | cancel.in_(tuple(CANCEL_NOTES))) if cancel is not None else query.where(ended)
        for r in (await conn.execute(query)).all():
            state = getattr(r, cancel.name) if cancel is not None else None
            note = cancel_note(state)
            out.setdefault(getattr(r, task.name), []).append(Job(
                id=str(r.id), kind=str(getattr(r, kind.name)) if kind is not None else "job",
                status=note or (str(getattr(r, status.name)) if status is not None else ""),
                progress=None if note else _progress(getattr(r, progress.name)) if progress is not None else None,
                cancel=state if note else ""))
        return out

    return await guarded(db, q, {})


@query
async def load_charges_by_task(db: Any, ids: list[str]) -> dict[str, float]:
    """What paid generation cost each task (charges that stand)."""
    charges = optional_table("charges")
    if charges is None or column(charges, "amount") is None:
        return {}
    amount = column(charges, "amount")
    task = column(charges, "task_id")
    jobs = optional_table("jobs", "generation_jobs")

    async def q(conn: Any) -> dict[str, float]:
        if task is not None:
            query = select(task, func.coalesce(func.sum(amount), 0.0)).where(task.in_(ids)).group_by(task)
        elif jobs is not None and column(charges, "job_id") is not None and column(jobs, "task_id") is not None:
            query = select(jobs.c.task_id, func.coalesce(func.sum(amount), 0.0)).join(
                jobs, jobs.c.id == charges.c.job_id).where(jobs.c.task_id.in_(ids)).group_by(jobs.c.task_id)
        else:
            return {}
        return {k: float(v or 0.0) for k, v in (await conn.execute(_charged(query, charges))).all()}

    return await guarded(db, q, {})


# ---- the main stream ----------------------------------------------------------------------------
@query
async def main_task_id(db: Any) -> str | None:
    async with db.read() as conn:
        return (await conn.execute(select(s.tasks.c.id).where(s.tasks.c.kind == MAIN_KIND))).scalar()


def _not_runtime_note() -> Any:
    """Not a note the runtime wrote to the model (a held call has run: English, with the call's JSON result).
    The stream shows the creator's words and Lomo's replies; the card shows what the call made."""
    return or_(s.messages.c.name.is_(None), s.messages.c.name != s.RUNTIME_NOTE)


@query
async def load_stream(db: Any, task_id: str | None, *, before: int | None = None, limit: int = 120,
                      with_cards: bool = True) -> StreamPage:
    """A page of TASK_ID's conversation (newest LIMIT messages older than BEFORE), its undelivered
    inbox messages, and — on the main thread — the task cards created in that time span."""
    if task_id is None:
        return StreamPage((), 0, None)
    async with db.read() as conn:
        query = select(s.messages.c.id, s.messages.c.role, s.messages.c.content, s.messages.c.created_at,
                       s.messages.c.name).where(
            s.messages.c.task_id == task_id, s.messages.c.role.in_(("user", "assistant")),
            s.messages.c.content.is_not(None), s.messages.c.content != "", _not_runtime_note())
        if before is not None:
            query = query.where(s.messages.c.id < before)
        rows = list(reversed((await conn.execute(query.order_by(s.messages.c.id.desc()).limit(limit))).all()))
        oldest = rows[0].id if rows else before
        earlier = 0
        if rows and oldest is not None:
            earlier = (await conn.execute(select(func.count()).select_from(s.messages).where(
                s.messages.c.task_id == task_id, s.messages.c.id < oldest,
                s.messages.c.role.in_(("user", "assistant")), s.messages.c.content.is_not(None),
                s.messages.c.content != "", _not_runtime_note()))).scalar() or 0
        items = [StreamItem(f"m:{r.id}", r.role, r.content or "", r.created_at, task_id) for r in rows]
        if before is None:
            pending = (await conn.execute(select(s.inbox).where(
                s.inbox.c.task_id == task_id, s.inbox.c.status == "pending").order_by(s.inbox.c.sent_at))).all()
            items += [StreamItem(f"i:{p.id}", "pending", p.text, p.sent_at, task_id, "delivered",
                                 language=detect_language(p.text)) for p in pending]
            failed = (await conn.execute(select(s.inbox).where(
                s.inbox.c.task_id == task_id, s.inbox.c.status == "failed").order_by(
                s.inbox.c.sent_at.desc()).limit(20))).all()
            reasons = {e.data.get("message_id"): e.data.get("reason", "") for e in (await conn.execute(
                select(s.events.c.data).where(s.events.c.task_id == task_id, s.events.c.type == "message_failed")
                .order_by(s.events.c.id.desc()).limit(200))).all() if e.data} if failed else {}
            items += [StreamItem(f"i:{f.id}", "failed", f.text, f.sent_at, task_id, reasons.get(f.id, ""),
                                 language=detect_language(f.text)) for f in failed]
        # turns that failed (a model error, a crash): shown where they happened, with the words they answered
        since_at = rows[0].created_at if rows and earlier else None
        fq = select(s.turns.c.id, s.turns.c.reason, s.turns.c.created_at, s.turns.c.updated_at,
                    s.turns.c.finished_at).where(
            s.turns.c.task_id == task_id, s.turns.c.status == "failed")
        if since_at is not None:
            fq = fq.where(s.turns.c.updated_at >= since_at)
        if before is not None and rows:
            fq = fq.where(s.turns.c.updated_at <= rows[-1].created_at)
        for t in (await conn.execute(fq.order_by(s.turns.c.updated_at.desc()).limit(20))).all():
            words = (await conn.execute(select(s.inbox.c.text).where(s.inbox.c.consumed_turn == t.id).order_by(
                s.inbox.c.sent_at))).scalars().all()
            if not words:  # failed before reading them: what was sent after the previous turn ended
                previous = (await conn.execute(select(func.max(s.turns.c.finished_at)).where(
                    s.turns.c.task_id == task_id, s.turns.c.id != t.id,
                    s.turns.c.finished_at < t.created_at))).scalar() or 0.0
                words = (await conn.execute(select(s.inbox.c.text).where(
                    s.inbox.c.task_id == task_id, s.inbox.c.consumed_turn.is_(None),
                    s.inbox.c.status != "withdrawn", s.inbox.c.sent_at > previous,
                    s.inbox.c.sent_at <= t.updated_at).order_by(s.inbox.c.sent_at))).scalars().all()
            items.append(StreamItem(f"e:{t.id}", "error", t.reason or "", t.finished_at or t.updated_at, task_id,
                                    "failed", "\n".join(words), language=detect_language("\n".join(words))))
        if with_cards:
            kind = (await conn.execute(select(s.tasks.c.kind).where(s.tasks.c.id == task_id))).scalar()
            if kind == MAIN_KIND:
                since = rows[0].created_at if rows and earlier else None
                until = None if before is None else (items[-1].at if items else None)
                tq = select(s.tasks.c.id, s.tasks.c.title, s.tasks.c.created_at).where(
                    s.tasks.c.kind != MAIN_KIND, s.tasks.c.archived.is_(False), scope.tasks_here())
                if since is not None:
                    tq = tq.where(s.tasks.c.created_at >= since)
                if until is not None:
                    tq = tq.where(s.tasks.c.created_at < until)
                items += [StreamItem(f"c:{t.id}", "card", t.title, t.created_at, t.id)
                          for t in (await conn.execute(tq)).all()]
                # follow-ups the router handed to a task: "→ sent to Poster series"
                rq = select(s.inbox.c.id, s.inbox.c.task_id, s.inbox.c.status, s.inbox.c.sent_at,
                            s.inbox.c.text, s.tasks.c.title).join(s.tasks, s.tasks.c.id == s.inbox.c.task_id).where(
                    s.inbox.c.source == "router", s.tasks.c.kind != MAIN_KIND, s.inbox.c.replaces.is_(None),
                    scope.tasks_here(),
                    # not the words that started a task the router just made (its card says that)
                    or_(s.tasks.c.source_inbox.is_(None), s.tasks.c.source_inbox != s.inbox.c.id,
                        s.inbox.c.sent_at > s.tasks.c.created_at + 1.0))
                if since is not None:
                    rq = rq.where(s.inbox.c.sent_at >= since)
                if until is not None:
                    rq = rq.where(s.inbox.c.sent_at < until)
                items += [StreamItem(f"r:{r.id}", "routed", r.title, r.sent_at, r.task_id, r.status, r.id,
                                     detect_language(r.text or ""))
                          for r in (await conn.execute(rq.order_by(s.inbox.c.sent_at.desc()).limit(limit))).all()]
    order = {"user": 0, "pending": 1, "failed": 1, "card": 2, "routed": 2, "assistant": 1, "error": 3}
    items.sort(key=lambda i: (i.at, order.get(i.kind, 3)))
    return StreamPage(tuple(items), int(earlier), oldest)


# ---- gates ----------------------------------------------------------------------------------------
def _scope_text(scope: Any, lang: str = "en") -> str:
    if not scope:
        return ""
    if isinstance(scope, str):
        return scope
    if isinstance(scope, dict):
        for key in ("description", "text", "blocks", "actions", "action"):
            if scope.get(key):
                value = scope[key]
                return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        if "turn" in scope:
            return message("gate.next_step", lang)
        return ", ".join(f"{k}: {v}" for k, v in scope.items())
    if isinstance(scope, list):
        return ", ".join(map(str, scope))
    return str(scope)


def _gate_language(g: Any) -> str:
    """A routing card speaks the routed message's language; any other card its task's."""
    scoped = g.scope.get("language") if isinstance(g.scope, dict) else None
    return scoped or g.task_language or "en"


def _gate_task_title(g: Any) -> str:
    """The task a card belongs to, by its title; the main thread by its name in the card's language."""
    if g.task_kind == "main" or not g.task_title:
        return message("wording.main_title", _gate_language(g))
    return str(g.task_title)


@query
async def load_gates(db: Any) -> tuple[GateView, ...]:
    async with db.read() as conn:
        rows = (await conn.execute(select(s.gates, s.tasks.c.title.label("task_title"),
                                          s.tasks.c.kind.label("task_kind"),
                                          s.tasks.c.language.label("task_language")).outerjoin(
            s.tasks, s.tasks.c.id == s.gates.c.task_id).where(s.gates.c.status == "pending",
                                                                 scope.tasks_here()).order_by(
            s.gates.c.created_at))).all()
    out = []
    for g in rows:
        options = tuple(GateOption(str(o.get("label", "")), str(o.get("consequence", "")))
                        if isinstance(o, dict) else GateOption(str(o), "") for o in (g.options or []))
        out.append(GateView(id=g.id, kind=g.kind, question=g.question, options=options, task_id=g.task_id,
                            task_title=_gate_task_title(g), blocks=_scope_text(g.scope, _gate_language(g)),
                            continues=g.continues or "", created_at=g.created_at, language=_gate_language(g)))
    return tuple(out)


# ---- the task view --------------------------------------------------------------------------------
@query
async def load_task(db: Any, task_id: str, *, timeline_limit: int = 400) -> TaskDetail:
    cards = await load_cards(db, [task_id])
    if task_id not in cards:
        raise UnknownId(f"no task with id {task_id!r}; it may have been deleted")
    async with db.read() as conn:
        task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == task_id))).one()
        artifacts = tuple(Artifact(a.path, a.version, a.kind, a.last_author) for a in (await conn.execute(
            select(s.objects.c.path, s.objects.c.version, s.objects.c.kind, s.objects.c.last_author).join(
                s.task_objects, s.task_objects.c.object_id == s.objects.c.id).where(
                s.task_objects.c.task_id == task_id, s.task_objects.c.role == "output",
                s.objects.c.deleted.is_(False)).order_by(s.task_objects.c.updated_at.desc(), s.objects.c.path))).all())
        inbox_rows = (await conn.execute(select(s.inbox).where(s.inbox.c.task_id == task_id).order_by(
            s.inbox.c.sent_at.desc()).limit(50))).all()
        acted_steps = set((await conn.execute(select(s.tool_calls.c.turn_id, s.tool_calls.c.step).where(
            s.tool_calls.c.turn_id.in_([r.consumed_turn for r in inbox_rows if r.consumed_turn])))).all())
        timeline = await _timeline(conn, task_id, timeline_limit, task.language or "en")
    inbox = tuple(InboxItem(id=r.id, text=r.text, status=r.status, sent_at=r.sent_at, consumed_step=r.consumed_step,
                            acted=(r.consumed_turn, r.consumed_step) in acted_steps, replaces=r.replaces)
                  for r in reversed(inbox_rows))
    timeline = tuple(sorted(timeline + list(await _job_timeline(db, task_id, task.language or "en")),
                            key=lambda e: e.at))
    return TaskDetail(card=cards[task_id], goal=task.goal, brief=task.brief, language=task.language,
                      checklist=await load_checklist(db, task_id), artifacts=artifacts, inbox=inbox,
                      timeline=timeline[-timeline_limit:])


def _args_text(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return ""
    for key in ("path", "prompt", "question", "title", "task_id"):
        if arguments.get(key):
            return _short(str(arguments[key]), 60)
    return ""


def worded(key: str, raw: str, lang: str) -> str:
    """The catalogue's word KEY in LANG, or RAW where the catalogue has none (a tool or status it does not know)."""
    try:
        return message(key, lang)
    except KeyError:
        return raw


async def _timeline(conn: Any, task_id: str, limit: int, lang: str = "en") -> list[TimelineEntry]:
    """Steps, tool calls and gates from the ledger, plus the task's lifecycle events, worded in LANG (the
    catalogue's [tui_timeline]; a tool by its label in [tui_tools], its status in [tui_timeline])."""
    def say(key: str, **fields: Any) -> str:
        return message("tui_timeline." + key, lang, **fields)

    def tool(name: str) -> str:
        return worded("tui_tools." + name, name, lang)

    turn_ids = select(s.turns.c.id).where(s.turns.c.task_id == task_id)
    out: list[TimelineEntry] = []
    for st in (await conn.execute(select(s.steps.c.step, s.steps.c.decision, s.steps.c.created_at, s.steps.c.epoch)
                                  .where(s.steps.c.turn_id.in_(turn_ids)).order_by(s.steps.c.created_at.desc())
                                  .limit(limit))).all():
        decision = st.decision or {}
        calls = [tool(c.get("name", "?")) for c in decision.get("tool_calls") or []]
        what = (say("decided", step=st.step, calls=", ".join(calls)) if calls
                else say("replied", step=st.step, text=_short(decision.get("content"), 60)))
        out.append(TimelineEntry(st.created_at, "step", what))
    for c in (await conn.execute(select(s.tool_calls).where(s.tool_calls.c.turn_id.in_(turn_ids)).order_by(
            s.tool_calls.c.started_at.desc()).limit(limit))).all():
        detail, status = _args_text(c.arguments), worded("tui_timeline.tool_" + c.status, c.status, lang)
        out.append(TimelineEntry(c.finished_at or c.started_at, "tool",
                                 say("tool_detail" if detail else "tool", tool=tool(c.name), detail=detail,
                                     status=status), c.status))
    for g in (await conn.execute(select(s.gates).where(s.gates.c.task_id == task_id))).all():
        out.append(TimelineEntry(g.created_at, "gate", say("asked", question=_short(g.question, 60)), "pending"))
        if g.resolved_at:
            res = g.resolution or {}
            if g.status == "expired":
                why, instead = (shown(res.get(k), res.get(k + "_said"), lang) for k in ("reason", "instead"))
                out.append(TimelineEntry(g.resolved_at, "gate",
                                         say("expired", reason=why or say("unanswered"))
                                         + (f"; {instead}" if instead else ""), g.status))
                continue
            word = say("approved", label=res.get("label")) if res.get("approved") else say("rejected")
            out.append(TimelineEntry(g.resolved_at, "gate", word, g.status))
    interesting = ("task_created", "task_pause", "task_resume", "task_stop", "turn_failed", "lease_taken_over",
                   "stale_write_rejected", "object_changed", "task_promoted", "task_archived", "message_withdrawn",
                   "job_cancelled", "job_result_kept_aside")
    for e in (await conn.execute(select(s.events).where(s.events.c.task_id == task_id,
                                                        s.events.c.type.in_(interesting)).order_by(
            s.events.c.id.desc()).limit(limit))).all():
        data = e.data or {}
        text = say("ev_" + e.type) if e.type in interesting and e.type != "object_changed" else e.type
        if e.type == "object_changed":
            text = say("changed", path=data.get("path"), version=data.get("version"))
        elif data.get("reason") and e.type in ("turn_failed", "task_stop"):
            text += f": {_short(str(data['reason']), 60)}"
        out.append(TimelineEntry(e.at, "event", text))
    return out


@query
async def _job_timeline(db: Any, task_id: str, lang: str = "en") -> tuple[TimelineEntry, ...]:
    jobs = optional_table("jobs", "generation_jobs")
    if jobs is None or column(jobs, "task_id") is None:
        return ()
    status, kind = column(jobs, "status", "state"), column(jobs, "kind")
    at = column(jobs, "updated_at", "created_at")

    async def q(conn: Any) -> tuple[TimelineEntry, ...]:
        rows = (await conn.execute(select(jobs).where(jobs.c.task_id == task_id))).all()
        cancel = column(jobs, "cancel_state")
        def said(r: Any) -> str:
            state = getattr(r, cancel.name) if cancel is not None else None
            raw = str(getattr(r, status.name)) if status is not None else ""
            status_of = cancel_note(state, lang) or (worded("tui_card.job_" + raw, raw, lang) if raw else "")
            raw_kind = str(getattr(r, kind.name)) if kind is not None else ""
            return message("tui_timeline.job", lang, kind=worded("tui_card.job_" + raw_kind, raw_kind, lang)
                           if raw_kind else "", status=status_of).strip()

        return tuple(TimelineEntry(float(getattr(r, at.name) or 0) if at is not None else 0.0, "job", said(r))
                     for r in rows)

    return await guarded(db, q, ())


# ---- workspace tree ------------------------------------------------------------------------------
def live_objects(workspace: Any = None) -> Any:
    """The WHERE clause for live objects, of the workspace folder WORKSPACE when given."""
    live = s.objects.c.deleted.is_(False)
    if workspace is None:
        return live
    import os

    ws = select(s.workspaces.c.id).where(s.workspaces.c.root == os.path.realpath(workspace)).scalar_subquery()
    return live & (s.objects.c.workspace_id == ws)


@query
async def load_marks(db: Any, workspace: Any = None) -> dict[str, FileMark]:
    """Version badges and "changed by you" marks for the workspace tree (of WORKSPACE, a folder)."""
    async with db.read() as conn:
        rows = (await conn.execute(select(s.objects.c.id, s.objects.c.path, s.objects.c.version,
                                          s.objects.c.last_author).where(live_objects(workspace)))).all()
        notices = dict((await conn.execute(select(s.notices.c.object_id, func.count()).where(
            s.notices.c.status == "open").group_by(s.notices.c.object_id))).all())
    from .production.report import stale_results

    stale = await stale_results(db, workspace)
    return {r.path: FileMark(r.path, r.version, r.last_author,
                             changed_by_you=r.last_author == "creator" and r.version > 1,
                             notices=int(notices.get(r.id, 0)), stale=r.path in stale) for r in rows}


# ---- pickers ---------------------------------------------------------------------------------------
@query
async def load_task_choices(db: Any, limit: int = 200, *, archived: bool = False) -> list[TaskChoice]:
    async with db.read() as conn:
        rows = (await conn.execute(select(s.tasks.c.id, s.tasks.c.title, s.tasks.c.kind, s.tasks.c.status).where(
            s.tasks.c.kind != MAIN_KIND, s.tasks.c.archived.is_(archived), scope.tasks_here()).order_by(
            s.tasks.c.updated_at.desc()).limit(limit))).all()
    return [TaskChoice(r.id, r.title, r.kind, r.status) for r in rows]


@query
async def load_file_paths(db: Any, limit: int = 2000, workspace: Any = None) -> list[str]:
    async with db.read() as conn:
        return list((await conn.execute(select(s.objects.c.path).where(live_objects(workspace)).order_by(
            s.objects.c.path).limit(limit))).scalars())


@query
async def controllable_tasks(db: Any) -> list[str]:
    """Tasks that "pause all" applies to: not main, not archived, not finished or paused."""
    async with db.read() as conn:
        return list((await conn.execute(select(s.tasks.c.id).where(
            s.tasks.c.kind != MAIN_KIND, s.tasks.c.archived.is_(False), scope.tasks_here(),
            s.tasks.c.status.notin_(("done", "failed", "stopped", "paused"))))).scalars())


@query
async def snapshot(db: Any, settings: Any) -> Snapshot:
    return Snapshot(header=await load_header(db, settings), cards=await load_cards(db),
                    gates=await load_gates(db), marks=await load_marks(db, getattr(settings, "workspace", None)))
