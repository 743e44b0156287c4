"""`lomo --help` in the creator's language: help texts are catalogue keys (`[cli_help]`), worded when shown.

A parser's descriptions and option helps are `Key`s (`helped("workspace")`), plain strings to argparse. The
help formatter words them, argparse's own words ("usage:", "options", "show this help message and
exit"…) and the metavars (`[cli_metavar]`: "--workspace DIR" → "--workspace 文件夹", the help column placed by
terminal columns), in the creator's language (config `language` / env `LOMO_LANGUAGE`, else the locale) only when
help or usage is printed: building the parser reads no catalogue and imports nothing.
"""
from __future__ import annotations

import argparse
import re
import unicodedata
from functools import cached_property
from typing import Any

SECTION = "cli_help"
METAVARS = "cli_metavar"  # a metavar's words ("DIR" → "文件夹") by the metavar as the code names it
# argparse's own English words (its gettext msgids) → the catalogue key that words them
ARGPARSE_WORDS = {
    "usage: ": "usage",
    "positional arguments": "positionals",
    "options": "options",
    "optional arguments": "options",
    "show this help message and exit": "help",
    "show program's version number and exit": "version",
}

# argparse's own English error lines (after "argument NAME: " where it names one) → the catalogue key, its fields
ARGPARSE_ERRORS = {
    r"the following arguments are required: (?P<names>.+)": "required",
    r"unrecognized arguments: (?P<words>.+)": "unrecognized",
    r"argument (?P<name>\S+): expected one argument": "expected_one",
    r"argument (?P<name>\S+): expected at most one argument": "expected_at_most_one",
    r"argument (?P<name>\S+): expected at least one argument": "expected_at_least_one",
    r"argument (?P<name>\S+): invalid (?P<kind>\S+) value: (?P<value>.+)": "invalid_value",
    r"argument (?P<name>\S+): ignored explicit argument (?P<value>.+)": "explicit_value",
}


def metavar(name: str, lang: str) -> str:
    """The metavar NAME ("DIR", "task_id") in LANG (`[cli_metavar]`); a choice list or an unknown name as it is."""
    from ..language import template

    try:
        return template(f"{METAVARS}.{name}", lang)
    except KeyError:
        return name


def error_line(text: str, lang: str) -> str:
    """argparse's English error TEXT worded in LANG (TEXT as it is when it is none of ARGPARSE_ERRORS); the
    arguments it names read as the help's usage line shows them (a metavar in LANG, an option as it is)."""
    for pattern, name in ARGPARSE_ERRORS.items():
        found = re.fullmatch(pattern, text, re.S)
        if found:
            from ..language import message

            fields = dict(found.groupdict())
            for field in ("name", "names"):
                if field in fields:
                    fields[field] = ", ".join(metavar(n, lang) for n in fields[field].split(", "))
            return message(f"{SECTION}.{name}", lang, **fields)
    return text


class Key(str):
    """A `[cli_help]` key standing in for its text until help is shown."""


def helped(name: str) -> Key:
    """The help text `cli_help.NAME`, worded when shown."""
    return Key(f"{SECTION}.{name}")


_CLOSING = "，。、；：）」』！？》】,.;:)!?"


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def _width(text: str) -> int:
    return sum(2 if _wide(ch) else 1 for ch in text)


def wrap(text: str, width: int) -> list[str]:
    """TEXT in lines of at most WIDTH terminal columns, broken at spaces and between wide (CJK) characters."""
    tokens: list[str] = []  # words, single wide characters, and " " between words
    for ch in text:
        if ch.isspace():
            if tokens and tokens[-1] != " ":
                tokens.append(" ")
        elif ch in _CLOSING and tokens and tokens[-1] != " ":
            tokens[-1] += ch  # a closing mark stays with what it closes
        elif _wide(ch) or not tokens or tokens[-1] == " " or _wide(tokens[-1][-1]):
            tokens.append(ch)
        else:
            tokens[-1] += ch
    lines: list[str] = []
    line, used, space = "", 0, False
    for token in tokens:
        if token == " ":
            space = bool(line)
            continue
        need = _width(token) + (1 if space else 0)
        if line and used + need > width:
            lines.append(line)
            line, used = token, _width(token)
        else:
            line, used = line + (" " if space else "") + token, used + need
        space = False
    return lines + ([line] if line else [])


class LomoHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, wording `Key`s and argparse's own words from the catalogue."""

    class _Section(argparse.HelpFormatter._Section):  # type: ignore[name-defined]
        """argparse's section, its heading ended by the language's colon ("选项：", `[wording] colon`)."""

        def format_help(self) -> str:
            text = super().format_help()
            heading = self.heading
            if not isinstance(heading, str) or heading is argparse.SUPPRESS or not text:
                return text
            from ..language import template

            colon = template("wording.colon", self.formatter.language)
            mark = f"{heading}:\n"
            return text.replace(mark, f"{heading}{colon}\n", 1) if colon != ":" else text

    @cached_property
    def language(self) -> str:
        from .main import cli_language

        return cli_language()

    def word(self, text: Any) -> Any:
        """TEXT in the creator's language: a `Key` or one of argparse's own words; anything else as it is."""
        if isinstance(text, Key):
            key = str(text)
        elif isinstance(text, str) and text in ARGPARSE_WORDS:
            key = f"{SECTION}.{ARGPARSE_WORDS[text]}"
        else:
            return text
        from ..language import template

        return template(key, self.language)

    def _metavar_formatter(self, action: argparse.Action, default_metavar: str) -> Any:
        worded = super()._metavar_formatter(action, default_metavar)
        return lambda size: tuple(metavar(m, self.language) for m in worded(size))

    def add_argument(self, action: argparse.Action) -> None:
        """As argparse's, with the help column placed by terminal columns (a wide metavar takes two each)."""
        super().add_argument(action)
        if action.help is not argparse.SUPPRESS:
            invocations = [self._format_action_invocation(action)]
            invocations += [self._format_action_invocation(a) for a in self._iter_indented_subactions(action)]
            self._action_max_length = max(self._action_max_length,
                                          max(map(_width, invocations)) + self._current_indent)

    def _format_action(self, action: argparse.Action) -> str:
        """As argparse's, its help aligned by terminal columns when the invocation holds wide characters."""
        text = super()._format_action(action)
        invocation = self._format_action_invocation(action)
        extra = _width(invocation) - len(invocation)
        head, sep, rest = text.partition("\n")
        start = self._current_indent + len(invocation)
        if extra and head[self._current_indent:start] == invocation and head[start:start + extra + 2].isspace():
            head = head[:start] + head[start + extra:]
        return head + sep + rest

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, self.word("usage: ") if prefix is None else prefix)

    def _format_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None) -> str:
        """argparse's usage, its wrapped lines aligned under a prefix of wide characters ("用法：") and kept
        within the terminal's columns where a metavar is wide ("[--workspace 目录]")."""
        extra = _width(prefix) - len(prefix) if prefix else 0
        width, shrink = self._width, extra
        try:
            for _ in range(4):  # argparse wraps by characters: narrow it until the widest line fits
                self._width = width - shrink
                text = super()._format_usage(usage, actions, groups, prefix)
                over = max(_width(line) + (extra if n and line.startswith(" ") else 0)
                           for n, line in enumerate(text.rstrip("\n").split("\n"))) - width
                if over <= 0 or self._width < 20:
                    break
                shrink += over
        finally:
            self._width = width
        if not extra:
            return text
        return "\n".join(" " * extra + line if n and line.startswith(" ") else line
                         for n, line in enumerate(text.split("\n")))

    def start_section(self, heading: Any) -> None:
        super().start_section(self.word(heading))

    def add_text(self, text: Any) -> None:
        super().add_text(self.word(text))

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return self.word(action.help)

    def _split_lines(self, text: str, width: int) -> list[str]:
        if _width(text) == len(text):
            return super()._split_lines(text, width)
        return wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if _width(text) == len(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrap(text, width - len(indent)))
