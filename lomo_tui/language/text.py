"""Text primitives: normalisation, lexicon matching, language detection, numbers and file names."""
from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache
from typing import Any

from .lexicon import CJK_COUNTERS, DELIVERABLES, DISTRIBUTIVE, MEASURE_UNITS, RANGE_COUNTERS, RANGE_NOUNS, Table


class LazyRe:
    """A regex compiled on first use: module-level patterns cost nothing at import."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # search, finditer, sub, pattern, …
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)


_LETTER = "a-zа-я0-9"  # after normalise(): lower case, ё folded into е
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_KANA_RE = LazyRe("[\u3040-\u30ff\uff66-\uff9f]")
_HAN_RE = LazyRe("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = LazyRe(r"[a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]+")  # not × ÷
_CYR_WORD = LazyRe(r"[а-яіїєґў]+")


def normalise(text: str) -> str:
    """NFKC (full-width digits and letters become ASCII), case-folded, ё -> е, ’ -> '."""
    return unicodedata.normalize("NFKC", text).casefold().replace("ё", "е").replace("\u2019", "'")


@cache
def _to_simplified() -> Any:
    """OpenCC's traditional-to-simplified converter (built on the first Chinese message: ~2 ms)."""
    import opencc  # a C extension with its own dictionaries; no import cost until Chinese is read

    return opencc.OpenCC("t2s")


def simplified(text: str) -> str:
    """Chinese text with its traditional characters in simplified form (OpenCC), one character for one so
    that offsets hold: the lexicon is simplified, creators may type either. Only for text already known to
    be Chinese — Japanese writes many of these characters the traditional way (動画)."""
    if text.isascii():
        return text
    out = _to_simplified().convert(text)
    if len(out) == len(text):
        return out
    return "".join(ch if ch.isascii() else _to_simplified().convert(ch)[:1] or ch for ch in text)


@lru_cache(maxsize=1024)
def _reads_chinese(text: str) -> bool:
    return detect_language(text) == "zh"


def matchable(text: str) -> str:
    """TEXT as the matchers read it: normalised, and folded to simplified script when it reads as Chinese
    (a traditional-script message and a simplified task title, or the other way round, share their words)."""
    return normalise(simplified(text) if _HAN_RE.search(text) and _reads_chinese(text) else text)


_RU_K_STEM = LazyRe("[бвгджзйклмнпрстфхцчшщ]к$")


def _fleeting_vowel(stem: str) -> str:
    """A Russian "-к-" stem with its genitive plural, whose vowel comes back: "иконк" -> "иконк|иконок",
    "наклейк" -> "наклейк|наклеек" (so "пять иконок" is still about icons)."""
    base = stem[:-1]
    plural = base[:-1] + "ек" if base.endswith("й") else base + "[ое]к"
    return f"(?:{plural}(?![а-я])|{stem})"


def _word_regex(word: str) -> tuple[str, bool]:
    """A Latin/Cyrillic entry's regex body, and whether it sits between word boundaries."""
    stem = word.rstrip("*")
    body = r"[\s-]+".join(re.escape(part) for part in stem.split()).replace("'", "'?")  # "thats all" too
    if word.endswith("*"):
        body = _fleeting_vowel(body) + r"\w*" if _RU_K_STEM.search(stem) else body + r"\w*"
    elif re.fullmatch("[a-z]{3,}", stem):
        body += "(?:e?s)?"
    return body, stem[0].isalnum() and stem[-1].isalnum()


