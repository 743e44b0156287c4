"""The Router's view of the task landscape (A6): a bounded index, never histories.

- the RECENT most recently active tasks (goal, summary, status, object refs);
- older tasks the pending message(s) point at, found by keyword search (SQLite FTS5 over
  `tasks.search_text`; ILIKE on other databases) and by explicit mentions (file names, task ids,
  remembered routes);
- every line and every count is capped, so the prompt does not grow with the number of tasks.

`search_text(title, goal, summary)` makes the keyword column; `refresh_search_text(conn, task_id)`
rewrites it from the row (call it wherever a task's title, goal or summary changes).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.exc import DBAPIError

from ..language import is_generic, kana_words, katakana_keys, keywords, latin_keys, subject_keywords
from ..store import schema as s
from ..workspace.scope import serving, tasks_here
from .. import clock

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

RECENT = 12  # recently active tasks always in view
RETRIEVED = 6  # older tasks found by search for the pending message(s)
MENTIONED = 4  # tasks named by files / ids / route memory that neither list holds
FILE_NAMED = 3  # older tasks found by a word of their files' names ("the awang sign": signs/awang.png)
FILE_WORD_CHARS = 4  # the shortest word looked for in file names
TITLE_CHARS = 80
GOAL_CHARS = 160
SUMMARY_CHARS = 160
FILES_PER_TASK = 4
FILE_CHARS = 60
SEARCH_TEXT_CHARS = 2000
QUERY_KEYWORDS = 16  # keywords of the pending text used for search
SUBJECT_KEYWORDS = 12  # … plus the other languages' words for the subjects it names
SEARCH_CANDIDATES = 40  # FTS rows scored before the cut

COLUMNS = (s.tasks.c.id, s.tasks.c.kind, s.tasks.c.status, s.tasks.c.title, s.tasks.c.goal, s.tasks.c.summary,
           s.tasks.c.language, s.tasks.c.archived, s.tasks.c.updated_at, s.tasks.c.created_at)


def _name_keys(text: str) -> set[str]:
    """Names across scripts (language.names): a katakana name and its Latin spelling share a key."""
    return katakana_keys(text) | latin_keys(text)


def search_text(title: str, goal: str = "", summary: str = "") -> str:
    """The keywords a task is found by: stems and CJK bigrams of its title, goal and summary, and the names they
    spell in hiragana (「ごいしくん」: `keywords` reads hiragana as grammar), and the keys its names meet names in
    another script by ("Olivetti" and オリベッティ)."""
    words = keywords("\n".join(p for p in (title, goal, summary) if p))
    words += sorted(w for w in kana_words(f"{title}\n{goal}") if w not in words)
    words += sorted(w for w in _name_keys(f"{title}\n{goal}") if w not in words)
    out, size = [], 0
    for word in words:
        size += len(word) + 1
        if size > SEARCH_TEXT_CHARS:
            break
        out.append(word)
    return " ".join(out)


async def refresh_search_text(conn: AsyncConnection, task_id: str) -> str:
    """Recompute TASK_ID's search_text from its row (same transaction as the change that needs it)."""
    row = (await conn.execute(select(s.tasks.c.title, s.tasks.c.goal, s.tasks.c.summary).where(
        s.tasks.c.id == task_id))).first()
    if row is None:
        return ""
    value = search_text(row.title, row.goal, row.summary)
    await conn.execute(update(s.tasks).where(s.tasks.c.id == task_id).values(search_text=value))
    return value


def clip(value: str | None, limit: int) -> str:
    value = " ".join((value or "").split())
    return value if len(value) <= limit else value[:limit - 1].rstrip() + "…"


