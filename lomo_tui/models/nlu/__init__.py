"""The offline language layer of `lomo/local`: language, intent, briefs, checklists, replies.

Pure Python, no imports from the rest of lomo_tui; see `lomo_tui.models.local_nlu` for the API.
Other packages (the router) use only the names exported here, never the modules' internals.
"""
from __future__ import annotations

from .answer import answer_simple
from .arith import safe_eval
from .intent import ACTS, GOAL_TYPES, MEDIA_KINDS, Intent, classify, media_kinds
from .matching import (
    fts_query,
    is_generic,
    keywords,
    similarity,
    subject_keywords,
    subject_patterns,
    subjects,
)
from .phrases import PHRASES, phrase
from .plan import ChecklistItem, is_regenerate, make_brief, make_checklist, shot_change, shot_named
from .reference import Reference, find_reference
from .text import detect_language, file_name_variants, find_files, normalise

__all__ = ["ACTS", "GOAL_TYPES", "MEDIA_KINDS", "PHRASES", "ChecklistItem", "Intent", "Reference", "answer_simple",
           "classify", "detect_language", "file_name_variants", "find_reference", "find_files", "fts_query", "is_generic",
           "is_regenerate", "keywords", "make_brief", "make_checklist", "shot_change", "shot_named", "media_kinds", "normalise", "phrase", "safe_eval",
           "similarity", "subject_keywords", "subject_patterns", "subjects"]
