"""Secrets never stored or shown: every configured key, and bearer tokens, become "[redacted]".

The secrets are the values of the environment's key-like variables (`*_API_KEY`, `*_TOKEN`, `*_SECRET`,
`*_PASSWORD`, …) and the `api_key` settings of config.toml (registered when the file is loaded), plus
shapes that are keys wherever they appear (bearer tokens, `sk-…`, `AIza…`, `gsk_…`, a URL's password).
`redact` is applied at the doors: the ledger's writes of reasons and events, the CLI's error lines, and
every log record (`RedactingFilter`).
"""
from __future__ import annotations

import logging
import os
import re
from typing import Any, Iterable, Mapping

MASK = "[redacted]"
MIN_SECRET = 8  # shorter values ("1", "true") are not treated as secrets
SECRET_VARIABLE = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.I)
SECRET_SHAPES = re.compile(
    r"(?i:\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"          # Authorization: Bearer …
    r"|\bsk-[A-Za-z0-9_-]{12,}"                          # OpenAI / Anthropic style
    r"|\bAIza[0-9A-Za-z_-]{20,}"                         # Google
    r"|\bgsk_[A-Za-z0-9]{20,}"                           # Groq
    r"|\b(?:xox[abp]|ghp|github_pat|hf)_[A-Za-z0-9_]{16,}"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"                  # user:password@ in a URL
)

_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
_environment_read = False


def register(values: Iterable[Any]) -> None:
    """Add secret values (strings of MIN_SECRET characters or more) to redact from now on."""
    global _pattern
    fresh = {v.strip() for v in values if isinstance(v, str) and len(v.strip()) >= MIN_SECRET} - _secrets
    if fresh:
        _secrets.update(fresh)
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True)))


def register_environment(env: Mapping[str, str] | None = None) -> None:
    """The values of the environment's key-like variables."""
    global _environment_read
    env = os.environ if env is None else env
    register(value for name, value in env.items() if SECRET_VARIABLE.search(name))
    _environment_read = True


def register_config(table: Mapping[str, Any], names: Iterable[str] = ("api_key", "token", "secret")) -> None:
    """The secret settings of a parsed config.toml, at any depth ([providers.openai] api_key, …)."""
    wanted = frozenset(names)

    def walk(node: Mapping[str, Any]) -> Iterable[str]:
        for key, value in node.items():
            if isinstance(value, Mapping):
                yield from walk(value)
            elif key in wanted and isinstance(value, str):
                yield value

    register(walk(table))


def redact(text: str) -> str:
    """TEXT with every known secret and key-shaped token masked."""
    if not _environment_read:
        register_environment()
    if not text:
        return text
    if _pattern is not None:
        text = _pattern.sub(MASK, text)
    return SECRET_SHAPES.sub(lambda m: "Bearer " + MASK if m.group(0)[:6].lower() == "bearer" else MASK, text)


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string redacted (event data, tool results)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """Masks secrets in every log record (its message with arguments, and any traceback text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 — a malformed record is logged as it is
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True

    @classmethod
    def install(cls, settings: Any = None) -> None:
        """On the root logger's handlers (filters on handlers see records from every logger)."""
        if settings is not None:
            register_config(getattr(settings, "file", {}) or {})
        for handler in logging.getLogger().handlers:
            if not any(isinstance(f, cls) for f in handler.filters):
                handler.addFilter(cls())