@dataclass
class Entry:
    """One task as the Router sees it."""

    id: str
    title: str
    goal: str
    summary: str
    status: str
    kind: str
    language: str
    archived: bool
    updated_at: float
    created_at: float
    recency: int | None = None  # rank among the recently active (0 = most recent), None if retrieved
    retrieved: bool = False  # found by search (or a mention), not by recency
    score: float | None = None  # search relevance in [0, 1] (retrieved only)
    files: list[str] = field(default_factory=list)
    file_match: bool = False  # the message names one of its files
    memory: float | None = None  # a remembered route for a similar message (similarity)

    @classmethod
    def of(cls, row: Any, **extra: Any) -> "Entry":
        return cls(id=row.id, title=clip(row.title, TITLE_CHARS), goal=clip(row.goal, GOAL_CHARS),
                   summary=clip(row.summary, SUMMARY_CHARS), status=row.status, kind=row.kind,
                   language=row.language, archived=bool(row.archived), updated_at=float(row.updated_at),
                   created_at=float(row.created_at), **extra)

    def hint(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "goal": self.goal, "summary": self.summary,
                "status": "archived" if self.archived else self.status, "kind": self.kind, "files": self.files,
                "language": self.language, "updated_at": self.updated_at, "recency": self.recency,
                "retrieved": self.retrieved, "score": self.score, "file_match": self.file_match,
                "memory": self.memory}


# ---- queries --------------------------------------------------------------------------------------
def dialect_name(conn: Any) -> str:
    """The database behind CONN (an AsyncConnection, or the store's loop-thread SQLite connection)."""
    dialect = getattr(conn, "dialect", None) or getattr(getattr(conn, "sync", None), "dialect", None)
    return dialect.name if dialect is not None else "sqlite"


def _routable() -> Any:
    """A task the main thread may route to: not the main thread, and of the workspace served."""
    return and_(s.tasks.c.kind != "main", tasks_here())


async def recent(conn: AsyncConnection, limit: int = RECENT) -> list[Any]:
    """The most recently active tasks (not archived, not the main thread), newest first."""
    return list((await conn.execute(select(*COLUMNS).where(_routable(), s.tasks.c.archived.is_(False)).order_by(
        s.tasks.c.updated_at.desc()).limit(limit))).all())


async def rows_by_id(conn: AsyncConnection, ids: Iterable[str]) -> dict[str, Any]:
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    rows = (await conn.execute(select(*COLUMNS).where(s.tasks.c.id.in_(ids), _routable()))).all()
    return {r.id: r for r in rows}


async def search(conn: AsyncConnection, query_text: str, limit: int = RETRIEVED,
                 exclude: Iterable[str] = ()) -> list[tuple[Any, float]]:
    """Older tasks whose keywords match QUERY_TEXT, best first, as (row, relevance in [0, 1]). The subjects
    the text names count in every language ("hotpot posters" also searches "火锅"), so a task the creator
    wrote in another language is found too."""
    words = keywords(query_text)[:QUERY_KEYWORDS]
    words += [w for w in subject_keywords(query_text, SUBJECT_KEYWORDS) if w not in words]
    words += sorted(w for w in kana_words(query_text) if w not in words)  # "ごいしくん、覚えてる？"
    words += sorted(w for w in _name_keys(query_text) if w not in words)  # "オリベッティ" finds "Olivetti"
    if not words:
        return []
    skip = set(exclude)
    if dialect_name(conn) == "sqlite":
        try:
            scored = await _fts(conn, words, limit + len(skip))
        except DBAPIError:  # no tasks_fts (a database made without the migrations): plain matching
            scored = await _ilike(conn, words, limit + len(skip))
    else:
        scored = await _ilike(conn, words, limit + len(skip))
    rows = await rows_by_id(conn, [task_id for task_id, _ in scored if task_id not in skip])
    out = [(rows[task_id], score) for task_id, score in scored if task_id in rows]
    return out[:limit]


def _name_words(path: str) -> set[str]:
    """The keywords of a workspace path's folder and file names ("signs/awang_2.png" -> {"sign", "awang"})."""
    return set(keywords(re.sub(r"\.[A-Za-z0-9]+$", "", path).replace("/", " ").replace("_", " ").replace("-", " ")))


