"""Model clients: `lomo/local` (embedded, offline), `lomo/replay` (tests), anything else via litellm."""
from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from .base import ModelClient, ModelError, ModelReply, ModelRequest, ToolCall, Usage

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["ModelClient", "ModelError", "ModelReply", "ModelRequest", "ToolCall", "Usage", "make_model"]


def make_model(settings: "Settings", count_recorded: Callable[[], Awaitable[int]]) -> ModelClient:
    """The client for settings.model. litellm is only imported for remote models, and lazily."""
    name = settings.model
    if name == "lomo/local":
        from .local import LocalModel

        return LocalModel()
    if name == "lomo/replay":
        from .replay import ReplayModel

        return ReplayModel(settings.replay_file, count_recorded)
    from .remote import LiteLLMModel

    provider = settings.section("providers").get(name.split("/", 1)[0], {})
    return LiteLLMModel(name, api_base=provider.get("api_base"), api_key=provider.get("api_key"),
                        timeout=float(provider.get("timeout", 120)))
