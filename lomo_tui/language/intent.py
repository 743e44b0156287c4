"""Intent classification: what the creator asks for, read from their own words."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from . import lexicon as L
from .arith import extract_expression
from .text import (
    IMAGE_EXT,
    NUM,
    LazyRe,
    _deliverable_alt,
    blank,
    compile_entries,
    detect_language,
    entries_for,
    find,
    find_all,
    find_count,
    find_files,
    find_seconds,
    is_cjk,
    mask_noise,
    matchable,
    normalise,
    simplified,
    unquoted,
)
from .cues import cue
from .verbs import alternation

ACTS = ("greeting", "thanks", "help", "question", "one_shot", "goal", "revise", "status", "continue",
        "stop", "pause", "resume", "forget", "delete", "other")
MEDIA_KINDS = ("image", "video", "3d", "audio", "document", "flow")
GOAL_TYPES = ("poster_series", "short_clip", "3d_object", "storyboard", "flow_edit", "audio_piece",
              "document", "general", "film")
# "a 6 sec video of the bottle": a clip of something already made animates it (not a one-shot from nothing)
_OF_EXISTING_EN = LazyRe(r"\bof (?:the|our|my|that|this|those|these)\b")
ONE_SHOT_CLIP_SECONDS = 10  # a clip shorter than this, made from nothing, is one generation ("a 5-second clip of …")
_GOAL_BY_MEDIA = {"image": "poster_series", "video": "short_clip", "3d": "3d_object",
                  "audio": "audio_piece", "document": "document", "flow": "flow_edit"}
_CONTROL_ORDER = ("forget", "delete", "pause", "resume", "stop", "continue")
_NO_REFERENCE_ACTS = frozenset({"question", "greeting", "thanks", "help", "status"})


@dataclass
class Intent:
    """What one message asks for. Only `act` and `language` are always meaningful."""

    act: str = "other"
    media: str | None = None
    goal_type: str | None = None
    count: int | None = None
    seconds: float | None = None
    subject: str = ""
    output: str = ""  # the file the creator asked for by name ("make perfume.png"), to save the piece as
    title: str = ""  # the thing being made in the creator's words ("short clip about coffee"), for a task title
    style: list[str] = field(default_factory=list)
    refers_back: bool = False
    comparative: bool = False  # opens on a comparative ("glowier letters", "thicker lines") or is only a look for a
    # part ("red text"): the piece at hand
    files: list[str] = field(default_factory=list)
    language: str = "en"
    topic: str | None = None  # question topic answered offline: time, date, spend, tasks, math
    needs_source: bool = False  # an existing picture is the input ("a clip of yesterday's cat")
    extra_media: list[str] = field(default_factory=list)  # later deliverables ("…and then a poster")
    nodes: list[str] = field(default_factory=list)  # flow nodes named ("node 2", "节点3")
    size: str | None = None  # "WxH" from "1024x768", "16:9", "square"
    constraints: list[str] = field(default_factory=list)  # the creator's own limits ("no text", "16:9")
    text: str = ""  # the message as written
    interrogative: bool = False  # a question asking for information ("how do I…?", "短片多长合适？"), not a request


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    media: str
    source: bool  # names an input ("this photo", "для видео"), not the deliverable


# --- small tables ---------------------------------------------------------------------------
_CLAUSE_SPLIT = {  # a sentence ends a clause: "hi! we're opening a bike shop. can you make a poster?"
    "en": r"\s*(?:,?\s*\band then\b|,\s*then\b|;|\bthen\b|\bafter that\b|\bfollowed by\b|\bplus\b|"
          r"\band also\b|\balso\b|\band (?=an?\b)|[.!?]\s)\s*",
    "ru": r"\s*(?:,?\s*а затем|затем|потом|после этого|а также|;|[.!?]\s)\s*",
    "zh": r"(?:然后|接着|之后|，再|；|。|[!?！？]|并且|同时|再做)",
    "ja": r"(?:それから|その後|そして|次に|。|[!?！？]|、それに)",
}
_VERB_FIRST = frozenset({"en", "ru", "zh"})  # a request's verb comes before what it makes ("I need a poster")
_IMPERATIVE_LAST = frozenset({"ru"})  # free word order: a control verb may close the message
_CLOSES = LazyRe(r"[\s,.!…]*(?:(?:пожалуйста|плиз|пж)[\s.!…)]*)?")  # … before only a "please"
_NEW_THING = {  # a creation verb introducing something new: "make a…", "画一只…"
    "en": LazyRe(r"\b(?:" + alternation() + r"|give)(?: me| us)? (?:an?|some|one|two|three|four|five|\d+)\b"
                 r"|\b(?:also|and|plus)\s+(?:i\s+|we\s+)?(?:need|want)\s+(?:an?|another|some)\b"
                 r"|^\W*(?:ok\s+|oh\s+|and\s+)?(?:one more|another one)(?: thing)?\s*[:—–-]\s*(?:an?|another|some|\d+)\b"),
    "zh": LazyRe(r"(?:画|做|生成|制作|创作|设计|写|来)(?:[0-9一二两三四五六七八九十几]+|一些)"),
    # (not "黒バージョンも欲しい", "韓国語版も作ってほしい": another version of a piece that exists)
    "ja": LazyRe(r"新しい|別の|とは別に|とは別件|別件で|(?<!バージョン)(?<!版)(?<!違い)"
                 r"も(?:ほしい|欲しい|お願いしたい|作りたい|作ってほしい|作って欲しい)"),
    "ru": LazyRe(r"(?<![а-я])(?:новый|новую|новое)(?![а-я])|^\W*(?:а\s+|и\s+)?еще\s*[:—–]|(?:^|[,.;!—-]\s*)(?:а\s+|и\s+)?еще\s+(?:мне\s+|нам\s+)?"
                 r"(?:нуж(?:ен|на|ны)|сделай|нарисуй|создай|сгенерируй|придумай|напиши|хочу|давай)(?![а-я])"),
}
_ORDER_EN = LazyRe(r"^\W*(?:(?:quick|another|one more|next|new|also|and|oh|ok|okay|now)(?: one| thing)?\W+)*"
                   r"(?:an?|another)\s+(?!(?:bit|little|lot|tad|touch|few|couple|question|quick question)\b)['\"“‘]?[a-z]")
_ADDITION_LEAD = {
    "zh": LazyRe(r"^\W*(?:另外|还有|顺便|再加|加一个|然后)[，,、\s]*"),
    "ja": LazyRe(r"^\W*(?:それと|あと|それから|ついでに|あわせて)[、,\s]*"),
    "ru": LazyRe(r"^\W*(?:а\s+|и\s+)?(?:ещё|еще|также|кроме того)[:,\s]"),
}
_DEFINITE = LazyRe(r"\bthe\s+(?:[\w-]+\s+){0,2}$")
_ASPECTS = {"1:1": "1024x1024", "16:9": "1344x768", "9:16": "768x1344", "4:3": "1152x864",
            "3:4": "864x1152", "3:2": "1216x832", "2:3": "832x1216", "21:9": "1536x640"}
_ASPECT_WORDS = {
    "1:1": ("square", "正方形", "方形", "方图", "квадратн*"),
    "2:3": ("portrait", "vertical", "竖版", "竖图", "縦長", "縦向き", "вертикальн*"),
    "16:9": ("landscape", "widescreen", "horizontal", "横版", "横图", "横長", "横向き", "горизонтальн*",
             "широкоформатн*"),
}
_SIZE_RE = LazyRe(r"(?<!\d)(\d{3,4})\s*[x×*]\s*(\d{3,4})(?!\d)")
_ASPECT_RE = LazyRe(r"(?<![\d:])(\d{1,2})\s*:\s*(\d{1,2})(?![\d:])")
_NEGATIVE = {
    "en": r"\b(?:no|without|avoid|don't use|do not use|never)\s+[^,.;!?\n]{1,40}",
    "zh": r"(?:不要|别|不用|避免|无需)[^，。,;；!！?？\n]{1,20}",
    "ja": r"[^、。,\s]{1,20}(?:なしで|無しで|は入れないで|を入れないで|は使わないで|抜きで)",
    "ru": r"(?<![а-я])(?:без|не надо|не нужно|не используй)\s+[^,.;!?\n]{1,40}",
}
_NODES = LazyRe(r"(?:\bnode|节点|ノード|(?<![а-я])узел|(?<![а-я])узл[а-я]*)\s*(?:#|№|no\.?)?\s*([a-z0-9_-]+)"
                    r"|第\s*([0-9一二三四五六七八九十]+)\s*个?节点")
_CONTROL_OBJECT = LazyRe(r"\b(?:tasks?|jobs?)\b|任务|タスク|(?<![а-я])задач[а-я]*|(?<![а-я])задани[а-я]*")


@cache
def _subject_cuts(lang: str, mode: str) -> re.Pattern[str]:
    """Cuts around a subject. mode "request" cuts counts, verbs and media words too; "revise" also
    the revision markers ("make it bluer" -> ""); "title" counts and verbs but not the media words (the thing
    being made stays in a title: "short clip about coffee"); "plain" only fillers and pronouns."""
    cuts = list(L.SUBJECT_FILLERS[lang])
    if mode != "plain":
        cuts += [c.replace("{NUM}", NUM[lang]) for c in L.SUBJECT_CUTS[lang]]
    if mode in ("request", "revise"):
        cuts += list(L.MEDIA_CUTS[lang])
    concepts = ("deictic", "revise_strong", "edit_verb", "revise", "degree") if mode == "revise" else ("deictic",)
    cuts += [rx.pattern for c in concepts if (rx := compile_entries(entries_for(L.GEN, c, lang)))]
    if is_cjk(lang):
        cuts.append(r"\s+")  # spaces separate pieces in CJK text (no word spaces there)
    return re.compile("|".join(f"(?:{c})" for c in cuts))


@cache
def _lead_fillers(lang: str) -> re.Pattern[str] | None:
    words = L.LEAD_FILLERS.get(lang, ()) + (L.LEAD_FILLERS["en"] if lang != "en" else ())
    rx = compile_entries(words)
    return re.compile(rf"^(?:[\s,.!:;\-—–…]*(?:{rx.pattern}))*[\s,.!:;\-—–…]*") if rx else None


# --- pieces ---------------------------------------------------------------------------------
def _has(table: L.Table, concept: str, lang: str, text: str) -> bool:
    return find(table, concept, lang, text) is not None


def _style_hits(norm: str, lang: str) -> list[tuple[int, str, str]]:
    hits = []
    for tag in L.STYLES:
        m = find(L.STYLES, tag, lang, norm)
        if m:
            hits.append((m.start(), tag, m.group().strip()))
    return sorted(hits)


def find_styles(norm: str, lang: str) -> list[str]:
    """Style tags (English) in order of appearance."""
    return [tag for _, tag, _ in _style_hits(norm, lang)]


def find_style_words(norm: str, lang: str) -> list[str]:
    """The creator's own style words, in order of appearance ("复古", "warmer")."""
    return list(dict.fromkeys(word for _, _, word in _style_hits(norm, lang)))