async def by_file_names(conn: AsyncConnection, query_text: str, limit: int = FILE_NAMED,
                        exclude: Iterable[str] = ()) -> list[Any]:
    """Older tasks bound to a file whose name holds a distinctive word of QUERY_TEXT, newest first: the creator
    names old work by what its file is called ("remember the awang sign?" — the task wrote signs/awang.png, its
    title is 招牌). Task words are searched by `search`; file names are not in a task's keywords."""
    words = [w for w in keywords(query_text) if len(w) >= FILE_WORD_CHARS and w.isascii() and w.isalpha()
             and not is_generic(w)][:8]
    if not words:
        return []
    escaped = [w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for w in words]
    rows = (await conn.execute(select(s.task_objects.c.task_id, s.objects.c.path).join(
        s.objects, s.objects.c.id == s.task_objects.c.object_id).where(
        s.objects.c.deleted.is_(False), s.task_objects.c.role == "output",
        or_(*[s.objects.c.path.ilike(f"%{w}%", escape="\\") for w in escaped])).order_by(
        s.task_objects.c.updated_at.desc()).limit(SEARCH_CANDIDATES))).all()
    skip, wanted, found = set(exclude), set(words), []
    for row in rows:
        if row.task_id not in skip and row.task_id not in found and wanted & _name_words(row.path):
            found.append(row.task_id)
    tasks = await rows_by_id(conn, found)
    return [tasks[task_id] for task_id in found if task_id in tasks][:limit]


async def _fts(conn: AsyncConnection, words: list[str], limit: int) -> list[tuple[str, float]]:
    query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)  # (keywords already: not re-read, which
    # would drop the hiragana names)
    if not query:
        return []
    # bm25 is negative (more negative = better). Normalise to (0, 1]: best hit 1.0.
    rows = (await conn.execute(text(
        "SELECT tasks.id AS id, bm25(tasks_fts) AS rank FROM tasks_fts JOIN tasks ON tasks.rowid = tasks_fts.rowid "
        "WHERE tasks_fts MATCH :q AND tasks.kind != 'main' "
        "AND (:ws IS NULL OR tasks.workspace_id IS NULL OR tasks.workspace_id = :ws) ORDER BY rank LIMIT :n"),
        {"q": query, "n": max(limit, 1), "ws": serving()})).all()
    if not rows:
        return []
    best = min(r.rank for r in rows) or -1.0
    return [(r.id, round(r.rank / best, 3) if best < 0 else 0.0) for r in rows]


async def _ilike(conn: AsyncConnection, words: list[str], limit: int) -> list[tuple[str, float]]:
    """PostgreSQL (or any other database): keyword containment on search_text, newest first."""
    terms = [w for w in words if len(w) > 1][:8] or words[:8]
    escaped = [w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for w in terms]
    rows = (await conn.execute(select(s.tasks.c.id, s.tasks.c.search_text).where(
        _routable(), or_(*[s.tasks.c.search_text.ilike(f"%{w}%", escape="\\") for w in escaped])).order_by(
        s.tasks.c.updated_at.desc()).limit(SEARCH_CANDIDATES))).all()
    scored = []
    for row in rows:
        have = set((row.search_text or "").split())
        hits = sum(1 for w in terms if w in have)
        if hits:
            scored.append((row.id, hits / len(terms)))
    scored.sort(key=lambda x: -x[1])
    top = scored[0][1] if scored else 1.0
    return [(task_id, round(score / top, 3)) for task_id, score in scored[:limit]]


