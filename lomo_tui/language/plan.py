"""Briefs and checklists built from an Intent, in the creator's language (DESIGN A10, G1).

Checklist args may hold placeholders that the planner resolves when the item runs:
``$source`` (the image chosen at the pick-source step), ``$prev`` (the artifact of the previous
item), ``$last`` (the task's latest artifact, which a revision changes), ``$answer`` (the
creator's answer to the previous ask_user item) and ``$version`` (the version returned by the
previous read_* item).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from . import lexicon as L
from .cases import governs, nominative
from .intent import Intent, find_style_words
from .phrases import phrase
from .text import IMAGE_EXT, compile_entries, normalise

SOURCE, PREV, LAST, ANSWER, VERSION = "$source", "$prev", "$last", "$answer", "$version"
DEFAULT_POSTERS = 3
DEFAULT_SECONDS = 5.0
DEFAULT_SHOTS = 4
SECONDS_PER_SHOT = 3.0
MAX_ITEMS = 12


@dataclass
class ChecklistItem:
    """One planned step: a tool call (or a human checkpoint when tool is None)."""

    title: str
    tool: str | None
    args: dict[str, Any] = field(default_factory=dict)
    needs_confirmation: bool = False


def _seconds_text(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def _is_poster(intent: Intent) -> bool:
    rx = compile_entries(L.POSTER.get(intent.language, ()) + L.POSTER["en"])
    return bool(rx and rx.search(normalise(intent.text)))


def shot_count(intent: Intent) -> int:
    """Shots in a storyboard: as asked, else one per ~5 s of the film (3–8), else 4."""
    if intent.count:
        return min(intent.count, MAX_ITEMS)
    if intent.seconds:
        return max(3, min(8, round(intent.seconds / 5)))
    return DEFAULT_SHOTS


def _prompt(intent: Intent, tail: str = "") -> str:
    """Subject in the creator's words + style tags not already in it (+ a tail such as "poster 2 of 4")."""
    subject = intent.subject or intent.text
    tags = [t for t in intent.style if t.lower() not in subject.lower()]
    prompt = ", ".join(p for p in [subject, *tags] if p)
    return f"{prompt} — {tail}" if tail else prompt


def _image_inputs(intent: Intent) -> list[str]:
    return [f for f in intent.files if f.rsplit(".", 1)[-1].lower() in IMAGE_EXT and f != intent.output]


def _named_output(intent: Intent, args: dict[str, Any], extensions: tuple[str, ...]) -> dict[str, Any]:
    """The file name the creator asked for ("make perfume.png") is where the piece is saved."""
    if intent.output and intent.output.lower().endswith(extensions):
        args["output"] = intent.output
    return args


def _doc_path(intent: Intent, default: str) -> str:
    return next((f for f in intent.files if f.lower().endswith((".md", ".txt", ".markdown"))), default)


def _image(intent: Intent, title: str, prompt: str, inputs: list[str] | None = None) -> ChecklistItem:
    args: dict[str, Any] = {"prompt": prompt}
    if intent.size:
        args["size"] = intent.size
    if inputs:
        args["inputs"] = inputs
    return ChecklistItem(title, "generate_image", _named_output(intent, args, (".png",)))


def _media_item(media: str, intent: Intent, prompt: str, title: str = "", inputs: bool = True) -> ChecklistItem:
    """A single generation step for one kind of media (image files named by the creator are its
    inputs where the tool takes them and `inputs` is set)."""
    lang = intent.language
    files = _image_inputs(intent) if inputs else []
    if media == "video":
        args: dict[str, Any] = {"prompt": prompt, "seconds": intent.seconds or DEFAULT_SECONDS}
        if files:
            args["inputs"] = files
        return ChecklistItem(title or phrase("step_video_plain", lang), "generate_video",
                             _named_output(intent, args, (".gif", ".webp")))
    if media == "3d":
        return ChecklistItem(title or phrase("step_model3d", lang), "generate_3d", {"prompt": prompt})
    if media == "audio":
        args = {"prompt": prompt}
        if intent.seconds:
            args["seconds"] = intent.seconds
        return ChecklistItem(title or phrase("step_audio", lang), "generate_audio", args)
    if media == "document":
        return ChecklistItem(title or phrase("step_document", lang), "write_file",
                             {"path": _doc_path(intent, "draft.md"), "content": make_brief(intent.text, intent),
                              "base_version": None})
    return _image(intent, title or phrase("step_image", lang), prompt, files)