def _mentions(norm: str, lang: str) -> list[_Mention]:
    """Media words, longest match winning where they overlap ("动画" is video, not "画")."""
    found = [(m.start(), m.end(), media) for media in L.MEDIA for m in find_all(L.MEDIA, media, lang, norm)]
    kept: list[tuple[int, int, str]] = []
    for start, end, media in sorted(found, key=lambda f: f[0] - f[1]):
        if all(end <= s or start >= e for s, e, _ in kept):
            kept.append((start, end, media))
    source_rx = compile_entries(entries_for(L.GEN, "source", lang))
    out = []
    for start, end, media in sorted(kept):
        before = norm[max(0, start - 40):start]
        src = bool(source_rx and not is_cjk(lang) and source_rx.search(before))
        out.append(_Mention(start, end, media, src))
    return out


def asks_to_make(text: str, lang: str) -> bool:
    """A creation verb ("сделай вывеску", "画一只猫") or an addition lead ("另外", "あと", «и ещё»): the message asks
    for something to be made, not only says how a piece should look."""
    norm = matchable(text)
    lead = _ADDITION_LEAD.get(lang)
    return _has(L.GEN, "create", lang, text) or bool(lead and (lead.search(norm) or lead.search(text)))


def media_kinds(text: str, lang: str | None = None) -> set[str]:
    """The kinds of media a text names ("image", "video", "3d", "audio", "document"), in its language
    (detected when not given) plus English."""
    lang = lang or detect_language(text)
    norm = matchable(text)  # (traditional characters read as simplified: 主視覺, 貼文)
    return {media for media in L.MEDIA if find(L.MEDIA, media, lang, norm)}


def edited_media(text: str, lang: str) -> set[str]:
    """The kinds of media an edit names once the parts of a piece it changes are out: "再简洁点，把文字去掉"
    (the text on a picture) names no document; "fix the typo in the script" does."""
    parts = compile_entries(entries_for({"part": L.PIECE_PARTS}, "part", lang))
    norm = normalise(simplified(text) if lang == "zh" else text)
    return media_kinds(parts.sub(" ", norm) if parts is not None else norm, lang)


def _clauses(norm: str, lang: str) -> list[tuple[int, int]]:
    spans, pos = [], 0  # a numbered line ends a clause too (a pasted brief: "…бриф такой:\n1) 6 постов…\n2) …")
    for m in re.finditer(_CLAUSE_SPLIT[lang] + r"|\s*\n\s*\d{1,2}[.)、]\s*", norm):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(norm)))
    return spans


def _head(mentions: list[_Mention], lang: str) -> _Mention | None:
    """The deliverable of one clause: the first non-input mention (en/ru), the last (head-final zh/ja)."""
    if not mentions:
        return None
    if is_cjk(lang):
        return mentions[-1]
    return next((m for m in mentions if not m.source), mentions[0])


def _primary(mentions: list[_Mention], clauses: list[tuple[int, int]], lang: str, norm: str
             ) -> tuple[_Mention | None, list[str], tuple[int, int]]:
    """The main deliverable, further deliverables from later clauses, and the main clause span: the first clause
    that asks for what it names ("…our old logo looks dated. draw a new logo with a croissant"), else the first
    that names one."""
    heads = []
    for start, end in clauses:
        head = _head([m for m in mentions if start <= m.start < end], lang)
        heads.append(((start, end), head, _has(L.GEN, "asks", lang, norm[start:end])))
    main = next(((span, h) for span, h, asks in heads if h and not h.source and asks), None) \
        or next(((span, h) for span, h, _ in heads if h and not h.source), None) \
        or next(((span, h) for span, h, _ in heads if h), None)
    if main is None:
        asking = next((span for span, _, asks in heads if asks), None) if len(clauses) > 1 else None
        return None, [], asking or clauses[0]
    extras = []
    for span, head, _ in heads:
        if head and span[0] > main[0][0] and not head.source and head.media != main[1].media \
                and head.media not in extras:
            extras.append(head.media)
    return main[1], extras, main[0]


@cache
def _zh_one_of() -> re.Pattern[str]:
    return re.compile("的一(?:只|个|张|幅|条|匹|头|位|棵|座|辆)")  # "two cats" keeps its two


def extract_subject(norm_clause: str, lang: str, mode: str = "request") -> str:
    """The creator's noun phrase: their words minus request frames, counts, verbs and generic media
    words (see _subject_cuts for the modes)."""
    fillers = _lead_fillers(lang)
    clause = fillers.sub("", norm_clause, count=1) if fillers else norm_clause
    cuts = _subject_cuts(lang, mode)
    if lang == "zh":  # "雪林里的一只狐狸" is one thing, "the fox in the snowy forest": its "a" is no cut
        clause = _zh_one_of().sub("的", clause)
    if is_cjk(lang):
        pieces = [p.strip(L.EDGE_CHARS[lang]) for p in cuts.split(clause)]
        return max(pieces, key=len) if pieces else ""
    return _trim_words(_collapse_repeats(cuts.sub(" ", clause).split()), L.EDGE_WORDS[lang])