@cache
def compile_entries(entries: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for a tuple of lexicon entries. Whole words share one pair of boundary checks
    (cheap to compile); longest entries come first, so alternation prefers them."""
    if not entries:
        return None
    bounded, free = [], []
    for entry in sorted(set(entries), key=lambda e: (-len(e), e)):
        if entry.startswith("re:"):
            free.append(f"(?:{entry[3:]})")
            continue
        word = normalise(entry)
        if not re.search(f"[{_LETTER}]", word.rstrip("*")) or re.search(f"[{_CJK}]", word):
            free.append(re.escape(word))
            continue
        body, whole = _word_regex(word)
        if whole:
            bounded.append(body)
        else:
            free.append(rf"(?<![{_LETTER}]){body}" if word[0].isalnum() else body)
    if bounded:
        free.insert(0, rf"(?<![{_LETTER}])(?:{'|'.join(bounded)})(?![{_LETTER}])")
    return re.compile("|".join(free))


def entries_for(table: Table, concept: str, lang: str) -> tuple[str, ...]:
    """The concept's words in `lang`, plus the English ones (creators mix English terms in)."""
    words = table[concept]
    return tuple(words.get(lang, ())) + (tuple(words.get("en", ())) if lang != "en" else ())


def find(table: Table, concept: str, lang: str, text: str) -> re.Match[str] | None:
    """First match of a concept in normalised text."""
    rx = compile_entries(entries_for(table, concept, lang))
    return rx.search(text) if rx else None


def find_all(table: Table, concept: str, lang: str, text: str) -> list[re.Match[str]]:
    rx = compile_entries(entries_for(table, concept, lang))
    return list(rx.finditer(text)) if rx else []


# --- file names, URLs, noise ----------------------------------------------------------------
_EXTS = frozenset("md markdown txt json yaml yml toml csv png jpg jpeg webp gif bmp svg tif tiff mp4 webm "
                  "mov mkv avi wav mp3 ogg flac m4a aac glb gltf obj stl fbx usdz pdf html htm".split())
IMAGE_EXT = frozenset({"png", "jpg", "jpeg", "webp", "gif", "bmp", "svg", "tif", "tiff"})
# Names are Unicode ("海报_1.png", "постер.png", "ポスター_夏.png"); the extension is ASCII, and text may
# follow it directly ("海报_1.png的标题").
_FILE_RE = LazyRe(
    r"`([^`\n]*[^`\s]\.([A-Za-z0-9]{1,8}))`"
    r"|[\"“「『]([^\"”」』\n]+?\.([A-Za-z0-9]{1,8}))[\"”」』]"
    r"|(?<![\w/.\-])((?:[\w\-]+/)*[\w\-]+(?:\.[\w\-]+)*\.([A-Za-z0-9]{1,8}))"
    r"(?![A-Za-z0-9_])")
_CJK_RUN = LazyRe(f"[{_CJK}]+")
_MAX_LEAD = 12  # CJK characters of a name that may be sentence text run together with it
_URL_RE = LazyRe(r"(?:https?://|www\.)\S+", re.IGNORECASE)


# names run together with the CJK words around them: "文件名stitch_1.png到stitch_6.png" is two names, and the
# words that introduce a name ("文件名", "到", "から") are no part of it when an ASCII name follows them
_JOINED_NAME = LazyRe(f"(.+?\\.([A-Za-z0-9]{{1,8}}))(?=[{_CJK}]|$)")
_NAME_LEAD = LazyRe(f"^[{_CJK}]*?(?:文件名|檔案名|档案名|档名|檔名|文件|檔案|命名为|命名為|命名|名为|名為|名叫|叫做|叫|用|到|至|和|跟|"
                    f"と|から|まで|を|は)(?=[A-Za-z0-9])")


def _file_matches(text: str) -> list[tuple[re.Match[str], str]]:
    """(match, file name) for each name with a known extension (so "e.g." and "v1.2" are not files)."""
    out = []
    for m in _FILE_RE.finditer(text):
        groups = m.groups()
        name, ext = next((groups[i], groups[i + 1]) for i in range(0, len(groups), 2) if groups[i])
        if ext.lower() not in _EXTS:
            continue
        parts = [(p.group(1), p.group(2)) for p in _JOINED_NAME.finditer(name)] if groups[4] else []
        if len(parts) > 1 and all(e.lower() in _EXTS for _, e in parts):
            out.extend((m, _NAME_LEAD.sub("", part)) for part, _ in parts)
        else:
            out.append((m, _NAME_LEAD.sub("", name) if groups[4] else name))
    return out


def find_files(text: str) -> list[str]:
    """Workspace file names mentioned in the text, in order, without duplicates."""
    return list(dict.fromkeys(name for _, name in _file_matches(_URL_RE.sub(" ", text))))


def file_name_variants(name: str) -> list[str]:
    """Readings of a file name found in text, longest first. CJK text has no spaces, so a name may
    carry the words before it ("把海报_1.png", "このポスター_2.jpg"): the shorter readings start inside
    that leading CJK run ("海报_1.png", "ポスター_2.jpg"); the caller keeps the longest that exists."""
    lead = _CJK_RUN.match(name)
    if lead is None:
        return [name]
    out = [name[i:] for i in range(min(lead.end(), _MAX_LEAD))]
    if lead.end() < len(name) and name[lead.end()].isascii() and name[lead.end()].isalnum():
        out.append(name[lead.end():])  # "把posters/海报_1.png" -> "posters/海报_1.png"
    return out


def blank(m: re.Match[str]) -> str:
    """A match's span as spaces (a re.sub replacement that keeps offsets)."""
    return " " * len(m.group())


_QUOTED = LazyRe(r"«[^»]*»|“[^”]*”|„[^“”]*[“”]|\"[^\"]*\"|「[^」]*」|『[^』]*』")


def unquoted(text: str) -> str:
    """TEXT with quoted words blanked (same length): «это база», "that's all folks", 「それな」 are what a piece
    says, not words that point at a piece."""
    return _QUOTED.sub(blank, text)


def mask_noise(text: str) -> str:
    """Blank out URLs and file names (keeps the rest of the text in place)."""
    text = _URL_RE.sub(blank, text)
    for m, _ in reversed(_file_matches(text)):
        text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    return text


# --- language -------------------------------------------------------------------------------
_ASCII_TOKEN = LazyRe(r"[\w.:+\-/*%]+", re.ASCII)


def _drop_numbers(text: str) -> str:
    """Blank ASCII tokens holding a digit ("3D", "16:9", "v2") — not words of any language."""
    return _ASCII_TOKEN.sub(lambda m: " " if any(c.isdigit() for c in m.group()) else m.group(), text)


def detect_language(text: str) -> str:
    """The creator's language, "zh", "ja", "ru" or "en", by the dominant script of their words.

    File names, URLs and tokens with digits ("3D", "16:9") do not count. A CJK character counts as
    2/3 of a word; kana (at least a tenth of the CJK characters) makes it Japanese.
    """
    words = _drop_numbers(mask_noise(unicodedata.normalize("NFKC", text)).casefold())
    kana = len(_KANA_RE.findall(words))
    cjk = kana + len(_HAN_RE.findall(words))
    latin = _LATIN_WORD.findall(words)
    cyrillic = _CYR_WORD.findall(words)
    scores = {
        "cjk": cjk / 1.5,
        "en": len(latin) + sum(map(len, latin)) / 1000,
        "ru": len(cyrillic) + sum(map(len, cyrillic)) / 1000,
    }
    best = max(scores, key=lambda k: scores[k])
    if scores[best] == 0:
        return "en"
    if best == "cjk":
        return "ja" if kana and kana * 10 >= cjk else "zh"
    return best


def is_cjk(lang: str) -> bool:
    return lang in ("zh", "ja")


# --- numbers --------------------------------------------------------------------------------
_EN_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
             "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
             "nineteen": 19}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
            "eighty": 80, "ninety": 90}
