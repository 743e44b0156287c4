"""Is there an API key for the configured model? Read from the environment and config.toml only (the
table of provider → variable names is data: `data/provider_keys.toml`); litellm is never imported."""
from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

TABLE = Path(__file__).with_name("data") / "provider_keys.toml"


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return tomllib.loads(TABLE.read_text(encoding="utf-8"))


def provider_of(model: str) -> str | None:
    """The provider part of MODEL ("openai/gpt-4o" → "openai", "claude-3-5" → "anthropic")."""
    if "/" in model:
        return model.split("/", 1)[0]
    return next((p for start, p in _table()["bare"].items() if model.startswith(start)), None)


def missing_key(model: str, settings: Any, environ: Mapping[str, str] | None = None) -> str | None:
    """The environment variable to set when MODEL's provider has no key anywhere; None when it has one
    (or needs none, or is not one we know)."""
    environ = os.environ if environ is None else environ
    provider = provider_of(model)
    table = _table()
    if provider is None or provider in table["local"]["none"]:
        return None
    names = table["prefixes"].get(provider)
    if not names:
        return None
    section = settings.section("providers").get(provider, {}) if hasattr(settings, "section") else {}
    if isinstance(section, dict) and (section.get("api_key") or section.get("api_base")):
        return None  # a key in config.toml, or a server of the creator's own that may need none
    if any(environ.get(name) for name in names):
        return None
    return names[0]
