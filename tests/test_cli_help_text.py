"""`lomo --help`, every command's --help and argparse's own usage errors speak the creator's language (issue
#12 §5): the help texts are `[cli_help]` keys of the one catalogue; English reads exactly as before."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from conftest import lomo_in_language
from lomo_tui.cli.main import _parsers, build_parser
from lomo_tui.cli.wording import ARGPARSE_WORDS, Key, wrap
from lomo_tui.language import LANGUAGES
from lomo_tui.language.messages import catalogue

ENGLISH_TOP = """\
usage: lomo [-h] [--version] [--workspace DIR] [--db URL] [--model NAME] [--run-once [MESSAGE]]
            [--task TASK_ID] [--json] [--max-wait SECONDS]
            COMMAND ...

Lomo — a creative agent in your terminal. With no command, opens the TUI.

positional arguments:
  COMMAND
    worker              run the runtime headless until SIGTERM/SIGINT
    inspect             print the state document
    task                create, control, list, show or export tasks
    gates               list pending gates
    approve             approve a pending gate
    reject              reject a pending gate
    send                deliver a message (to Main, or --task) for a running TUI or worker to pick
                        up
    withdraw            withdraw (or replace) a message not yet read by its task
    context             show the prompt a task's next step would send (the main thread without
                        TASK_ID)
    memory              what Lomo remembers about you: list, show, forget
    stats               collaboration metrics from the ledgers: verified progress, duplicate work,
                        interruptions, recoveries

options:
  -h, --help            show this help message and exit
  --version             show program's version number and exit
  --workspace DIR       workspace folder (env LOMO_WORKSPACE)
  --db URL              SQLAlchemy async URL (env LOMO_DB_URL)
  --model NAME          model name (env LOMO_MODEL; default lomo/local)
  --run-once [MESSAGE]  deliver MESSAGE (optional; '-' reads it from stdin), run until quiescent,
                        print a report, exit
  --task TASK_ID        with --run-once: deliver straight to this task's inbox
  --json                print JSON
  --max-wait SECONDS    with --run-once: longest wait for embedded studio jobs (default 600)
"""
ENGLISH_FORGET = """\
usage: lomo memory forget [-h] [--workspace DIR] [--db URL] [--model NAME] [--json] [--query TEXT]
                          [--yes]
                          [ID]

positional arguments:
  ID               a memory id, or the id of a message of yours

options:
  -h, --help       show this help message and exit
  --workspace DIR  workspace folder (env LOMO_WORKSPACE)
  --db URL         SQLAlchemy async URL (env LOMO_DB_URL)
  --model NAME     model name (env LOMO_MODEL; default lomo/local)
  --json           print JSON
  --query TEXT     forget the memories that say TEXT
  --yes            forget without asking (it cannot be undone)