_EN_PHRASES = {"a couple of": 2, "a pair of": 2, "a dozen": 12, "dozen": 12, "half a": 0.5, "half": 0.5,
               "half an": 0.5, "a single": 1, "single": 1}
_RU_UNIT_WORDS = {  # nominative/accusative, then genitive ("из пяти"), instrumental and dative forms
    1: "один одна одно одну одного одной одним одному", 2: "два две двух двумя двум пару пара",
    3: "три трех тремя трем", 4: "четыре четырех четырьмя четырем", 5: "пять пяти пятью",
    6: "шесть шести шестью", 7: "семь семи семью", 8: "восемь восьми восемью",
    9: "девять девяти девятью",
}
_RU_TEEN_WORDS = {10: "десять десяти десятью", 11: "одиннадцать одиннадцати", 12: "двенадцать двенадцати",
                  13: "тринадцать тринадцати", 14: "четырнадцать четырнадцати", 15: "пятнадцать пятнадцати",
                  16: "шестнадцать шестнадцати", 17: "семнадцать семнадцати", 18: "восемнадцать восемнадцати",
                  19: "девятнадцать девятнадцати"}
_RU_TENS_WORDS = {20: "двадцать двадцати", 30: "тридцать тридцати", 40: "сорок сорока",
                  50: "пятьдесят пятидесяти", 60: "шестьдесят шестидесяти", 70: "семьдесят семидесяти",
                  80: "восемьдесят восьмидесяти", 90: "девяносто девяноста", 100: "сто ста"}