def _extras(intent: Intent) -> list[ChecklistItem]:
    """Items for later deliverables ("…and then a matching poster")."""
    lang, subject = intent.language, intent.subject or intent.text
    items = []
    for media in intent.extra_media:
        noun = phrase("media_poster" if media == "image" and _is_poster(intent) else f"media_{media}", lang)
        prompt = ", ".join([phrase("prompt_matching", lang, what=noun, subject=subject), *intent.style])
        items.append(_media_item(media, intent, prompt, noun[:1].upper() + noun[1:], inputs=False))
    return items


def _review(intent: Intent, key: str = "step_review") -> ChecklistItem:
    return ChecklistItem(phrase(key, intent.language), None, {}, needs_confirmation=True)


def _ask(title: str, question: str, options: list[str]) -> ChecklistItem:
    return ChecklistItem(title, "ask_user", {"question": question, "options": options}, needs_confirmation=True)


def _poster_series(intent: Intent) -> list[ChecklistItem]:
    lang, total = intent.language, min(intent.count or DEFAULT_POSTERS, MAX_ITEMS)
    kind = "poster" if _is_poster(intent) else "image_n"
    items = [_image(intent, phrase(f"step_{kind}", lang, n=n, total=total),
                    _prompt(intent, phrase(f"prompt_{kind}", lang, n=n, total=total)), _image_inputs(intent))
             for n in range(1, total + 1)]
    return items + _extras(intent) + [_review(intent, "step_review_series")]


def _short_clip(intent: Intent) -> list[ChecklistItem]:
    lang = intent.language
    items: list[ChecklistItem] = []
    inputs = _image_inputs(intent)
    if intent.needs_source and not inputs:
        items.append(_ask(phrase("step_pick_source", lang), phrase("ask_source_image", lang),
                          [phrase("opt_latest_image", lang), phrase("opt_pick_file", lang)]))
        inputs = [SOURCE]
    seconds = intent.seconds or DEFAULT_SECONDS
    items.append(_image(intent, phrase("step_keyframe", lang), _prompt(intent, phrase("prompt_keyframe", lang)),
                        inputs))
    items.append(ChecklistItem(phrase("step_video", lang, seconds=_seconds_text(seconds)), "generate_video",
                               {"prompt": _prompt(intent), "seconds": seconds, "inputs": [PREV]}))
    return items + _extras(intent)


def _object_3d(intent: Intent) -> list[ChecklistItem]:
    lang = intent.language
    return [_image(intent, phrase("step_concept", lang), _prompt(intent, phrase("prompt_concept", lang)),
                   _image_inputs(intent)),
            ChecklistItem(phrase("step_model3d", lang), "generate_3d", {"prompt": _prompt(intent)}),
            *_extras(intent)]


@lru_cache(maxsize=1)
def _beats() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("storyboard_beats.json").read_text(encoding="utf-8"))


def shot_beat(lang: str, n: int, total: int, subject: str) -> dict[str, str]:
    """Frame, action and sound of shot N of TOTAL about SUBJECT, in LANG (English when unknown): the film
    opens wide, develops, and closes wide (storyboard_beats.json)."""
    beats = _beats()
    order = beats["order"]
    beat = "open" if n == 1 else "close" if n == total else order[(n - 2) % len(order)]
    fields = beats.get(lang, beats["en"])[beat]
    return {name: text.format(subject=subject) for name, text in fields.items()}


def _storyboard(intent: Intent) -> list[ChecklistItem]:
    lang, shots = intent.language, shot_count(intent)
    per_shot = (intent.seconds or shots * SECONDS_PER_SHOT) / shots
    body = [f"# {phrase('sb_title', lang, subject=intent.subject or intent.text)}", "",
            f"> {phrase('quote', lang, text=intent.text)}", ""]
    subject = intent.subject or intent.text
    for n in range(1, shots + 1):
        body += [f"## {phrase('sb_shot', lang, n=n)}",
                 phrase("sb_fields", lang, seconds=_seconds_text(round(per_shot, 1)),
                        **shot_beat(lang, n, shots, subject)), ""]
    items = [ChecklistItem(phrase("step_storyboard", lang, shots=shots), "write_file",
                           {"path": _doc_path(intent, "storyboard.md"), "content": "\n".join(body),
                            "base_version": None})]
    return items + [_image(intent, phrase("step_shot_frame", lang, n=n, total=shots),
                           _prompt(intent, phrase("prompt_shot", lang, n=n, total=shots)))
                    for n in range(1, shots + 1)]


