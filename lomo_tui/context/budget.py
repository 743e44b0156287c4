"""The per-step token budget: the model's input window less the room kept for its reply.

`lomo/local` and `lomo/replay` have fixed windows; a remote model's comes from litellm's model info
(asked only on the remote path, where litellm is loaded anyway). `config.toml` overrides:

    [context]                      # every key optional
    budget_tokens = 12000          # the prompt budget itself (wins over the window)
    reply_tokens = 2048            # room kept for the reply
    max_budget_tokens = 64000      # a huge window is not filled beyond this
    large_output_chars = 8000      # tool results longer than this stay outside the context
    [context.models."openai/gpt-4o-mini"]
    budget_tokens = 24000          # the same keys, for one model
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import LomoError, Said

FIXED_WINDOWS = {"lomo/local": 16384, "lomo/replay": 16384}  # tokens; the reply room comes off this
FIXED_REPLY = 1024
REMOTE_REPLY = 4096
UNKNOWN_WINDOW = 32768  # a remote model litellm knows nothing about
MAX_BUDGET = 64000
LARGE_OUTPUT_CHARS = 8000
KEYS = ("budget_tokens", "reply_tokens", "max_budget_tokens", "large_output_chars")


@dataclass(frozen=True)
class Budget:
    model: str
    window: int  # the model's input window (tokens)
    reply: int  # kept free for the reply
    tokens: int  # what a step's prompt may use
    source: str  # fixed | model info | config | default
    large_output_chars: int = LARGE_OUTPUT_CHARS

    @property
    def summaries(self) -> int:
        """The share of the budget the summary segments may fill."""
        return self.tokens // 5

    def scaled(self, factor: float) -> "Budget":
        """A smaller budget (after a provider said the prompt was too long)."""
        return Budget(self.model, self.window, self.reply, max(1024, int(self.tokens * factor)), self.source,
                      self.large_output_chars)


def settings_for(section: dict[str, Any], model: str) -> dict[str, int]:
    """The [context] keys that apply to MODEL (per-model table over the general one), checked."""
    merged: dict[str, Any] = {k: section[k] for k in KEYS if k in section}
    per_model = (section.get("models") or {}).get(model) if isinstance(section.get("models"), dict) else None
    if isinstance(per_model, dict):
        merged.update({k: per_model[k] for k in KEYS if k in per_model})
    for key, value in merged.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            unit = Said("config_error.unit_characters" if key == "large_output_chars" else "config_error.unit_tokens")
            raise LomoError.said("config_error.context_value", key=key, value=repr(value), unit=unit)
    return merged


async def resolve(model: Any, section: dict[str, Any]) -> Budget:
    """The budget for MODEL (a ModelClient) under the [context] config SECTION."""
    name = getattr(model, "name", "lomo/local")
    cfg = settings_for(section, name)
    large = cfg.get("large_output_chars", LARGE_OUTPUT_CHARS)
    if name in FIXED_WINDOWS:
        window, reply, source = FIXED_WINDOWS[name], FIXED_REPLY, "fixed"
    else:
        window, reply, source = UNKNOWN_WINDOW, REMOTE_REPLY, "default"
        if "budget_tokens" not in cfg and hasattr(model, "context_window"):
            info = await model.context_window()
            if info:
                window, source = int(info[0]), "model info"
                reply = min(int(info[1] or REMOTE_REPLY), REMOTE_REPLY, window // 4)
    reply = cfg.get("reply_tokens", reply)
    if "budget_tokens" in cfg:
        return Budget(name, window, reply, cfg["budget_tokens"], "config", large)
    tokens = min(window - reply, cfg.get("max_budget_tokens", MAX_BUDGET))
    return Budget(name, window, reply, max(1024, tokens), source, large)
