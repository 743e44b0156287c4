"""What the creator can do, as app methods that screens, cards, gates and the palette call.

Each action goes through the session (the runtime's doors) and turns any failure into a notification
that says what to do — never a traceback on screen.
"""
from __future__ import annotations

import functools
import logging
import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from ..errors import LomoError
from ..language import detect_language
from .strings import creator_language, text

if TYPE_CHECKING:
    from ..views import GateView

log = logging.getLogger("lomo.tui")
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def log_hint(lang: str = "en") -> str:
    try:
        from ..config import log_dir

        return text("notify.log_hint", lang, path=log_dir() / "lomo.log")
    except Exception:  # noqa: BLE001
        return text("notify.log_hint_plain", lang)


def friendly(what: str) -> Callable[[F], F]:
    """Run an async action; report failures as notifications titled `tui_notify.fail_WHAT` ("Could not send
    the message") in the creator's language, saying why and what to do."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            lang = creator_language(self)
            try:
                return await fn(self, *args, **kwargs)
            except LomoError as exc:
                self.notify(str(exc), title=text(f"notify.fail_{what}", lang), severity="error", timeout=8)
            except Exception as exc:  # noqa: BLE001 — the creator sees a sentence, the log keeps the trace
                log.exception("TUI action %r failed", what)
                self.notify(f"{type(exc).__name__}: {exc}. {log_hint(lang)}",
                            title=text(f"notify.fail_{what}", lang), severity="error", timeout=10)
            return None
        return wrapper  # type: ignore[return-value]
    return decorate


class Actions:
    """Mixed into `LomoApp`."""

    session: Any
    live: Any

    boot_error: str | None
    queued: list[tuple[str, str | None]]

    def _need_runtime(self) -> None:
        lang = creator_language(self)
        if self.boot_error:
            raise LomoError(text("start.failed_action", lang, reason=self.boot_error))
        if self.session.runtime is None or not self.session.opened:
            raise LomoError(text("start.still_starting", lang))

    # ---- messages ---------------------------------------------------------------------------------
    async def submit(self, message: str, task_id: str | None = None) -> str | None:
        """Send MESSAGE, or keep it queued while the runtime starts. Returns "sent", "queued" or None
        (not accepted: the composer keeps the text and a notification says why)."""
        if self.boot_error:
            lang = detect_language(message)
            self.notify(text("start.failed_kept", lang, reason=self.boot_error), title=text("start.failed_title", lang),
                        severity="error", timeout=15)
            return None
        if self.session.runtime is None or not self.session.opened:
            self.queued.append((message, task_id))
            self.show_queued()
            return "queued"
        return "sent" if await self.do_send(message, task_id) else None

    def show_queued(self) -> None:
        from .widgets.composer import Composer
        from .widgets.stream import StreamView

        for screen in self.screen_stack:  # type: ignore[attr-defined]
            for composer in screen.query(Composer):
                composer.show_queued(len(self.queued))
            for stream in screen.query(StreamView):
                stream.show_queued([m for m, _ in self.queued])

    async def send_queued(self) -> None:
        """The runtime is ready: send what was typed meanwhile, in order."""
        waiting, self.queued = self.queued, []
        self.show_queued()
        for message, task_id in waiting:
            if not await self.do_send(message, task_id):
                self.give_back([message])

    def give_back(self, messages: list[str]) -> None:
        """Put messages that could not be sent back into the composer, so nothing typed is lost."""
        from .widgets.composer import Composer

        composers = list(self.screen_stack[0].query(Composer)) if self.screen_stack else []  # type: ignore
        if composers and messages:
            field = composers[0].input
            field.value = "\n\n".join([*messages, field.value] if field.value.strip() else messages)

    @friendly("send")
    async def do_send(self, words: str, task_id: str | None = None) -> str | None:
        self._need_runtime()
        message_id, _turn = await self.session.send(words, task_id)
        lang = detect_language(words)
        note = self.job_note(task_id, lang)
        if note:  # B4: say so at once; the next step decides whether to make it again
            self.notify(note[:1].upper() + note[1:] + ("。" if lang in ("zh", "ja") else "."),
                        title=text("notify.change_noted", lang), severity="information")
        self.live.schedule()
        return message_id

    snap: Any

    def job_note(self, task_id: str | None, lang: str = "en") -> str:
        """"the running clip keeps the old prompt; …" when TASK_ID has a generation running now."""
        from .widgets.card import RUNNING_JOB, running_job_note

        card = self.snap.cards.get(task_id) if self.snap is not None and task_id else None
        running = [j for j in card.jobs if j.status in RUNNING_JOB] if card is not None else []
        return running_job_note(running[0].kind, lang) if running else ""

    @friendly("take_back")
    async def do_not_this_task(self, inbox_id: str, lang: str | None = None) -> None:
        self._need_runtime()
        await self.session.not_this_task(inbox_id)
        self.notify(text("route.asked", lang or creator_language(self)), severity="information")
        self.live.schedule(everything=True)

    @friendly("change_message")
    async def do_withdraw(self, message_id: str, replacement: str | None = None) -> None:
        self._need_runtime()
        new = await self.session.withdraw(message_id, replacement)
        self.notify(text("notify.replaced" if new else "notify.withdrawn", creator_language(self)),
                    severity="information")
        self.live.schedule(everything=True)

    # ---- gates ------------------------------------------------------------------------------------
    async def confirm(self, question: str, detail: str, verb: str, then: Callable[[], Awaitable[Any]]) -> None:
        """Ask first (Cancel is highlighted; letters do nothing); run THEN only on an explicit yes."""
        from .screens.confirm import ConfirmScreen

        async def answered(yes: bool | None) -> None:
            if yes:
                await then()

        await self.push_screen(ConfirmScreen(question, detail, verb), answered)  # type: ignore[attr-defined]

    async def ask_resolve(self, gate: "GateView", approve: bool, option: int | None = None) -> None:
        """A gate key: approving goes straight on; rejecting asks first."""
        if approve:
            await self.do_resolve(gate, approve, option)
            return
        lang = gate.language
        await self.confirm(text("confirm.reject_q", lang, question=gate.question),
                           text("confirm.reject_detail", lang, task=gate.task_title), text("confirm.reject_verb", lang),
                           lambda: self.do_resolve(gate, False, None))

    @friendly("answer_gate")
    async def do_resolve(self, gate: "GateView", approve: bool, option: int | None = None) -> None:
        self._need_runtime()
        row = await self.session.resolve_gate(gate.id, approve=approve, option=option)
        resolution = row.resolution or {}
        lang = gate.language
        if approve:
            label = resolution.get("label")
            self.notify(text("notify.approved_as", lang, question=gate.question, label=label) if label
                        else text("notify.approved", lang, question=gate.question), severity="information")
        else:
            self.notify(text("notify.rejected", lang, question=gate.question), severity="information")
        self.live.schedule(everything=True)

    @friendly("approve_next")
    async def approve_next_gate(self) -> None:
        self._need_runtime()
        from ..views import load_gates

        gates = await load_gates(self.session.db)
        if not gates:
            self.notify(text("notify.no_gate", creator_language(self)), severity="information")
            return
        await self.do_resolve(gates[0], True, None)

    # ---- tasks ------------------------------------------------------------------------------------
    @friendly("change_task")
    async def do_card_action(self, task_id: str, action: str, confirmed: bool = False) -> None:
        self._need_runtime()
        from ..views import load_cards

        card = (await load_cards(self.session.db, [task_id])).get(task_id)
        if card is None:
            raise LomoError(text("notify.task_gone", creator_language(self)))
        lang = card.language  # what is said about a task speaks the task's language
        if action in ("stop", "archive") and not confirmed:
            await self.confirm(text(f"confirm.{action}_q", lang, title=card.title),
                               text(f"confirm.{action}_detail", lang), text(f"confirm.{action}_verb", lang),
                               lambda: self.do_card_action(task_id, action, confirmed=True))
            return
        if action == "open":
            await self.open_task(task_id)
            return
        if action == "pause":
            word = "resume" if card.can_resume else "pause"
            await self.session.control(task_id, word)
            self.notify(text("notify.resumed" if word == "resume" else "notify.paused_one", lang, title=card.title))
        elif action == "stop":
            await self.session.control(task_id, "stop")
            self.notify(text("notify.stopped", lang, title=card.title))
        elif action == "promote":
            if await self.session.promote(task_id):
                self.notify(text("notify.promoted", lang, title=card.title))
            else:
                self.notify(text("notify.already_kind", lang, title=card.title,
                                 kind=text(f"card.kind_{card.kind}", lang)), severity="warning")
        elif action == "archive":
            await self.session.archive(task_id)
            self.notify(text("notify.archived", lang, title=card.title))
        self.live.schedule(everything=True)

    async def open_task(self, task_id: str) -> None:
        from .screens.task import TaskScreen

        await self.push_screen(TaskScreen(task_id))  # type: ignore[attr-defined]

    @friendly("create_task")
    async def do_new_task(self, title: str, brief: str = "") -> str | None:
        self._need_runtime()
        task_id = await self.session.create_task(title, brief)
        self.notify(text("notify.new_task", detect_language(title), title=title))
        self.live.schedule(everything=True)
        return task_id

    @friendly("pause_all")
    async def do_pause_all(self) -> None:
        self._need_runtime()
        count = await self.session.pause_all()
        lang = creator_language(self)
        self.notify(text("notify.paused", lang, count=count) if count else text("notify.nothing_running", lang))
        self.live.schedule(everything=True)

    @friendly("unarchive")
    async def do_unarchive(self, task_id: str) -> None:
        self._need_runtime()
        await self.session.archive(task_id, archived=False)
        self.notify(text("notify.unarchived", creator_language(self)))
        self.live.schedule(everything=True)

    @friendly("switch_model")
    async def do_switch_model(self, name: str) -> None:
        self._need_runtime()
        self.session.switch_model(name)
        self.notify(text("notify.next_model", creator_language(self), name=name))
        self.after_model_switch()  # type: ignore[attr-defined]

    # ---- files ------------------------------------------------------------------------------------
    async def open_file(self, path: Path, siblings: list[Path] | None = None) -> None:
        """Preview PATH; ←/→ step through SIBLINGS (a task's results, or the files of its folder)."""
        from .screens.preview import PreviewScreen

        await self.push_screen(PreviewScreen(path, siblings))  # type: ignore[attr-defined]

    def edit_file(self, path: Path) -> None:
        if not editable(path):  # a text editor would show noise and could corrupt the file on save
            self.notify(text("files.not_text", name=path.name), title=text("files.not_text_title"),  # type: ignore
                        severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.notify(text("files.no_editor"), title=text("files.no_editor_title"),  # type: ignore
                        severity="warning")
            return
        try:
            with self.suspend():  # type: ignore[attr-defined]
                subprocess.call([*shlex.split(editor), str(path)])
        except Exception as exc:  # noqa: BLE001 — e.g. suspend unsupported, editor missing
            self.notify(text("files.editor_failed", editor=editor, error=exc),  # type: ignore
                        title=text("files.editor_title"), severity="error")
        self.live.schedule(everything=True)

    notify: Any
    suspend: Any


def editable(path: Path) -> bool:
    """Whether PATH is a text file a text editor may open (not a picture, clip, model, sound or binary)."""
    from ..workspace.files import is_text, kind_for

    try:
        return kind_for(path) not in ("image", "video", "3d", "audio") and is_text(path)
    except (OSError, ValueError):
        return False
