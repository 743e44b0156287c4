"""A job's error in the reader's language: `jobs.error` keeps the English (the model reads it), and the
`job_<status>` event that ended the job keeps its catalogue form (`error_said`, keys in `[job]`)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from ..errors import Said, shown
from ..store import schema as s

ENDED = ("job_failed", "job_expired", "job_unknown")


async def error_saids(conn: Any, task_ids: Iterable[str]) -> dict[str, Said]:
    """The catalogue form of each ended job's error, by job id, for the jobs of TASK_IDS (the latest word)."""
    ids = [t for t in task_ids if t]
    if not ids:
        return {}
    rows = (await conn.execute(select(s.events.c.data).where(
        s.events.c.task_id.in_(ids), s.events.c.type.in_(ENDED)).order_by(s.events.c.id))).scalars().all()
    out: dict[str, Said] = {}
    for data in rows:
        said = Said.load((data or {}).get("error_said")) if isinstance(data, dict) else None
        if said is not None and data.get("job_id"):
            out[str(data["job_id"])] = said
    return out


def job_said(job: Any, saids: dict[str, Said]) -> Said | None:
    """JOB's error as catalogue text (from SAIDS, `error_saids`) while it still says what the row says; None for
    a provider's own words, or a row whose words changed since."""
    said = saids.get(job.id)
    if said is None or not job.error:
        return None
    try:
        return said if said.text("en") == job.error else None
    except KeyError:  # a key this Lomo's catalogue lacks
        return None


def job_error(job: Any, saids: dict[str, Said], lang: str) -> str:
    """JOB's error in LANG: its catalogue form when it still says what the row says, else the row's words."""
    said = job_said(job, saids)
    return shown(job.error, said, lang) if said is not None else job.error or ""
