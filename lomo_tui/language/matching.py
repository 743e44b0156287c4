"""Keywords for SQLite FTS5 and a cheap multilingual similarity for near-duplicate goals (DESIGN A6, A7)."""
from __future__ import annotations

import re
from functools import cache, lru_cache

from .intent import find_styles
from .lexicon import CJK_STOPCHARS, GENERIC_WORDS, LANGS, MEDIA, STOPWORDS, SUBJECTS
from .text import LazyRe, compile_entries, detect_language, find, normalise, simplified

_TOKEN = LazyRe(r"[a-z0-9']+|[а-я0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]+")
_CJK_SPLIT = LazyRe("[\u3040-\u309f" + "".join(sorted(CJK_STOPCHARS)) + "]+")
_RU_ENDINGS = tuple(sorted(
    "ами ями ого его ому ему ыми ими ых их ым ой ей ий ый ая яя ое ее ые ие ую юю ов ев ах ях ам ям ом ем "
    "а я ы и е у ю о ь".split(), key=len, reverse=True))
_STYLE_WEIGHT = 2.0
_MEDIA_WEIGHT = 0.5  # every image request shares "#media:image": weak, like a generic word
GENERIC_WEIGHT = 0.35  # a shared generic word ("series", "poster", "改") counts about a third of a word
_VOWEL = LazyRe("[aeiouy]")


def _stem_ok(stem: str) -> bool:
    """A suffix comes off only when a real stem stays: three letters or more, with a vowel ("spring" is
    not "spr" + "ing", "shred" not "shr" + "ed")."""
    return len(stem) >= 3 and bool(_VOWEL.search(stem))


def _undouble(stem: str) -> str:
    """A doubled final consonant goes: "runn" -> "run", "stopp" -> "stop" ("fill", "pass", "add" stay)."""
    if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "aeioulsz":
        return stem[:-1]
    return stem


def _stem_en(word: str) -> str:
    word = word.strip("'").removesuffix("'s")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ie"):  # "movie" and "movies" meet at "movy"
        return word[:-2] + "y"
    if len(word) > 5 and word.endswith("ing") and _stem_ok(word[:-3]):
        return _undouble(word[:-3])
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed") and _stem_ok(word[:-2]):
        return _undouble(word[:-2])
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _stem_ru(word: str) -> str:
    for ending in _RU_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[:-len(ending)]
    return word


# a bare form whose last vowel may be a fleeting one: "открыток" (открытка), "чашек" (чашка), "песен" (песня)
_RU_FLEETING = LazyRe(r"[бвгджзклмнпрстфхцчшщ][оеё][кцн]$")


def _grams_ru(word: str) -> list[str]:
    """The stem of a Russian word, and for a bare form with a fleeting vowel (or a noun in -ие) the stem of its
    other forms too ("открыток" also keys as "открытк", so "вторую открытку" meets "серия открыток")."""
    stem = _stem_ru(word)
    if stem == word and len(word) >= 5 and _RU_FLEETING.search(word):
        return [stem, word[:-2] + word[-1]]
    if word.endswith("ие") and len(word) >= 6:
        return [stem, word[:-1]]  # "валяние" also keys as "валяни", the stem of "о валянии", "валяния"
    return [stem]


_KANA_RUN = LazyRe(r"[\u3041-\u3096ー]{3,}")
_KANA_EDGE = "のをにがはでともへやかね"


def kana_words(title: str) -> set[str]:
    """Words a title spells in hiragana ("ろくろ動画", "てぬぐいの柄"): `keywords` reads hiragana as grammar and
    drops it, so a name like ろくろ would never meet the message "ろくろの動画、もう一回". Runs of three or more,
    a particle that joins them to a kanji off either end."""
    out = set()
    text = normalise(title)
    for m in _KANA_RUN.finditer(text):
        run = m.group()
        if m.start() > 0 and not text[m.start() - 1].isspace() and run[0] in _KANA_EDGE:
            run = run[1:]  # "作品をつくる": the particle after a kanji
        if m.end() < len(text) and not text[m.end()].isspace() and run[-1] in _KANA_EDGE:
            run = run[:-1]  # "やきものの器": the particle before one
        if len(run) >= 3:
            out.add(run)
    return out


# a position's counter ("2枚目", "3本目", "第二个"'s "个目"): where a piece stands in a series, never what it is about
_POSITION_GRAMS = frozenset({"枚目", "本目", "番目", "个目", "件目", "话目", "回目", "类目", "张目", "曲目"})
# a character left alone between stop characters that says how, not what ("一张就好", "再试一次", "30秒"): no key
_WEAK_SINGLES = frozenset("好次秒点下些再又更太很")


@lru_cache(maxsize=4096)
def _cjk_grams(run: str) -> tuple[str, ...]:
    """Character pairs of a CJK run, folded to simplified script first: "風呂敷" (Japanese) and "风吕敷"
    (Chinese) are one word to the matcher, which reads both sides of every comparison the same way."""
    grams: list[str] = []
    for piece in _CJK_SPLIT.split(simplified(run)):
        if len(piece) == 1:
            grams += [] if piece in _WEAK_SINGLES else [piece]
        else:
            grams += [piece[i:i + 2] for i in range(len(piece) - 1)]
    return tuple(g for g in grams if g not in _POSITION_GRAMS)


