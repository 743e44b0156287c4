"""The language layer (ground floor): language, intent, briefs, checklists, keyword tables, and the one
message catalogue of creator-facing text (en/zh/ja/ru, data files under `messages/`).

Pure Python, no imports from the rest of lomo_tui; see `lomo_tui.models.local_nlu` for the planner's API.
Other packages (router, tools, studio, memory) use only the names exported here, never the modules' internals.
"""
from __future__ import annotations

from . import scorer
from .answer import answer_simple
from .arith import safe_eval
from .cues import cue, cue_table
from .intent import ACTS, GOAL_TYPES, MEDIA_KINDS, Intent, asks_to_make, classify, edited_media, header, media_kinds
from .matching import (
    fts_query,
    is_generic,
    kana_words,
    keywords,
    other_thing,
    similarity,
    subject_keywords,
    subject_patterns,
    subjects,
)
from .messages import LANGUAGES, message, template
from .names import katakana_keys, latin_keys
from .parsed import Carried, Parsed, parse
from .phrases import PHRASES, phrase
from .plan import ChecklistItem, film_subject, is_regenerate, make_brief, make_checklist, shot_change, shot_named
from .reference import Reference, find_reference, series_size
from .tables import KeywordTable, mentions, most_mentioned
from .text import detect_language, file_name_variants, find_files, matchable, normalise, parse_number, unquoted

__all__ = ["ACTS", "GOAL_TYPES", "MEDIA_KINDS", "PHRASES", "Carried", "ChecklistItem", "Intent", "KeywordTable", "LANGUAGES", "Reference", "answer_simple",
           "classify", "cue", "cue_table", "detect_language", "edited_media", "file_name_variants", "find_reference", "find_files", "fts_query", "is_generic",
           "film_subject", "is_regenerate", "shot_change", "shot_named",
           "asks_to_make", "header", "kana_words", "katakana_keys", "latin_keys", "keywords", "make_brief", "unquoted", "make_checklist", "matchable", "media_kinds", "mentions", "message", "most_mentioned", "normalise", "other_thing", "parse", "Parsed", "phrase", "safe_eval", "scorer", "template",
           "parse_number", "series_size", "similarity", "subject_keywords", "subject_patterns", "subjects"]

from .locale import locale_language  # noqa: E402 — the creator's language from LC_ALL / LC_MESSAGES / LANG

__all__ += ["locale_language"]

from .titles import task_title  # noqa: E402 — a task's title from the intent (titles.toml)

__all__ += ["task_title"]