def _collapse_repeats(words: list[str]) -> list[str]:
    """Words left side by side by the cuts that name one thing twice keep the later one: "retro poster
    series of three posters" -> "retro poster posters" -> "retro posters"."""
    out: list[str] = []
    for word in words:
        if out and _same_word(out[-1], word):
            out[-1] = word
        else:
            out.append(word)
    return out


def _same_word(a: str, b: str) -> bool:
    a, b = a.strip(_PUNCT), b.strip(_PUNCT)
    return len(a) > 2 and len(b) > 2 and (a == b or b in (a + "s", a + "es") or a in (b + "s", b + "es"))


_PUNCT = " ,.!?:;-—…\"'«»“”()"


def _trim_words(words: list[str], edge: frozenset[str]) -> str:
    """Join words, dropping function words and punctuation at both ends ("a cat for" -> "cat")."""
    def junk(word: str) -> bool:
        core = word.strip(_PUNCT)
        return not core or core in edge

    lo, hi = 0, len(words)
    while lo < hi and junk(words[lo]):
        lo += 1
    while hi > lo and junk(words[hi - 1]):
        hi -= 1
    return " ".join(words[lo:hi]).strip(_PUNCT)


def _original_case(raw_norm: str, raw: str, phrase: str) -> str:
    """Give a phrase found in normalised text back its original spelling where it maps 1:1."""
    if len(raw_norm) != len(raw) or not phrase:
        return phrase
    at = raw_norm.find(phrase)
    return raw[at:at + len(phrase)] if at >= 0 else phrase


def _constraints(norm: str, lang: str) -> tuple[str | None, list[str]]:
    out: list[str] = []
    size = None
    m = _SIZE_RE.search(norm)
    if m:
        size = f"{m.group(1)}x{m.group(2)}"
        out.append(size)
    for m in _ASPECT_RE.finditer(norm):
        ratio = f"{m.group(1)}:{m.group(2)}"
        if ratio in _ASPECTS:
            size = size or _ASPECTS[ratio]
            out.append(ratio)
    for ratio, words in _ASPECT_WORDS.items():
        rx = compile_entries(words)
        hit = rx.search(norm) if rx else None
        if hit:
            size = size or _ASPECTS[ratio]
            out.append(hit.group())
    for lg in dict.fromkeys((lang, "en")):
        out += [m.group().strip() for m in re.finditer(_NEGATIVE[lg], norm)]
    return size, list(dict.fromkeys(out))


def _without_constraints(norm: str, lang: str) -> str:
    """The text with sizes, aspect ratios and "no …" phrases blanked (they are not the subject)."""
    norm = _ASPECT_RE.sub(blank, _SIZE_RE.sub(blank, norm))
    for lg in dict.fromkeys((lang, "en")):
        norm = re.sub(_NEGATIVE[lg], blank, norm)
    return norm


def _piece_at(norm: str, start: int, end: int, at: int, lang: str) -> str:
    """The comma-separated piece of norm[start:end] around position `at`, from the request in it where one comes
    before `at` ("so my sister is getting married and I need invitations for her wedding" → "I need …")."""
    pieces = [(start + m.start(), start + m.end()) for m in re.finditer(r"[^,;，；、]+", norm[start:end])]
    a, b = next(((a, b) for a, b in pieces if a <= at < b), (start, end))
    if lang in _VERB_FIRST:
        asks = [m.start() for m in find_all(L.GEN, "asks", lang, norm[a:at])]
        a += asks[-1] if asks else 0
    return norm[a:b]


def _nodes(norm: str) -> list[str]:
    return list(dict.fromkeys(a or b for a, b in _NODES.findall(norm)))


def _control(norm: str, lang: str) -> tuple[str, re.Match[str]] | None:
    """A control act: en/ru verbs must open the message; zh/ja ones may stand anywhere unless
    negated or preceded by a creation verb ("画一个停止标志" is a drawing)."""
    if is_cjk(lang):
        if _question_lead(norm, lang) and re.search(r"(?:[?？]|か|吗|呢)\s*$", norm):
            return None  # "怎么删除一个任务？" asks how, it deletes nothing
        create = find(L.GEN, "create", lang, norm)
        negation = compile_entries(L.NEGATION[lang])
        for act in _CONTROL_ORDER:
            m = find(L.CONTROL, act, lang, norm)
            if m and not (create and create.start() < m.start()) and \
                    not (negation and negation.search(norm[max(0, m.start() - 3):m.end() + 4])):
                return act, m
        return None
    fillers = _lead_fillers(lang)
    lead = fillers.match(norm) if fillers else None
    offset = lead.end() if lead else 0
    for act in _CONTROL_ORDER:
        rx = compile_entries(entries_for(L.CONTROL, act, lang))
        m = rx.match(norm, offset) if rx else None
        if m and not (act == "continue" and _asks_for_more(m.group(), norm[m.end():], lang)):
            return act, m  # "next, draw a fox in the snow" is a new piece, not "continue"
    if lang in _IMPERATIVE_LAST:  # Russian may put the imperative last: «карту зон доставки доделай»
        for act in _CONTROL_ORDER:
            rx = compile_entries(entries_for(L.CONTROL, act, lang))
            m = next((m for m in rx.finditer(norm) if _CLOSES.fullmatch(norm, m.end())), None) if rx else None
            if m and m.start() and norm[m.start() - 1] == " " and not _has(L.GEN, "create_only", lang, norm):
                return act, m
    return None


def _asks_for_more(word: str, rest: str, lang: str) -> bool:
    """After "next"/"continue" (WORD), a request of its own: a creation verb ("next, draw a fox"), or — after
    "next", which may just be "next week" — several words with a count ("then next weeks topic is the water
    cycle, need a set of 4 illustrations")."""
    return _has(L.GEN, "create_only", lang, rest) or (
        word.strip() == "next" and _leftover(rest, lang) > 3 and find_count(rest, lang) is not None)


def _leftover(text: str, lang: str) -> int:
    """How much a message says besides a phrase: words (en/ru) or characters (zh/ja)."""
    words = re.sub(r"[\W_]+", " ", text).split()
    return sum(map(len, words)) // 2 if is_cjk(lang) else len(words)


def _edits(norm: str, lang: str) -> bool:
    """An edit verb works on existing work ("shorten the clip", "把视频剪短", "сократи ролик"), unless a
    creation verb comes before it ("нарисуй кота и добавь шляпу", "画一只猫，再可爱一点")."""
    edit = find(L.GEN, "edit_verb", lang, norm)
    if edit is None:
        return False
    create = find(L.GEN, "create_only", lang, norm)
    return not (create and create.start() < edit.start()) and not _NEW_THING[lang].search(norm, 0, edit.start())


def _edit_lead(norm: str, lang: str) -> bool:
    """An imperative edit of existing work ("put the date on the poster", "ポスターに日付を入れて"): en/ru
    verbs open the message (after fillers), zh/ja ones stand anywhere; a wh-question is never one."""
    if _question_lead(norm, lang):
        return False
    if is_cjk(lang):
        return _has(L.GEN, "edit_lead", lang, norm)
    norm = courtesy_kinds(norm, lang)[1]  # "nice — now add the date" leads with its edit
    fillers = _lead_fillers(lang)
    rx = compile_entries(entries_for(L.GEN, "edit_lead", lang))
    if rx is None:
        return False
    # the edit opens the message, or the clause after a short topic ("the opening ones, put the date on both")
    starts = [0] + [m.end() for m in _TOPIC_CLAUSE.finditer(norm[:_TOPIC_SPAN])]
    for start in starts:
        lead = fillers.match(norm, start) if fillers else None
        if rx.match(norm, lead.end() if lead else start):
            return True
    return False


_TOPIC_SPAN = 40  # how far into a message a topic may run before its instruction ("poodle pic, …")
_TOPIC_CLAUSE = LazyRe(r"[,:;—–]\s*")