_RU_UNITS = {w: n for n, ws in _RU_UNIT_WORDS.items() for w in ws.split()}
_RU_TENS = {w: n for n, ws in _RU_TENS_WORDS.items() for w in ws.split()}
_RU_NUM = {**_RU_UNITS, **{w: n for n, ws in _RU_TEEN_WORDS.items() for w in ws.split()}, **_RU_TENS,
           "полторы": 1.5, "полтора": 1.5, "дюжину": 12, "дюжина": 12}
# Russian compound adjectives: "пятисекундный", "десятиминутный".
_RU_STEMS = {"одно": 1, "двух": 2, "трех": 3, "четырех": 4, "пяти": 5, "шести": 6, "семи": 7,
             "восьми": 8, "девяти": 9, "десяти": 10, "пятнадцати": 15, "двадцати": 20,
             "тридцати": 30, "шестидесяти": 60}
_JA_NATIVE = {"ひとつ": 1, "ふたつ": 2, "みっつ": 3, "よっつ": 4, "いつつ": 5, "むっつ": 6,
              "ななつ": 7, "やっつ": 8, "ここのつ": 9, "とお": 10}
# a native number starts a word: after a particle or a non-kana character ("ステッカーをみっつ"), not inside
# one (the とお of "ぺこっとお辞儀")
_JA_NATIVE_AFTER = "(?:(?<=[をがはもでにの])|(?<![ぁ-ゖ]))"
_CJK_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
               "七": 7, "八": 8, "九": 9}
_CJK_NUM = "[0-9零〇一二两三四五六七八九十百]+(?:\\.[0-9]+)?|半"


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


_EN_NUM = (r"\d+(?:\.\d+)?|"
           + _alternation(list(_EN_PHRASES))
           + f"|(?:{_alternation(list(_EN_TENS))})(?:[\\s-](?:{_alternation(list(_EN_UNITS))})(?![a-z]))?"
           + f"|{_alternation(list(_EN_UNITS))}")
_RU_NUM_RE = (r"\d+(?:\.\d+)?|"  # compounds first: "двадцать пять" is 25, not 20
              + f"(?:{_alternation(list(_RU_TENS))})\\s+(?:{_alternation(list(_RU_UNITS))})(?![а-я])|"
              + _alternation(list(_RU_NUM)))
NUM = {
    "en": _EN_NUM,
    "ru": _RU_NUM_RE,
    "zh": _CJK_NUM,
    "ja": _CJK_NUM + "|" + _JA_NATIVE_AFTER + "(?:" + _alternation(list(_JA_NATIVE)) + ")",
}


def parse_number(token: str) -> float | None:
    """A number from digits, English/Russian words or CJK numerals ("二十五", "twenty-five")."""
    t = re.sub(r"\s+", " ", normalise(token).strip())
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        return float(t)
    for table in (_EN_PHRASES, _EN_UNITS, _EN_TENS, _RU_NUM, _JA_NATIVE):
        if t in table:
            return float(table[t])
    tens, _, unit = t.replace("-", " ").partition(" ")  # "twenty-five", "twenty five", "двадцать пять"
    if tens in _EN_TENS and unit in _EN_UNITS:
        return float(_EN_TENS[tens] + _EN_UNITS[unit])
    if tens in _RU_TENS and unit in _RU_UNITS:
        return float(_RU_TENS[tens] + _RU_UNITS[unit])
    if t == "半":
        return 0.5
    if re.fullmatch("[零〇一二两三四五六七八九十百]+", t):
        return float(_cjk_int(t))
    return None


def _cjk_int(t: str) -> int:
    total, current = 0, 0
    for ch in t:
        if ch in _CJK_DIGITS:
            current = _CJK_DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
    return total + current


