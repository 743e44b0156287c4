"""Why a turn failed, in its task's language (the reason the stream, the card and `lomo task show` read)."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ..errors import LomoError, Said
from ..models.base import ModelError
from ..store import schema as s
from ..tools.registry import plain_error


async def task_language(db: Any, task_id: str) -> str:
    """TASK_ID's language ("en" when it cannot be read: a failure is reported whatever the database says)."""
    try:
        async with db.read() as conn:
            return (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == task_id))).scalar() or "en"
    except Exception:  # noqa: BLE001 — the wording must not replace the failure it reports
        return "en"


async def failure_reason(db: Any, task_id: str, exc: ModelError | LomoError) -> str:
    """EXC as the creator reads it: a provider's failure ("model error: …") or a turn's, in the task's language
    where the error carries catalogue text (English otherwise)."""
    lang = await task_language(db, task_id)
    text = exc.text(lang)
    if isinstance(exc, ModelError):
        return Said("provider_error.model_error",
                    {"text": plain_error(text, "the model call failed", keep_detail=True)}).text(lang)
    return plain_error(text, "the turn could not go on", keep_detail=True)
