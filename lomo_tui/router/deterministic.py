"""Deterministic routing (A4): targets a message names outright. No model call, ever.

A message goes straight to a task when it
- names the task's id ("task-3f9a1c2b: make it bluer"), or
- names a workspace object (as the creator would type it: "poster_1.png", "posters/jazz_1.png") that
  exactly one task is bound to, or
- says one recently active task's whole title, word for word, in a message that works on it (not a question,
  not a request for new work: "輪島塗 商品カタログ、写真をもう少し明るく", "Видео с заплыва — продолжай"), or
- is a near-repeat of a message whose target the creator chose on a clarify card (route memory).

A target that is archived, stopped or failed is never chosen silently: the message then goes to the
main thread, whose Router sees the mention (hints) and offers the creator a choice (A8).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlalchemy import or_, select

from ..language import Parsed, cue, file_name_variants, find_files, is_generic, keywords, matchable, parse
from ..store import schema as s
from ..workspace.scope import belongs_here, tasks_here
from . import memory

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

TASK_ID = re.compile(r"\btask-(?:[0-9a-hjkmnp-tv-z]{26}|[0-9a-f]{8})\b")  # new ids, and older short ones
UNUSABLE_STATUS = ("stopped",)  # a failed task takes a message: "try again" is what it is for
MAX_MENTIONS = 8
MAX_READINGS = 8  # readings of one name looked up (a CJK name may carry the words typed before it)
TITLE_SCAN = 200  # the most recently active tasks whose whole title a message may name
TITLE_MIN_CHARS = 6  # shorter titles ("Logo", "海报") name a kind of piece, not one task
TITLED_ACTS = ("revise", "other", "continue", "resume", "one_shot")  # work on a piece, not questions or new goals


def usable(row: Any) -> bool:
    """May a message be delivered to this task without asking (A8)?"""
    return row is not None and row.kind != "main" and not row.archived and row.status not in UNUSABLE_STATUS


def here(row: Any) -> bool:
    """Usable, and a task of the workspace served (another folder's task runs there, not here)."""
    return usable(row) and belongs_here(row.workspace_id)


def mentioned_files(message: str | Parsed) -> list[str]:
    """The file names MESSAGE mentions (read from its parse when it is one)."""
    found = message.files if isinstance(message, Parsed) else find_files(message)
    return [f.strip("./") or f for f in found][:MAX_MENTIONS]


def _text(message: str | Parsed) -> str:
    return message.text if isinstance(message, Parsed) else message


def like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def readings(names: list[str]) -> dict[str, list[str]]:
    """{name as found: its readings, longest first} ("把海报_1.png" may be "海报_1.png": nlu.file_name_variants)."""
    return {name: [v.strip("./") or v for v in file_name_variants(name)][:MAX_READINGS] for name in names}


async def existing_paths(conn: AsyncConnection, names: list[str]) -> dict[str, str]:
    """{object id: path} of live workspace objects NAMES match: a path exactly (indexed), or else its last
    components ("jazz_1.png" is "posters/jazz_1.png"); the suffix scan only runs for names without an
    exact hit."""
    if not names:
        return {}
    live = s.objects.c.deleted.is_(False)
    found = {r.id: r.path for r in (await conn.execute(select(s.objects.c.id, s.objects.c.path).where(
        live, s.objects.c.path.in_(names)))).all()}
    rest = [n for n in names if n not in found.values()]
    if rest:
        suffixes = [s.objects.c.path.like("%/" + like_escape(n), escape="\\") for n in rest]
        found.update({r.id: r.path for r in (await conn.execute(select(s.objects.c.id, s.objects.c.path).where(
            live, or_(*suffixes)))).all()})
    return found


def names_path(name: str, path: str) -> bool:
    return path == name or path.endswith("/" + name)


async def resolve_files(conn: AsyncConnection, text: str | Parsed) -> dict[str, str]:
    """{file name as TEXT has it: the workspace path of its longest reading that exists} — "把海报_1.png" is
    "posters/海报_1.png", "cat.png" is "images/cat.png". Names with no existing reading are left out."""
    names = readings(mentioned_files(text))
    if not names:
        return {}
    found = await existing_paths(conn, list(dict.fromkeys(v for vs in names.values() for v in vs)))
    out: dict[str, str] = {}
    for name, variants in names.items():  # readings come longest first
        path = next((p for v in variants for p in sorted(found.values()) if names_path(v, p)), None)
        if path is not None:
            out[name] = path
    return out


async def missing_files(conn: AsyncConnection, text: str | Parsed) -> list[str]:
    """Files TEXT names (with an extension) of which no reading is a live workspace object (A8)."""
    names = readings(mentioned_files(text))
    if not names:
        return []
    found = await existing_paths(conn, list(dict.fromkeys(v for vs in names.values() for v in vs)))
    return [name for name, variants in names.items()
            if not any(names_path(v, path) for v in variants for path in found.values())]


async def file_bindings(conn: AsyncConnection, text: str | Parsed) -> dict[str, list[Any]]:
    """{mentioned name: [rows (task id, kind, status, archived, role, path)]} for the files TEXT names.

    A name is read as the longest of its readings that matches a workspace object (see existing_paths)."""
    names = readings(mentioned_files(text))
    found = await existing_paths(conn, list(dict.fromkeys(v for vs in names.values() for v in vs)))
    if not found:
        return {}
    rows = (await conn.execute(select(
        s.task_objects.c.object_id, s.task_objects.c.task_id, s.task_objects.c.role, s.tasks.c.kind,
        s.tasks.c.status, s.tasks.c.archived, s.tasks.c.workspace_id).join(
        s.tasks, s.tasks.c.id == s.task_objects.c.task_id).where(
        s.task_objects.c.object_id.in_(list(found)), s.tasks.c.kind != "main"))).all()
    out: dict[str, list[Any]] = {}
    for variants in names.values():
        for name in variants:
            hits = [r for r in rows if names_path(name, found[r.object_id])]
            if hits:
                out[name] = hits
                break
    return out


async def named_tasks(conn: AsyncConnection, text: str) -> list[Any]:
    ids = list(dict.fromkeys(TASK_ID.findall(text)))[:MAX_MENTIONS]
    if not ids:
        return []
    return list((await conn.execute(select(s.tasks.c.id, s.tasks.c.kind, s.tasks.c.status, s.tasks.c.archived,
                                           s.tasks.c.workspace_id).where(s.tasks.c.id.in_(ids)))).all())


async def task_row(conn: AsyncConnection, task_id: str) -> Any:
    return (await conn.execute(select(s.tasks.c.id, s.tasks.c.kind, s.tasks.c.status, s.tasks.c.archived,
                                      s.tasks.c.workspace_id).where(s.tasks.c.id == task_id))).first()


def _says_title(norm: str, title: str) -> bool:
    """Does NORM (a message, as the matchers read it) say TITLE whole, as words of its own?"""
    said = matchable(title).strip()
    if len(said) < TITLE_MIN_CHARS or said not in norm:  # (most titles: not said at all, nothing more to read)
        return False
    words = keywords(said)
    if len(words) < 2 or all(is_generic(w) for w in words):
        return False
    start = r"(?<!\w)" if _spaced(said[0]) else ""
    end = r"(?!\w)" if _spaced(said[-1]) else ""
    return re.search(start + re.escape(said) + end, norm) is not None


def _spaced(ch: str) -> bool:
    """Is CH a letter or digit of a script that puts spaces between words (a title's end is a word's end)?"""
    return ch.isalnum() and ch < "\u2e80"


async def titled_task(conn: AsyncConnection, message: str | Parsed) -> Any:
    """The one recently active task whose whole title MESSAGE says, when the message works on it (A4), else
    None: a question about it is the main thread's to answer, new work in its name ("a new …", "same as …")
    and a file no task is bound to ("use photo_42.jpg as the background of the pizzeria menu") the Router's
    to weigh."""
    parsed = message if isinstance(message, Parsed) else parse(message)
    reading = parsed.intent()
    lang = reading.language
    if parsed.files or reading.act not in TITLED_ACTS or reading.interrogative or any(
            cue(name, lang, parsed.text) for name in ("fresh", "new_word", "style_source")):
        return None
    norm = matchable(parsed.text)
    rows = (await conn.execute(select(s.tasks.c.id, s.tasks.c.title, s.tasks.c.kind, s.tasks.c.status,
                                      s.tasks.c.archived, s.tasks.c.workspace_id).where(
        s.tasks.c.kind != "main", s.tasks.c.archived.is_(False), tasks_here()).order_by(
        s.tasks.c.updated_at.desc()).limit(TITLE_SCAN))).all()
    hits = [r for r in rows if r.title and _says_title(norm, r.title)]
    return hits[0] if len(hits) == 1 else None


async def target(conn: AsyncConnection, message: str | Parsed) -> str | None:
    """The one task MESSAGE unambiguously belongs to, or None (then the Router decides)."""
    text = _text(message)
    named = [r for r in await named_tasks(conn, text) if r.kind != "main"]
    if named:
        return named[0].id if len(named) == 1 and here(named[0]) else None
    bindings = await file_bindings(conn, message)
    if bindings:
        tasks = {r.task_id: r for rows in bindings.values() for r in rows}
        if len(tasks) == 1:
            row = next(iter(tasks.values()))
            return row.task_id if here(row) else None
        return None
    titled = await titled_task(conn, message)
    if titled is not None:
        return titled.id if here(titled) else None
    recalled = await memory.recall(conn, text, memory.STRONG)
    if recalled:
        row = await task_row(conn, recalled[0][0])
        if here(row):
            return row.id
    return None