async def files_of(conn: AsyncConnection, task_ids: list[str]) -> dict[str, list[str]]:
    """Up to FILES_PER_TASK workspace paths per task: outputs first, then most recently touched."""
    if not task_ids:
        return {}
    rows = (await conn.execute(select(s.task_objects.c.task_id, s.objects.c.path, s.task_objects.c.role).join(
        s.objects, s.objects.c.id == s.task_objects.c.object_id).where(
        s.task_objects.c.task_id.in_(task_ids), s.objects.c.deleted.is_(False)).order_by(
        s.task_objects.c.updated_at.desc()))).all()
    out: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        out.setdefault(row.task_id, []).append((0 if row.role == "output" else 1, clip(row.path, FILE_CHARS)))
    return {task_id: [p for _, p in sorted(paths, key=lambda x: x[0])][:FILES_PER_TASK]
            for task_id, paths in out.items()}


async def status_counts(conn: AsyncConnection) -> dict[str, int]:
    rows = (await conn.execute(select(s.tasks.c.status, func.count()).where(
        _routable(), s.tasks.c.archived.is_(False)).group_by(s.tasks.c.status))).all()
    return {status: count for status, count in rows}


# ---- the index ---------------------------------------------------------------------------------------
async def build(conn: AsyncConnection, pending: list[str], *, mentioned: dict[str, dict[str, Any]] | None = None,
                similar: list[tuple[str, float]] | None = None) -> list[Entry]:
    """Recent tasks + tasks retrieved for the pending text + tasks MENTIONED ({task_id: {"file_match": bool,
    "memory": float}}), each list capped."""
    mentioned = mentioned or {}
    entries: dict[str, Entry] = {}
    for rank, row in enumerate(await recent(conn)):
        entries[row.id] = Entry.of(row, recency=rank)
    query_text = "\n".join(pending)
    if query_text.strip():
        for row, score in await search(conn, query_text, RETRIEVED, exclude=entries.keys()):
            entries[row.id] = Entry.of(row, retrieved=True, score=score)
        for row in await by_file_names(conn, query_text, exclude=entries.keys()):
            entries[row.id] = Entry.of(row, retrieved=True)
    close = [(task_id, score) for task_id, score in similar or [] if task_id not in entries][:RETRIEVED]
    if close:  # found by meaning (summary vectors), when an embedding model is configured
        rows = await rows_by_id(conn, [task_id for task_id, _ in close])
        for task_id, score in close:
            if task_id in rows:
                entries[task_id] = Entry.of(rows[task_id], retrieved=True, score=round(score, 3))
    extra = [task_id for task_id in mentioned if task_id not in entries][:MENTIONED]
    for task_id, row in (await rows_by_id(conn, extra)).items():
        entries[task_id] = Entry.of(row, retrieved=True)
    for task_id, marks in mentioned.items():
        entry = entries.get(task_id)
        if entry is not None:
            entry.file_match = bool(marks.get("file_match"))
            entry.memory = marks.get("memory")
    files = await files_of(conn, list(entries))
    for task_id, entry in entries.items():
        entry.files = files.get(task_id, [])
    return list(entries.values())


def _age(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def render(entries: list[Entry], now: float | None = None) -> str:
    """The index as prompt text: one short block per task, recent first, retrieved ones marked."""
    now = clock.now() if now is None else now
    if not entries:
        return "Tasks: none yet. New work starts with create_task."
    lines = ["Tasks you can route to (most recently active first; “found” = an older task matched by search or "
             "named in the message). A follow-up goes to its task with send_to_task; new work starts with "
             "create_task; if more than one task fits, ask with clarify."]
    for n, e in enumerate(entries, 1):
        status = "archived" if e.archived else e.status
        mark = " · found" if e.retrieved else ""
        lines.append(f"{n}. [{e.id}] {e.title} — {e.kind}, {status}, {_age(now - e.updated_at)}, {e.language}{mark}")
        if e.goal and e.goal != e.title:
            lines.append(f"   goal: {e.goal}")
        if e.summary:
            lines.append(f"   summary: {e.summary}")
        if e.files:
            lines.append(f"   files: {', '.join(e.files)}")
        if e.file_match:
            lines.append("   (the message names one of its files)")
        if e.memory:
            lines.append("   (the creator sent a similar message to this task before)")
    return "\n".join(lines)
