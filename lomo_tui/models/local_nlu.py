"""Language layer of the embedded `lomo/local` planner (offline, deterministic, pure Python).

- detect_language(text) -> "en" | "zh" | "ja" | "ru"
- classify(text) -> Intent (act, media, goal_type, count, seconds, subject, style, refers_back, files,
  language; plus topic, needs_source, extra_media, nodes, size, constraints, text, interrogative)
- make_brief(text, intent) -> the brief in the creator's language, their request quoted verbatim
- make_checklist(intent) -> [ChecklistItem(title, tool, args, needs_confirmation)]; args may hold the
  placeholders "$source", "$prev", "$last", "$answer", "$version" (see nlu/plan.py)
- phrase(key, lang, **fields) -> a localized reply; PHRASES holds every template
- find_reference(text, lang) -> Reference | None: the piece(s) "the second", 第二张, "that one" point at;
  Reference.pick(series, recent) -> those workspace paths (words in nlu/ordinals.toml)
- answer_simple(text, intent, facts) -> a deterministic answer, or None; safe_eval(expr) for arithmetic
- similarity(a, b) -> float in [0, 1]; keywords(text) / fts_query(text) for SQLite FTS5
- for the Router (exported by `lomo_tui.language`): normalise, media_kinds(text), is_generic(keyword),
  find_files(text), file_name_variants(name), subjects(text) / subject_patterns() (what a text is about,
  across languages) and subject_keywords(text) (search terms for those subjects in the other languages)
The implementation lives in the `lomo_tui.language` package (lexicon data separate from logic).
"""
from __future__ import annotations

from ..language import (
    ACTS,
    GOAL_TYPES,
    MEDIA_KINDS,
    PHRASES,
    ChecklistItem,
    Intent,
    Reference,
    answer_simple,
    classify,
    detect_language,
    find_reference,
    fts_query,
    is_regenerate,
    keywords,
    make_brief,
    make_checklist,
    phrase,
    safe_eval,
    shot_change,
    shot_named,
    similarity,
)

__all__ = ["ACTS", "GOAL_TYPES", "MEDIA_KINDS", "PHRASES", "ChecklistItem", "Intent", "Reference",
           "answer_simple", "classify", "detect_language", "find_reference", "fts_query", "is_regenerate", "keywords", "make_brief", "make_checklist",
           "phrase", "safe_eval", "shot_change", "shot_named", "similarity"]