# --- durations and counts -------------------------------------------------------------------
@cache
def _seconds_re(lang: str) -> re.Pattern[str]:
    if lang == "en":
        return re.compile(rf"(?<![a-z0-9.])({_EN_NUM})[\s-]*(seconds?|secs?|s|minutes?|mins?)(?![a-z0-9])")
    if lang == "ru":
        return re.compile(rf"(?<![а-я0-9.])({NUM['ru']})[\s-]*(секунд[а-я]*|сек\.?|с|минут[а-я]*|мин\.?)"
                          rf"(?![а-я0-9])"
                          rf"|(?<![а-я])({_alternation(list(_RU_STEMS))})(секундн|минутн)[а-я]*"
                          r"|(пол)(минуты)"
                          # approximate, unit first: "секунд на десять", "минуты две"
                          rf"|(?<![а-я])(секунд|минут[ыу]?)\s+(?:на\s+)?({NUM['ru']})(?![а-я0-9])")
    if lang == "zh":
        return re.compile(rf"({_CJK_NUM})\s*(秒钟?|分钟|分半钟)")
    return re.compile(rf"({_CJK_NUM})\s*(秒間?|分間?)")


def find_seconds(text: str, lang: str, timed_context: bool) -> tuple[float | None, list[tuple[int, int]]]:
    """A duration in seconds and the spans it covers. Bare "30s" counts only in `timed_context`
    (a clip or a piece of audio is being discussed), so "80s style" stays a decade."""
    spans: list[tuple[int, int]] = []
    seconds: float | None = None
    for rx in dict.fromkeys((_seconds_re(lang), _seconds_re("en"))):
        for m in rx.finditer(text):
            groups = [g for g in m.groups() if g is not None]
            if len(groups) < 2:
                continue
            if groups[0].startswith(("секунд", "минут")):  # "секунд на десять"
                groups = [groups[1], groups[0]]
            number = 0.5 if groups[0] == "пол" else (
                _RU_STEMS[groups[0]] if groups[0] in _RU_STEMS else parse_number(groups[0]))
            unit = groups[1]
            if number is None or (unit in ("s", "с") and not (timed_context and number <= 120)):
                continue
            minutes = unit.startswith(("min", "мин", "分")) or unit == "минутн"
            if seconds is None:
                seconds = float(number) * (60 if minutes else 1)
            spans.append(m.span())
    return seconds, spans


def _deliverable_alt(lang: str) -> str:
    def alt(w: str) -> str:
        stem = re.escape(w.rstrip("*"))
        if not w.endswith("*"):
            return stem + "(?:e?s)?"
        return (_fleeting_vowel(stem) if _RU_K_STEM.search(stem) else stem) + "[а-я]*"
    return "|".join(alt(w) for w in DELIVERABLES.get(lang, ()))


@cache
def _count_regexes(lang: str) -> tuple[re.Pattern[str], ...]:
    if lang in ("en", "ru"):
        letters = "a-z'" if lang == "en" else "а-я"
        series = "series|set|collection|batch" if lang == "en" else "сери[а-я]*|набор[а-я]*"
        of = "of" if lang == "en" else "из"
        # a number followed by a unit measures the piece ("a 4 bar loop"); it does not count pieces
        unit = "|".join(re.escape(u.rstrip("*")) + ("[а-я]*" if u.endswith("*") else "") for u in MEASURE_UNITS[lang])
        return (
            re.compile(rf"(?<![{_LETTER}.])({NUM[lang]})(?![\s-]*(?:{unit})(?![{letters}]))(?:[\s-]+[{letters}-]+){{0,3}}?[\s-]+"
                       rf"(?:{_deliverable_alt(lang)})(?![{letters}])"),
            re.compile(rf"(?:{series})\s+{of}\s+({NUM[lang]})(?![{_LETTER}])"),
            # "штук пять", "страниц на восемь": the noun first, an approximate count after it
            *((re.compile(rf"(?<![а-я])(?:штук|страниц|слайд|пост|картин|кадр|вариант)[а-я]*\s+(?:на\s+)?({NUM[lang]})"
                          rf"(?![{_LETTER}])"),) if lang == "ru" else ()),
        )
    counters = _alternation(list(CJK_COUNTERS[lang]))
    native = f"|{_JA_NATIVE_AFTER}({_alternation(list(_JA_NATIVE))})" if lang == "ja" else ""
    # "2枚目" names a position, not how many ("第6张" too, unless it asks to make it: _position_made)
    return (re.compile(rf"(?<![到至~～〜0-9零〇一二两三四五六七八九十百-])({_CJK_NUM})\s*(?:{counters})(?!目){native}"),)


_ZH_GENERIC_COUNTER = LazyRe(r"(海报|图|画|照片|版本|方案|视频|模型|镜头|分镜|作品|设计|头像|壁纸|封面|图标|歌|音乐|动画|短片)")