"""
# names, options and metavars that stay as they are in every language
KEEP = {"lomo", "usage", "help", "version", "workspace", "db", "model", "run", "once", "task", "json", "max", "wait",
        "dir", "url", "name", "message", "task_id", "seconds", "command", "lomo_workspace", "lomo_db_url",
        "lomo_model", "local", "sqlalchemy", "tui", "sigterm", "sigint", "worker", "inspect", "gates", "approve",
        "reject", "send", "withdraw", "context", "memory", "stats", "h", "id", "text", "all", "query", "yes",
        "main", "brief", "why", "goal", "ask", "plan", "auto", "format", "output", "md", "html", "file", "markdown",
        "o", "option", "replace", "since", "when", "m", "d", "w", "s", "stdin", "stdout", "action", "new", "stop",
        "pause", "resume", "promote", "archive", "unarchive", "list", "show", "export", "level", "title",
        "autonomy", "forget", "task_command", "memory_command", "gate_id", "message_id", "async", "n"}
WORD = re.compile(r"[A-Za-z_][A-Za-z_']*")


_lomo = lomo_in_language


def english(text: str) -> list[str]:
    text = re.sub(r"--?[\w-]+|\b\d+\w*\b", " ", text)
    return [w for w in WORD.findall(text) if w.lower() not in KEEP]


def test_english_help_reads_exactly_as_before(tmp_path: Path) -> None:
    top = _lomo(tmp_path, "en", "--help")
    assert (top.returncode, top.stdout, top.stderr) == (0, ENGLISH_TOP, "")
    forget = _lomo(tmp_path, "en", "memory", "forget", "--help")
    assert (forget.returncode, forget.stdout) == (0, ENGLISH_FORGET)


@pytest.mark.parametrize("lang,usage,words", [("zh", "用法：lomo", "显示此帮助并退出"),
                                              ("ja", "使い方：lomo", "このヘルプを表示して終了"),
                                              ("ru", "использование: lomo", "показать эту справку и выйти")])
def test_lomo_help_speaks_the_creators_language(tmp_path: Path, lang: str, usage: str, words: str) -> None:
    shown = _lomo(tmp_path, lang, "--help")
    assert shown.returncode == 0 and shown.stdout.startswith(usage) and words in shown.stdout, shown.stdout
    assert english(shown.stdout) == [], shown.stdout
    assert "positional arguments" not in shown.stdout and "options:" not in shown.stdout


def test_a_usage_error_speaks_the_creators_language_and_still_exits_2(tmp_path: Path) -> None:
    missing = _lomo(tmp_path, "zh", "task")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("用法：lomo task")
    assert "lomo task：错误：缺少必需的参数：操作" in missing.stderr  # the metavar as the usage line shows it
    assert "required" not in missing.stderr and "error" not in missing.stderr
    english_too = _lomo(tmp_path, "en", "--max-wait", "x")
    assert english_too.returncode == 2
    assert english_too.stderr.splitlines()[-1] == "lomo: error: argument --max-wait: invalid float value: 'x'"


def _every_help(lang: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    monkeypatch.setenv("LOMO_LANGUAGE", lang)
    monkeypatch.setenv("COLUMNS", "80")
    return [(p.prog, p.format_help()) for p in _parsers(build_parser())]


@pytest.mark.parametrize("lang", ["zh", "ja", "ru"])
def test_every_commands_help_has_no_english_words(lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    helps = _every_help(lang, monkeypatch)
    assert len(helps) > 25
    for prog, text in helps:
        assert english(text.replace(prog, " ")) == [], text


def test_every_help_text_is_a_catalogue_key() -> None:
    """A help or description written as English in code would not be worded: every one is a `Key`."""
    for parser in _parsers(build_parser()):
        assert parser.description is None or isinstance(parser.description, Key), parser.prog
        for action in parser._actions:
            texts = [action.help] + [a.help for a in getattr(action, "_choices_actions", [])]
            for text in texts:
                assert text in (None, argparse.SUPPRESS) or isinstance(text, Key) or text in ARGPARSE_WORDS, \
                    (parser.prog, text)


def test_the_help_section_has_the_same_keys_and_fields_in_every_language() -> None:
    english_section = catalogue("en")["cli_help"]
    for lang in LANGUAGES:
        section = catalogue(lang)["cli_help"]
        assert set(section) == set(english_section), lang
        for key, text in section.items():
            assert sorted(re.findall(r"{(\w+)}", text)) == sorted(re.findall(r"{(\w+)}", english_section[key])), key
            assert "%" not in text, (lang, key)  # argparse %-formats help texts


def test_wide_text_wraps_by_terminal_columns() -> None:
    lines = wrap("投递一条消息（给主线程，或 --task），由正在运行的 TUI 或 worker 取走", 20)
    assert "".join(lines).replace(" ", "") == "投递一条消息（给主线程，或--task），由正在运行的TUI或worker取走"
    assert all(sum(2 if "\u3000" <= ch <= "\uffef" or "\u4e00" <= ch <= "\u9fff" else 1 for ch in line) <= 20
               for line in lines), lines
    assert not any(line.startswith(("，", "）")) for line in lines), lines
