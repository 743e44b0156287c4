"""Palette families, and which one a prompt asks for."""
from __future__ import annotations

from dataclasses import dataclass

from ..language import KeywordTable as Table, most_mentioned as best

RGB = tuple[int, int, int]


def _hex(code: str) -> RGB:
    return (int(code[1:3], 16), int(code[3:5], 16), int(code[5:7], 16))


def mix(a: RGB, b: RGB, t: float) -> RGB:
    """Linear blend of two colours (t=0 gives a)."""
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


@dataclass(frozen=True)
class Palette:
    """The colours of one family; ``sky`` is a top-to-bottom gradient."""

    family: str
    sky: tuple[RGB, ...]
    far: RGB  # hills, skyline
    ground: RGB
    light: RGB  # sun, moon, snow caps
    accent: RGB  # stripes, dots, windows, neon lines
    subject: RGB  # silhouettes
    ink: RGB  # caption


def _palette(family: str, sky: str, far: str, ground: str, light: str, accent: str,
             subject: str, ink: str) -> Palette:
    return Palette(family, tuple(_hex(c) for c in sky.split()), _hex(far), _hex(ground),
                   _hex(light), _hex(accent), _hex(subject), _hex(ink))


PALETTES: dict[str, Palette] = {
    p.family: p
    for p in (
        _palette("warm", "#ffd27a #f59a3e #e8702a", "#c8581c", "#8f3d14", "#fff1c4", "#e0452b", "#4a1e08", "#fff1c4"),
        _palette("retro", "#f4e6c8 #efcf9a", "#d9683a", "#2f7f78", "#e2a12b", "#c9472c", "#4b3422", "#f4e6c8"),
        _palette("cool", "#1c5aa6 #5e9fe0 #a8d4f5", "#2f74b5", "#174a85", "#eef8ff", "#d8efff", "#0b2a4d", "#eef8ff"),
        _palette("night", "#03050f #0b1333 #1c2757", "#111a3c", "#070a18", "#eef1ff", "#fff6d8", "#02030a", "#c8d0ff"),
        _palette("pastel", "#ffe0f0 #f1dcff #dce4ff", "#ffe3cc", "#c9f0df", "#fff8c0", "#ffffff", "#c3b0ea", "#7a6aa8"),
        _palette("forest", "#b9dca0 #e3f1d2", "#4f8a43", "#2b5a27", "#f6fbe0", "#8cc56c", "#14301a", "#e3f1d2"),
        _palette("sunset", "#2e1752 #a02e77 #ff6f5e #ffb36b", "#5a2450", "#2a1233", "#ffe08a", "#ff9e5e", "#1c0b24", "#ffe2c8"),
        _palette("mono", "#ececec #a8a8a8 #6e6e6e", "#4a4a4a", "#232323", "#fafafa", "#111111", "#0c0c0c", "#f0f0f0"),
        _palette("neon", "#0a0018 #2b0a5c #a0177f", "#3d0a5c", "#33083f", "#ff2fb9", "#00f0ff", "#05000a", "#00f0ff"),
        _palette("neutral", "#ebe6dc #d2cbbd", "#aaa292", "#8d8779", "#fbf7ee", "#6f7d6a", "#4f4a42", "#2f2c27"),
    )
}

NEUTRAL = "neutral"

FAMILY_WORDS: Table = {
    "warm": ("warm*", "cozy", "cosy", "autumn*", "amber", "orange*", "golden", "gold", "fire",
             "fireplace", "campfire", "candle*", "honey", "温暖", "暖", "秋", "橙", "金色", "火",
             "暖かい", "温かい", "オレンジ", "тепл*", "уют*", "осен*", "оранжев*", "золот*",
             "огонь", "огн*", "янтар*"),
    "retro": ("retro*", "vintage", "70s", "1970s", "poster*", "sepia", "nostalgi*", "polaroid",
              "film", "old-school", "复古", "怀旧", "海报", "老式", "胶片", "レトロ", "ヴィンテージ",
              "ビンテージ", "懐かし", "ポスター", "昭和", "ретро", "винтаж*", "ностальг*", "плакат*",
              "постер*", "сепи*"),
    "cool": ("blue*", "cool", "cold", "ocean*", "sea", "seaside", "ice", "icy", "winter*",
             "water*", "frost*", "arctic", "蓝", "藍", "冷", "海", "冰", "冬", "水", "青", "冷たい",
             "氷", "сини*", "синя*", "сине*", "голуб*", "холод*", "море", "морск*", "океан*",
             "лед", "льд*", "зим*", "вода", "воды", "водн*"),
    "night": ("night*", "midnight", "moon*", "star", "starry", "starlight", "nocturn*", "夜",
              "月", "星", "晚上", "ноч*", "полноч*", "луна", "луну", "лунн*", "звезд*"),
    "pastel": ("pastel*", "soft", "dreamy", "cute", "kawaii", "candy", "pink", "lavender",
               "macaron*", "粉彩", "柔和", "可爱", "马卡龙", "粉色", "粉红", "パステル", "かわいい",
               "可愛い", "ゆめかわ", "淡い", "ピンク", "пастел*", "нежн*", "милый", "милая", "милое",
               "милые", "розов*"),
    "forest": ("forest*", "green*", "jungle*", "wood", "woodland*", "leaf", "leaves", "moss*",
               "nature", "garden*", "森林", "绿", "綠", "丛林", "树林", "森", "緑", "林",
               "ジャングル", "лес", "леса", "лесу", "лесн*", "зелен*", "джунгл*", "сад", "саду"),
    "sunset": ("sunset*", "sunrise*", "dusk", "dawn", "twilight", "golden hour", "evening",
               "日落", "夕阳", "黄昏", "晚霞", "日出", "夕焼け", "夕焼", "夕日", "日没", "朝焼け",
               "закат*", "рассвет*", "сумер*", "вечер*"),
    "mono": ("mono", "monochrom*", "black and white", "black-and-white", "b&w", "noir",
             "grayscale", "greyscale", "gray", "grey", "ink", "charcoal", "pencil", "黑白", "单色",
             "水墨", "素描", "モノクロ", "白黒", "墨", "ノワール", "鉛筆", "черно-бел*", "монохром*",
             "нуар", "карандаш*"),
    "neon": ("neon*", "cyberpunk", "synthwave", "vaporwave", "outrun", "glow*", "arcade",
             "laser*", "80s", "1980s", "霓虹", "赛博朋克", "赛博", "荧光", "ネオン", "サイバーパンク",
             "неон*", "киберпанк*", "синтвейв"),
}


def palette_family(prompt: str) -> str:
    """The palette family a prompt asks for (``neutral`` when it names none)."""
    return best(prompt, FAMILY_WORDS, NEUTRAL)


def palette_for(prompt: str) -> Palette:
    """The palette a prompt asks for."""
    return PALETTES[palette_family(prompt)]