def film_subject(intent: Intent) -> str:
    """The film's subject without the words that only say it is a film ("a short film of a fox" → "a fox")."""
    subject = intent.subject or intent.text
    tail = L.FILM_TAIL.get(intent.language)
    lead = re.match(L.FILM_LEAD.get(intent.language, L.FILM_LEAD["en"]),
                    re.sub(tail, "", subject) if tail else subject, flags=re.IGNORECASE)
    if lead is None:
        return subject
    rest = lead.string[lead.end():].strip()
    preposition = lead.groupdict().get("prep")
    if rest and preposition and governs(preposition, intent.language):  # "про лису …" → "лиса …"
        rest = nominative(rest, preposition, intent.language)
    return rest or subject


def film_folder(subject: str) -> str:
    words = re.findall(r"\w+", subject.lower())
    return "films/" + ("-".join(words)[:40].strip("-") or "film")


def _film(intent: Intent) -> list[ChecklistItem]:
    """A film (DESIGN I1): the storyboard (real shots, in the creator's language), the production graph that
    implements it, and one step that runs the graph."""
    lang, shots = intent.language, shot_count(intent)
    seconds = intent.seconds or shots * SECONDS_PER_SHOT
    subject = film_subject(intent)
    folder = film_folder(subject)
    board = _storyboard(replace(intent, subject=subject))[0]
    board.args["path"] = f"{folder}/storyboard.md"
    graph = f"{folder}.flow.json"
    return [board,
            ChecklistItem(phrase("step_graph", lang), "plan_production",
                          {"storyboard": board.args["path"], "path": graph, "brief": intent.text, "subject": subject}),
            ChecklistItem(phrase("step_run_graph", lang, shots=shots, seconds=_seconds_text(seconds)),
                          "run_production", {"path": graph})]


def shot_named(text: str, lang: str) -> int | None:
    """The shot number a revision names ("change shot 2 to …", "镜头2改成…"), if any."""
    for pattern in dict.fromkeys((L.SHOT_NUMBER.get(lang, L.SHOT_NUMBER["en"]), L.SHOT_NUMBER["en"])):
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return int(m.group(1))
    return None


def shot_change(text: str, lang: str) -> str | None:
    """What a shot should become ("change shot 2 to the fox jumps" → "the fox jumps"); None for a plain redo."""
    for pattern in dict.fromkeys((L.SHOT_CHANGE_TO.get(lang, L.SHOT_CHANGE_TO["en"]), L.SHOT_CHANGE_TO["en"])):
        m = re.search(pattern, text, re.IGNORECASE)
        if m and m.group(1).strip():
            return m.group(1).strip()
    return None


def is_regenerate(text: str, lang: str) -> bool:
    from .intent import _has

    norm = normalise(text)
    return _has(L.GEN, "regenerate", lang, norm) or _has(L.GEN, "regenerate", "en", norm)


def _flow_edit(intent: Intent) -> list[ChecklistItem]:
    lang = intent.language
    flows = [f for f in intent.files if f.lower().endswith(".flow.json")]
    items = [] if flows else [_ask(phrase("step_pick_flow", lang), phrase("ask_which_flow", lang), [])]
    path = flows[0] if flows else ANSWER
    nodes: list[str | None] = list(intent.nodes) or [None]
    edits = [{"node": node, "change": intent.text, "style": list(intent.style)} for node in nodes]
    return items + [ChecklistItem(phrase("step_read_flow", lang), "read_flow", {"path": path}),
                    ChecklistItem(phrase("step_edit_flow", lang), "edit_flow_nodes",
                                  {"path": path, "edits": edits, "base_version": VERSION})]


def _audio_piece(intent: Intent) -> list[ChecklistItem]:
    total = min(intent.count or 1, MAX_ITEMS)
    items = [_media_item("audio", intent,
                         _prompt(intent, phrase("prompt_n", intent.language, n=n, total=total) if total > 1 else ""))
             for n in range(1, total + 1)]
    return items + _extras(intent)


def _document(intent: Intent) -> list[ChecklistItem]:
    return [_media_item("document", intent, ""), *_extras(intent), _review(intent)]