_TOPIC_COLON = LazyRe(r"^[^:：?？.!]{1,40}[:：]\s*")


def _question_lead(norm: str, lang: str) -> bool:
    """A wh-question ("how do I…", "什么是…"), not a polite request ("can you draw…?"); after a topic and a colon
    too ("bouldering grades: is V scale or Font more common?")."""
    fillers = _lead_fillers(lang)
    text = (fillers.sub("", norm, count=1) if fillers else norm).strip()
    topic = _TOPIC_COLON.match(text)
    if topic and re.search(r"[?？]\s*$", text):
        text = text[topic.end():]
    return _has(L.QUESTION, "lead", lang, text) and not _has(L.QUESTION, "request", lang, norm.strip())


_COURTESY_KINDS = (("greeting", L.ACTS), ("thanks", L.ACTS), ("praise", L.COURTESY), ("ack", L.COURTESY),
                   ("farewell", L.COURTESY), ("chat", L.COURTESY))
_COURTESY_LEFTOVER = 8  # words (en/ru) or character pairs (zh/ja) thanks or praise may say besides
_COURTESY_LEFTOVER_COOL = 2  # … and a greeting, a goodbye or an "ok" ("ok, with a hat" is an instruction)
_COURTESY_LEFTOVER_CHAT = 4  # … and small talk about the creator's day ("I'm so tired today", "я сегодня так устал")
# a new piece after the courtesy: "thanks! now a giraffe in a scarf", "great. another one with a hat"
_INDEFINITE_EN = LazyRe(r"(?:^|[,.;:!?]\s*|\b(?:now|next|then|and|also|just)\s+)(?:an?|another|some|one more)\s+[a-z]")
_DEFINITE_EN = LazyRe(r"\b(?:the|this|that|these|those|my|our|your|its|their|all)\s+(?:[\w'-]+\s+){0,3}$")


def courtesy_kinds(norm: str, lang: str) -> tuple[set[str], str]:
    """The kinds of courtesy in NORM ("greeting", "thanks", "praise", "ack", "farewell", "chat"), and the
    text with those phrases blanked."""
    kinds: set[str] = set()
    rest = norm
    for kind, table in _COURTESY_KINDS:
        for m in find_all(table, kind, lang, rest):
            if m.end() > m.start():
                kinds.add(kind)
                rest = rest[:m.start()] + " " * (m.end() - m.start()) + rest[m.end():]
    return kinds, rest


def _instructs(rest: str, lang: str, warm: bool, news: bool = False) -> bool:
    """Does what a courteous message says besides its courtesy carry an instruction? A creation or edit
    verb, a revision marker, a question, a count or a new piece ("great, now make it bigger", "谢谢，再来一张",
    "ありがとう、もう少し明るく", "спасибо, добавь логотип"). WARM (thanks or praise) lets the work be named
    ("thanks for the posters", "love the warm colours"); a bare greeting or "ok" does not. NEWS (what follows a
    greeting) may carry numbers and colours of its own ("40 lbs off six hives", "楓葉紅得剛剛好")."""
    if re.search(r"[?？]", rest) and (_has(L.QUESTION, "open", lang, rest)
                                      or _has(L.QUESTION, "lead", lang, rest.strip())):
        return True
    create = "create_only" if is_cjk(lang) else "create"
    if any(_has(L.GEN, c, lang, rest) for c in (create, "revise_strong", "revise", "degree")):
        return True
    # («вчера увидели кольца Сатурна в новый телескоп»: news of a new thing is no order; one asked for is named)
    fresh = _NEW_THING[lang].search(rest) and not (news and lang == "ru")
    if _edits(rest, lang) or _edit_lead(rest, lang) or fresh or _NODES.search(rest):
        return True
    if cue("retry", lang, rest):  # "ok retry it": another try asked for
        return True
    if lang == "en" and _INDEFINITE_EN.search(rest.strip()):
        return True
    mentions = _mentions(rest, lang)
    if news:
        return bool(mentions)
    if not warm:
        return bool(mentions or find_styles(rest, lang) or re.search(r"\d", rest)
                    or find_count(rest, lang) is not None or find_seconds(rest, lang, True)[0] is not None)
    if lang == "en":  # "thanks for the posters" names the work; "great poster for my gym" asks for one
        return any(not _DEFINITE_EN.search(rest[:m.start]) for m in mentions)
    return find_count(rest, lang) is not None  # "素敵！次はパンダのイラストを一枚"


def _courtesy(norm: str, lang: str) -> str | None:
    """"greeting" or "thanks" when the message is courtesy only — greetings, goodbyes, thanks, praise of the
    work, acknowledgements — with no instruction besides; None otherwise."""
    if not re.search(r"\w", norm):  # "👍", "!!", "…"
        return "thanks"
    if _has(L.ACTS, "dislike", lang, norm):  # "i dont like the first one" praises nothing
        return None
    kinds, rest = courtesy_kinds(norm, lang)
    warm = bool(kinds & {"thanks", "praise"})
    limit = _COURTESY_LEFTOVER if warm else _COURTESY_LEFTOVER_CHAT if "chat" in kinds else _COURTESY_LEFTOVER_COOL
    if not kinds or _leftover(rest, lang) > limit:
        return None
    if _instructs(rest, lang, warm):
        return None
    return "thanks" if kinds - {"greeting", "farewell", "chat"} else "greeting"


TOPIC_SHORT = 4  # words (en/ru) a bare topic question may have ("the date?", "budget today")
TOPIC_SHORT_CJK = 6  # … characters in zh/ja ("今天日期")


def _question_shaped(norm: str, lang: str) -> bool:
    """Does NORM read as a question at all: a question mark, an interrogative word, or a few words only? "the
    drop teaser needs the date at the end" names the date without asking it."""
    if re.search(r"[?？]", norm) or _has(L.QUESTION, "open", lang, norm) or _has(L.QUESTION, "lead", lang, norm):
        return True
    return len(norm.split()) <= TOPIC_SHORT if not is_cjk(lang) else len(norm.strip()) <= TOPIC_SHORT_CJK


def _then_asks(norm: str, lang: str) -> bool:
    """After the question, an instruction: "why is the clip so short? make it 10 seconds",
    "毕业短片为什么这么短？改成45秒", "почему трейлер такой длинный? сократи до 20 секунд"."""
    parts = re.split(r"[?？]", norm, maxsplit=1)
    tail = parts[1] if len(parts) > 1 else ""
    if not re.search(r"\w", tail):
        return False
    create = "create_only" if is_cjk(lang) else "create"
    return any(_has(L.GEN, c, lang, tail) for c in (create, "revise_strong")) or _edits(tail, lang) \
        or _edit_lead(tail, lang) or bool(_NEW_THING[lang].search(tail))


# Chinese often drops the question mark: a sentence that ends on an interrogative ("一公斤等于多少斤",
# "北京到上海大概多远", "现在几点") is still a question.
# a Japanese sentence that wonders ("どんな紙がいいんだろう", "何色がいいかな")
_JA_WONDERS = LazyRe(r"(?:だろう|だろうか|でしょうか|かな|かなあ|かなぁ|(?:ます|です|ません|でした|ました)か(?:ね|ねえ|な)?"
                     # "水加減どれくらいがいいの": an interrogative, then a plain ending in の
                     r"|(?:どれくらい|どのくらい|どれぐらい|どのぐらい|どう|何|なに|いつ|どこ|どの|どんな|どっち|どちら|いくら|いくつ)"
                     r"[^、。?？]{0,12}(?:の|なの|んだっけ|だっけ))[。.!！…〜~]*\s*$")
# "外壁に描くなら、…": a condition before a question names what the creator will do, not what to make
_JA_CONDITION = LazyRe(r"^[^、。?？]{1,30}(?:なら|たら|れば|ときは|時は|場合は?)[、,]\s*")
# (not "再出多几个版本" / "多做几张": a few more asked for)
_ZH_ASKS_AT_END = LazyRe(r"(?:多少|多远|多久|多长|多大|多高|多重|多宽|(?<![多再来做出画加])几|什么|怎么样|哪[里儿个些]?|谁)"
                         r"[\u4e00-\u9fffa-z0-9]{0,8}\s*[。.!！]*\s*$")


