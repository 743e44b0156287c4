"""Errors the creator sees: each says what happened and what to do.

An error made with `LomoError.said(key, **fields)` carries its catalogue key, so whoever shows it (the CLI,
a card) words it in the reader's language with `exc.text(lang)`; `str(exc)` is the English wording (logs).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self


class _Fields(dict):
    """A placeholder without a value stays visible (as `message` does); any field name may be used."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@dataclass(frozen=True)
class Said:
    """A creator-facing text by catalogue key ("section.key") and fields, worded when it is read. A field
    may itself be a `Said` (worded in the same language)."""

    key: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def text(self, lang: str) -> str:
        from .language import template  # on first wording: importing the errors costs nothing

        fields = _Fields({k: worded(v, lang) for k, v in self.fields.items()})
        return template(self.key, lang).format_map(fields)

    def phrase(self) -> Phrase:
        """This text's English as a `str` that keeps its catalogue form (for code that passes strings on)."""
        return Phrase(self)

    def stored(self) -> dict[str, Any]:
        """As JSON for a row: {"key", "fields"} (a nested `Said`, `Phrase` or list of them stored the same way)."""
        return {"key": self.key, "fields": {k: _stored(v) for k, v in self.fields.items()}}

    @classmethod
    def load(cls, value: Any) -> Said | None:
        """A `Said` back from `stored()` (None for anything else, e.g. an old row's free text)."""
        if not isinstance(value, dict) or not isinstance(value.get("key"), str):
            return None
        fields = value.get("fields") if isinstance(value.get("fields"), dict) else {}
        return cls(value["key"], {k: _loaded(v) for k, v in fields.items()})


class Phrase(str):
    """A catalogue text's English (what the model, logs and old callers read) that keeps its `Said` (`.said`),
    so a list of reasons built as strings can still be worded in the creator's language."""

    said: Said

    def __new__(cls, said: Said) -> Phrase:
        made = super().__new__(cls, said.text("en"))
        made.said = said
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle keep the catalogue form
        return Phrase, (self.said,)


def worded(value: Any, lang: str) -> Any:
    """A field VALUE in LANG: a `Said` or `Phrase` worded, a list worded item by item and joined the language's
    way (`said.list`); anything else as it is."""
    if isinstance(value, Phrase):
        return value.said.text(lang)
    if isinstance(value, Said):
        return value.text(lang)
    if isinstance(value, (list, tuple)):
        from .language import template

        return template("said.list", lang).join(str(worded(v, lang)) for v in value)
    return value


def _stored(value: Any) -> Any:
    if isinstance(value, Phrase):
        return value.said.stored()
    if isinstance(value, Said):
        return value.stored()
    if isinstance(value, (list, tuple)):
        return [_stored(v) for v in value]
    return value


def _loaded(value: Any) -> Any:
    if isinstance(value, list):
        return [_loaded(v) for v in value]
    return Said.load(value) or value


def column_text(value: Any) -> str | None:
    """VALUE for a text column that `column_value` reads back: a `Said` or `Phrase` as the JSON of its stored form
    (worded when it is read), any other text as it is (a provider's words, verbatim)."""
    if isinstance(value, Phrase):
        value = value.said
    if isinstance(value, Said):
        return json.dumps(value.stored(), ensure_ascii=False, sort_keys=True)
    return None if value is None else str(value)


def column_value(text: str | None) -> str | None:
    """What `column_text` wrote: a `Phrase` (its English for the model, its catalogue form for the creator) for a
    stored catalogue text, else the text as it is (an old row's words, a provider's)."""
    if not text or not text.startswith('{"'):
        return text
    try:
        loaded = json.loads(text)
    except ValueError:
        return text
    said = Said.load(loaded) if isinstance(loaded, dict) and set(loaded) == {"key", "fields"} else None
    try:
        return Phrase(said) if said is not None else text
    except KeyError:  # a key this Lomo's catalogue lacks (a row from another version): the stored text
        return text


def shown(text: Any, said: Any, lang: str) -> str:
    """A stored reason in LANG: its catalogue form SAID when the row has one, else the free TEXT as it is."""
    loaded = said if isinstance(said, Said) else Said.load(said)
    try:
        return loaded.text(lang) if loaded is not None else str(text or "")
    except KeyError:  # a key this Lomo's catalogue lacks (a row from another version): its stored words
        return str(text or "")


class LomoError(Exception):
    """A failure with a message fit for the creator (no traceback)."""

    said_as: Said | None = None

    @classmethod
    def said(cls, key: str, /, **fields: Any) -> Self:
        """This error worded by the catalogue's KEY (English in `str()`, any language with `text()`)."""
        said = Said(key, fields)
        exc = cls(said.text("en"))
        exc.said_as = said
        return exc

    def text(self, lang: str) -> str:
        """The message in LANG (as raised where it has no catalogue key)."""
        return self.said_as.text(lang) if self.said_as is not None else str(self)


class UnknownId(LomoError):
    """An id that names nothing (task, gate, message)."""


class UsageError(LomoError):
    """The command line asked for something that cannot be done as asked."""


class StaleWrite(LomoError):
    """A write refused by fencing: another worker owns this turn now (or it was stopped)."""

    def __init__(self, turn_id: str, epoch: int, why: str = "epoch moved on") -> None:
        super().__init__(f"write for turn {turn_id} at epoch {epoch} refused: {why}")
        self.turn_id = turn_id
        self.epoch = epoch
        self.why = why


# A failed tool call's result: {"error": the English the model reads, "error_kind", "error_said": its catalogue
# form for the creator}. The model's copy of the result leaves `error_said` out (it reads what it always read).
ERROR_SAID = "error_said"


def said_error(result: dict[str, Any], said: Said | None) -> dict[str, Any]:
    """RESULT (a failed call's) with SAID stored beside its English `error`, when there is one."""
    return {**result, ERROR_SAID: said.stored()} if said is not None else result


def for_model(result: Any) -> Any:
    """A tool RESULT as the model reads it (without the creator's wording of its error)."""
    return {k: v for k, v in result.items() if k != ERROR_SAID} if isinstance(result, dict) and ERROR_SAID in result \
        else result


def error_words(result: Any, lang: str) -> str:
    """A failed call's error as the creator reads it in LANG ("" when RESULT holds none)."""
    if not isinstance(result, dict) or not result.get("error"):
        return ""
    return shown(result.get("error"), result.get(ERROR_SAID), lang)
