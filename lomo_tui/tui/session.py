"""The TUI's door to the embedded runtime. No Textual import here.

Every creator action goes through the runtime's own doors: `Runtime.send` (routing by id when the
target is known, A4), the ledger (withdraw, pause/resume/stop), governance (`resolve_gate`, recorded
with `by="creator:tui"`, G6), then `Runtime.resolve_wait`. The runtime is built in a thread after the
first paint, so importing SQLAlchemy and opening the database never delays the first screen.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any, Awaitable, Callable

from ..errors import LomoError
from .strings import starting_language, text as say

log = logging.getLogger("lomo.tui")

Seed = Callable[[Any], Awaitable[None]]


def is_remote(model: str) -> bool:
    return not model.startswith("lomo/")


def build_runtime(settings: Any) -> Any:
    """Import and construct the runtime (run in a thread: the imports take a few hundred ms)."""
    from ..runtime.scheduler import Runtime

    return Runtime(settings)


class Session:
    """Owns the runtime for the app's lifetime and offers the actions the screens need."""

    def __init__(self, settings: Any, *, runtime: Any = None, start_workers: bool = True,
                 seed: Seed | None = None) -> None:
        self.settings = settings
        self.runtime = runtime
        self.start_workers = start_workers
        self.seed = seed
        self.queue: asyncio.Queue[Any] | None = None
        self.main_id: str | None = None
        self.model_name = settings.model
        self.model_state = "loading" if is_remote(settings.model) else "ready"
        self.opened = False
        self.language = starting_language(settings)  # the creator's: of the last message they sent (notices
        # speak it); before any, the configured one (`language`, env LOMO_LANGUAGE), else the locale's
        self.on_language: Callable[[str], None] | None = None  # told when it changes (the app re-words its footers)

    # ---- life cycle -----------------------------------------------------------------------------
    async def open(self) -> None:
        if self.runtime is None:
            self.runtime = await asyncio.to_thread(build_runtime, self.settings)
        rt = self.runtime
        self.queue = rt.bus.subscribe(maxsize=5000)
        if self.start_workers:  # services too: the workspace watcher (object_changed notices), the studio
            await rt.start()
        else:
            await rt.open()
        if self.seed is not None:
            await self.seed(rt)
        self.main_id = await rt.ledger.main_task_id()
        await self._recall_language()
        self.opened = True

    async def _recall_language(self) -> None:
        """The creator's language from the last things they said before this start (notices speak it)."""
        from sqlalchemy import select

        from ..store import schema as s

        async with self.runtime.db.read() as conn:
            said = (await conn.execute(select(s.inbox.c.text).where(s.inbox.c.source == "creator").order_by(
                s.inbox.c.sent_at.desc()).limit(5))).scalars().all()
        for words in reversed(said):
            self.notice_language(words)

    async def close(self) -> None:
        rt, self.runtime = self.runtime, None
        if rt is None:
            return
        if self.queue is not None:
            rt.bus.unsubscribe(self.queue)
        try:
            await rt.close(grace=3.0)
        except Exception:  # noqa: BLE001 — closing must never keep the terminal hostage
            log.exception("runtime close failed")

    @property
    def db(self) -> Any:
        return self.runtime.db

    async def preload_model(self) -> None:
        """Import the remote model's client library in a thread; the header says "loading" meanwhile."""
        if not is_remote(self.model_name):
            self.model_state = "ready"
            return
        from ..models import remote

        self.model_state = "loading"
        try:
            await asyncio.to_thread(remote.preload)
        except Exception as exc:  # noqa: BLE001 — reported in the header and a notification
            self.model_state = "unavailable"
            raise LomoError(say("notify.model_library", self.language, model=self.model_name, error=exc)) from exc
        self.model_state = "ready"

    # ---- creator actions ----------------------------------------------------------------------------
    async def send(self, text: str, task_id: str | None = None) -> tuple[str, str]:
        text = text.strip()
        if not text:
            raise LomoError(say("notify.type_first", self.language))
        self.notice_language(text)
        return await self.runtime.send(text, task_id)

    def notice_language(self, words: str) -> None:
        """Follow the creator's language from WORDS they sent — unless they are too few to tell ("ok")."""
        from ..language import detect_language

        lang = detect_language(words)
        if (lang != "en" or len(words.split()) >= 3) and lang != self.language:
            self.language = lang
            if self.on_language is not None:
                self.on_language(lang)

    async def resolve_gate(self, gate_id: str, *, approve: bool, option: int | None = None) -> Any:
        """The creator's key press answers the gate (the one door: the runtime records it and wakes
        whatever it lets go on)."""
        return await self.runtime.resolve_gate(gate_id, approve=approve, option=option,
                                               by="creator:tui:" + ("approve" if approve else "reject"))

    async def control(self, task_id: str, action: str) -> None:
        await self.runtime.ledger.control(task_id, action)  # the reason is worded in the task's language
        if action == "stop":
            await self.runtime.studio.settle_cancelled()  # the render stops now, not at the next reconcile
        if action == "resume":
            await self.runtime.sweep()  # wake the resumed turn now, not at the next watchdog pass

    async def withdraw(self, message_id: str, replacement: str | None = None) -> str | None:
        new = await self.runtime.ledger.withdraw(message_id, replacement)
        if new is not None:
            await self.runtime.sweep()
        return new

    async def not_this_task(self, inbox_id: str) -> str:
        """The creator says a routed follow-up went to the wrong task: take it back if the task has not
        read it, and open a clarify card on the main thread (the other open tasks, a new task, cancel).
        Answering it delivers the words as chosen (`runtime.reactions` deliver_choice). Returns the gate id."""
        from sqlalchemy import select

        from ..governance.gates import open_gate
        from ..language import detect_language, message
        from ..store import schema as s
        from ..workspace.scope import tasks_of
        rt = self.runtime
        async with rt.db.read() as conn:
            row = (await conn.execute(select(s.inbox).where(s.inbox.c.id == inbox_id))).first()
            if row is None:
                raise LomoError(say("notify.message_gone", self.language))
            others = (await conn.execute(select(s.tasks.c.id, s.tasks.c.title).where(
                s.tasks.c.kind != "main", s.tasks.c.id != row.task_id, s.tasks.c.archived.is_(False),
                tasks_of(rt.workspace.id),
                s.tasks.c.status.notin_(("stopped", "done", "failed"))).order_by(
                s.tasks.c.updated_at.desc()).limit(4))).all()
            title = (await conn.execute(select(s.tasks.c.title).where(s.tasks.c.id == row.task_id))).scalar()
        if row.status == "pending":
            await rt.ledger.withdraw(inbox_id)
        words = row.text
        lang = detect_language(words)  # the card speaks the language of the words it asks about
        short = words if len(words) <= 60 else words[:59] + "…"
        new_title = " ".join(words.split()[:6])[:60] or say("route.new_title", lang)
        actions = [{"do": "send", "task_id": t.id, "label": say("route.send_to", lang, title=t.title),
                    "consequence": say("route.goes_to", lang)} for t in others]
        actions.append({"do": "new", "kind": "persistent", "title": new_title, "goal": words, "brief": "",
                        "label": say("route.new", lang), "consequence": say("route.new_goes", lang, title=new_title)})
        actions.append({"do": "cancel", "label": say("route.cancel", lang),
                        "consequence": say("route.cancel_goes", lang)})
        main = self.main_id or await rt.ledger.main_task_id()
        async with rt.db.write() as conn:
            gate = await open_gate(
                conn, task_id=main, kind="clarify", question=say("route.question", lang, words=short),
                options=[{"label": a["label"], "consequence": a["consequence"]} for a in actions],
                dedupe_key=f"not-this/{inbox_id}",
                scope={"description": say("route.scope", lang, words=short, title=title), "route": "not_this_task",
                       "actions": [{k: v for k, v in a.items() if k not in ("label", "consequence")}
                                   for a in actions],
                       "words": words, "message": words[:300], "language": lang, "was": row.task_id},
                continues=message("gate.message_waits", lang))
        return gate.id

    async def promote(self, task_id: str) -> bool:
        try:
            await self.runtime.ledger.control(task_id, "promote")
        except LomoError as exc:
            if "already" in str(exc):
                return False
            raise
        return True

    async def archive(self, task_id: str, archived: bool = True) -> None:
        await self.runtime.ledger.control(task_id, "archive" if archived else "unarchive")
        if archived:
            await self.runtime.studio.settle_cancelled()

    async def create_task(self, title: str, brief: str = "") -> str:
        title = title.strip()
        if not title:
            raise LomoError(say("notify.needs_title", self.language))
        return await self.runtime.ledger.create_task(title, kind="persistent", brief=brief.strip())

    async def pause_all(self) -> int:
        from ..views import controllable_tasks

        ids = await controllable_tasks(self.db)
        for task_id in ids:
            await self.runtime.ledger.control(task_id, "pause")
        return len(ids)

    def switch_model(self, name: str) -> None:
        """Use NAME for the next model calls (steps in flight finish on the old one)."""
        from ..models import make_model

        name = name.strip()
        if not name:
            raise LomoError(say("notify.name_model", self.language))
        settings = dataclasses.replace(self.settings, model=name)
        self.runtime.model = make_model(settings, self.runtime.ledger.count_model_calls)
        self.runtime.settings = settings
        self.settings = settings
        self.model_name = name
        self.model_state = "loading" if is_remote(name) else "ready"
