"""Extraction (F2): which of the creator's sentences become memories, and what kind.

`lomo/local` reads cue phrases from `cues.toml` (en, zh, ja, ru): a long-term statement ("I usually like
low-saturation palettes", 「我通常喜歡低飽和度的配色」) is a candidate; a one-off ("this time try a saturated
red") stays with its task; a refinement, a change or a confirmation attaches to the remembered memory on the
same topic. A remote model's candidates go through `validate_candidates`, one by one (F5).

Only the creator's own messages are ever read here: tool output, files, web text and the agent's
replies never reach this module (see `service.record_creator_message`).
"""
from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterable

from ..language import keywords
from ..language import normalise

CUES_FILE = Path(__file__).with_name("cues.toml")
LANGUAGES = ("en", "zh", "ja", "ru")
KINDS = ("preference", "fact", "constraint")
SCOPES = ("creator", "project", "task")
ACTIONS = ("new", "refine", "change", "confirm")
MAX_TEXT = 400  # a memory is one statement, not a paragraph
_CLAUSE_END = re.compile(r"(?<=[.!?。！？;；\n])\s*|(?<=[.!?])\s+")


@dataclass
class Candidate:
    """One thing the creator said that may be remembered."""

    text: str
    kind: str = "preference"
    scope: str = "creator"
    stated: bool = True
    topic: str = ""
    action: str = "new"  # new | refine | change | confirm
    evidence_id: str = ""
    evidence_ids: list[str] = field(default_factory=list)  # inferred candidates stand on several messages
    long_term: bool = True  # said as lasting (a bare refinement may only attach to a memory)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.text)


def fingerprint(text: str) -> str:
    """What a statement says, independent of word order and case: suppression compares these."""
    return hashlib.sha256(" ".join(sorted(set(keywords(text)))).encode()).hexdigest()[:32]


@cache
def cues() -> dict[str, Any]:
    with CUES_FILE.open("rb") as fh:
        return tomllib.load(fh)


def _pattern(phrase: str, prefix: bool = False) -> str:
    """A phrase as a regex: whole words for Latin and Cyrillic (a prefix for topic stems), plain for CJK."""
    body = re.escape(phrase.strip()) if phrase.strip() else re.escape(phrase)
    if not re.match(r"[a-zа-я0-9]", phrase.strip()):
        return body
    tail = "" if prefix or not re.search(r"[a-zа-я0-9]$", phrase.strip()) else r"(?![\w])"
    return r"(?<![\w])" + body + tail


@cache
def matcher(category: str) -> re.Pattern[str] | None:
    """All languages' phrases of CATEGORY (long_term, one_off, …) as one regex."""
    phrases = sorted({p for lang in LANGUAGES for p in cues()[lang].get(category, [])}, key=len, reverse=True)
    return re.compile("|".join(_pattern(p) for p in phrases)) if phrases else None


@cache
def topic_matchers() -> list[tuple[str, re.Pattern[str]]]:
    return [(name, re.compile("|".join(_pattern(w, prefix=True) for w in sorted(words, key=len, reverse=True))))
            for name, words in cues()["topics"].items()]


def has(category: str, norm: str) -> bool:
    pattern = matcher(category)
    return bool(pattern and pattern.search(norm))


def topic_of(text: str) -> str:
    norm = normalise(text)
    for name, pattern in topic_matchers():
        if pattern.search(norm):
            return name
    return ""


def clauses(text: str) -> list[str]:
    """The message's sentences (a memory is one of them), trimmed, empty ones out."""
    return [c.strip() for c in _CLAUSE_END.split(text) if c and c.strip()]