def _general(intent: Intent) -> list[ChecklistItem]:
    lang = intent.language
    plan = ChecklistItem(phrase("step_plan", lang), "write_file",
                         {"path": _doc_path(intent, "plan.md"), "content": make_brief(intent.text, intent),
                          "base_version": None})
    media = intent.media if intent.media not in (None, "document", "flow") else "image"
    tail = phrase("prompt_key_visual", lang) if media == "image" else ""
    return [plan, _media_item(media, intent, _prompt(intent, tail)), *_extras(intent), _review(intent)]


_PLANS = {"poster_series": _poster_series, "short_clip": _short_clip, "3d_object": _object_3d,
          "storyboard": _storyboard, "flow_edit": _flow_edit, "audio_piece": _audio_piece,
          "document": _document, "general": _general, "film": _film}


def make_checklist(intent: Intent) -> list[ChecklistItem]:
    """The steps for a goal (by goal_type), a one-shot request (one item) or a revision (one item
    changing `$last`); empty for anything else."""
    if intent.act == "goal" and intent.goal_type in _PLANS:
        return _PLANS[intent.goal_type](intent)
    if intent.act == "one_shot" and intent.media not in (None, "flow"):
        return [_media_item(intent.media or "image", intent, _prompt(intent))]
    if intent.act == "revise" and (intent.media or "image") in ("image", "video"):
        media = intent.media or "image"
        tool = "generate_image" if media == "image" else "generate_video"
        return [ChecklistItem(phrase("step_revise", intent.language), tool,
                              {"prompt": _prompt(intent), "inputs": [LAST]})]
    return []


def _deliverables(intent: Intent) -> str:
    lang = intent.language

    def n_of(n: int, media_key: str) -> str:
        return phrase("n_of", lang, n=n, what=phrase(media_key, lang))

    def duration(seconds: float | None) -> str:
        return phrase("duration", lang, seconds=_seconds_text(seconds)) if seconds else ""

    kind = intent.goal_type
    if kind == "poster_series":
        parts = [n_of(min(intent.count or DEFAULT_POSTERS, MAX_ITEMS),
                      "media_poster" if _is_poster(intent) else "media_image")]
    elif kind == "short_clip":
        parts = [n_of(1, "media_video"), duration(intent.seconds or DEFAULT_SECONDS)]
    elif kind == "storyboard":
        parts = [n_of(1, "media_document"), n_of(shot_count(intent), "media_shot"), duration(intent.seconds)]
    elif kind == "3d_object":
        parts = [n_of(1, "media_image"), n_of(1, "media_3d")]
    elif kind == "flow_edit":
        parts = [n_of(1, "media_flow"), ", ".join(f"#{n}" for n in intent.nodes)]
    elif intent.media:
        parts = [n_of(intent.count or 1, f"media_{intent.media}"), duration(intent.seconds)]
    else:
        parts = []
    parts += [n_of(1, f"media_{m}") for m in intent.extra_media]
    return phrase("list_sep", lang).join(p for p in parts if p) or phrase("brief_open", lang)


def make_brief(text: str, intent: Intent) -> str:
    """A brief in the creator's language: their request verbatim, then goal, deliverables, style,
    constraints (and files)."""
    lang = intent.language
    sep = phrase("list_sep", lang)
    goal_key = {"goal": f"goal_{intent.goal_type or 'general'}", "revise": "goal_revise"}.get(
        intent.act, "goal_one_shot")
    goal = phrase(goal_key, lang) + (f" — {intent.subject}" if intent.subject else "")
    style = find_style_words(normalise(text), lang) or intent.style
    constraints = list(intent.constraints) + ([phrase("needs_source", lang)] if intent.needs_source else [])
    lines = [
        f"{phrase('brief_request', lang)}: {phrase('quote', lang, text=text.strip())}",
        "",
        f"- {phrase('brief_goal', lang)}: {goal}",
        f"- {phrase('brief_deliverables', lang)}: {_deliverables(intent)}",
        f"- {phrase('brief_style', lang)}: {sep.join(style) or phrase('brief_open', lang)}",
        f"- {phrase('brief_constraints', lang)}: {sep.join(constraints) or phrase('brief_open', lang)}",
    ]
    if intent.files:
        lines.append(f"- {phrase('brief_files', lang)}: {sep.join(intent.files)}")
    return "\n".join(lines)
