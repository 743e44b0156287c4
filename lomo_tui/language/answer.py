"""Deterministic answers to simple questions, from facts the caller passes in (never the clock)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .arith import extract_expression, format_number, safe_eval
from .intent import Intent, courtesy_kinds
from .phrases import phrase
from .text import normalise

_WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
    "ja": ("月曜日", "火曜日", "水曜日", "木曜日", "金曜日", "土曜日", "日曜日"),
    "ru": ("понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье"),
}
_MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"),
    "ru": ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября",
           "октября", "ноября", "декабря"),
}
_STATUS = {  # task status -> zh, ja, ru (English uses the status itself)
    "running": ("进行中", "実行中", "в работе"), "active": ("进行中", "進行中", "активные"),
    "waiting": ("等待中", "待機中", "ждут"), "queued": ("排队中", "待ち行列", "в очереди"),
    "paused": ("已暂停", "一時停止中", "на паузе"), "blocked": ("受阻", "ブロック中", "заблокированы"),
    "suspended": ("挂起", "保留中", "приостановлены"), "done": ("已完成", "完了", "готовы"),
    "completed": ("已完成", "完了", "готовы"), "failed": ("失败", "失敗", "с ошибкой"),
    "stopped": ("已停止", "停止", "остановлены"), "archived": ("已归档", "アーカイブ済み", "в архиве"),
}
_STATUS_FORMAT = {"en": "{n} {status}", "zh": "{status} {n} 个", "ja": "{status} {n} 件", "ru": "{status}: {n}"}


def _date_text(now: datetime, lang: str) -> str:
    weekday = _WEEKDAYS.get(lang, _WEEKDAYS["en"])[now.weekday()]
    if lang == "zh":
        return f"{now.year}年{now.month}月{now.day}日，{weekday}"
    if lang == "ja":
        return f"{now.year}年{now.month}月{now.day}日（{weekday}）"
    if lang == "ru":
        return f"{weekday}, {now.day} {_MONTHS['ru'][now.month - 1]} {now.year} г."
    return f"{weekday}, {now.day} {_MONTHS['en'][now.month - 1]} {now.year}"


def _now(facts: Mapping[str, Any]) -> datetime | None:
    value = facts.get("now")
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _money(value: float, facts: Mapping[str, Any]) -> str:
    return f"{facts.get('currency', '$')}{float(value):.2f}"


def _status_counts(tasks: Any) -> dict[str, int] | None:
    """Accepts a count, a {status: count} mapping, or task records with a `status`."""
    if isinstance(tasks, bool):
        return None
    if isinstance(tasks, int):
        return {"": tasks}
    if isinstance(tasks, Mapping):
        return {str(k): int(v) for k, v in tasks.items()}
    if isinstance(tasks, Iterable) and not isinstance(tasks, (str, bytes)):
        counts: dict[str, int] = {}
        for task in tasks:
            status = task.get("status") if isinstance(task, Mapping) else getattr(task, "status", None)
            counts[str(status or "")] = counts.get(str(status or ""), 0) + 1
        return counts
    return None


def _tasks_text(tasks: Any, lang: str) -> str | None:
    counts = _status_counts(tasks)
    if counts is None:
        return None
    total = sum(counts.values())
    if total == 0:
        return phrase("tasks_none", lang)
    column = {"zh": 0, "ja": 1, "ru": 2}.get(lang)
    parts = [_STATUS_FORMAT.get(lang, _STATUS_FORMAT["en"]).format(
                 n=n, status=_STATUS[s][column] if column is not None and s in _STATUS else s)
             for s, n in counts.items() if s and n]
    if not parts:
        return phrase("tasks_total", lang, total=total)
    return phrase("tasks_count", lang, total=total, breakdown=phrase("list_sep", lang).join(parts))


def answer_simple(text: str, intent: Intent, facts: Mapping[str, Any]) -> str | None:
    """Greetings, thanks, help, arithmetic, time/date (from facts["now"]), today's spend
    (facts["spent_today"], facts["daily_cap"]) and task counts (facts["tasks"]), in the creator's
    language; None when the message needs a real model."""
    lang = intent.language
    if intent.act in ("greeting", "thanks"):
        kinds, _ = courtesy_kinds(normalise(text), lang)
        kind = next((k for k in ("thanks", "praise", "farewell", "greeting", "chat", "ack") if k in kinds), intent.act)
        return phrase(kind, lang)
    if intent.act == "help":
        return phrase(intent.act, lang)
    if intent.act != "question":
        return None
    if intent.topic == "math":
        expression = extract_expression(normalise(text), lang)
        value = safe_eval(expression) if expression else None
        return None if value is None else phrase("math_result", lang, expr=expression, result=format_number(value))
    if intent.topic in ("time", "date"):
        now = _now(facts)
        if now is None:
            return None
        if intent.topic == "time":
            return phrase("time_now", lang, time=now.strftime("%H:%M"))
        return phrase("date_today", lang, date=_date_text(now, lang))
    if intent.topic == "spend" and facts.get("spent_today") is not None:
        spent, cap = float(facts["spent_today"]), facts.get("daily_cap")
        if cap is None:
            return phrase("spent_today", lang, spent=_money(spent, facts))
        return phrase("spent_today_cap", lang, spent=_money(spent, facts), cap=_money(cap, facts),
                      left=_money(max(float(cap) - spent, 0.0), facts))
    if intent.topic == "tasks" and facts.get("tasks") is not None:
        return _tasks_text(facts["tasks"], lang)
    return None