MAX_RANGE = 30  # "episodes 1 to 6" counts six pieces; "1 to 500" is no count of pieces


@cache
def _range_regex(lang: str) -> re.Pattern[str]:
    dash = r"\s*(?:to|through|thru|-|–|—|~|～|〜|到|至|по)\s*"
    if lang in ("en", "ru"):
        nouns = "|".join(re.escape(n.rstrip("*")) + ("[а-я]*" if n.endswith("*") else "") for n in RANGE_NOUNS[lang])
        lead = r"\s*(?:с|from)?\s*" if lang == "ru" else r"\s*(?:from\s+)?"
        return re.compile(rf"(?<![{_LETTER}])(?:{nouns})(?![{_LETTER}]){lead}#?(\d{{1,3}}){dash}#?(\d{{1,3}})(?![\d.:x]|,\d)")
    return re.compile(rf"第?(\d{{1,3}}|[一二三四五六七八九十]+){dash}第?(\d{{1,3}}|[一二三四五六七八九十]+)\s*(?:{_alternation(list(RANGE_COUNTERS))})")


def _range_count(text: str, lang: str) -> int | None:
    """How many numbers a numbered range spans ("episodes 1 to 6": 6, "第1到6集": 6), or None."""
    for lg in dict.fromkeys((lang, "en")):
        if lg not in RANGE_NOUNS and lg not in ("zh", "ja"):
            continue
        for m in _range_regex(lg).finditer(text):
            first, last = parse_number(m.group(1)), parse_number(m.group(2))
            if first is not None and last is not None and 2 <= last - first + 1 <= MAX_RANGE:
                return int(last - first + 1)
    return None


def _distributed_count(text: str, lang: str) -> int | None:
    """"3d meeples for the four factions … one file each": the number one piece each goes to, or None."""
    table = DISTRIBUTIVE.get(lang)
    if table is None or not compile_entries(table).search(text):
        return None
    unit = "|".join(re.escape(u.rstrip("*")) + ("[а-я]*" if u.endswith("*") else "") for u in MEASURE_UNITS[lang])
    letters = "a-z'" if lang == "en" else "а-я"
    for m in re.finditer(rf"(?<![{_LETTER}.#])({NUM[lang]})(?![{_LETTER}])(?![\s-]*(?:{unit})(?![{letters}]))", text):
        n = parse_number(m.group(1))
        if n is not None and 2 <= n <= MAX_RANGE and n == int(n):
            return int(n)
    return None


def find_count(text: str, lang: str) -> int | None:
    """How many deliverables the creator asks for ("4 posters", "三张海报", "4枚", "четыре постера", "episodes
    1 to 6", "for the four factions, one file each")."""
    counted = _find_count(text, lang)
    if counted is not None and counted > 1:
        return counted
    return _range_count(text, lang) or _distributed_count(text, lang) or counted


_ZH_POSITION = LazyRe(r"第\s*$")
_JA_OFF_BY = LazyRe(r"\s*(?:多|少な|足りな|余計|余分)")
_ZH_MAKES = LazyRe(r"(?:做|画|生成|制作|设计|来|加|添|出|补)[一二两三四五六七八九十几0-9]*[张幅个款版份段首]?\s*第")


def _find_count(text: str, lang: str) -> int | None:
    langs = [lang] + (["en"] if lang != "en" else [])
    article = None  # "做一个15秒的短片，三个镜头": 一个 is "a"; a later count says how many
    for lg in langs:
        for rx in _count_regexes(lg):
            for m in rx.finditer(text):
                if lg == "zh" and m.group().endswith(("个", "支", "条")) and \
                        not _ZH_GENERIC_COUNTER.search(text, m.end(), m.end() + 8):
                    continue
                n = parse_number(next(g for g in m.groups() if g))
                if n is None or n < 1 or n != int(n):
                    continue
                if lg == "zh" and _ZH_POSITION.search(text, 0, m.start()) and not _ZH_MAKES.search(text):
                    continue  # "示意图第6张，膝盖别超过脚尖": a position in the series ("再做第5张" makes one more)
                if lg == "ja" and _JA_OFF_BY.match(text, m.end()):
                    continue  # "白石が一つ多いです": one too many in a piece, no count of pieces
                if lg == "zh" and n == 1 and m.group().startswith("一"):
                    article = article or 1
                    continue
                return int(n)
    return article
