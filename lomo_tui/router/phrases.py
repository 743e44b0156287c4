"""What the router says on its choice cards (clarify gates), in the creator's language (en/zh/ja/ru).

Kept here rather than in `lomo_tui.language` because these texts belong to the product's routing (any
model triggers them), not to the offline model's replies.
"""
from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "which_task": {
        "en": "Which task is this for?",
        "zh": "这条消息是给哪个任务的？",
        "ja": "どのタスクへのメッセージですか？",
        "ru": "К какой задаче это относится?",
    },
    "duplicate": {
        "en": "This looks like “{title}”, which already exists. Add to it, or start a new task?",
        "zh": "这看起来和已有的任务“{title}”一样。要加到它里面，还是新建一个任务？",
        "ja": "既存のタスク「{title}」と同じ内容のようです。そこに追加しますか、それとも新しいタスクにしますか？",
        "ru": "Похоже на уже существующую задачу «{title}». Добавить к ней или начать новую?",
    },
    "unavailable": {
        "en": "“{title}” is {status}. Resume it with this message, start a new task, or cancel?",
        "zh": "任务“{title}”{status}。要恢复它并交给它这条消息、新建一个任务，还是取消？",
        "ja": "タスク「{title}」は{status}です。再開してこのメッセージを渡しますか、"
              "新しいタスクにしますか、それともキャンセルしますか？",
        "ru": "Задача «{title}» {status}. Возобновить её с этим сообщением, начать новую задачу или отменить?",
    },
    "missing": {
        "en": "I can't find that task. Start a new task with this message, or cancel?",
        "zh": "找不到这个任务。要用这条消息新建一个任务，还是取消？",
        "ja": "そのタスクが見つかりません。このメッセージで新しいタスクを始めますか、それともキャンセルしますか？",
        "ru": "Не могу найти эту задачу. Начать новую задачу с этим сообщением или отменить?",
    },
    "missing_file": {
        "en": "I can't find {files} in the workspace. Send your message to a task anyway, start a new task, or cancel?",
        "zh": "工作区里找不到 {files}。仍然把消息交给某个任务、新建一个任务，还是取消？",
        "ja": "ワークスペースに {files} が見つかりません。それでもタスクに送りますか、新しいタスクにしますか、"
              "それともキャンセルしますか？",
        "ru": "Не нахожу {files} в рабочей папке. Всё равно отправить сообщение в задачу, начать новую или отменить?",
    },
    "opt_task": {"en": "“{title}”", "zh": "“{title}”", "ja": "「{title}」", "ru": "«{title}»"},
    "opt_add": {"en": "Add to “{title}”", "zh": "加到“{title}”", "ja": "「{title}」に追加",
                "ru": "Добавить к «{title}»"},
    "opt_new": {"en": "A new task", "zh": "新建一个任务", "ja": "新しいタスク", "ru": "Новая задача"},
    "opt_resume": {"en": "Resume “{title}”", "zh": "恢复“{title}”", "ja": "「{title}」を再開",
                   "ru": "Возобновить «{title}»"},
    "opt_cancel": {"en": "Cancel", "zh": "取消", "ja": "キャンセル", "ru": "Отмена"},
    "goes_to": {"en": "your message goes to this task", "zh": "消息会交给这个任务",
                "ja": "メッセージはこのタスクに届きます", "ru": "сообщение уйдёт в эту задачу"},
    "starts_new": {"en": "starts “{title}” with your message", "zh": "用你的消息新建“{title}”",
                   "ja": "このメッセージで「{title}」を始めます", "ru": "начнёт «{title}» с вашим сообщением"},
    "resumes": {"en": "reopens the task and hands it your message", "zh": "重新打开任务并交给它这条消息",
                "ja": "タスクを再開してメッセージを渡します", "ru": "задача откроется снова и получит сообщение"},
    "nothing": {"en": "nothing is sent", "zh": "不发送", "ja": "何も送りません", "ru": "ничего не отправится"},
    "status_stopped": {"en": "stopped", "zh": "已停止", "ja": "停止中", "ru": "остановлена"},
    "status_archived": {"en": "archived", "zh": "已归档", "ja": "アーカイブ済み", "ru": "в архиве"},
    "status_failed": {"en": "failed", "zh": "已失败", "ja": "失敗", "ru": "завершилась с ошибкой"},
}


def say(key: str, lang: str, **fields: object) -> str:
    texts = TEXTS[key]
    return texts.get(lang, texts["en"]).format(**fields)
