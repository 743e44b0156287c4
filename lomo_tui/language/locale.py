"""The creator's language from the environment's locale, for text that belongs to no task (CLI errors)."""
from __future__ import annotations

from collections.abc import Mapping

SPOKEN = ("zh", "ja", "ru")  # besides English
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")  # POSIX precedence: the first one set decides


def locale_language(env: Mapping[str, str]) -> str:
    """"zh", "ja" or "ru" when ENV's locale is one of those (zh_CN.UTF-8, ja_JP, ru_RU.KOI8-R…), else "en"."""
    for name in LOCALE_VARIABLES:
        value = (env.get(name) or "").strip()
        if value:
            code = value.split(".")[0].split("@")[0].split("_")[0].split("-")[0].lower()
            return code if code in SPOKEN else "en"
    return "en"