def keywords(text: str) -> list[str]:
    """Search tokens: CJK as bigrams (single characters stay), Latin/Cyrillic as lower-case stems;
    stopwords and bare numbers out; order kept, no duplicates."""
    out: dict[str, None] = {}
    for m in _TOKEN.finditer(normalise(text)):
        token = m.group()
        if token[0] >= "\u3040":
            grams = list(_cjk_grams(token))
        elif token.isdigit() or token in STOPWORDS["en"] or token in STOPWORDS["ru"]:
            grams = []
        elif re.match("[а-я]", token):
            grams = _grams_ru(token)
        else:
            grams = [_stem_en(token)]
        for gram in grams:
            if gram and gram not in STOPWORDS["en"]:
                out.setdefault(gram)
    return list(out)


@cache
def _generic() -> frozenset[str]:
    return frozenset(k for words in GENERIC_WORDS.values() for w in words for k in keywords(w))


def is_generic(keyword: str) -> bool:
    """Is KEYWORD (as `keywords` gives it) a word unrelated tasks share ("series", "poster", "сери",
    "海报", "シリ")? Such a word is weak evidence that two texts are about the same thing."""
    return keyword in _generic()


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression: the keywords, quoted, joined by OR ("" when there are none)."""
    return " OR ".join('"' + k.replace('"', '""') + '"' for k in keywords(text))


@cache
def _generic_cjk() -> re.Pattern[str]:
    words = sorted({w for lang in ("zh", "ja") for w in GENERIC_WORDS[lang]}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words)))


def _features(text: str) -> dict[str, float]:
    norm, lang = normalise(text), detect_language(text)
    # A generic CJK word is one weak feature (not three bigrams), and it stands apart, so "奶茶店海报系列"
    # gives no "店海" or "报系" to share by accident.
    generic_cjk = [m.group() for m in _generic_cjk().finditer(norm)]
    feats = {k: GENERIC_WEIGHT if is_generic(k) else 1.0 for k in keywords(_generic_cjk().sub(" ", norm))}
    feats.update(dict.fromkeys((f"#word:{w}" for w in generic_cjk), GENERIC_WEIGHT))
    feats.update(dict.fromkeys((f"#style:{t}" for t in find_styles(norm, lang)), _STYLE_WEIGHT))
    feats.update(dict.fromkeys((f"#media:{m}" for m in MEDIA if find(MEDIA, m, lang, norm)), _MEDIA_WEIGHT))
    return feats


def similarity(a: str, b: str) -> float:
    """Weighted Jaccard over keywords (generic ones and media kinds weak, + style tags at double weight):
    1.0 for the same request, near 0 for unrelated ones; symmetric and deterministic."""
    fa, fb = _features(a), _features(b)
    if not fa and not fb:
        return 1.0 if normalise(a).strip() == normalise(b).strip() else 0.0
    keys = fa.keys() | fb.keys()
    shared = sum(min(fa.get(k, 0.0), fb.get(k, 0.0)) for k in keys)
    return shared / sum(max(fa.get(k, 0.0), fb.get(k, 0.0)) for k in keys)


def other_thing(subject: str, target: str) -> bool:
    """Does a request's SUBJECT ("rusty lantern prop") name mostly things the TARGET task (its title and goal) does
    not ("3D prop: wooden loot crate")? Then however alike the wording, it is not that task asked for again. Only
    within one language, and one written in words: words of another say nothing here ("复古海报" is the "Retro poster
    series"), and a Chinese or Japanese subject's character pairs are too rough a reading ("海报传单短")."""
    lang = detect_language(subject) if subject.strip() else ""
    if lang not in ("en", "ru") or lang != detect_language(target):
        return False
    own = {w for w in keywords(subject) if not is_generic(w) and not (len(w) == 1 and w >= "\u3040")}
    theirs = set(keywords(target))
    return bool(own) and len(own - theirs) > len(own & theirs)


# ---- subjects across languages ------------------------------------------------------------------------------
@cache
def subject_patterns() -> dict[str, re.Pattern[str]]:
    """{subject: regex over normalised text in any language} ("lighthouse" matches "灯塔", "маяками")."""
    out = {}
    for name, words in SUBJECTS.items():
        rx = compile_entries(tuple(w for lang in LANGS for w in words.get(lang, ())))
        if rx is not None:
            out[name] = rx
    return out


def subjects(text: str) -> list[str]:
    """The subjects (SUBJECTS keys) TEXT is about, in order of appearance."""
    norm = normalise(text)
    found = [(m.start(), name) for name, rx in subject_patterns().items() if (m := rx.search(norm))]
    return [name for _, name in sorted(found)]


@cache
def _subject_terms(name: str) -> tuple[str, ...]:
    terms: dict[str, None] = {}
    for lang in LANGS:
        for word in SUBJECTS[name].get(lang, ()):
            if word.startswith("re:"):
                continue
            found = keywords(word.rstrip("*"))
            if len(found) == 1 or (found and found[0][0] >= "\u3040"):  # "灯塔", "маяк", the bigrams of
                terms.update(dict.fromkeys(found))  # "猫头鹰" — not "hot" + "pot"
    return tuple(terms)


def subject_keywords(text: str, limit: int = 12) -> list[str]:
    """Search keywords for the subjects TEXT is about, in every language, that TEXT itself lacks: "hotpot
    posters" -> ["火锅", …], so a task written in another language can be found by keyword (A6)."""
    own = set(keywords(text))
    out: dict[str, None] = {}
    for name in subjects(text):
        for term in _subject_terms(name):
            if term not in own:
                out.setdefault(term)
    return list(out)[:limit]
