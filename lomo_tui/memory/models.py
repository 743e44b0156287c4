"""Memory's model calls, for one runtime (F2, recall): extraction by the runtime's remote model and
embeddings for recall by meaning (`memory.embedding_model`).

`memory.extraction`: "auto" (the default) reads with the model when the configured model is remote and
deterministically for `lomo/local` (and `lomo/replay`, whose lines belong to the task's own calls); "model"
and "deterministic" (or "local") say so outright. Only a message the cheap deterministic pre-filter flags as
possibly lasting (`extract.possibly_durable`) is sent to the model; an ordinary one is read on the spot at no
cost. With neither a remote extractor nor an embedding model nothing here runs and litellm is never imported.
A remote reading is kept as evidence at once and done in the background (the message never waits on a
model); the model's answer is a recorded model call (`model_calls`, purpose "memory", one per reading, in the
commit that applies or fails it) whose candidates are validated one by one (F5: a malformed one is dropped
alone); a failed call leaves the evidence `failed`, retried by a later pass; a guess of the model's is kept as
inferred.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from .extract import EXTRACTION_PROMPT
from .vectors import MemoryVectors

log = logging.getLogger("lomo.memory")

OFFLINE_MODELS = ("lomo/local", "lomo/replay")
DETERMINISTIC = ("deterministic", "local")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


@dataclass
class Extraction:
    """A remote extractor's answer and the model call that produced it (recorded with the candidates)."""

    answer: Any
    call: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # the model answered but not usably (no JSON): the reading failed, its cost is recorded


class ModelExtractor:
    """Asks MODEL (a ModelClient) for the candidates in some evidence."""

    def __init__(self, model: Any, timeout: float = 60.0) -> None:
        self.model = model
        self.timeout = timeout

    async def __call__(self, evidence: list[dict[str, str]]) -> Extraction:
        from ..models.base import ModelRequest

        request = ModelRequest(messages=[
            {"role": "system", "content": EXTRACTION_PROMPT},
            {"role": "user", "content": json.dumps({"messages": evidence}, ensure_ascii=False)}],
            purpose="memory", timeout=self.timeout)
        reply = await self.model.complete(request)
        usage = reply.usage
        call = dict(model=reply.model or self.model.name, prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens, cached_tokens=usage.cached_tokens,
                    cache_write_tokens=usage.cache_write_tokens, cost=usage.cost, latency_ms=reply.latency_ms)
        try:
            return Extraction(parse_answer(reply.content or ""), call)
        except ValueError as exc:
            return Extraction(None, call, error=str(exc))


def parse_answer(content: str) -> Any:
    """The model's JSON answer (a fenced block is unwrapped). ValueError when there is none: the extraction
    failed and is retried later."""
    text = _FENCE.sub("", content.strip())
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            return json.loads(text[start:end + 1])
        raise ValueError("the model's extraction answer holds no JSON") from None


def reads_with_model(mode: str, model_name: str) -> bool:
    """Whether extraction MODE ("auto", "model", "deterministic"/"local") reads with MODEL_NAME."""
    return mode not in DETERMINISTIC and model_name not in OFFLINE_MODELS


class MemoryModels:
    """The runtime's memory service (start/stop): the background pass that extracts with the model and keeps
    the memory vectors current. `poke()` asks for a pass soon (a creator message arrived)."""

    def __init__(self, db: Any, settings: Any, model: Any) -> None:
        """MODEL: the runtime's model client, or a callable giving the current one (a creator may switch
        models while it runs: the extractor follows)."""
        self.db = db
        section = settings.section("memory")
        self.mode = section.get("extraction", "auto")
        self._model = model if callable(model) and not hasattr(model, "complete") else (lambda: model)
        self._extractor: ModelExtractor | None = None
        self._started = False
        embedding = section.get("embedding_model") or None
        self.vectors: MemoryVectors | None = None
        if embedding:
            provider = settings.section("providers").get(embedding.split("/", 1)[0], {})
            self.vectors = MemoryVectors(db, embedding, api_base=section.get("embedding_api_base") or provider.get(
                "api_base"), api_key=provider.get("api_key"), timeout=float(section.get("embedding_timeout", 2.0)))
        self.interval = float(getattr(settings, "watchdog_seconds", 10.0))
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def extractor(self) -> ModelExtractor | None:
        """The remote extractor for the current model, or None (extraction is deterministic)."""
        model = self._model()
        if not reads_with_model(self.mode, getattr(model, "name", "lomo/local")):
            return None
        if self._extractor is None or self._extractor.model is not model:
            self._extractor = ModelExtractor(model)
        return self._extractor

    @property
    def enabled(self) -> bool:
        return self.extractor is not None or self.vectors is not None

    async def start(self) -> None:
        self._started = True
        self._start_loop()

    def _start_loop(self) -> None:
        if self._started and self.enabled and self._task is None and not self._stop.is_set():
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="lomo-memory-models")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def poke(self) -> None:
        self._start_loop()  # a switch to a remote model after start
        self._wake.set()

    async def upkeep(self) -> dict[str, int]:
        """One pass: read pending (or failed) evidence with the model, embed versions without a vector.
        Each part on its own: one failing leaves the other to run."""
        from .service import retry_extraction

        out = {"extracted": 0, "embedded": 0}
        extractor = self.extractor
        if extractor is not None:
            try:
                out["extracted"] = await retry_extraction(self.db, extractor=extractor, min_age=0.0)
            except Exception as exc:  # noqa: BLE001
                log.warning("memory extraction pass failed (%s)", type(exc).__name__)
        if self.vectors is not None:
            try:
                out["embedded"] = await self.vectors.refresh()
            except Exception as exc:  # noqa: BLE001 — recall by meaning is a bonus, never a failure
                log.warning("memory vectors not refreshed (%s)", type(exc).__name__)
        return out

    async def _loop(self) -> None:
        while not self._stop.is_set():
            await self.upkeep()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.interval)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
