"""`lomo/local`'s main-thread policy: the Router of the embedded offline model (A5).

Same protocol as any model: it reads `request.messages`, `request.tools` and `request.hints` (the task
index the runtime built, A6) and answers with content or tool calls:

- greetings, thanks, praise, acknowledgements, goodbyes, help, information questions ("how do I…?",
  "短片一般多长合适？"), arithmetic, the date, today's spend, task counts → an answer, in the creator's
  language — unless they carry an instruction ("great, now make it bigger") or ask for a change
  ("能把海报调亮一点吗？");
- a workspace file the message works on that does not exist → clarify(missing_files=…) (A8);
- a one-shot generation → create_task(kind="lightweight"), titled from the subject;
- a multi-step goal → create_task(kind="persistent") with a brief (make_brief) — unless the index
  shows a near-duplicate, which gets the message instead (A7);
- a follow-up, a revision, a pronoun-only reference ("make that one bluer", "把那个改蓝一点") →
  send_to_task to the best candidate: a file it names, then distinctive words shared with a task
  (weighted by how few candidates share them; subjects such as "lighthouse"/"灯塔"/"маяк" meet across
  languages; the deliverable it names breaks a tie), then what the creator was just working on;
- a request to make something goes to an existing task only if it is about that task's subject;
- two candidates that fit about equally well → clarify.

Everything is deterministic. It never branches on which runtime or model name asked.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from .base import ModelReply, ModelRequest, ToolCall
from ..language import (
    asks_to_make,
    header,
    answer_simple,
    cue_table,
    classify,
    detect_language,
    other_thing,
    film_subject,
    find_files,
    find_reference,
    is_generic,
    kana_words,
    katakana_keys,
    keywords,
    latin_keys,
    make_brief,
    media_kinds,
    edited_media,
    matchable,
    normalise,
    parse,
    parse_number,
    phrase,
    scorer,
    series_size,
    similarity,
    subject_patterns,
    unquoted,
)

SIMPLE_ACTS = ("greeting", "thanks", "help")
QUESTION_ACTS = ("question", "status")
CONTROL_ACTS = ("continue", "stop", "pause", "resume", "forget", "delete")
REFERENCE_ACTS = ("revise",) + CONTROL_ACTS
JUST_NOW = 20 * 60  # seconds: what the creator was "just" working on
STALE = 25.5 * 3600  # seconds untouched: a stale task (a feature of the fitted scorer). Half an hour clear of
# any whole hour, so a task seeded N hours old reads the same however long a run takes: at 25 h, a task seeded a
# day and an hour old turned stale once a slow machine took a second between seeding and routing.
CLEAR_MARGIN = 0.75  # evidence lead (in distinctive keywords) that makes one candidate the clear choice
MIN_EVIDENCE = 0.9
TIE = 0.5  # evidence this close between candidates the message refers to is a tie: ask
# A new goal this similar to a task in view repeats it: _duplicate_cut() (the fitted "duplicate" model of
# language/router_weights.json where it is used, else DUPLICATE_HAND), the cut router.dedupe gives create_task too.
DUPLICATE_HAND = 0.45  # keep in step with router.dedupe.THRESHOLD
DUPLICATE_ONE_SHOT = 0.6  # a one-shot this close to a persistent task's goal is that task
MAX_CHOICES = 3
FILE_EXT = re.compile(r"\.(?:flow\.json|[a-z0-9]{1,5})$", re.I)

# The Router's cues: data in lomo_tui/language/cues.toml (a pattern per language for each cue).
_DEICTIC = cue_table("deictic")  # the creator points at something that exists: "that one", "那个", "その", "его"
_REFERENCE = cue_table("reference")  # weaker pointers: a definite or possessive noun phrase ("the posters")
_FRESH = cue_table("fresh")  # a new piece: a creation verb with an indefinite object, or a bare "a …"
_REDO = cue_table("redo")  # a creation verb or an indefinite object that names the piece just made over again
# ("make a version in orange", "now make a longer one", "draw it with a hat", "把它画成水彩", "нарисуй её в шляпе")
_PRONOUN = cue_table("pronoun")  # an object pronoun for the piece itself ("make IT orange", "把它…", "сделай ЕГО …")
_EDIT = cue_table("edit")  # an edit of something that exists ("make X bigger", "把…改成…", "…を大きくして", "сделай фон тёмным")
_PROJECT = cue_table("project")  # a bundle of deliverables: a persistent goal even when one piece is seen
# three or more listed items; a match starts only where an item can (text start, after a separator, colon or
# newline) and items are possessive, so a long text without separators is scanned once, not once per position
_LIST = re.compile(r"(?:^|(?<=[,，、;；:：・\n]))[^,，、;；:：・\n]++(?:[,，、;；・]\s*[^,，、;；・\n]++){2,}")
_LAST_AND = re.compile(r"\s+(?:and|or|&|и|или)\s+(?=[^,，、;；・\n]*$)")  # the last item of a list, joined by a word
_SINGLE = cue_table("single")  # one piece, said outright: "a single red sneaker", "一张", "одну картинку"


_EACH = re.compile(r"\b(?:each|per|apiece)\b|[每各]|一[种種个個件期款][一1]|ずつ|ごと|(?<![а-я])(?:кажд[а-я]*|по одн[а-я]*)(?![а-я])")
_NUMBERED = re.compile(r"(?:^|(?<=[\s:：，,;；。]))[(（]?([1-9])(?:[)）]|[.、．](?!\d))")  # "1）一张海报 2）…", "1. poster"


def _numbered_pieces(text: str) -> bool:
    """Two or more numbered items that name something to make ("1）一张海报 2）15秒的预热短片"), each maybe one piece."""
    marks = list(_NUMBERED.finditer(text))
    if len(marks) < 2 or [int(m.group(1)) for m in marks[:2]] != [1, 2]:
        return False
    items = [text[m.end():nxt.start() if nxt else len(text)] for m, nxt in zip(marks, marks[1:] + [None])]
    return sum(bool(media_kinds(item)) for item in items) >= 2


_BULLET = re.compile(r"(?m)^[ \t]*[-–•・*●▪][ \t]*(\S.*)$")  # "- a poster", "・A1のポスター1枚"


def _bulleted_pieces(text: str) -> bool:
    """Two or more bulleted lines that each name something to make (a pasted brief: "- a poster\n- a 10 sec
    clip\n- name tags")."""
    return sum(bool(media_kinds(m.group(1))) for m in _BULLET.finditer(text)) >= 2


def _listed_pieces(text: str, lang: str) -> bool:
    """Three or more listed items of which at least two name something to make ("logo, card, banner"), or two
    or more numbered ones ("需要：1）一张海报 2）15秒的预热短片 3）胸牌"), not one piece with its attributes ("a
    jingle, 5 seconds, ukulele, cheerful")."""
    if _numbered_pieces(text) or _bulleted_pieces(text):
        return True
    m = _LIST.search(_LAST_AND.sub(", ", text))  # "box sleeve, care card and a wax seal sticker"
    if m is None:
        return False
    naming = (item for item in re.split(r"[,，、;；・]", m.group()) if media_kinds(item))
    return next(naming, None) is not None and next(naming, None) is not None


_INTO_SERIES = cue_table("into_series")  # more pieces for a set the creator has: "one more poster for the series"
_NEXT_VALUE = cue_table("next_value")  # "次はラベンダー湯": the next of a series, named by what it shows
_SERIES_NEXT = cue_table("series_next")  # the next piece of a series by its position: "a sixth fern plate"
_FAILED_BEFORE = cue_table("failed_before")  # the last try did not come out: "радиоролик не вышел, повтори"
_RETRY = cue_table("retry")  # another try asked for: "ok retry it", "Перезапусти", "再来一次吧"
_SOUNDTRACK = cue_table("soundtrack")  # the sound of a piece: "звук погромче" (a clip's, when no audio task is in view)
_NEW_WORD = cue_table("new_word")  # "make a new invitation suite then": not the old one asked again
_WHOLE_PACKAGE = cue_table("whole_package")  # "need the whole package: entrance art, 4 props and a trailer"
_RECALL = cue_table("recall")  # older work named by memory: "remember the Moonwell teaser from way back?"
_MORE = cue_table("more")  # continuation of an existing piece of work ("one more", "再来一张")


_PRONOUN_OBJECT = cue_table("pronoun_object")  # "make it loop smoother": the piece at hand is what it changes
_NEW_VALUE = cue_table("new_value")  # what an edit changes a thing to ("…をチョコケーキに変えて", "改成猫")
_SEQUENCE = cue_table("sequence")  # opening with "then…" / "next:" brings in the next item, not an edit of the last


# Creative nouns across languages, so "菜单" finds the "Noodle bar menu" task and "clip" the "recipe video".
CONCEPTS: dict[str, str] = cue_table("concepts")
# Subjects from the language layer come first, so "熊猫" is a panda before "猫" can make it a cat.
@cache
def _concept_res() -> dict[str, re.Pattern[str]]:
    """Compiled on the first routed message, not at import (a `--run-once hello` never routes)."""
    return {**subject_patterns(), **{name: re.compile(rx) for name, rx in CONCEPTS.items()}}
# Concepts that name a kind of deliverable, not what it is about: two unrelated tasks share them easily
# ("Jazz poster series" and "Bakery poster"), so they count as generic words (nlu.is_generic) do.
GENERIC_CONCEPTS = frozenset({"#poster", "#video", "#logo", "#banner", "#menu", "#flyer", "#card", "#invitation",
                              "#cover", "#storyboard", "#trailer", "#ad", "#music", "#packaging", "#label",
                              "#sticker", "#model", "#slides", "#icon", "#mascot", "#comic", "#illustration",
                              "#photo", "#font", "#subtitle", "#background", "#price", "#sign", "#tshirt",
                              "#diagram", "#ticket", "#thumbnail", "#coupon", "#certificate", "#post", "#map",
                              "#tutorial"})
# Concepts that name the deliverable itself: "火锅店那几张海报" is about the hotpot posters, not the hotpot menu.
DELIVERABLES = frozenset({"#poster", "#video", "#logo", "#banner", "#menu", "#flyer", "#card", "#invitation", "#cover",
                          "#storyboard", "#trailer", "#ad", "#music", "#packaging", "#label", "#sticker", "#model",
                          "#slides", "#icon", "#mascot", "#comic", "#illustration", "#sign", "#tshirt", "#diagram",
                          "#ticket", "#thumbnail", "#coupon", "#certificate", "#post", "#map", "#tutorial"})
GENERIC_WEIGHT = 0.5  # a shared generic word counts this much of a distinctive one
UNITS = frozenset({"second", "sec", "minute", "min", "hour", "px", "percent", "秒", "分钟", "秒钟", "секунд",
                   "минут", "час", "s", "円", "元", "块", "yen", "руб", "рубл", "рублей"})  # (and prices: "15円に")
BODY_WEIGHT = 0.6  # a word only a task's goal or summary has counts less than one in its title or file names


@dataclass
class Candidate:
    id: str
    title: str
    goal: str
    status: str
    kind: str
    updated_at: float
    recency: int | None
    retrieved: bool
    files: list[str]
    file_match: bool = False
    memory: float = 0.0
    words: set[str] = field(default_factory=set)
    title_words: set[str] = field(default_factory=set)
    kana: set[str] = field(default_factory=set)  # names the title spells in hiragana (keywords drop them)
    media: set[str] = field(default_factory=set)
    evidence: float = 0.0
    distinct: float = 0.0  # the part of the evidence that distinctive words (and route memory) give
    kind_match: bool | None = None  # the message names a deliverable (poster, menu…) its title does / doesn't
    features: dict[str, float] = field(default_factory=dict)  # what the fitted scorer reads (see features)
    fit: float = 0.0  # the fitted scorer's probability that the message is for this candidate

    @property
    def usable(self) -> bool:  # a failed task takes a message (the ledger reopens it): "try again, shorter"
        return self.status not in ("stopped", "archived")


# ---- reading the request -------------------------------------------------------------------------
def _tool_names(request: ModelRequest) -> set[str]:
    return {t["function"]["name"] for t in request.tools if "function" in t}


def _pending(request: ModelRequest) -> tuple[str, list[dict[str, Any]]]:
    """The creator's new words, and tool results that followed the last assistant step (if any)."""
    new = request.hints.get("new_messages")
    if new:
        return "\n".join(str(m) for m in new), []
    results: list[dict[str, Any]] = []
    for message in reversed(request.messages):
        if message["role"] == "tool":
            results.append(message)
        elif message["role"] == "user":
            return str(message.get("content") or ""), list(reversed(results))
        elif message["role"] == "assistant" and results:
            break
    return "", list(reversed(results))


def _now(hints: dict[str, Any]) -> float | None:
    try:
        return datetime.fromisoformat(str(hints.get("now"))).timestamp()
    except (TypeError, ValueError):
        return None


def generic(word: str) -> bool:
    """A word unrelated tasks share: a deliverable concept ("#poster") or a generic keyword ("sery", "сери")."""
    return word in GENERIC_CONCEPTS or word[:1] in NAME_KEY_MARKS or (not word.startswith("#") and is_generic(word))


_CJK_CHAR = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_SCRIPT_EDGE = re.compile(f"(?<=[a-z]{{2}})(?=[{_CJK_CHAR}])|(?<=[{_CJK_CHAR}])(?=[a-z]{{2}})")
_CONCEPT_CRUMB = re.compile(f"(?<=\0)[{_CJK_CHAR}](?![{_CJK_CHAR}])|(?<![{_CJK_CHAR}])[{_CJK_CHAR}](?=\0)")


def _content(text: str) -> tuple[set[str], set[str]]:
    """(words, media kinds) of TEXT: keywords (units out), creative nouns as language-neutral concepts."""
    norm = _SCRIPT_EDGE.sub(" ", matchable(text))  # "teaser最后加上日期": the English word is a word of its own
    kinds = media_kinds(text)
    words = set()
    for name, rx in _concept_res().items():
        if rx.search(norm):
            words.add(f"#{name}")
            norm = rx.sub("\0", norm)
    # a CJK character a concept left alone ("店" of "火锅店菜单" once "火锅" and "菜单" are concepts) is no word
    norm = _CONCEPT_CRUMB.sub(" ", norm).replace("\0", " ")
    words |= {w for w in keywords(norm) if w not in UNITS}
    return words, kinds


_EXT_MEDIA = {"png": "image", "jpg": "image", "jpeg": "image", "webp": "video", "gif": "video", "mp4": "video",
              "gltf": "3d", "glb": "3d", "obj": "3d", "wav": "audio", "mp3": "audio", "md": "document",
              "txt": "document"}


NAME_KEY_MARKS = ("^", "~")


def _name_keys(text: str, mine: bool = False) -> set[str]:
    """Names across scripts as words: a katakana name of the message ("オリベッティ") meets a task's Latin-lettered
    one ("Olivetti") and the other way round (language.names); MINE: TEXT is the task's, else the message's. A
    sound-alike is weaker than the word itself: such a key counts as a generic word does, except where the message
    recalls old work by it (_named_in)."""
    kana, latin = ("^", "~") if mine else ("~", "^")
    return {kana + k for k in katakana_keys(text)} | {latin + k for k in latin_keys(text)}


def _candidates(hints: dict[str, Any]) -> list[Candidate]:
    out = []
    for e in hints.get("task_index") or []:
        c = Candidate(id=e["id"], title=e.get("title") or "", goal=e.get("goal") or "", status=e.get("status") or "",
                      kind=e.get("kind") or "", updated_at=float(e.get("updated_at") or 0.0),
                      recency=e.get("recency"), retrieved=bool(e.get("retrieved")), files=list(e.get("files") or []),
                      file_match=bool(e.get("file_match")), memory=float(e.get("memory") or 0.0))
        stems = " ".join(FILE_EXT.sub("", f).replace("/", " ").replace("_", " ").replace("-", " ") for f in c.files)
        c.title_words, c.media = _content(f"{c.title}\n{stems}")
        c.kana = kana_words(c.title)
        c.title_words |= c.kana | _name_keys(f"{c.title}\n{stems}", mine=True)
        body, body_media = _content(f"{c.goal}\n{e.get('summary') or ''}")
        body_kana = kana_words(c.goal)  # "看板猫4匹（むぎ、そら、きなこ、たま）": names the goal spells in hiragana
        c.kana |= body_kana
        c.words = c.title_words | body | body_kana | _name_keys(c.goal, mine=True)
        c.media |= body_media
        for f in c.files:
            ext = f.rsplit(".", 1)[-1].lower()
            if f.endswith(".flow.json"):
                c.media.add("flow")
            elif ext in _EXT_MEDIA:
                c.media.add(_EXT_MEDIA[ext])
        out.append(c)
    return out


_NAME = re.compile(r"(?<=[^\s.!?。！？])\s+([A-ZА-ЯЁ][\w'’-]+)")


def names(text: str) -> set[str]:
    """Keywords of capitalised words inside a sentence (en/ru): names ("the Wheelhouse banner")."""
    return {k for m in _NAME.finditer(text) for k in keywords(m.group(1))}


def _titled(title: str, norm: str) -> bool:
    """Does the message (normalised) name the task by its whole title ("工作室标志换成黑白的")?"""
    t = " ".join(re.sub(r"[^\w\s]+", " ", matchable(title)).split())
    spaced = re.match(r"[a-zа-я0-9]", t) is not None
    if (len(t.split()) < 2) if spaced else (len(t) < 3):  # one word is no name ("Logo", "海报")
        return False
    return re.search(rf"(?<!\w){re.escape(t)}(?!\w)" if spaced else re.escape(t),
                     " ".join(re.sub(r"[^\w\s]+", " ", norm).split())) is not None


TITLE_WEIGHT = 0.5  # a message that says a task's whole title names it beyond the words it shares with others
HEADER_WEIGHT = 1.0  # a message headed by words of a task's title ("promo video: …") names it, as a file would


def _header_names(c: Candidate, norm: str) -> bool:
    """"promo video: cut the intro down": a message headed by two or more words of C's title names C, as its whole
    title would."""
    said = _content(header(norm))[0]
    return len(said) >= 2 and said <= c.title_words


_INDEFINITE = re.compile(r"\b(?:a|an|some)\s+((?:[\w'-]+\s+){0,2}[\w'-]+)")


def _under_article(norm: str) -> set[str]:
    """Words the (English) message uses under an indefinite article ("… hold a book", "a tshirt design")."""
    return set().union(*(_content(m.group(1))[0] for m in _INDEFINITE.finditer(norm)))


def _introduced(norm: str) -> set[str]:
    """Words the (English) message only uses under an indefinite article: things it brings in, not things
    it points at ("the owl should hold a book" is about the owl, not a book task)."""
    inside = _under_article(norm)
    return inside - _content(_INDEFINITE.sub(" ", norm))[0] if inside else set()


_QUOTED = re.compile(r"[\"“«「『]([^\"”»」』]{30,})[\"”»」』]")  # a quoted passage (short ones may be names)


def _quoted_words(norm: str) -> set[str]:
    """Words only a quoted passage uses: what is to be put on a piece ("put this review on the next post: "… came out
    of the van calm …""), not a task it names — even one whose title has the word."""
    spans = [m.span(1) for m in _QUOTED.finditer(norm)]
    if not spans:
        return set()
    inside = set().union(*(_content(norm[a:b])[0] for a, b in spans))
    return inside - _content(_without(norm, spans))[0]


def _wanted_value(norm: str) -> set[str]:
    """Words only the value an edit asks for uses ("make the third one more red": red is what it wants, not a
    task it names), in the message's language (cue table new_value)."""
    spans = _value_spans(norm, detect_language(norm))
    if not spans:
        return set()
    inside = set().union(*(_content(norm[a:b])[0] for a, b in spans))
    return inside - _content(_without(norm, spans))[0]


def _value_spans(norm: str, lang: str) -> list[tuple[int, int]]:
    """Where the values an edit asks for stand in NORM (cue table new_value: the named group that matched — v, w… —
    else the whole match)."""
    rx = re.compile(_NEW_VALUE.get(lang, _NEW_VALUE["en"]))
    spans = []
    for m in rx.finditer(norm):
        named = [name for name in rx.groupindex if m.group(name) is not None]
        spans.append(m.span(named[0]) if named else m.span())
    return spans


_STYLE_SOURCE = cue_table("style_source")


def _source_words(norm: str, lang: str) -> set[str]:
    """Words only the look a request for new work says to follow uses ("same colours as the open day posters",
    "风格跟队服一致", "写真はカタログのを使い回して"): a task named as a source, not the one the work is for."""
    rx = re.compile(_STYLE_SOURCE.get(lang, _STYLE_SOURCE["en"]))
    spans = [m.span(name) for m in rx.finditer(norm) for name in rx.groupindex if m.group(name) is not None]
    if not spans:
        return set()
    inside = set().union(*(_content(norm[a:b])[0] for a, b in spans))
    return inside - _content(_without(norm, spans))[0]


def _named_only_as_source(c: Candidate, words: set[str], source: set[str]) -> bool:
    """Does the message name C only as the look to follow (no word outside that names it distinctively)?"""
    shared = words & c.words
    return bool(shared & source) and not any(w not in source and not generic(w) for w in shared)


def _without(norm: str, spans: list[tuple[int, int]]) -> str:
    for a, b in reversed(spans):
        norm = norm[:a] + " " + norm[b:]
    return norm


def _brings_in_kind(words: set[str], text: str) -> bool:
    """Does the message bring in the deliverables it names with an indefinite article ("a tshirt design with the
    wave on it": the "it" is the t-shirt, not a piece that exists)?"""
    kinds = words & DELIVERABLES
    return bool(kinds) and kinds <= _under_article(matchable(text))


def _score(cands: list[Candidate], words: set[str], media: set[str], named: set[str] = frozenset(),
           text: str = "") -> None:
    """Evidence: each shared keyword counts 1/df (df = how many candidates have it), so a word every
    candidate shares says little and one only one candidate has says a lot; a word only in a task's goal
    counts BODY_WEIGHT of one in its title or file names; a name the creator capitalised counts double; a
    generic word ("poster", "series", "改") counts GENERIC_WEIGHT and is no distinctive evidence, and so does a
    word the message only brings in ("… hold a book") or asks for as a value ("… more red") — unless the message names the task by its whole title
    ("the Studio logo", "工作室标志")."""
    norm = matchable(text)
    # a name the title spells in hiragana ("ろくろ動画") is a word of the message that spells it too
    words = words | {k for c in cands for k in c.kana if k in norm}
    df: dict[str, int] = {}
    for c in cands:
        for w in words & c.words:
            df[w] = df.get(w, 0) + 1
    wanted = _wanted_value(norm)
    kinds = (words - wanted) & DELIVERABLES  # "最後にロゴを3秒出して": the logo it shows is no kind of piece it names
    quoted = _quoted_words(norm)
    new = _introduced(norm) | wanted
    for c in cands:
        c.evidence = c.distinct = 0.0
        own = c.title_words & DELIVERABLES
        c.kind_match = bool(kinds & c.words) if kinds and own else None
        headed = bool(text) and _header_names(c, norm)
        titled = bool(text) and (_titled(c.title, norm) or headed)
        # "needs more fog + green light": a value, not the task whose description or file name says green
        said = _content(c.title)[0] if wanted else set()
        for w in sorted(words & c.words):  # in one order: a sum over a set differs in its last bits with the hash seed
            if (w in wanted and w not in said or w in quoted) and not titled:
                continue
            value = (1.0 if w in c.title_words else BODY_WEIGHT) * (2.0 if w in named else 1.0) / df[w]
            if (generic(w) or w in new) and not titled:
                c.evidence += value * GENERIC_WEIGHT
            else:
                c.evidence += value
                c.distinct += value
        if c.evidence and media and c.media and not (media & c.media):
            c.evidence *= 0.5
            c.distinct *= 0.5
        whole = TITLE_WEIGHT * (titled and not headed)  # "料金表に中国語も併記して": the whole title said
        c.evidence += c.memory + HEADER_WEIGHT * headed + whole
        c.distinct += c.memory + HEADER_WEIGHT * headed + whole


_ALL_OF = cue_table("all_of")
ALL_OF_WEIGHT = 1.0  # "on all three" beside a set of three: as telling as a distinctive word


def _all_of(text: str, lang: str) -> int | None:
    """How many pieces the message names all of ("add 340g on all three", "这三张都换成白底", «на всех трёх»)."""
    m = re.search(_ALL_OF.get(lang, _ALL_OF["en"]), matchable(text))
    if m is None:
        return None
    groups = m.groupdict()
    if groups.get("both"):
        return 2
    number = parse_number(groups.get("n") or groups.get("m") or "")
    return int(number) if number else None


_LATIN_WORDS = re.compile(r"[a-z][a-z'-]+")
_CYRILLIC_RUN = re.compile(r"[а-яё]+(?:[^\w]+[а-яё]+)*")
PHRASE_WEIGHT = 0.5  # "that old business card" beside the one title that says "business card" word for word


def _pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent words of TEXT: Latin words as written, Russian ones as their stems (any case: «из каталога
    посуды» says «Каталог посуды»)."""
    norm = matchable(text)
    words = _LATIN_WORDS.findall(norm)
    out = set(zip(words, words[1:]))
    for run in _CYRILLIC_RUN.findall(norm):
        stems = keywords(run)
        out |= set(zip(stems, stems[1:]))
    return out


def _score_kind_phrase(cands: list[Candidate], text: str) -> None:
    """Two words that only one task's title says side by side ("business card", "gift voucher", «каталог посуды»
    beside «Каталог сувениров») name that task more surely than either word alone, which several titles share:
    a generic word, or (in Russian) one more than one title in view has."""
    shared = {w for w, n in Counter(w for c in cands for w in set(keywords(c.title))).items() if n > 1}
    said = {p for p in _pairs(text) if generic(p[0]) or generic(p[1])
            or (p[0][0] >= "\u0400" and (p[0] in shared or p[1] in shared))}  # (in English that wins too much)
    if not said:
        return
    owners: dict[tuple[str, str], list[Candidate]] = {}
    for c in cands:
        for p in said & _pairs(c.title):
            owners.setdefault(p, []).append(c)
    for holders in owners.values():
        if len(holders) == 1:
            holders[0].evidence += PHRASE_WEIGHT
            holders[0].distinct += PHRASE_WEIGHT


_NUMBERED_PIECE = re.compile(r"(?<![\w/.])([a-z][a-z-]{2,})\s?#?(\d{1,2})(?![\d.%])")  # "reel 3", "stamp 2"
PIECE_WEIGHT = 1.0  # "reel 3 is too fast" beside clips/reel_3.webp: as telling as a distinctive word


def _score_numbered_piece(cands: list[Candidate], text: str) -> None:
    """A piece named by its file's stem and number ("reel 3" for clips/reel_3.webp) points at the one task that
    has that file, whatever other tasks share the kind of piece."""
    for m in _NUMBERED_PIECE.finditer(matchable(text)):
        word, n = m.group(1), m.group(2)
        stems = {f"{w}{sep}{n}" for w in {word, word.rstrip("s")} for sep in ("_", "-", "")}
        owners = [c for c in cands if any(FILE_EXT.sub("", f.rsplit("/", 1)[-1]).lower() in stems for f in c.files)]
        if len(owners) == 1:
            owners[0].evidence += PIECE_WEIGHT
            owners[0].distinct += PIECE_WEIGHT


def _score_all_of(cands: list[Candidate], text: str, lang: str) -> None:
    """A task whose pieces (its files, or those of one folder) number what "all three" counts is the set meant."""
    whole = _all_of(text, lang)
    if whole is None or whole < 2:
        return
    for c in cands:
        folders: dict[str, int] = {}
        for path in c.files:
            folder = path.rpartition("/")[0]
            folders[folder] = folders.get(folder, 0) + 1
        if whole == len(c.files) or whole in folders.values():
            c.evidence += ALL_OF_WEIGHT
            c.distinct += ALL_OF_WEIGHT


def _cue(table: dict[str, str], lang: str, text: str) -> bool:
    return bool(re.search(table.get(lang, table["en"]), matchable(text)))


# ---- replies ---------------------------------------------------------------------------------------
def _call(name: str, **arguments: Any) -> ModelReply:
    return ModelReply(content=None, tool_calls=[ToolCall(name, {k: v for k, v in arguments.items() if v is not None})])


TITLE_EDGES = " ,.!?:;-—…\"'«»“”()：，。！？、；「」『』"


def _stem(word: str) -> str:
    word = normalise(word)
    return word[:-2] if word.endswith("es") and len(word) > 4 else word[:-1] if word.endswith("s") else word


def _title(intent: Any, text: str, lang: str, persistent: bool) -> str:
    # a one-shot's title keeps the thing being made ("Short clip about coffee"); a goal's head names it, where it
    # fits; the frame of the request ("I want", "帮我", "…を描きたい") is left out (language/titles.toml)
    from ..language import task_title

    return task_title(intent, text, lang, persistent)


def _create(intent: Any, text: str, lang: str, kind: str) -> ModelReply:
    persistent = kind == "persistent"
    brief = make_brief(text, intent) if persistent else ""
    return _call("create_task", title=_title(intent, text, lang, persistent), kind=kind, goal=text.strip()[:500],
                 brief=brief or None, language=lang)


def _send(c: Candidate) -> ModelReply:
    return _call("send_to_task", task_id=c.id)


def _clarify(cands: list[Candidate], intent: Any, text: str, lang: str, tools: set[str]) -> ModelReply:
    if "clarify" not in tools:
        return ModelReply(content=phrase("ask_which_task", lang))
    kind = "persistent" if intent.act == "goal" else "lightweight" if intent.act == "one_shot" else "persistent"
    return _call("clarify", task_ids=[c.id for c in cands[:MAX_CHOICES]], question=phrase("ask_which_task", lang),
                 new_title=_title(intent, text, lang, kind == "persistent"), new_kind=kind)


# Words that make a file name the message mentions something to create or save, not something that exists.
_OUTPUT_BEFORE = cue_table("output_before")
_OUTPUT_AFTER = cue_table("output_after")


_LISTED_NAME = re.compile(r"[^\s,，、;；]+\.[a-z0-9]{2,5}(?=[\s,，、;；]|$)")


def _names_output(text: str, name: str, lang: str) -> bool:
    """Does TEXT mention the file NAME as something to write ("save it as final.png", "write notes.md",
    "保存为 cover.png", "summary.md を作成して", "сохрани как итог.png")?"""
    at = text.find(name)
    if at < 0:
        return False
    # names listed before this one count as words ("name them token_wood.png, token_stone.png etc")
    before = _LISTED_NAME.sub("file", matchable(text[max(0, at - 80):at]))
    after = matchable(text[at + len(name):at + len(name) + 20])
    langs = dict.fromkeys((lang, "en"))
    return any(re.search(_OUTPUT_BEFORE[lg], before) for lg in langs if lg in _OUTPUT_BEFORE) or \
        any(re.search(_OUTPUT_AFTER[lg], after) for lg in langs if lg in _OUTPUT_AFTER)


def _clarify_missing(cands: list[Candidate], missing: list[str], intent: Any, text: str, lang: str) -> ModelReply:
    """A choice card for a message about files that are not there: the tasks it most likely meant (by
    evidence, else the most recent), a new task, or cancel."""
    usable = [c for c in cands if c.usable]
    likely = [c for c in _by_evidence(usable) if c.evidence > 0]
    if not likely:
        likely = sorted((c for c in usable if c.recency is not None), key=lambda c: c.recency)[:1]
    kind = "persistent" if intent.act == "goal" else "lightweight" if intent.act == "one_shot" else "persistent"
    return _call("clarify", task_ids=[c.id for c in likely[:MAX_CHOICES]], new_title=_title(intent, text, lang,
                 kind == "persistent"), new_kind=kind, missing_files=missing)


def _summarise(results: list[dict[str, Any]], lang: str) -> ModelReply:
    for result in results:
        try:
            data = json.loads(result.get("content") or "{}")
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and data.get("error"):
            return ModelReply(content=str(data["error"]))
        if isinstance(data, dict) and data.get("title") and data.get("routed") == "created":
            return ModelReply(content=phrase("started_task", lang, title=data["title"]))
    return ModelReply(content=phrase("thanks", lang) if not results else "OK.")


# ---- the policy ---------------------------------------------------------------------------------------
def route(request: ModelRequest) -> ModelReply:
    hints = request.hints
    tools = _tool_names(request)
    text, results = _pending(request)
    if results or not text.strip():
        return _summarise(results, detect_language(text) if text.strip() else (hints.get("language") or "en"))
    message = request.message if request.message is not None and request.message.text == text else parse(text)
    intent = _next_item(message.intent(), text)
    lang = intent.language
    cands = _candidates(hints)
    words, media = _content(text)
    words |= _name_keys(text)
    media |= {intent.media} if intent.media else set()
    if intent.act in REFERENCE_ACTS and "document" in media_kinds(text, lang) - edited_media(text, lang):
        media.discard("document")  # "再简洁点，把文字去掉": the text on the piece, not a document
    _score(cands, words, media, names(text), text)
    _score_all_of(cands, text, lang)
    _score_numbered_piece(cands, text)
    _score_kind_phrase(cands, text)
    viewed = cands
    cands = _series_fit(cands, message.reference, intent)
    in_view = len(viewed)
    series = cands[0] if len(cands) == 1 < in_view else None  # the one task the position can point into
    mentions = hints.get("mentions") or {}

    edit = _cue(_EDIT, lang, text)
    deictic = intent.refers_back or _cue(_DEICTIC, lang, unquoted(text))

    # 1. What the Main thread answers itself. A question that asks for a change to a task it names
    # ("能把茶叶包装的颜色改深一点吗？") is a follow-up, not a question.
    if intent.act in SIMPLE_ACTS:
        return ModelReply(content=answer_simple(text, intent, _facts(hints)) or phrase(intent.act, lang))
    # the fitted scorer's view of each candidate (c.fit), from the message's cues
    cues = {"make": float(intent.act in ("one_shot", "goal")), "edit": float(edit), "deictic": float(bool(deictic)),
            "fresh": float(_cue(_FRESH, lang, text)), "more": float(_cue(_MORE, lang, text)),
            "revise": float(intent.act in REFERENCE_ACTS),
            "question": float(intent.act in QUESTION_ACTS or intent.interrogative)}
    _rate(cands, text, hints, cues)

    # A8: a workspace file the message works on that does not exist — ask, rather than guess a task or
    # start one ("make jazz_5.png warmer" when there are two jazz posters). Files it asks to create are fine.
    unclaimed = _claim_requested(cands, list(mentions.get("missing_files") or []))
    outputs = [name for name in unclaimed if name == intent.output or _names_output(text, name, lang)]
    absent = [name for name in unclaimed if name not in outputs]
    if absent and "clarify" in tools:
        return _clarify_missing(cands, absent, intent, text, lang)
    retry = _retry_target(viewed, text, lang) if "send_to_task" in tools else None
    if retry is not None:
        return _send(retry)
    if intent.act in QUESTION_ACTS and not any(c.file_match for c in cands):
        answer = answer_simple(text, intent, _facts(hints))
        best = _best(cands)
        if answer is not None and not (edit and (best is not None or _tied(cands)) and intent.topic != "math"):
            return ModelReply(content=answer)
        if intent.act == "status" and best is not None:
            return ModelReply(content=f"{best.title}: {best.status}")
        # An information question ("how do I change the theme?", "短片一般多长合适？") is answered even when it
        # shares words with a task; a yes/no question that reads as an edit ("海报能调亮吗") goes on below.
        if intent.interrogative or not (
                edit and (best is not None or _tied(cands) or deictic or any(c.evidence > 0 for c in cands))):
            return ModelReply(content=phrase("cannot_answer", lang))
        intent.act = "revise"

    # 2. Files the message names (A4 already routed a file bound to exactly one usable task).
    named = [c for c in cands if c.file_match]
    if named and "send_to_task" in tools:
        if len(named) == 1:
            return _send(named[0])
        return _clarify(_by_evidence(named), intent, text, lang, tools)
    if mentions.get("tasks"):
        target = next((c for c in cands if c.id in mentions["tasks"]), None)
        if target is not None:
            return _send(target)

    if "send_to_task" in tools and _cue(_FAILED_BEFORE, lang, text):
        # "радиоролик не вышел, повтори": the failed task the message names, or the only failed one in view
        failed = [c for c in viewed if c.status == "failed" and c.usable]
        said = [c for c in failed if c.evidence > 0] or (failed if len(failed) == 1 else [])
        if len(said) == 1:
            return _send(said[0])
    if "send_to_task" in tools and _cue(_RECALL, lang, text):
        # "помните, давно делали фирменный стиль для «Пар да Жар»?": the older work its words name
        # … the words of the sentence that recalls it first ("ごいしくん、覚えてる？あの子に帽子を…": the mascot,
        # not the kids' posters that share "子")
        by_clause = _named_in(viewed, _recall_clause(text, lang))
        if len(by_clause) != 1:  # … or of the clause that recalls it ("之前那份價目表拿出來更新一下,機油漲價了")
            by_clause = _named_in(viewed, _recall_clause(text, lang, _CLAUSE)) or by_clause
        if len(by_clause) == 1:
            return _send(by_clause[0])
        recalled = _standout(viewed)
        if recalled is not None and recalled.distinct > 0 and recalled is _top(viewed):  # not when a stopped or
            # archived task outranks it ("the display promo from a few years back" when that promo is archived)
            return _send(recalled)
        ranked = [c for c in _by_evidence(viewed) if c.usable and c.distinct > 0]
        tied = [c for c in ranked if ranked[0].evidence - c.evidence < TIE]
        old = [c for c in tied if c.recency is None]
        if len(old) == 1 < len(tied):  # «куртку для курьеров, которую делали давным-давно»: the old jacket,
            return _send(old[0])  # not today's courier icons that share a word with it
        of_kind = [c for c in viewed if c.kind_match]
        if len(of_kind) == 1 and of_kind[0].evidence >= max(c.evidence for c in viewed):
            return _send(of_kind[0])  # «старый логотип помнишь?»: the one logo there is, named by its kind alone
    if series is not None and intent.act not in ("one_shot", "goal") and "send_to_task" in tools:
        return _send(series)  # "swap the font on the last one": only one task has a series to point into
    position = message.reference
    if intent.act in ("one_shot", "revise") and position is not None and position.kind == "nth" \
            and asks_to_make(text, lang) and "send_to_task" in tools:
        # "くじの景品、2種類目を描いて": a piece of a set planned but not made yet, named by its words
        top = max((c.evidence for c in viewed), default=0.0)
        planned = [c for c in viewed if c.distinct > 0 and c.evidence >= top and _pieces(c) < position.n <= (
            series_size(c.goal, detect_language(c.goal), classify(c.goal).count) or 0)]
        if len(planned) == 1:
            return _send(planned[0])
    reference = intent.act in REFERENCE_ACTS or deictic or edit or _cue(_REFERENCE, lang, text)
    # "then…"/"next:" brings in the next item; a file to make that no task was asked for is a new piece
    sequence = intent.act in ("one_shot", "goal") and (_cue(_SEQUENCE, lang, text) or intent.output in outputs)
    fresh_cue = (_cue(_FRESH, lang, text) or sequence) and not _cue(_REDO, lang, text)
    fresh = intent.act in ("one_shot", "goal") and fresh_cue
    series_next = _cue(_SERIES_NEXT, lang, text) or (_cue(_NEXT_VALUE, lang, text) and not media_kinds(text, lang)
                                                     and _names_only_a_value(text, lang))
    more = _cue(_MORE, lang, text) or series_next
    best = _best(cands)
    tied = _tied(cands)
    if intent.act == "one_shot" and not edit and (_numbered_pieces(text) or not _cue(_SINGLE, lang, text) and (
            _cue(_PROJECT, lang, text) or _listed_pieces(text, lang))):
        intent.act = "goal"  # several deliverables, or a named bundle
    elif intent.act == "goal" and intent.count == 1 and _cue(_SINGLE, lang, text) and not _listed_pieces(text, lang) \
            and not _EACH.search(matchable(text)):  # ("二十四节气每个一张", "各一张", "一种一张": one of each)
        intent.act = "one_shot"  # "湯豆腐セットのチラシを1枚": one flyer (for a set meal), not a kit
    elif intent.act in ("revise", "other") and not (edit or deictic) and (
            _numbered_pieces(text) or _bulleted_pieces(text)):
        intent.act = "goal"  # a pasted brief that numbers its pieces ("以下是主委給的需求：1. 主視覺一張 2. …") or
        # lists them ("ok bigger thing. for our open house we need:\n- a poster\n- a 10 sec clip…")
    kinds_named = media_kinds(text, lang)
    sounds_or_more = kinds_named & {"audio", "video", "3d"}  # kinds a task plainly makes or does not
    if intent.act in ("one_shot", "goal") and not (edit or deictic or more):
        # A request to make something is for a task only if it is about what that task is about and makes
        # what that task makes: "posters for the summer camp" is not the "Summer night market posters", a
        # banner is not the gym's membership card.
        # … nor is a sound effect for a task that makes no sound ("打ち上げの効果音" beside the launch booklet),
        # unless the message names the piece that task makes ("fill in the sound for … the coffee storyboard")
        fits = {c.id for c in cands if c.kind_match is not False and not _new_subject(c, intent)
                and not (sounds_or_more and _makes_none_of(c, kinds_named) and not c.kind_match)}
        best = best if best is not None and best.id in fits else None
        tied = [c for c in tied if c.id in fits]
        tied = tied if len(tied) > 1 else []
    elif intent.act in ("one_shot", "goal") and not edit and (more and not deictic or _brings_in_kind(words, text)):
        # "ещё нарисуй схему опыта" beside a set of cards, "also want merch, a tshirt design with the wave on it"
        # beside an album cover: one more of something no task makes, or one the message brings in, is new
        # … and one more for another subject beside a single piece ("а ещё нужен лист персонажа для совы" after
        # the fox's sheet): a one-shot has no series to add to
        def elsewhere(c: Candidate) -> bool:  # … or one more of a kind of piece it does not make ("効果音もひとつ")
            return c.kind_match is False or (c.kind == "lightweight" and _new_subject(c, intent)) or \
                _makes_none_of(c, kinds_named)
        best = None if best is not None and elsewhere(best) else best
        tied = [c for c in tied if not elsewhere(c)]
        tied = tied if len(tied) > 1 else []

    modelled: set[str] = set()  # tasks the message names only as the look to follow
    if intent.act in ("one_shot", "goal") and not more:
        # "4 instagram posts …, same colours as the open day posters": new work in the look of a task it names
        source = _source_words(matchable(text), lang)
        modelled = {c.id for c in cands if source and _named_only_as_source(c, words, source)}
        if source:
            if intent.act == "one_shot" and not _cue(_SINGLE, lang, text) and any(
                    c.kind == "persistent" and _named_only_as_source(c, words, source) for c in cands):
                intent.act = "goal"  # "2023年のカレンダーみたいなのを2026年版でも作りたい": made the way that task was
            best = None if best is not None and _named_only_as_source(best, words, source) else best
            tied = [c for c in tied if not _named_only_as_source(c, words, source)]
            tied = tied if len(tied) > 1 else []

    elif best is not None and not more:
        # "for the shelf talker use the same font as the ghost pepper labels": a change to one piece in the look
        # of another — the task named outside the look is the one the change is for
        source = _source_words(matchable(text), lang)
        if source and _named_only_as_source(best, words, source):
            others = [c for c in cands if c is not best and c.distinct > 0 and not _named_only_as_source(c, words, source)]
            if len(others) == 1:
                best, tied = others[0], []

    standout = _standout(cands) if intent.act in ("one_shot", "goal") and (
        series_next or _cue(_INTO_SERIES, lang, text)) else None
    if standout is not None and _cue(_INTO_SERIES, lang, text):
        return _send(standout)  # "one more poster for the series", "再做三张贴纸，延续那套的风格": the set its words name

    if intent.act in ("one_shot", "goal") and more and not fresh and best is None and not tied \
            and not any(c.evidence > 0 for c in cands) \
            and len([w for w in keywords(intent.subject or "") if not is_generic(w)]) <= 1:
        # "再多兩款，一款芋頭紫、一款抹茶綠" right after the cups were worked on: more of what was just made, when
        # the words name no task and no kind of piece, or only the kind it makes, unasked ("再来两张不同配色的" after
        # a ticket picture; «и ещё визитки» after a logo asks for a new kind of piece)
        just = _just_now(cands, hints)
        named = media_kinds(text, lang)
        if just is not None and (not named or not (named - just.media or asks_to_make(text, lang))):
            return _send(just)

    # 3. A new goal: unless it repeats a task in view (A7), a persistent task.
    if intent.act == "goal":
        dups = [(c, v) for c, v in _duplicates(cands, text, intent=intent) if c.id not in modelled]
        if len(dups) == 1 or (dups and dups[0][1] - dups[1][1] >= 0.15):
            return _send(dups[0][0])
        if dups:
            return _clarify([c for c, _ in dups], intent, text, lang, tools)
        whole = _cue(_WHOLE_PACKAGE, lang, text) and _listed_pieces(text, lang)  # new work, whatever "it" says later
        if best is not None and reference and (more or not fresh) and not whole \
                and (best.kind != "lightweight" or _strong(best, text)):
            return _send(best)  # several pieces are not a one-shot's revision unless the message names that piece
        return _create(intent, text, lang, "persistent")

    # 4. A one-shot: new, unless it clearly continues a task in view (or repeats a persistent one).
    if intent.act == "one_shot":
        if best is not None and (not fresh or (more and (reference or series_next))):
            return _send(best)
        if best is None and series_next and standout is not None and (
                standout.distinct > 0 or standout.recency is not None):
            return _send(standout)  # "a sixth fern plate": the series its words name (not "次はメダルのデザイン"
            # beside an old uniform design found by a generic word)
        if tied and not fresh:
            return _clarify(tied, intent, text, lang, tools)
        if edit and not fresh:
            return _recent_target(cands, media, hints, intent, text, lang, tools, referring=True)
        part = None if fresh_cue or asks_to_make(text, lang) else _part_of_just_made(cands, hints, words, text)
        if part is not None:
            return _send(part)
        dups = [(c, v) for c, v in _duplicates(cands, text, "one_shot", intent)
                if c.kind == "persistent" and v >= DUPLICATE_ONE_SHOT]
        if dups:
            return _send(dups[0][0]) if len(dups) == 1 else _clarify([c for c, _ in dups], intent, text, lang, tools)
        again = None if more or _cue(_NEW_WORD, lang, text) else _asked_again(cands, text)  # (not "one more …")
        if again is not None:
            return _send(again)  # "Make a specimen poster for Marlow Serif" beside the done "Marlow Serif specimen
            # poster": that piece again, in its own task (its next version), not a second task of the same name
        return _create(intent, text, lang, "lightweight")

    # 5. Anything else points at existing work (the best evidence, else what was just being worked on) —
    # unless it reads as a new piece ("now a giraffe in a scarf").
    if best is not None and more:
        return _send(best)
    if fresh_cue and not deictic and not edit and intent.act not in CONTROL_ACTS:
        return _create(intent, text, lang, "lightweight")
    if best is not None and (_cue(_PRONOUN, lang, text) and not _strong(best, text) or intent.comparative) \
            and not _cue(_RECALL, lang, text):  # "the display promo from a few years back, can we recut it": that promo
        # "same but at night" / "redo it in blue" right after an owl picture was made is about the owl, even
        # though another task's title has "night" or its goal "Blue Note": a pronoun points at the piece just
        # made or discussed more surely than one word another task happens to share.
        just = _just_now(cands, hints)
        # … not a piece of another kind than the one the message speaks of ("make the evening one a bit slower,
        # it sounds rushed" a moment after a written brief: the evening jingle)
        other_kind = bool(media and just is not None and just.media and not media & just.media and media & best.media)
        if just is not None and just is not best and not other_kind:
            return _send(just)
    if best is not None and intent.act == "revise" and best.recency is None and not words & best.title_words \
            and message.reference is None:  # (a position points into a series: "貼圖第三張…")
        # "把月亮画大一点" a moment after the Mid-Autumn poster: that poster, not an old task found by search whose
        # description happens to have a moon
        just = _just_now(cands, hints)
        if just is not None and just.usable:
            return _send(just)
    if best is not None:
        return _send(best)
    if tied and tied[0].evidence - tied[1].evidence >= TIE and tied[0] is _just_now(cands, hints):
        return _send(tied[0])  # "then the red kite" right after the bird portraits: the piece at hand leads
    just = _just_now(cands, hints)
    if tied and just is not None and just not in tied and _cue(_PRONOUN_OBJECT, lang, text) \
            and all(c.recency is None for c in tied):
        return _send(just)  # "make it darker, the hall is really bright" a moment after the stage banner, beside
        # old tasks found only by a word of the reason it gives
    halted = [c for c in tied if c.status in ("paused", "stopped", "failed", "archived")]
    if intent.act in ("continue", "resume") and len(halted) == 1:
        return _send(halted[0])  # "紀錄短片繼續做吧": the paused documentary, not a film of the kit started today
    if tied:
        return _clarify(tied, intent, text, lang, tools)
    placed = _unplaced_position(viewed, cands, message.reference)
    if len(placed) == 1:
        return _send(placed[0])
    if placed and "clarify" in tools:
        # "make the 2nd one less green" right after a single crate: of the two series in view, which?
        return _clarify(sorted(placed, key=lambda c: c.recency if c.recency is not None else 99), intent, text,
                        lang, tools)
    if intent.comparative and _just_now(cands, hints) is not None:
        return _send(_just_now(cands, hints))  # "red text" a moment after the sticker: the sticker's text
    if reference or intent.act in REFERENCE_ACTS:
        return _recent_target(cands, media, hints, intent, text, lang, tools, referring=True)
    if intent.subject and intent.media:
        return _create(intent, text, lang, "lightweight")
    if intent.act == "other" and not (media or intent.files or any(c.evidence > 0 for c in cands)) \
            and _just_now(cands, hints) is None:
        # "安安～", "hey hey, back from the market": nothing asked, no work named, nothing worked on a moment ago —
        # no task to guess at or to ask about: answered as the small talk it is
        return ModelReply(content=phrase("greeting", lang))
    # words that name one task distinctively make this a reference to it, not a bare pronoun
    return _recent_target(cands, media, hints, intent, text, lang, tools,
                          referring=any(c.distinct > 0 for c in cands))


_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


_CLAUSE = re.compile(r"[^,，、;；.。!！?？\n]+[,，、;；.。!！?？]*")


def _recall_clause(text: str, lang: str, unit: re.Pattern[str] | None = None) -> str:
    """The sentence (or UNIT) of TEXT that recalls older work ("remember the awang sign from ages ago?"), or ""."""
    return next((m.group() for m in (unit or _SENTENCE).finditer(text) if _cue(_RECALL, lang, m.group())), "")


def _named_in(cands: list[Candidate], clause: str) -> list[Candidate]:
    """The candidates CLAUSE names by a distinctive word of theirs (or a name they spell in hiragana)."""
    if not clause:
        return []
    words = {w for w in _content(clause)[0] if not generic(w)} | _name_keys(clause)
    norm = matchable(clause)
    return [c for c in cands if words & c.words or any(k in norm for k in c.kana)]


def _retry_target(viewed: list[Candidate], text: str, lang: str) -> Candidate | None:
    """"ok retry it", "Перезапусти, только без дрона", "融化慢镜头怎么又失败了，再来一次吧": another try is for the
    failed task the message names, else the only failed one in view — unless its words name another task."""
    if not _cue(_RETRY, lang, text):
        return None
    failed = [c for c in viewed if c.status == "failed" and c.usable]
    said = [c for c in failed if c.evidence > 0]
    if len(said) == 1:
        return said[0]
    if said or len(failed) != 1:
        return None
    named = [c for c in viewed if c is not failed[0] and c.usable and c.evidence > 0 and _strong(c, text)]
    return None if named else failed[0]


def _next_item(intent: Any, text: str) -> Any:
    """"next: a poster series for …" is not the control verb "next": after a sequence marker the message is
    read as what follows it, when that asks for something to be made."""
    if intent.act in ("one_shot", "goal", "revise"):
        return intent
    lead = re.match(_SEQUENCE.get(intent.language, _SEQUENCE["en"]), normalise(text))
    if lead is None or not text[lead.end():].strip() or len(normalise(text)) != len(text):
        return intent
    tail = text[lead.end():]
    rest = classify(tail)
    if rest.act in ("one_shot", "goal"):
        return rest
    if rest.act == "other" and not rest.refers_back and find_reference(tail, rest.language) is None \
            and not re.match(r"\s*(?:%s)" % _REFERENCE.get(rest.language, _REFERENCE["en"]), normalise(tail)):
        # "次：友達の結婚式のウェルカムボード": after "next:" a thing named without a verb is the next piece to make
        rest.act, rest.media = "one_shot", rest.media or "image"
        rest.subject = rest.subject or tail.strip(" :：-—")
        rest.title = rest.title or rest.subject
        return rest
    return intent



def _claim_requested(cands: list[Candidate], absent: list[str]) -> list[str]:
    """Files not in the workspace yet that one task was asked to make ("make perfume.png"): that task's file
    (the name the creator gave is kept), so a follow-up naming it goes there. The names still absent."""
    out = []
    for name in absent:
        key = normalise(name).strip("./")
        owners = [c for c in cands if c.usable and key and key in matchable(f"{c.title}\n{c.goal}")]
        if not owners:  # "token_glass.png" of a task asked for "token_wood.png, token_stone.png etc" (and glass)
            owners = [c for c in cands if c.usable and _in_pattern(key, c.goal)]
        if len(owners) == 1:
            owners[0].file_match = True
        else:
            out.append(name)
    return out


_NAME_PARTS = re.compile(r"^(.*?[_\-])([^_\-]+)\.(\w+)$")


def _in_pattern(name: str, goal: str) -> bool:
    """Does NAME follow the pattern of file names GOAL asks for ("token_glass.png" beside "token_wood.png,
    token_stone.png etc"), with its own part ("glass") among the goal's words, or its number in the range asked
    ("stamp_3.png" beside "stamp_1.png 到 stamp_4.png")?"""
    m = _NAME_PARTS.match(name.rsplit("/", 1)[-1])
    if m is None:
        return False
    prefix, part, ext = m.groups()
    asked = [_NAME_PARTS.match(normalise(f).rsplit("/", 1)[-1]) for f in find_files(goal)]
    numbers = [int(a.group(2)) for a in asked if a is not None and a.group(1) == prefix and a.group(3) == ext
               and a.group(2).isdigit()]
    if part.isdigit() and len(numbers) >= 2 and min(numbers) <= int(part) <= max(numbers):
        return True  # "stamp_3.png" of a task asked for "stamp_1.png 到 stamp_4.png"
    return any(a is not None and a.group(1) == prefix and a.group(3) == ext for a in asked) \
        and bool(re.search(rf"(?<!\w){re.escape(part)}(?!\w)", matchable(goal)))


_PURPOSE = {"en": re.compile(r"\b(?:for|about)\s+(.+)$"), "ru": re.compile(r"(?<![а-я])(?:для|про)\s+(.+)$")}


_ABOUT_RU = re.compile(r"(?<![а-я])(?:о|об|обо|про)\s+(.+)$")


def _distinctive(text: str) -> set[str]:
    return {w for w in _content(text)[0] if not generic(w) and not (len(w) == 1 and w >= "\u3040")}


def _new_subject(c: Candidate, intent: Any) -> bool:
    """Does the subject of a request (what it is for or about) name something candidate C is not about: a
    subject concept C lacks ("a cafe" for a beauty salon's task), or a purpose ("… for the summer camp", "a label
    for our ginger kombucha") with as many distinctive words C lacks as it shares ("summer night market")?"""
    own = _distinctive(intent.subject) if intent.subject else set()
    if any(w.startswith("#") for w in own - c.words):
        return True
    purpose = _PURPOSE.get(intent.language)
    # a one-shot's purpose counts in English only, and when it names two things or more ("a label for our ginger
    # kombucha"; "на этикетке для вина сделай буквы золотыми" is an edit, "…slide to 'Compute for everyone'" a title)
    one_shot = intent.act == "one_shot" and intent.language == "en"
    m = purpose.search(normalise(intent.subject)) if purpose and intent.subject and (
        intent.act == "goal" or one_shot) else None
    if m is None and intent.act == "one_shot" and intent.language == "ru" and intent.subject \
            and detect_language(f"{c.title}\n{c.goal}") == "ru":  # (words of another language say nothing here)
        m = _ABOUT_RU.search(normalise(intent.subject))  # "объявление о субботнике": what it is about
    if m is None:
        return False
    aim = _distinctive(m.group(1))
    if intent.act == "one_shot" and len(aim) < 2:
        return False
    return bool(aim) and len(aim - c.words) >= len(aim & c.words)


def _facts(hints: dict[str, Any]) -> dict[str, Any]:
    facts: dict[str, Any] = {"now": hints.get("now")}
    for key in ("spent_today", "daily_cap", "currency"):
        if hints.get(key) is not None:
            facts[key] = hints[key]
    if hints.get("task_counts") is not None:
        facts["tasks"] = hints["task_counts"]
    return facts


def _by_evidence(cands: list[Candidate]) -> list[Candidate]:
    return sorted(cands, key=lambda c: (-c.evidence, c.recency if c.recency is not None else 99))


def _clear_best(cands: list[Candidate]) -> Candidate | None:
    """The one candidate the evidence points at: well ahead of the next, or the only one with any. It needs
    distinctive evidence: sharing a generic word is no reason to attach (though it may raise a doubt). Among
    candidates that share the subject about equally, the one whose deliverable the message names wins
    ("火锅店那几张海报" is the hotpot posters, not the hotpot menu)."""
    ranked = _by_evidence(cands)
    if not ranked or ranked[0].evidence < 0.5 or ranked[0].distinct <= 0:
        return None
    second = ranked[1].evidence if len(ranked) > 1 else 0.0
    if second == 0.0:
        return ranked[0]
    if ranked[0].evidence >= MIN_EVIDENCE and ranked[0].evidence - second >= CLEAR_MARGIN:
        return ranked[0]
    if ranked[0].distinct >= MIN_EVIDENCE and all(c.distinct <= 0 for c in ranked[1:]):
        return ranked[0]  # the others share only generic or brought-in words ("… hold a book")
    near = [c for c in _near_top(ranked) if c.distinct > 0 and c.evidence >= ranked[0].evidence / 2]
    kind = [c for c in near if c.kind_match]
    if len(kind) == 1 and all(c.kind_match is False for c in near if c is not kind[0]):
        return kind[0]
    return None


# ---- the fitted scorer (language/router_weights.json, fitted by bench/fit_router.py) ---------------------------
# Fitted on the labelled turns of the opened halves of tests/data/routing/. A phrasing that goes to the wrong
# task (or to none) where the hand-set rule finds no clear candidate is fixed by data: add labelled turns to
# tests/data/routing/dev.jsonl, run bench/fit_router.py, judge with bench/routing_eval.py on every half.
ATTACH = "attach"  # P(this candidate is the task the message is for), over the features below
TRACE: list[dict[str, Any]] | None = None  # bench/fit_router.py collects every routing call's features here


def features(c: Candidate, cands: list[Candidate], text: str, hints: dict[str, Any], cues: dict[str, float],
             hand: Candidate | None, just: Candidate | None, tied: list[Candidate] | None = None,
             top: Candidate | None = None) -> dict[str, float]:
    """What the router computes about candidate C for this message, as numbers: its evidence and its lead over
    the others, how it was named (file, route memory, whole title, deliverable), how recent it is, how close the
    message is to its goal, what the hand-set rules say (_clear_best's pick, _tied's close candidates), and the
    message's cues."""
    others = [o for o in cands if o is not c]
    top = top or _top(cands)
    tied = _tied(cands) if tied is None else tied
    now = _now(hints)
    top_e = max((o.evidence for o in others), default=0.0)
    top_d = max((o.distinct for o in others), default=0.0)
    target = f"{c.title}\n{c.goal}" if c.goal and c.goal != c.title else c.title
    x = {
        "evidence": min(c.evidence, 4.0),
        "distinct": min(c.distinct, 4.0),
        "lead": max(-3.0, min(3.0, c.evidence - top_e)),
        "distinct_lead": max(-3.0, min(3.0, c.distinct - top_d)),
        "alone": float(c.evidence > 0 and top_e == 0.0),
        "kind_match": float(c.kind_match is True),
        "kind_mismatch": float(c.kind_match is False),
        "memory": c.memory,
        "titled": float(_titled(c.title, matchable(text))),
        "just_now": float(just is c),
        "most_recent": float(c.recency == 0),
        "duplicate": similarity(text, target) if c.evidence > 0 else 0.0,
        "hand": float(hand is c),
        "top": float(top is c),
        "tied": float(c in tied),
        "strong": float(_strong(c, text)),
        "rivals": float(min(3, sum(1 for o in others if o.distinct > 0))),
        "old": float(c.recency is None),
        "stale": float(now is not None and now - c.updated_at > STALE),
    }
    x.update({f"cue_{k}": v for k, v in cues.items()})
    return {k: _places(v) for k, v in x.items()}


def _places(v: float) -> float:
    """V to 4 places, the same in every process: sums over sets differ in the last bits with the hash seed, so
    they are first rounded to 9 places (0.15625 ± 1 ulp is 0.15625, then 0.1562 in every run)."""
    return round(round(v, 9), 4)


def _top(cands: list[Candidate]) -> Candidate | None:
    ranked = _by_evidence(cands)
    return ranked[0] if ranked and ranked[0].evidence > 0 else None


def _attach_fitted() -> bool:
    """Does the fitted attach model decide (the shipped weights say "use"), or the hand-set rule (_clear_best)?"""
    return bool(scorer.used(ATTACH))


def _rate(cands: list[Candidate], text: str, hints: dict[str, Any], cues: dict[str, float]) -> None:
    """Each candidate's features and attach probability (c.fit), from the shipped weights; nothing to do when
    the hand-set rule decides and no one collects the features."""
    fitted = _attach_fitted()
    if TRACE is None and not fitted:
        return
    hand = _clear_best(cands)
    if TRACE is None and hand is not None and scorer.used(ATTACH) == "add":
        return  # the hand-set rule's candidate stands: the model is not asked
    just = _just_now(cands, hints)
    tied = _tied(cands)
    top = _top(cands)
    rows = []
    rated = [c for c in cands if c.evidence > 0 and c.distinct > 0]  # the candidates the model was fitted on
    for c in cands if TRACE is not None else rated:
        c.features = features(c, cands, text, hints, cues, hand, just, tied, top)
        c.fit = 0.0
        rows.append({"id": c.id, **c.features})
    if fitted and rated:
        for c, p in zip(rated, scorer.choice(scorer.models()[ATTACH], [c.features for c in rated])):
            c.fit = p
    if TRACE is not None:
        TRACE.append({"text": text, "candidates": rows})


def _best(cands: list[Candidate]) -> Candidate | None:
    """The one candidate the message is clearly for: the fitted scorer's most likely candidate, when the
    scorer says yes to it ("use": "add": the hand-set rule's, and where it finds none, the scorer's)."""
    if not _attach_fitted():
        return _clear_best(cands)
    if scorer.used(ATTACH) == "add":
        hand = _clear_best(cands)
        if hand is not None:
            return hand
    ranked = sorted(cands, key=lambda c: (-c.fit, c.recency if c.recency is not None else 99))
    if not ranked or ranked[0].fit < float(scorer.models()[ATTACH].get("threshold", 0.5)):
        return None
    return ranked[0]


def _near_top(ranked: list[Candidate]) -> list[Candidate]:
    top = ranked[0].evidence
    return [c for c in ranked if top - c.evidence < CLEAR_MARGIN and c.evidence > 0]


def _tied(cands: list[Candidate]) -> list[Candidate]:
    """Candidates that fit about equally well (no clear best): two or more within the margin of the top,
    one of them with distinctive evidence (generic words alone tie nothing)."""
    ranked = _by_evidence(cands)
    if not ranked or ranked[0].evidence < 0.5:
        return []
    tied = _usable_first(_near_top(ranked))[:MAX_CHOICES]
    distinct = [c for c in tied if c.distinct > 0]
    if distinct == tied[:1] and distinct[0].kind_match is not False:
        return []  # one distinctive word outranks words the others only share generically (not when the message
        # names a kind of piece the one does not make: "на втором баннере котика…" beside a video about a cat)
    if distinct == tied[:1] and len([c for c in tied if c.kind_match]) == 1:
        return []  # … unless one other task makes that kind: "4日目の投稿は屋台の紹介に" is for the countdown posts,
        # not the stall map that shares 屋台 (what the message is for is then read from the pieces in view)
    return tied if len(tied) > 1 and distinct else []


def _makes_none_of(c: Candidate, kinds: set[str]) -> bool:
    """Does C make pieces, none of them of KINDS (the media kinds a message names)?"""
    return bool(kinds and c.media and not kinds & c.media)


def _incidental(c: Candidate, words: set[str], value: set[str]) -> bool:
    """Does C share only the value the edit asks for ("裏面に地図を入れて": the map it puts in)?"""
    return words & c.words <= value


def _usable_first(ranked: list[Candidate]) -> list[Candidate]:
    """RANKED without the stopped or archived tasks a usable one outranks: "доделай оставшиеся двенадцать знаков"
    is for the sign cards being made, not also for an archived model that shares a word less well."""
    return [c for c in ranked if c.usable or not any(o.usable and o.evidence > c.evidence for o in ranked)]


def _duplicate_cut() -> float:
    return scorer.cut("duplicate", "similarity") if scorer.used("duplicate") else DUPLICATE_HAND


def _other_thing(c: Candidate, intent: Any) -> bool:
    """Is the request about something candidate C is not (language.other_thing: the same test create_task's
    duplicate check makes)?"""
    return intent is not None and other_thing(intent.subject or "", f"{c.title}\n{c.goal}")


def _duplicates(cands: list[Candidate], text: str, act: str = "goal",
                intent: Any = None) -> list[tuple[Candidate, float]]:
    found = []
    seen = []
    cut = _duplicate_cut()
    for c in cands:
        if c.status in ("stopped", "failed", "archived") and not c.retrieved:
            continue
        if _other_thing(c, intent):
            continue
        target = f"{c.title}\n{c.goal}" if c.goal and c.goal != c.title else c.title
        # the goal alone is what the creator asked for: a title in other words must not hide the same ask
        value = max(similarity(text, target), similarity(text, c.goal) if c.goal else 0.0, _subject_repeats(c, intent, text))
        seen.append({"id": c.id, "similarity": _places(value)})
        if value >= cut:
            found.append((c, value))
    if TRACE is not None:
        TRACE.append({"text": text, "act": act, "duplicates": seen})
    found.sort(key=lambda x: -x[1])
    return found[:MAX_CHOICES]


def _subject_repeats(c: Candidate, intent: Any, text: str) -> float:
    """How alike the thing asked for (its subject, without the frame of the request: "我想做一組…的") and candidate
    C's title are — where the subject says enough to compare (two distinctive words), it is of C's kind (a video
    for the café is no repeat of the café's cards) and not said to be new ("make a new suite then")."""
    subject = (intent.subject or "") if intent is not None else ""
    if c.kind_match is False or len([w for w in keywords(subject) if not is_generic(w)]) < 2 \
            or _cue(_NEW_WORD, intent.language, text):
        return 0.0
    return similarity(subject, c.title)


NEXT_VALUE_CHARS, NEXT_VALUE_WORDS = 14, 6  # "次はラベンダー湯" names the next of a series by what it shows


def _names_only_a_value(text: str, lang: str) -> bool:
    """Is what follows "次は" / "next is" one short phrase ("次はラベンダー湯"), not the description of a new piece
    ("次は、九州場所の応援うちわ。表に部屋の名前、裏に力士3人")?"""
    rest = re.sub(_NEXT_VALUE.get(lang, _NEXT_VALUE["en"]), "", matchable(text), count=1).strip(" 、,:：—–-。.!！")
    if re.search(r"[。.!?！？、,;；]", rest):
        return False
    cjk = lang in ("zh", "ja")
    return len(rest) <= NEXT_VALUE_CHARS if cjk else len(rest.split()) <= NEXT_VALUE_WORDS


TERSE_WORDS = 6  # a detail given in passing: at most this many words (a CJK clause counts as its keywords)


def _part_of_just_made(cands: list[Candidate], hints: dict[str, Any], words: set[str], text: str
                       ) -> Candidate | None:
    """"ロゴは黒一色で", "海报先出三个方向", "圖案裡要有貓" a moment after a package listing its logo, posters or
    patterns was set up: a short detail about a piece the work just begun names (in its goal), not a new one-shot —
    unless another task's words fit the message better."""
    just = _just_now(cands, hints)
    if just is None or just.kind != "persistent" or len(keywords(text)) > TERSE_WORDS or "?" in text or "？" in text:
        return None
    if not words & just.words or any(c.evidence > just.evidence for c in cands):
        return None
    return just


ASKED_AGAIN = 0.85  # the share of a one-shot's title words a request must say to be that one-shot asked again


def _asked_again(cands: list[Candidate], text: str) -> Candidate | None:
    """The one one-shot (made, not failed) whose title the request says all but a word of (at least three words),
    and says more of than of any other's."""
    said = set(keywords(text))
    kinds = _content(text)[0] & DELIVERABLES
    cover = []
    for c in cands:
        title = [w for w in keywords(c.title) if not w.isdigit()]
        if c.kind == "lightweight" and c.usable and c.status != "failed" and len(title) >= 3 \
                and kinds <= c.title_words:  # (not "道場ロゴ入りのTシャツ": a T-shirt, the logo on it)
            cover.append((sum(w in said for w in title) / len(title), c))
    cover.sort(key=lambda x: -x[0])
    if not cover or cover[0][0] < ASKED_AGAIN or (len(cover) > 1 and cover[1][0] >= cover[0][0]):
        return None
    return cover[0][1]


def _just_now(cands: list[Candidate], hints: dict[str, Any]) -> Candidate | None:
    """The task the creator was working on a moment ago: the most recent, if active within JUST_NOW."""
    recent = sorted((c for c in cands if c.recency is not None and c.usable), key=lambda c: c.recency)
    now = _now(hints)
    if not recent or now is None or now - recent[0].updated_at > JUST_NOW:
        return None
    return recent[0]


def _standout(cands: list[Candidate]) -> Candidate | None:
    """The usable candidate whose evidence stands out (alone, or TIE ahead of the next), below the bar of a clear
    best: enough where the message says it adds to a set ("for the series", "a sixth …")."""
    ranked = [c for c in _by_evidence(cands) if c.usable and c.evidence > 0]
    if ranked and (len(ranked) == 1 or ranked[0].evidence - ranked[1].evidence >= TIE):
        return ranked[0]
    return None


def _strong(c: Candidate, text: str) -> bool:
    """Evidence that names candidate C itself, not a word it happens to share: a file, route memory, its
    whole title, the deliverable it makes, or more than one distinctive word."""
    return c.file_match or c.memory > 0 or bool(c.kind_match) or _titled(c.title, matchable(text)) \
        or c.distinct >= 1.5 or _head_named(c, text)


_DEFINITE_HEAD = re.compile(r"\b(?:the|this|that|our|my|your)\s+((?:[\w'&-]+\s+){0,2}[\w'-]+)")


_THE_X_ONE = re.compile(r"\b(?:the|that|this)\s+([\w'-]+)\s+ones?\b")


def _head_named(c: Candidate, text: str) -> bool:
    """"the monogram looks great, can you export it …": the message names, with a definite article, the thing
    the task's title ends on ("P&T monogram"), a word no generic one — the pronoun after it is that thing."""
    head = keywords(c.title)[-1:] if detect_language(c.title) == "en" else []
    said = [keywords(m.group(1)) for m in _DEFINITE_HEAD.finditer(matchable(text))]
    # … or one of its files by its name: "the terrazzo one is too busy, tone it down" beside backdrops/terrazzo.png
    stems = {k for f in c.files for k in keywords(FILE_EXT.sub("", f.rsplit("/", 1)[-1]).replace("_", " "))
             if not generic(k)}
    if any(stems & set(keywords(m.group(1))) for m in _THE_X_ONE.finditer(matchable(text))):
        return True
    if not head or generic(head[0]):
        return False
    return any(head[0] in words for words in said)


PIECE_MEDIA = frozenset({"image", "video", "audio", "3d"})
SHOWN_FILES = 4  # the task index shows at most this many files per task (router.index.FILES_PER_TASK)


def _pieces(c: Candidate, media: str | None = None) -> int:
    """How many pieces (pictures, clips, sounds, models; of MEDIA only, if given) the task is known to have made
    (at most the index's SHOWN_FILES)."""
    kinds = {media} if media else PIECE_MEDIA
    return sum(1 for f in c.files if _EXT_MEDIA.get(f.rsplit(".", 1)[-1].lower()) in kinds)


def _needed(reference: Any) -> int:
    """How many pieces a series needs for the position to fall in it ("the first/last one" speak of two)."""
    return min(max(reference.n if reference.kind in ("nth", "first_n", "last_n") else 2, 2), SHOWN_FILES)


def _series_fit(cands: list[Candidate], reference: Any, intent: Any) -> list[Candidate]:
    """"The second one", "最后一张", "первые две" point into a series: only a task with that many pieces can be
    meant, so a single tea box is no candidate for "the 2nd one needs more contrast" beside a set of four
    posters. Unchanged when the message makes something new, points at no position, or no task has enough."""
    if reference is None or reference.kind == "recent" or intent.act in ("one_shot", "goal"):
        return cands
    # "the first one" and "the last one" speak of a series too: at least two pieces
    need = _needed(reference)
    # ruled out: a task known to have fewer pieces (of the kind the counter counts: 1本目 is a clip) than its
    # goal plans and the position needs — not one that makes what the message names ("the first audiogram"),
    # nor one with no piece yet (its plan is what "the first one" points into)
    def holds(c: Candidate) -> bool:  # known to have (or to plan) that many pieces
        made = _pieces(c)
        if made and reference.media and _pieces(c, reference.media) == 0:
            return False
        if reference.media and c.media and reference.media not in c.media:
            return False  # "第三张" counts pictures: a film with only its storyboard so far holds none
        if made >= min(need, SHOWN_FILES):
            return True  # the index shows at most SHOWN_FILES files: a task at the cap may have more
        return (series_size(c.goal, detect_language(c.goal), classify(c.goal).count) or 0) >= need

    def fits(c: Candidate) -> bool:
        if c.kind_match or (_pieces(c) == 0 and not c.files and c.kind != "lightweight"
                            and not (reference.media and c.media and reference.media not in c.media)):
            return True  # nothing made yet: its plan is what the position points into (a one-shot makes one;
            # a task that wrote only a text made no series; "2枚目" counts pictures, a failed video planned none)
        return holds(c)
    # a task of the kind named that holds the series outranks one of that kind that has made too few so far
    # ("вторую афишу" beside a set of three posters and a single poster)
    full = {c.id for c in cands if c.kind_match and holds(c)}
    # … nor one the message names by its own words ("听松茶馆的水墨画，第二幅…"): the index knows only the files
    # bound to a task, an old one may have made more
    top = max((c.evidence for c in cands), default=0.0)
    # … unless the message names another kind of piece than it makes ("the third poster looks too busy, too many
    # little paw prints" beside a paw-print sticker)
    fit = [c for c in cands if (fits(c) and (c.id in full or not (full and c.kind_match)))
           or (c.distinct >= MIN_EVIDENCE and c.evidence >= top and c.kind_match is not False)]
    return fit or cands


def _unplaced_position(viewed: list[Candidate], fit: list[Candidate], reference: Any) -> list[Candidate]:
    """A position ("the 2nd one", "3枚目") said right after work that has no such position (the task worked on
    last is no series), nothing in the words to tell the tasks apart: the tasks that have made that many pieces
    (one: that is the series meant; several: ask which)."""
    if reference is None or reference.kind == "recent" or len(fit) < 2 or any(c.evidence > 0 for c in fit):
        return []
    latest = min((c for c in viewed if c.recency is not None), key=lambda c: c.recency, default=None)
    if latest is None or latest in fit:
        return []
    need = _needed(reference)
    return [c for c in fit if c.usable and _pieces(c) >= need]


def _recent_target(cands: list[Candidate], media: set[str], hints: dict[str, Any], intent: Any, text: str,
                   lang: str, tools: set[str], referring: bool = False) -> ModelReply:
    """A pronoun-only reference: what the creator was just working on (of the named media, if any); when
    nothing stands out, ask. A message REFERRING to a piece by a generic word ("the poster", "那套海报")
    goes to the one task that shares it, or chooses among the tasks that do."""
    recent = sorted((c for c in cands if c.recency is not None), key=lambda c: c.recency)
    overlap: list[Candidate] = []
    pronoun = _cue(_PRONOUN, lang, text)
    if referring:
        # what the message is about ("茶叶", "wedding") rules out tasks about something else
        # … not the value it changes something to ("メニュー表のデザート、チョコケーキに変えて": no cake task)
        wanted = _without(matchable(text), _value_spans(matchable(text), lang))
        about = {w for w in _content(wanted)[0] if w.startswith("#") and not generic(w)}
        words, value = _content(text)[0], _wanted_value(matchable(text))
        # … nor an old task search found only by that value ("the second one needs more plants": no plant shop)
        overlap = [c for c in cands if c.evidence > 0 and (not about or about & c.words)
                   and (c.distinct > 0 or (c.kind_match and c.recency is not None) or not pronoun)
                   and not (c.recency is None and c.distinct <= 0 and (
                       _incidental(c, words, value) or not (c.file_match or c.memory or c.kind_match)))]
        # … nor one search found by generic words alone, not even its kind ("透明壳那张产品图": no old 产品说明书插图;
        # "ロゴ、前のやつ復活させて" is the old logo)
        just = _just_now(cands, hints)
        if overlap and just is not None and just not in overlap and all(c.distinct <= 0 for c in overlap) and (
                _cue(_PRONOUN_OBJECT, lang, text) or all(_incidental(c, words, value) for c in overlap)):
            # "make it loop smoother" a moment after a looping gif, beside a drum loop (gong_loop.wav);
            # "裏面に地図を入れて" right after a shop card, beside an old map: the map is what it adds
            return _send(just)
        # "a square version of it": not a task that only shares "version"; one in view whose deliverable the
        # message names stays ("the third ticket … simplify it"), not an old one found by it ("それのBGM")
        if len(overlap) == 1:
            return _send(overlap[0])
        ranked = _by_evidence(overlap)
        close = _usable_first([c for c in ranked if ranked[0].evidence - c.evidence < TIE
                               and (c.distinct > 0 or ranked[0].distinct <= 0)])  # a distinctive word outranks generic ones
        if len(close) == 1 < len(ranked) and close[0].distinct > 0 and close[0].kind_match is not False \
                and not (just in ranked and just is not close[0] and just.kind_match):  # "4日目の投稿は屋台の紹介に"
            # a moment after the countdown posts: the posts it names, not the stall map that shares "屋台"
            return _send(close[0])  # "the 4th guide illustration…": the guide, not the tasks sharing "illustration"
        by_title = [c for c in close if words & c.title_words]
        if len(close) > 1 and len(by_title) == 1 and all(c.distinct <= 0 for c in close) \
                and (just not in close or by_title[0] is just):  # (not "地図もっとシンプルに" right after the map)
            return _send(by_title[0])  # "日文那张体验传单…": the flyer its title says, not a poster whose brief
            # mentions that flyer ("書道体験のチラシとは別に、英語のポスターも一枚")
        kind_named = [c for c in close if c.kind_match]
        if len(close) > 1 and len(kind_named) == 1 and all(c.distinct <= 0 for c in close):
            return _send(kind_named[0])  # "封面第三张放柯基": the one task that makes covers, not one sharing the corgi
        now = _now(hints)
        if len(close) > 1 and all(c.distinct <= 0 for c in close):  # tasks that share only a kind of piece
            stale = [c for c in close if now is not None and now - c.updated_at > STALE]
            fresh = [c for c in close if c not in stale]
            same_language = [c for c in close if detect_language(c.title) == lang]
            if len(same_language) == 1 and fresh == same_language:
                return _send(same_language[0])  # «карту сделай как старинную морскую»: the «Карта мест», not an
                # old 水族館の案内図
            if len(fresh) == 1 and all(c.recency is None for c in stale):
                return _send(fresh[0])  # "add one like that to the set": the backdrop set worked on today, not an
                # old bookmark set that search found by the word "set"
        current = [c for c in close if now is not None and now - c.updated_at <= JUST_NOW]
        # … nor, when the words cannot tell them apart, one worked on before the piece at hand ("the third poster
        # looks too busy" a moment after a sticker, the pepper poster edited before that: which poster set?)
        before = len(current) == 1 and current[0].recency != 0 and all(c.evidence == close[0].evidence for c in close)
        if len(close) > 1 and not pronoun and (len(current) != 1 or before) and "clarify" in tools:
            # two close candidates ("change the posters" with two poster sets), neither the one being worked
            # on: ask, rather than hand the message to the newest
            return _clarify(close, intent, text, lang, tools)
        recent = [c for c in recent if c in overlap] or recent
        of_kind = [c for c in recent if c.kind_match]
        if not overlap and not pronoun and len(of_kind) == 1 and (intent.count or _cue(_MORE, lang, text)):
            return _send(of_kind[0])  # "貼紙再加兩款，其中一款是店貓": more pieces for the one sticker pack in view,
            # whatever they show — not the lookbook worked on a moment ago (but "茶叶包装" is no pet food packaging)
    if media:
        # "звук погромче", «музыку к нему поспокойнее»: a video's sound track too (not "make the song louder")
        heard = media | ({"video"} if media == {"audio"} and (pronoun or _cue(_SOUNDTRACK, lang, text)) else set())
        matching = [c for c in recent if c.media & media] or [c for c in recent if c.media & heard]
        if not matching and referring and not overlap and not pronoun:
            return _no_candidate(recent, intent, text, lang, tools)  # nothing in view makes what it names
        recent = matching or recent
    if not recent:
        return ModelReply(content=phrase("ask_which_task", lang))
    now = _now(hints)
    if now is not None and now - recent[0].updated_at <= JUST_NOW:
        return _send(recent[0])
    if len(recent) == 1:
        return _send(recent[0])
    return _clarify(recent, intent, text, lang, tools)


def _no_candidate(recent: list[Candidate], intent: Any, text: str, lang: str, tools: set[str]) -> ModelReply:
    """No task in view fits: a request with a subject of its own starts one; anything else asks (the card
    offers the most recent tasks, a new task, or cancel) instead of handing the newest task the message."""
    if intent.act in ("one_shot", "goal") and intent.subject:
        return _create(intent, text, lang, "persistent" if intent.act == "goal" else "lightweight")
    return _clarify(recent, intent, text, lang, tools)


__all__ = ["route"]