_ALTERNATIVE = LazyRe(r"[?？][^?？.。!！]{0,16}(?:还是|或者|或是|抑或|\bor\b|или|либо|それとも)[^?？.。!！]*$")


def _open_question(norm: str, lang: str) -> bool:
    """A sentence that ends as a question and holds an interrogative word anywhere ("短片一般多长比较合适？",
    "蓝色和什么颜色搭配好看？", "カフェラテとカプチーノの違いは何ですか？") asks for information — unless it is
    a polite request or asks for a change or a creation ("能把海报调亮一点吗？", "can you make it bluer?")."""
    # "…的时候加的吗？还是发酵的时候": a question, then its other alternative
    ends = re.search(r"[?？]\s*$", norm) or _ALTERNATIVE.search(norm) or (lang == "zh" and (re.search(r"[吗呢]\s*$", norm)
                                                          or _ZH_ASKS_AT_END.search(norm))) \
        or (lang == "ja" and _JA_WONDERS.search(norm))
    if not ends or not _has(L.QUESTION, "open", lang, norm):
        return False
    if _has(L.QUESTION, "request", lang, norm.strip()):
        return False
    if lang == "zh" and _ZH_CHOICE.search(norm) and not (_edits(norm, lang) or _edit_lead(norm, lang)
                                                       or _has(L.GEN, "revise_strong", lang, norm)):
        return True
    if is_cjk(lang) and _has(L.QUESTION, "habitual", lang, norm) and not _edit_lead(norm, lang):
        return True  # "宣传册一般做三折页还是骑马钉比较好？": what is usually done, whatever verb it names
    if lang == "ja":
        norm = _JA_CONDITION.sub("", norm, count=1)
    making = _has(L.GEN, "create_only", lang, norm) and not _has(L.QUESTION, "habitual", lang, norm)
    return not (making or _has(L.GEN, "revise_strong", lang, norm)
                or _has(L.GEN, "degree", lang, norm) or _edits(norm, lang) or _edit_lead(norm, lang)
                or _NEW_THING[lang].search(norm))


# the creator saying what they do ("我是画壁画的", "我们是开面馆的"): who asks, not a request to draw or open
_SELF_INTRO = {"zh": LazyRe(r"(?<![^\s，,。.!！~～])(?:我|我们)是[^，,。.!！?？\s]{1,12}的(?=[，,。.!！~～\s]|$)")}


# --- classify -------------------------------------------------------------------------------
READS = 0  # messages read in this process (what the tests count)


def classify(text: str) -> Intent:
    """Read one message: its act, and for requests what to make, how many, how long, in what style.

    A creator's message is parsed once, on arrival (`parsed.parse`), and carried to the router, the planner
    and the tools; classify reads other words (a clause, the rest after "next:")."""
    return read(text)


def read(text: str) -> Intent:
    """The reading of TEXT (a fresh Intent each time; see classify)."""
    global READS
    READS += 1
    raw = text.strip()
    lang = detect_language(raw)
    it = Intent(language=lang, files=find_files(raw), text=raw)
    masked = mask_noise(raw)
    norm = normalise(simplified(masked) if lang == "zh" else masked)
    if not norm.strip():
        return it
    it.style = find_styles(norm, lang)
    it.size, it.constraints = _constraints(norm, lang)
    said = _SELF_INTRO[lang].sub(blank, norm) if lang in _SELF_INTRO else norm  # what is asked, not who asks
    mentions = _mentions(said, lang)
    create = _has(L.GEN, "create", lang, said)
    making = create and bool(mentions)
    control = _control(norm, lang)
    if control:
        it.act, m = control
        rest = norm[:m.start()] + " " + norm[m.end():]
        it.subject = extract_subject(_CONTROL_OBJECT.sub(" ", rest), lang, "plain")
    else:
        _classify_act(it, said, lang, mentions, create, making)
        made = _file_deliverable(it, create)
        if it.act in ("one_shot", "goal", "revise"):
            _fill_request(it, norm, lang, mentions)
        if made:  # "make perfume.png": the file is the piece (not an input), its name what it is of
            it.output, it.needs_source = it.files[0], False
            it.subject = it.subject or made
            it.title = it.title or made
    if it.act not in _NO_REFERENCE_ACTS:
        plain = unquoted(norm)
        it.refers_back = _has(L.GEN, "deictic", lang, plain) or _has(L.GEN, "deictic_det", lang, plain)
        it.comparative = it.act == "revise" and (_has(L.GEN, "comparative_lead", lang, plain)
                                                 or _styled_part(plain, lang))
    if it.subject:
        it.subject = _original_case(norm, masked, it.subject)
    if it.title:
        it.title = _original_case(norm, masked, it.title)
    return it


_EXT_MEDIA = {**{e: "image" for e in IMAGE_EXT}, **{e: "video" for e in ("mp4", "webm", "mov", "mkv", "avi")},
              **{e: "audio" for e in ("wav", "mp3", "ogg", "flac", "m4a", "aac")},
              **{e: "3d" for e in ("glb", "gltf", "obj", "stl", "fbx", "usdz")}}


def _file_deliverable(it: Intent, create: bool) -> str:
    """A request to make a file by its name ("make perfume.png", "生成 海报.png") is a one-shot of the kind
    its extension says; returns the name's stem ("perfume"), or "" when the message is something else."""
    if it.act != "other" or not create or len(it.files) != 1:
        return ""
    stem, _, ext = it.files[0].rpartition("/")[2].rpartition(".")
    media = _EXT_MEDIA.get(ext.lower())
    if media is None or not stem:
        return ""
    it.act, it.media = "one_shot", media
    return stem.replace("_", " ").replace("-", " ")


# (a dash between spaces ends a clause too: "quick one before the meeting — can you also make short videos?")
_SENTENCE_END = LazyRe(r"(?<=[.!?。！？])\s*|\n+|\s+[—–-]+\s+")


_JA_EXAMPLE_AFTER = LazyRe(r"(?<=[?？])\s*[^?？。]{1,16}(?:とか|など|なんか)[。.]?\s*$")


def _asks_ability(norm: str, lang: str) -> bool:
    """Whether Lomo can make a kind of thing, asked by the whole message or by its last sentence after words
    that ask nothing be made ("hi, new here. do you do logos?", "はじめまして。動画も作れますか")."""
    if _has(L.ACTS, "ability", lang, norm):
        return True
    if lang == "ja":  # "…作れますか？BGMとか": an example after the question is part of it
        norm = _JA_EXAMPLE_AFTER.sub("", norm)
    sentences = [part for part in _SENTENCE_END.split(norm) if part and part.strip()]
    if len(sentences) < 2 or not _has(L.ACTS, "ability", lang, sentences[-1].strip()):
        return False
    before = " ".join(sentences[:-1])
    return not (_has(L.GEN, "create_only", lang, before) or _mentions(before, lang))


_WH_ASKS = LazyRe(r"^(?:(?:anyway|anyways|so|btw|also|and|ok|okay|oh|but)\W+)*(?:what|which|how|when|where|why|who)\b"
                  r"(?:\s+[\w'-]+){0,2}?\s+(?:can|could|do|does|did|is|are|should|would|will)\s+(?:u|you|i|we|it|they)\b")


def _last_asks(norm: str, lang: str) -> bool:
    """A question in the last sentence after sentences that ask nothing be made or changed ("hi, I run a watch
    repair shop. is this for images only or video too?", "Добрый день. Сколько стоит сгенерировать видео?")."""
    sentences = [part.strip() for part in _SENTENCE_END.split(norm) if part and part.strip()]
    if len(sentences) < 2:
        return False
    last, before = sentences[-1], " ".join(sentences[:-1])
    wh = lang == "en" and _WH_ASKS.match(last)  # "anyway what sizes can u export for insta stories" (no mark)
    if not (wh or re.search(r"[?？]\s*$", last) and (_question_lead(last, lang) or _open_question(last, lang))):
        return False
    return not (_has(L.GEN, "create_only", lang, before) or _mentions(before, lang) or _edits(before, lang)
                or _has(L.GEN, "revise_strong", lang, before) or _edit_lead(before, lang))


