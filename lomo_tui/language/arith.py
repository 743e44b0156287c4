"""Safe arithmetic: find an expression in a question and evaluate it through `ast` (never eval)."""
from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from .lexicon import MATH_OPERATORS, MATH_WORDS
from .text import LazyRe, compile_entries

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_CHARS = 200
_MAX_ABS = 1e300
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-"})
_CANDIDATE = LazyRe(r"[\d.\s()+\-*/%]+")
_BINARY_OP = LazyRe(r"(?:\d|\))\s*(?:\*\*|[-+*/%])\s*(?:\d|\(|-)")
_PERCENT_OF = LazyRe(r"(?P<p>\d+(?:\.\d+)?)\s*%\s*(?:of|от|из)\s+(?P<n>\d+(?:\.\d+)?)")
_OF_PERCENT = LazyRe(r"(?P<n>\d+(?:\.\d+)?)\s*(?:的|の)\s*(?P<p>\d+(?:\.\d+)?)\s*[%％]")
_PUNCT = LazyRe(r"[\s?？=＝!！.。,，:：、]+")


class _Refused(Exception):
    """The expression is outside the safe subset or too large."""


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (
                abs(right) > 1000 or (abs(left) > 1 and abs(right) * math.log10(abs(left)) > 300)):
            raise _Refused
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, complex) or abs(result) > _MAX_ABS:
            raise _Refused
        return result
    raise _Refused


def safe_eval(expression: str) -> float | None:
    """Numbers, + - * / ** % and parentheses only; None for anything else, huge or undefined."""
    if len(expression) > _MAX_CHARS:
        return None
    try:
        return _eval(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError,
            MemoryError, _Refused):
        return None


def format_number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}" if isinstance(value, float) else str(value)


def extract_expression(text: str, lang: str) -> str | None:
    """The arithmetic expression a message asks about, when that is all it asks ("what is 12*7?",
    "3加4等于几", "сколько будет 2+2"); None when other words remain ("3-4 posters")."""
    t = text.translate(_SYMBOLS).replace("^", "**")
    t = _PERCENT_OF.sub(lambda m: f" ({m['p']} / 100 * {m['n']}) ", t)  # "15% of 240", "15% от 240"
    t = _OF_PERCENT.sub(lambda m: f" ({m['p']} / 100 * {m['n']}) ", t)  # "240的15%"
    for lg in dict.fromkeys((lang, "en")):
        for word, symbol in MATH_OPERATORS.get(lg, ()):
            t = re.sub(rf"(?<=[\d)\s]){re.escape(word)}(?=[\s\d(-])", f" {symbol} ", t)
    candidates = [m for m in _CANDIDATE.finditer(t) if _BINARY_OP.search(m.group())]
    if not candidates:
        return None
    best = max(candidates, key=lambda m: len(m.group().strip()))
    rest = t[:best.start()] + " " + t[best.end():]
    words = compile_entries(tuple(MATH_WORDS.get(lang, ())) + MATH_WORDS["en"])
    if words is not None:
        rest = words.sub(" ", rest)
    return best.group().strip() if not _PUNCT.sub("", rest) else None
