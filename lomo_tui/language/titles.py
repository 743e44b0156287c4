"""Task titles that read well: the thing being made, in the creator's words, without the frame around it.

A title starts from the words the intent reader kept (`Intent.title` for a one-shot, `Intent.subject` for a
goal) and loses what only frames the request (titles.toml): wish and request leads ("I want", "нужен",
"帮我", "次は"), fillers at either end ("… please", "…就行", "…を描きたい"), the list after a colon
("Brand kit for Lowlight: logo, …"), a quote or bracket left open by a cut; a title is a noun phrase, so what
a creation verb made accusative is put back in the nominative ("нарисуй сову в очках" → "Сова в очках"). It is cut at a word boundary
with an ellipsis. A goal's head ("Poster series") is kept only where it fits what is made: a set of
stickers is a "Sticker series for …", a brand kit has no head. A title that loses every word is taken
from the message's first sentence instead.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .cases import object_nominative
from .matching import is_generic, keywords
from .phrases import phrase
from .plan import film_subject
from .text import NUM, is_cjk, normalise
from .verbs import alternation

WIDTH = 60  # characters a title keeps of the subject (a goal's head comes on top)
EDGES = " ,.!?:;-—–…\"'«»“”()：，。！？、；「」『』（）・•●▪*"
_SEP = r"[\s,.:;!?\-—–…、，。：；！？]"
_PAIRS = {"'": "'", '"': '"', "«": "»", "“": "”", "「": "」", "『": "』"}  # completed from the message
_BRACKETS = {"(": ")", "（": "）", "【": "】"}  # an open one is cut off with what follows it


@dataclass(frozen=True)
class _Table:
    leads: re.Pattern[str] | None
    trails: re.Pattern[str] | None
    lists: re.Pattern[str] | None
    joins: frozenset[str]
    own: dict[str, re.Pattern[str]]
    kinds: list[tuple[re.Pattern[str], str]]
    series: str
    series_of: re.Pattern[str] | None


@cache
def _data() -> dict[str, Any]:
    with Path(__file__).with_name("titles.toml").open("rb") as fh:
        return tomllib.load(fh)


def _alternatives(entries: list[str], lang: str, after: str = "") -> str:
    """ENTRIES as one alternation, the longest words first ("new thing" before "new"); AFTER guards each
    entry that does not say itself what follows it."""
    ordered = sorted(entries, key=_spoken_length, reverse=True)
    expanded = [e.replace("@create@", alternation()).replace("@number@", f"(?:{NUM[lang]})") for e in ordered]
    return "|".join(f"(?:{e}){'' if '(?=' in e else after}" for e in expanded)


def _spoken_length(entry: str) -> int:
    """How many characters ENTRY matches at least, roughly: its text without lookarounds and regex syntax."""
    out, depth = [], 0
    i = 0
    while i < len(entry):
        if entry.startswith(("(?!", "(?=", "(?<!", "(?<="), i) and depth == 0:
            depth, i = 1, entry.index("(", i) + 1
            while i < len(entry) and depth:
                depth += {"(": 1, ")": -1}.get(entry[i], 0)
                i += 1
            continue
        out.append(entry[i])
        i += 1
    return len(re.sub(r"\\.|[()?*+|\[\]^$]", "", "".join(out)))


@cache
def _table(lang: str) -> _Table:
    data = _data().get(lang, {})
    spaced = not is_cjk(lang)
    start, end = (r"(?<![\w'’-])", r"(?![\w'’-])") if spaced else ("", "")

    def rx(pattern: str) -> re.Pattern[str]:
        return re.compile(pattern, re.IGNORECASE)

    def words(entries: list[str], after: str = "") -> str:
        return f"{start}(?:{_alternatives(entries, lang, after)}){end}"

    leads = data.get("leads")
    trails = data.get("trails")
    joins = data.get("joins")
    # a lead word followed by a preposition is a noun ("Render of a sneaker", "Start of term poster")
    noun = rf"(?!\s+(?:{'|'.join(joins)}){end})" if joins else ""
    return _Table(
        leads=rx(rf"^(?:{_SEP}*{words(leads, noun)})+{_SEP}*") if leads else None,
        trails=rx(rf"(?:{_SEP}*{words(trails)})+{_SEP}*$") if trails else None,
        lists=rx(_alternatives(data["lists"], lang)) if data.get("lists") else None,
        joins=frozenset(data.get("joins", ())),
        own={goal: rx(words(entries)) for goal, entries in data.get("own", {}).items()},
        kinds=[(rx(words([kind])), head) for kind, head in data.get("kinds", {}).items()],
        series=data.get("series", ""),
        series_of=rx(rf"^(?:(?:{NUM[lang]})\s+)?({words(data['series_of'])})") if data.get("series_of") else None,
    )


# ---- the words of a title ------------------------------------------------------------------------------
def tidy(title: str, text: str, lang: str) -> str:
    """TITLE without what frames the request (leads, trailing fillers, the list after a colon), what it makes in
    the nominative (cases.toml: "сову в очках" → "сова в очках"), its quotes closed as the message (TEXT) closes
    them."""
    table = _table(lang)
    title = title.strip(EDGES)
    for _ in range(3):  # a lead may uncover a trail and a colon another lead ("Quick one: a …")
        before = title
        if table.leads is not None:
            title = table.leads.sub("", title, count=1)
        if table.trails is not None:
            title = table.trails.sub("", title, count=1)
        title = _before_list(title, text, table).strip(EDGES)
        if title == before:
            break
    return _closed(object_nominative(title, lang), text)


def _before_list(title: str, text: str, table: _Table) -> str:
    """"Brand kit for Lowlight: logo" → "Brand kit for Lowlight" where the message lists things after its
    colon (but "one image: four hands of cards, photo style" is the hands: the head only names a kind);
    otherwise the part after the colon loses its own leads ("Image: a mug" → "Image: mug")."""
    colon = re.search(r"\s*[:：]\s*", title)
    said = re.search(r"[:：]", text)
    if colon is None or colon.start() == 0:
        return title
    head, rest = title[:colon.start()], title[colon.end():]
    if said is not None and table.lists is not None and table.lists.search(text[said.end():]):
        kind_only = all(is_generic(w) for w in keywords(head))  # "one image: four hands of cards…, photo style"
        described = len(re.split(r"[,，、;；]", rest)[0].split()) >= 3  # a description, not "a fox, a hare…"
        return rest.strip(EDGES) if kind_only and described and any(
            not is_generic(w) for w in keywords(rest)) else head
    if table.leads is not None:
        rest = table.leads.sub("", rest, count=1)
    return f"{head}{title[colon.start():colon.end()]}{rest}" if rest.strip(EDGES) else head


def _closed(title: str, text: str) -> str:
    """Quotes the cut left open are closed as the message closes them ("says 'ship" → "says 'ship it'"), and
    opened where the edge was cut ("夜のカフェ」という看板" → "「夜のカフェ」という看板"); a bracket left open
    is cut off ("节日海报（春节" → "节日海报")."""
    for opening, closing in _BRACKETS.items():
        at = title.rfind(opening)
        if at >= 0 and closing not in title[at:]:
            title = title[:at].rstrip(EDGES)
    for opening, closing in _PAIRS.items():
        shut = title.find(closing)
        if opening != closing and shut >= 0 and opening not in title[:shut]:  # its opening was an edge
            title = opening + title
        at = _open_quote(title, opening, closing)
        if at is None:
            continue
        tail = title[at:]
        found = text.casefold().find(tail.casefold())
        shut = text.find(closing, found + len(tail)) if found >= 0 else -1
        if found >= 0 and shut >= 0 and shut - found <= WIDTH:
            title = title[:at] + text[found:shut + 1]
        else:
            title = title.rstrip(EDGES) + closing
    return title


def _open_quote(title: str, opening: str, closing: str) -> int | None:
    """Where TITLE opens a quote it does not close (an apostrophe inside a word is no quote)."""
    if opening != closing:
        at = title.rfind(opening)
        return at if at >= 0 and closing not in title[at:] else None
    marks = [m.start() for m in re.finditer(rf"(?:(?<=\s)|^){re.escape(opening)}(?=\w)|(?<=\w){re.escape(opening)}(?!\w)",
                                            title)]
    return marks[-1] if len(marks) % 2 else None


def clip(title: str, width: int = WIDTH) -> str:
    """TITLE in at most WIDTH characters: cut at a word boundary (anywhere in CJK text), with an ellipsis."""
    if len(title) <= width:
        return title
    cut = title[:width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    return cut.rstrip(EDGES) + "…"


def _capital(title: str, lang: str) -> str:
    return title[:1].upper() + title[1:] if lang in ("en", "ru") else title


# ---- a goal's head -------------------------------------------------------------------------------------
def _kind(table: _Table, words: str) -> tuple[int, str] | None:
    """The first deliverable WORDS name among the kinds (position, its series head)."""
    hits = [(m.start(), head) for rx, head in table.kinds if (m := rx.search(words))]
    return min(hits) if hits else None


def _fitting(head: str, goal: str, subject: str, text: str, table: _Table) -> tuple[str, bool]:
    """The head a goal's title gets: HEAD where it fits what is made, else the head of what the title or the
    message names instead ("" for none); and whether the title itself names it."""
    own = table.own.get(goal)
    if own is None or own.search(subject):
        return head, False
    named = _kind(table, subject)
    if named is not None:
        return named[1], True
    if own.search(text):
        return head, False
    said = _kind(table, text)
    return (said[1], False) if said is not None else (head, False)


def _same_word(a: str, b: str, lang: str) -> bool:
    a, b = normalise(a), normalise(b)
    if lang == "ru":
        return a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])
    return _stem(a) == _stem(b)


def _stem(word: str) -> str:
    return word[:-2] if word.endswith("es") and len(word) > 4 else word[:-1] if word.endswith("s") else word


def _merged(head: str, subject: str, lang: str, table: _Table) -> str | None:
    """HEAD and SUBJECT as one phrase where they share the thing ("Poster series" + "Posters for a jazz
    night", "海报系列" + "端午节的海报") or the subject goes on from it ("Серия картинок" + "с лисой …") or into
    it ("インスタ用の" + "短い動画")."""
    if is_cjk(lang):
        for k in range(len(head) - 1, 1, -1):
            if subject.endswith(head[:k]):
                return subject + head[k:]
        # a subject that ends on a particle goes on into its head ("インスタ用の" + "短い動画")
        return subject + head if any(subject.endswith(join) for join in table.joins) else None
    first, _, rest = subject.partition(" ")
    if any(_same_word(first, word, lang) for word in head.split() if len(word) > 2):
        return f"{head} {rest}".strip()
    if normalise(first) in table.joins and rest:
        return f"{head} {subject[:1].lower()}{subject[1:]}"
    return None


def _headed(head: str, subject: str, lang: str, table: _Table) -> str:
    return _merged(head, subject, lang, table) or f"{head}{'：' if is_cjk(lang) else ': '}{subject}"


def _series(subject: str, lang: str, table: _Table) -> str:
    """(ru) A subject that starts with a genitive plural ("Стикеров с котиками", "Пятнадцать иконок …") was
    counted: it is a series of them ("Серия стикеров с котиками")."""
    m = table.series_of.match(subject) if table.series_of is not None else None
    if m is None or not table.series:
        return subject
    rest = subject[m.start(1):]
    return f"{table.series} {rest[:1].lower()}{rest[1:]}"


# ---- the title -----------------------------------------------------------------------------------------
def _first_sentence(text: str) -> str:
    return re.split(r"[.!?。！？\n]", text.strip(), maxsplit=1)[0]


@cache
def _stated_line() -> re.Pattern[str]:
    labels = "|".join(sorted(map(re.escape, _data().get("stated", [])), key=len, reverse=True))
    return re.compile(rf"^[ \t]*(?:[-*・•]\s*)?(?:{labels})[ \t]*[:：][ \t]*(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)


def stated_title(text: str) -> str:
    """The title a pasted brief gives on a line of its own ("タイトル:『かっぱの傘』" -> "かっぱの傘"), or ""."""
    m = _stated_line().search(text) if "\n" in text.strip() else None
    if m is None:
        return ""
    title = m.group(1).strip()
    for opening, closing in _PAIRS.items():
        if title.startswith(opening) and title.endswith(closing) and len(title) > 2:
            title = title[1:-1].strip()
    return clip(title) if title else ""


def task_title(intent: Any, text: str, lang: str, persistent: bool) -> str:
    """The title of the task INTENT (read from TEXT, in LANG) starts: a one-shot keeps the thing being made
    ("Short clip about coffee"); a goal's head names it once, where it fits ("Poster series for a jazz night",
    "Sticker series for our climbing gym"). A pasted brief that states its title gets that title."""
    stated = stated_title(text)
    if stated:
        return stated
    table = _table(lang)
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    words = ((intent.title if not persistent else "") or intent.subject or "").strip()
    subject = tidy(words, text, lang) if words else ""
    if not subject and words:  # nothing but a frame ("次", "Need"): the message's first sentence says it
        subject = tidy(_first_sentence(text), text, lang)
    if not subject:
        subject = phrase(f"media_{intent.media}", lang) if intent.media else tidy(first_line, text, lang) or first_line
    subject = _capital(clip(subject), lang)
    if not (persistent and intent.goal_type and intent.goal_type != "general"):
        return _series(subject, lang, table)
    head = phrase(f"goal_{intent.goal_type}", lang)
    if normalise(head) in normalise(subject):
        return subject
    if intent.goal_type == "film":  # the head says it is a film; the rest is what of ("…фильм: Лиса в лесу")
        subject = _capital(clip(tidy(film_subject(intent), text, lang)), lang) or subject
        return _headed(head, subject, lang, table)
    head, named = _fitting(head, intent.goal_type, subject, text, table)
    if named:  # the title names what is made ("Stickers for our gym"): one phrase with its head, or alone
        return (_merged(head, subject, lang, table) if head else None) or _series(subject, lang, table)
    return _headed(head, subject, lang, table) if head else _series(subject, lang, table)