def _asks_for_work(text: str, lang: str) -> bool:
    """Does TEXT ask for something to be made or changed: a making verb, a kind of piece, an edit, a new thing?"""
    create = "create_only" if is_cjk(lang) else "create"
    return bool(_has(L.GEN, create, lang, text) or _mentions(text, lang) or _edits(text, lang)
                or _has(L.GEN, "revise_strong", lang, text) or _edit_lead(text, lang) or _NEW_THING[lang].search(text))


_FIRST_PERSON = {  # the creator speaking of what they themselves will do
    "en": LazyRe(r"\b(?:i|we|i'm|im|we're|i'll|we'll|i'd|we'd)\b"),
    "zh": LazyRe(r"我"),
    "ja": LazyRe(r"私|僕|うち|自分|つもり|たいので|たくて"),
    "ru": LazyRe(r"(?<![а-я])(?:я|мы|хочу|хотим|хотелось|буду|будем|собираюсь|собираемся)(?![а-я])"),
}


_ADDRESSED = {  # the creator speaking to Lomo or of their own work ("can you…", "can we bring back…", "你们能…",
    # "できますか", «можете», «помнишь»): no question about the world
    "en": LazyRe(r"\b(?:you|u|your|lomo|we|us|our|i|me|my|remember)\b"),
    "zh": LazyRe(r"你|您|帮|给我|我|咱"),
    "ja": LazyRe(r"(?:でき|作れ|描け)(?:ます|る)か|お願い|ください|下さい|私|うち|僕|覚えて"),
    "ru": LazyRe(r"(?<![а-я])(?:ты|вы|тебя|вас|можешь|можете|сделаешь|сделаете|мы|нам|наш[а-я]*|я|мне|мой|моя|"
                 r"помнишь|помните)(?![а-я])"),
}


def _asks_about_the_world(question: str, lang: str) -> bool:
    """A yes/no question about the world ("羊驼可以喂胡萝卜吗？", "can alpacas eat carrots?"): it names no piece, asks
    Lomo nothing and changes nothing."""
    asks = re.search(r"[?？]\s*$", question) or (lang == "ja" and _JA_WONDERS.search(question)) \
        or (lang == "zh" and _ZH_CHOICE_SAID.search(question)) \
        or (lang == "en" and not re.search(r"[?？]", question) and _EN_YES_NO.search(question))  # "…のかな", "…还是白砂糖啊"
    return bool(asks) and not _ADDRESSED[lang].search(question) \
        and not (_mentions(question, lang) or _edits(question, lang) or _edit_lead(question, lang)
                 or _has(L.GEN, "create", lang, question) or _has(L.GEN, "degree", lang, question))


def _asks_then_tells(norm: str, lang: str) -> bool:
    """A question, then a sentence that only tells why it is asked ("Чем керамика отличается от жидкого стекла?
    Клиенты постоянно спрашивают", "想问一下板面图一般做什么尺寸？我们是 8.25 吋的板子")."""
    parts = re.split(r"([?？])", norm, maxsplit=1)
    if len(parts) < 3:
        return False
    head, mark, tail = parts
    question = head + mark
    if not re.search(r"\w", tail) or not (_question_lead(question, lang) or _open_question(question, lang)
                                          or _asks_about_the_world(question, lang)):
        return False
    if re.search(r"[?？]", tail) or _has(L.GEN, "degree", lang, tail) or cue("recall", lang, question):
        return False  # (a question that recalls old work is about what the rest asks of it: "还记得…标志吗？要一个白色版本")
    if _has(L.QUESTION, "habitual", lang, question) and _FIRST_PERSON[lang].search(tail) and not (
            _mentions(tail, lang) or _edits(tail, lang) or find_count(tail, lang) is not None):
        return True  # "Что обычно подают к утке? Хочу написать в описании": what the creator will do themselves
    return not _asks_for_work(tail, lang)


# a creator telling who they are after a greeting ("hi there! we run a small tattoo studio in Leeds",
# "Привет! Мы — сыроварня из Твери", "こんにちは。渋谷で書店をやっています")
_INTRODUCES = {
    "en": LazyRe(r"\b(?:we|i)\s+(?:run|own|manage|have|are|am|work)\b|\b(?:i'm|im|we're|this is)\b"),
    "zh": LazyRe(r"我们是|我是|我们家|我在|我们在|我们开|我开了|我经营|我们经营"),
    "ja": LazyRe(r"と申します|を(?:経営|運営)して|をやって(?:い)?ます|をして(?:い)?ます|で働いて|です[。！!]?\s*$"),
    "ru": LazyRe(r"(?<![а-я])(?:мы|я)(?![а-я])"),
}
_TOLD_LIMIT = 20  # words (en/ru) or character pairs (zh/ja) of news a greeting may carry and still be small talk


def _greets_and_tells(norm: str, lang: str) -> bool:
    """A greeting, then only who the creator is or news of their day ("hi there! we run a small tattoo studio",
    "こんばんは〜、稽古終わりました", "哈囉～今天終於放晴了", "hello! first time writing in english here"):
    small talk, answered — nothing is asked, made, changed or reported as failed."""
    greeting = find(L.ACTS, "greeting", lang, norm)
    if not greeting or norm[:greeting.start()].strip():
        return False
    rest = norm[greeting.end():]
    if not re.search(r"\w", rest) or re.search(r"[?？]", rest) or cue("failed_before", lang, rest):
        return False
    if lang == "en" and any(_WH_ASKS.match(part.strip()) for part in _SENTENCE_END.split(rest) if part):
        return False  # "yo! we got a stall lol. anyway what formats can u export": a question, no small talk
    if _INTRODUCES[lang].search(rest):
        return not (_asks_for_work(rest, lang) or find_count(rest, lang) is not None)
    return _leftover(rest, lang) <= _TOLD_LIMIT and not _instructs(rest, lang, False, news=True) \
        and not _has(L.ACTS, "status", lang, rest)


# "用柔光箱还是反光板效果好一点？": a choice between two ways asks for advice, whatever making verb it names
_ZH_CHOICE = LazyRe(r"[^，,。.！!？?]{1,16}还是[^，,。.！!？?]{1,16}[?？]\s*$")
# "do closed terrariums need charcoal or is that a myth": an auxiliary, then something else than the creator, Lomo
# or the piece at hand ("is it…", "can you…") — a yes/no question typed without its mark
_EN_YES_NO = LazyRe(r"^\W*(?:do|does|did|is|are|was|were|can|could|should|will|would|has|have|must)\s+"
                    r"(?!(?:you|u|i|we|it|this|that|these|those|they|there)\b)[a-z]")
# no question mark: "…还是白砂糖啊", "太极拳算内家拳还是外家拳"
_ZH_CHOICE_SAID = LazyRe(r"[^，,。.！!？?]{1,16}还是[^，,。.！!？?]{1,16}[啊呀呢吧]?\s*[。.!！~～]*\s*$")