def forget_query(text: str) -> str | None:
    """What a "forget that …" message asks to forget (the words after the cue), or None."""
    norm = normalise(text).strip()
    pattern = matcher("forget")
    m = pattern.search(norm) if pattern else None
    if m is None or m.start() > max(12, len(norm) // 3):  # the cue opens the request ("please forget…")
        return None
    rest = norm[m.end():].strip(" ,，、:：。.!！")
    for lead in ("that ", "about ", "что ", "про ", "о "):
        if rest.startswith(lead):
            rest = rest[len(lead):]
    return rest or None


def classify(clause: str, *, standalone: bool = False) -> Candidate | None:
    """CLAUSE as a candidate, or None (a one-off, a hedge, or nothing lasting).

    standalone: the clause is re-read on its own, with no memory for a refinement to attach to (forget's
    re-extraction): a refinement or confirmation then counts as a statement in its own right.
    """
    norm = normalise(clause)
    if len(norm) < 4 or has("unsure", norm) or has("one_off", norm) or has("forget", norm):
        return None
    long_term = has("long_term", norm)
    if has("change", norm):
        action = "change"
    elif has("confirm", norm):
        action = "confirm"
    elif has("refine", norm) and not long_term:
        action = "refine"
    elif long_term:
        action = "new"
    else:
        return None
    topic = topic_of(clause)
    if action != "new" and not topic and not long_term:
        return None  # "yes, exactly" alone says nothing to keep
    if standalone and action in ("refine", "confirm"):
        action = "new"
    kind = "constraint" if has("constraint", norm) else "fact" if has("fact", norm) else "preference"
    scope = "project" if has("project", norm) else "creator"
    return Candidate(text=clause[:MAX_TEXT], kind=kind, scope=scope, topic=topic, action=action,
                     long_term=long_term or standalone)


def extract_local(text: str, evidence_id: str = "", *, standalone: bool = False) -> list[Candidate]:
    """The deterministic extractor: every lasting statement in TEXT, in order."""
    if forget_query(text) is not None:
        return []
    out = []
    for clause in clauses(text):
        candidate = classify(clause, standalone=standalone)
        if candidate is not None:
            candidate.evidence_id = evidence_id
            out.append(candidate)
    return out


def possibly_durable(text: str) -> bool:
    """The cheap pre-filter before a remote extraction call: may TEXT say something lasting? A clause that the
    deterministic reading keeps, or one with a looser word of taste, habit or rule once its one-off phrases
    are set aside ("I always like muted colours, this time too"), or a refinement or confirmation naming a
    topic. Errs towards yes (the model decides); an ordinary request costs no call."""
    if forget_query(text) is not None:
        return False
    off = matcher("one_off")
    for clause in clauses(text):
        norm = normalise(clause)
        if len(norm) < 4 or has("unsure", norm):
            continue
        if classify(clause) is not None:
            return True
        rest = off.sub(" ", norm) if off else norm
        if any(has(category, rest) for category in ("long_term", "durable", "fact", "change", "project")):
            return True
        if (has("refine", rest) or has("confirm", rest)) and topic_of(clause):
            return True
    return False


def infer(requests: Iterable[tuple[str, str]]) -> list[Candidate]:
    """Inferred candidates from plain requests [(evidence id, text)]: a style asked for again and again.
    Marked stated=False: the agent's reading, never the creator's words."""
    spec = cues()["inference"]
    seen: dict[str, list[str]] = {}
    for evidence_id, text in requests:
        norm = normalise(text)
        for style in spec["styles"]:
            if re.search(_pattern(style, prefix=True), norm):
                seen.setdefault(style, []).append(evidence_id)
    out = []
    for style, ids in seen.items():
        ids = list(dict.fromkeys(ids))
        if len(ids) >= int(spec["after"]):
            out.append(Candidate(text=spec["template"].format(style=style, count=len(ids)), kind="preference",
                                 stated=False, topic="style", evidence_id=ids[0], evidence_ids=ids))
    return out


# ---- a remote model's candidates (F5) ------------------------------------------------------------------
EXTRACTION_PROMPT = (
    "From the creator's messages below, list what should be remembered beyond this task, as JSON "
    '{"candidates": [{"text", "kind": "preference|fact|constraint", "scope": "creator|project|task", '
    '"stated": true|false, "evidence_id", "action": "new|refine|change|confirm"}]}. Only the creator\'s own '
    "long-term statements; a request for this piece only is not a memory; a guess of yours has stated=false.")


def validate_candidates(raw: Any, evidence_ids: set[str]) -> tuple[list[Candidate], list[str]]:
    """A model's candidates, each checked on its own: (the valid ones, one reason per dropped one).
    A malformed candidate never sinks the others."""
    items = raw.get("candidates") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        return [], ["the answer holds no list of candidates"]
    valid, dropped = [], []
    for n, item in enumerate(items):
        reason = _invalid(item, evidence_ids)
        if reason:
            dropped.append(f"candidate {n}: {reason}")
            continue
        valid.append(Candidate(text=item["text"].strip()[:MAX_TEXT], kind=item.get("kind", "preference"),
                               scope=item.get("scope", "creator"), stated=bool(item.get("stated", True)),
                               topic=topic_of(item["text"]), action=item.get("action", "new"),
                               evidence_id=item["evidence_id"]))
    return valid, dropped


def _invalid(item: Any, evidence_ids: set[str]) -> str:
    if not isinstance(item, dict):
        return "not an object"
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        return "no text"
    if item.get("kind", "preference") not in KINDS:
        return f"unknown kind {item.get('kind')!r}"
    if item.get("scope", "creator") not in SCOPES:
        return f"unknown scope {item.get('scope')!r}"
    if item.get("action", "new") not in ACTIONS:
        return f"unknown action {item.get('action')!r}"
    if not isinstance(item.get("stated", True), bool):
        return "stated is not true/false"
    if item.get("evidence_id") not in evidence_ids:
        return "cites no message of the creator's"  # tool output or the agent's own text has no evidence id
    return ""