def _classify_act(it: Intent, norm: str, lang: str, mentions: list[_Mention], create: bool,
                  making: bool) -> None:
    """Set it.act (and it.topic) for anything but a control verb."""
    if not it.files and (_asks_ability(norm, lang) or _has(L.ACTS, "offer", lang, norm)):
        # "can you do videos too?", "what can you do for my shop?": what Lomo can make
        it.act = "help"
        return
    asked = find(L.ACTS, "status", lang, norm)
    if asked is not None and re.fullmatch(r"[\s?？!！.。]*", norm[asked.end():]) and re.search(r"[?？]\s*$", norm):
        it.act = "status"  # "動画の生成は直った？", "is the render fixed?": asked at the end, whatever it names
        return
    if not making and not _edit_lead(norm, lang):  # "put the date on the poster" asks no date
        for act in ("status", "help"):
            if _has(L.ACTS, act, lang, norm):
                it.act = act
                return
        for topic in L.TOPICS:
            if _has(L.TOPICS, topic, lang, norm) and _question_shaped(norm, lang):
                it.act, it.topic = "question", topic
                return
    if not making and extract_expression(norm, lang) is not None:
        it.act, it.topic = "question", "math"
        return
    courtesy = _courtesy(norm, lang)  # "looks great, thanks!", "谢谢，辛苦了", "спасибо, супер"
    if courtesy:
        it.act = courtesy
        return
    if not making and _has(L.ACTS, "dislike", lang, norm) and not _question_lead(norm, lang):
        it.act = "revise"  # "not a fan of the third one": a complaint about a piece asks for a change to it
        return
    greeting = find(L.ACTS, "greeting", lang, norm)
    if greeting and not norm[:greeting.start()].strip() and not mentions and not it.files \
            and re.search(r"[?？]\s*$", norm) and _leftover(norm[greeting.end():], lang) > 1 \
            and (_has(L.ACTS, "help", lang, norm) or _open_question(norm, lang)):
        # "hi, what can you do today?", "你好，今天可以做什麼？": a greeting that asks something is answered
        # (not one that asks for a change: "morning! can we push the colours warmer?")
        it.act = "help" if _has(L.ACTS, "help", lang, norm) else "question"
        it.interrogative = it.act == "question"
        return
    if _greets_and_tells(norm, lang):
        it.act = "greeting"
        return
    for act in ("greeting", "thanks"):  # "how are you?" is small talk, not a question ("ok retry it" is not)
        m = find(L.ACTS, act, lang, norm)
        if m and _leftover(norm[:m.start()] + norm[m.end():], lang) <= 1 and not cue("retry", lang, norm):
            it.act = act
            return
    if (_question_lead(norm, lang) or _open_question(norm, lang) or _last_asks(norm, lang)) \
            and not _then_asks(norm, lang) or _asks_then_tells(norm, lang):
        it.act, it.interrogative = "question", True
        return
    has_flow = _has(L.GEN, "flow", lang, norm) or any(f.endswith(".flow.json") for f in it.files)
    if has_flow and (_has(L.GEN, "edit", lang, norm) or _nodes(norm)):
        it.act, it.media, it.goal_type = "goal", "flow", "flow_edit"
        return
    plain = unquoted(norm)
    deictic = _has(L.GEN, "deictic", lang, plain) or _has(L.GEN, "deictic_det", lang, plain)
    primary, _, _ = _primary(mentions, _clauses(norm, lang), lang, norm)
    fresh = bool(primary and not primary.source) or bool(_NEW_THING[lang].search(norm))
    definite = bool(primary and lang == "en" and _DEFINITE.search(norm[:primary.start])) or _headed(norm, lang)
    campaign = fresh and _has(L.GEN, "project", lang, norm)  # "i want a proper anniversary campaign – a poster, …"
    if _has(L.GEN, "revise_strong", lang, norm) or _edits(norm, lang) or _fronted(norm, lang, mentions) \
            or _styled_part(norm, lang) or (
            _has(L.GEN, "comparative_lead", lang, norm) and not create and not _NEW_THING[lang].search(norm)) or (
            _has(L.GEN, "revise", lang, _blank(L.GEN, "about_request", lang, norm))
            and (deictic or definite or not fresh) and not campaign) or (
            _has(L.GEN, "degree", lang, norm) and not _has(L.GEN, "create_only", lang, norm)
            and not _NEW_THING[lang].search(norm) and not _has(L.GEN, "purpose", lang, norm)):
        it.act = "revise"
        return
    storyboard = _is_storyboard(it, norm, lang)
    project = _has(L.GEN, "project", lang, norm)
    counted = find_count(norm, lang) is not None  # "двадцать пять кадров для ролика", "ten frames"
    if fresh or storyboard or project or counted or (create and extract_subject(norm, lang)):
        it.act = "one_shot"  # refined to "goal" by _fill_request
        return
    # a verbless order that opens with an indefinite thing: "a neon sign that says 'open late'",
    # "quick one: a mug with a fox on it" — something new, even of a kind the lexicon does not know
    order = _ORDER_EN.match(norm) if lang == "en" else None
    if order and not _has(L.GEN, "deictic", lang, norm[:order.end()]) and extract_subject(norm, lang):
        it.act = "one_shot"  # a pronoun after the new thing is about it: "a tote bag with a crane on it"
        return
    # "それと、カーテンコールで流す短いアニメ", "另外一张会员卡", "А ещё звук для видео: …": after a word that adds
    # to the conversation, a kind of piece named without a verb is the next piece to make
    lead = _ADDITION_LEAD.get(lang) and _ADDITION_LEAD[lang].match(norm)
    if lead and not deictic and any(not m.source and m.start >= lead.end() for m in mentions) \
            and not _has(L.GEN, "deictic", lang, plain[lead.end():]):
        it.act = "one_shot"
        return
    short = len(norm.split()) <= 6 if not is_cjk(lang) else len(norm) <= 12
    for act in ("greeting", "thanks"):  # (not "hey the voucher didnt come through": news that work failed)
        if short and _has(L.ACTS, act, lang, norm) and not cue("failed_before", lang, norm) \
                and not cue("retry", lang, norm):
            it.act = act
            return
    if re.search(r"[?？]\s*$", norm) or _has(L.QUESTION, "lead", lang, norm.strip()) \
            or _asks_about_the_world(norm, lang):  # "駄菓子屋って今でもちゃんと儲かるのかな"
        it.act = "question"


_STYLED_PART_WORDS = 3  # words (en/ru) or character pairs (zh/ja) of "red text", "白い文字", «красный текст»


def _styled_part(norm: str, lang: str) -> bool:
    """"red text", "白い文字", «красный текст»: a look for a part of a piece, said alone — an edit of the piece
    at hand, not a document to write."""
    if _leftover(norm, lang) > _STYLED_PART_WORDS or not find_styles(norm, lang):
        return False
    parts = compile_entries(entries_for({"part": L.PIECE_PARTS}, "part", lang))
    return parts is not None and parts.search(norm) is not None


def _is_storyboard(it: Intent, norm: str, lang: str) -> bool:
    """A storyboard is asked for by name, or by naming its file ("write storyboard.md …")."""
    return any(_has(L.GEN, "storyboard", lang, t) for t in (norm, *map(normalise, it.files)))


def _fill_request(it: Intent, norm: str, lang: str, mentions: list[_Mention]) -> None:
    """Media, counts, duration, subject and goal type of a request to make or revise something."""
    clauses = _clauses(norm, lang)
    primary, extras, (c_start, c_end) = _primary(mentions, clauses, lang, norm)
    storyboard = _is_storyboard(it, norm, lang)
    if it.media is None:
        it.media = "document" if storyboard else (primary.media if primary else None)
    if it.media is None and it.act != "revise":
        it.media = "image"
    timed = storyboard or any(m.media in ("video", "audio") for m in mentions)
    it.seconds, spans = find_seconds(norm, lang, timed)
    for start, end in spans:  # durations are neither counts nor subjects
        norm = norm[:start] + " " * (end - start) + norm[end:]
    it.count = find_count(_NODES.sub(blank, _SIZE_RE.sub(blank, norm)), lang)
    it.nodes = _nodes(norm)
    it.extra_media = extras
    image_inputs = [f for f in it.files if f.rsplit(".", 1)[-1].lower() in IMAGE_EXT]
    earlier_inputs = any(
        m.media == "image" != it.media and (m.source if not is_cjk(lang) else c_start <= m.start < primary.start)
        for m in mentions if primary and m is not primary)
    it.needs_source = bool(image_inputs) or earlier_inputs or _has(L.GEN, "past_ref", lang, norm)
    mode = "revise" if it.act == "revise" else "request"
    plain = _without_constraints(norm, lang)
    bundle = _bundle_items(plain, lang) if it.act == "one_shot" else []
    # The subject: what a listed kit is for ("logo, card and banner for my bakery" -> "bakery"); else
    # around the deliverable, else in the first clause that names one ("make a cat, then animate it"),
    # else anywhere.
    for _, start, end in bundle:
        plain = plain[:start] + " " * (end - start) + plain[end:]
    asks = find(L.GEN, "asks", lang, plain[c_start:c_end]) if lang in _VERB_FIRST else None
    at = primary.start if primary else c_start + (asks.start() if asks else 0)  # no deliverable: what asks
    candidates = [_piece_at(plain, c_start, c_end, at, lang),
                  *(plain[a:b] for a, b in clauses), plain]
    if bundle:
        candidates.insert(0, re.sub(r"[,，、;；:：]", " ", plain))
    it.subject = next((s for s in (extract_subject(c, lang, mode) for c in candidates) if s), "")
    if it.act != "revise" and not bundle:
        it.title = extract_subject(candidates[0], lang, "title")
    if it.act == "one_shot":
        it.goal_type = _goal_type(it, norm, lang, primary, storyboard)
        if it.goal_type:
            it.act = "goal"


# a piece named as what another is for, at the end of a clause ("…的插画，店铺头像用", "…のイラスト、アイコン用")
_PURPOSE_AFTER = {"zh": LazyRe(r"\s*(?:要用|用)(?:的)?\s*(?:[,，。.!！~～]|$)"),
                  "ja": LazyRe(r"\s*用(?:に|の|で)?\s*(?:[,，。.!！~～]|$)")}


def _bundle_items(norm: str, lang: str) -> list[tuple[str, int, int]]:
    """Deliverables the message lists ("a kit: logo, business card and banner", "一式：logo、名片、海报",
    "логотип, визитку и меню"), as (item, start, end): the longest run of two or more different items
    joined by commas or "and" — not a list inside a description ("a poster with a logo and a tagline")."""
    rx, join, inside = _bundle_res(lang)
    if rx is None:
        return []
    best: list[tuple[str, int, int]] = []
    run: list[tuple[str, int, int]] = []
    described = False  # the run describes a piece ("with a logo, …")
    for m in rx.finditer(norm):
        if _PURPOSE_AFTER.get(lang) and _PURPOSE_AFTER[lang].match(norm, m.end()):
            continue  # "插画，店铺头像用": what the piece is for, not a second piece
        word = m.group().strip()
        key = word[:5] if re.match("[а-я]", word) else re.sub(r"e?s$", "", word)
        if run and join.fullmatch(norm, run[-1][2], m.start()):
            if key not in [k for k, _, _ in run]:
                run.append((key, m.start(), m.end()))
        else:
            run = [(key, m.start(), m.end())]
            described = bool(inside.search(norm, max(0, m.start() - 40), m.start()))
        if not described and len(run) > len(best):
            best = list(run)
    return best if len(best) >= 2 else []


@cache
def _bundle_res(lang: str) -> tuple[re.Pattern[str] | None, re.Pattern[str], re.Pattern[str]]:
    langs = dict.fromkeys((lang, "en"))
    items = compile_entries(tuple(L.BUNDLE_ITEMS.get(lang, ())) + (L.BUNDLE_ITEMS["en"] if lang != "en" else ()))
    return (items, re.compile("|".join(f"(?:{L.BUNDLE_JOIN[lg]})" for lg in langs)),
            re.compile("|".join(f"(?:{L.BUNDLE_INSIDE[lg]})" for lg in langs)))


@cache
def _fronted_ru() -> re.Pattern[str]:
    """A Russian message that opens on a kind of piece («вывеску…», «логотип…», «футболку…»)."""
    return re.compile(r"^\W*(?:" + _deliverable_alt("ru") + r")(?![а-я])")


def _fronted(norm: str, lang: str, mentions: list[_Mention]) -> bool:
    """Russian puts what exists first: «вывеску сделай потемнее», «логотип сделай со светофором» — the piece named
    before the verb that makes it is the piece to change (a new one is asked verb first: «сделай вывеску …»)."""
    if lang != "ru" or _NEW_THING[lang].search(norm):
        return False
    verb = find(L.GEN, "create", lang, norm)
    head = norm[:verb.start()] if verb is not None else ""
    if verb is None or re.search(r"[,.;:!?—–]|(?<![а-я])(?:для|про)(?![а-я])", head):
        return False  # «логотип для кофейни сделай»: what it is for makes it a new one
    return bool(_fronted_ru().match(head)) or any(
        not m.source and m.end <= verb.start() and m.start <= 2 for m in mentions)


_HEADER = LazyRe(r"^\W*((?:[\w'-]+\s+){0,3}[\w'-]+)\s*[:：]\s*\S")
_HEADER_NEW = LazyRe(r"^(?:an?|some|another|one more|new|i|we|pls|please|quick one|also|next|then)\b")


def header(norm: str) -> str:
    """The few words (one to four) a message opens on before a colon and more text ("promo video: cut the
    intro" → "promo video"); "" when it has none."""
    m = _HEADER.match(norm)
    return m.group(1) if m else ""


def _headed(norm: str, lang: str) -> bool:
    """"knife 4 photo: background is too busy", "promo video: cut the intro": a few words naming a piece, then a
    colon and what to change — the piece exists (not "a poster: red, with a fox", nor "next: a banner")."""
    head = header(norm) if lang == "en" else ""
    return bool(head) and not _HEADER_NEW.match(head) and find(L.GEN, "create", lang, head) is None


def _blank(table: L.Table, concept: str, lang: str, norm: str) -> str:
    """NORM with what CONCEPT's phrases say blanked (same length)."""
    for m in find_all(table, concept, lang, norm):
        norm = norm[:m.start()] + " " * (m.end() - m.start()) + norm[m.end():]
    return norm


def _after_lead_sequence(norm: str, lang: str) -> str:
    """NORM without a "then"/"然后"/"потом" that opens it: that one brings in the next request of the
    conversation ("然后帮我画一张插画"), it is no step within this one ("draw a cat, then animate it"); nor is a
    second one right after it ("然后再做一个头像": "then also make an avatar")."""
    while (m := find(L.GEN, "sequence", lang, norm)) is not None and (
            not re.sub(r"[\W_]+", "", norm[:m.start()]) or re.fullmatch(r"\W*(?:and|а|и)\W*", norm[:m.start()])):
        norm = norm[m.end():]
    return norm


def _goal_type(it: Intent, norm: str, lang: str, primary: _Mention | None, storyboard: bool) -> str | None:
    """None for a one-shot request; otherwise the kind of multi-step goal."""
    if storyboard:
        return "storyboard"
    items = _bundle_items(norm, lang)
    if items:  # several deliverables: a multi-step goal, one piece each
        it.count = it.count or len(items)
        return "general"
    media = it.media or "image"
    if media == "video" and _has(L.GEN, "film", lang, norm) and ((it.count or 0) >= 2 or (it.seconds or 0) >= 10):
        return "film"  # several shots: storyboard + production graph
    plural_rx = compile_entries(L.PLURAL_DELIVERABLE.get(lang, ()) + L.PLURAL_DELIVERABLE["en"])
    plural = bool(primary and plural_rx and plural_rx.match(norm, primary.start))
    series = _has(L.GEN, "series", lang, norm) or plural or (it.count or 0) >= 2
    sequence = bool(it.extra_media) or _has(L.GEN, "sequence", lang, _after_lead_sequence(norm, lang))
    if series or sequence:
        return _GOAL_BY_MEDIA[media] if primary else "general"
    if _has(L.GEN, "project", lang, norm):
        return "general"
    if media == "video" and (it.seconds or it.needs_source) and not (
            it.seconds and it.seconds < ONE_SHOT_CLIP_SECONDS and not it.needs_source
            and not (lang == "en" and _OF_EXISTING_EN.search(norm))):
        return "short_clip"  # a few seconds of one shot is one generation: a one-shot
    if media == "3d" and _has(L.GEN, "design", lang, norm):
        return "3d_object"
    return None
