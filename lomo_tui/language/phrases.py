"""Localized reply templates (en/zh/ja/ru). Every key exists in every language with the same fields."""
from __future__ import annotations

PHRASES: dict[str, dict[str, str]] = {
    # --- conversation ---------------------------------------------------------------------
    "greeting": {
        "en": "Hi! What shall we make today?",
        "zh": "你好！今天想做点什么？",
        "ja": "こんにちは！今日は何を作りましょうか？",
        "ru": "Привет! Что сегодня сделаем?",
    },
    "thanks": {
        "en": "You're welcome!",
        "zh": "不客气！",
        "ja": "どういたしまして！",
        "ru": "Пожалуйста!",
    },
    "praise": {
        "en": "Glad you like it!",
        "zh": "很高兴你喜欢！",
        "ja": "気に入ってもらえてよかったです！",
        "ru": "Рад, что нравится!",
    },
    "ack": {
        "en": "OK.",
        "zh": "好的。",
        "ja": "了解です。",
        "ru": "Хорошо.",
    },
    "chat": {
        "en": "I'm here whenever you want to make something.",
        "zh": "我一直在，想做点什么随时说。",
        "ja": "いつでもどうぞ。作りたいものがあれば言ってください。",
        "ru": "Я здесь — скажите, когда захотите что-нибудь сделать.",
    },
    "farewell": {
        "en": "See you! Your tasks keep going while you're away.",
        "zh": "回头见！你离开时任务会继续进行。",
        "ja": "またね！離れている間もタスクは進みます。",
        "ru": "До встречи! Задачи продолжат работу, пока вас нет.",
    },
    "help": {
        "en": "I'm Lomo, a creative studio in your terminal. Ask for a picture, a clip, a 3D object, "
              "audio or a document and I'll make it; bigger goals (a poster series, a storyboard, a flow "
              "edit) become tasks with a plan and a checklist that keep going across restarts. I stop at "
              "gates to ask before spending money, deleting or overwriting your edits. Everything lands in "
              "your workspace as files you can open in your own editor. Try: “a retro poster series for a "
              "jazz night”.",
        "zh": "我是 Lomo，住在终端里的创作工作室。想要图片、短片、3D 物件、音频或文档，直接说就行；更大的目标"
              "（海报系列、分镜、流程修改）会变成任务，带计划和清单，重启后也会继续。花钱、删除或覆盖你的修改之前，"
              "我会在关卡处先问你。所有成果都以文件形式放在工作区，可以用你自己的编辑器打开。试试：“做一组爵士之夜的复古海报”。",
        "ja": "Lomo です。ターミナルの中のクリエイティブスタジオです。画像、短い動画、3D オブジェクト、音声、文書を"
              "頼まれれば作ります。大きな目標（ポスターシリーズ、絵コンテ、フローの編集）はタスクになり、計画とチェック"
              "リストを持って再起動後も続きます。お金を使う前や削除・上書きの前には、ゲートで必ず確認します。成果物は"
              "すべてワークスペースのファイルになり、お好きなエディタで開けます。例：「ジャズナイトのレトロなポスターシリーズ」。",
        "ru": "Я Lomo — творческая студия прямо в терминале. Попросите картинку, ролик, 3D-объект, звук или "
              "документ — и я сделаю; большие цели (серия постеров, раскадровка, правка флоу) становятся задачами "
              "с планом и чек-листом и продолжаются после перезапуска. Перед тратами, удалением или перезаписью "
              "ваших правок я останавливаюсь на шлюзе и спрашиваю. Всё сохраняется в рабочей папке в виде файлов, "
              "которые можно открыть в своём редакторе. Попробуйте: «серия ретро-постеров для джазового вечера».",
    },
    "cannot_answer": {
        "en": "I can't answer that offline: the built-in lomo/local model only plans creative work. "
              "Configure a model with --model (for example `lomo --model openai/gpt-4o`) for open questions.",
        "zh": "离线状态下我回答不了这个问题：内置的 lomo/local 模型只负责规划创作。"
              "如需回答开放性问题，请用 --model 配置一个模型（例如 `lomo --model openai/gpt-4o`）。",
        "ja": "オフラインではお答えできません。内蔵の lomo/local モデルは制作の計画専用です。"
              "自由な質問には --model でモデルを設定してください（例：`lomo --model openai/gpt-4o`）。",
        "ru": "Офлайн я не могу на это ответить: встроенная модель lomo/local только планирует творческую "
              "работу. Для свободных вопросов подключите модель через --model (например, "
              "`lomo --model openai/gpt-4o`).",
    },
    # --- tasks ----------------------------------------------------------------------------
    "started_task": {
        "en": "Started a task: {title}.",
        "zh": "已创建任务：{title}。",
        "ja": "タスクを開始しました：{title}。",
        "ru": "Задача создана: {title}.",
    },
    "plan_ready": {
        "en": "The plan for {title} is ready: {steps} steps.",
        "zh": "{title} 的计划已就绪：共 {steps} 步。",
        "ja": "{title} の計画ができました：{steps} ステップです。",
        "ru": "План для «{title}» готов: шагов — {steps}.",
    },
    "ask_approve_plan": {
        "en": "Approve this plan ({steps} steps, estimated {cost})?",
        "zh": "批准这个计划吗？（{steps} 步，预计 {cost}）",
        "ja": "この計画で進めてよいですか？（{steps} ステップ、見込み {cost}）",
        "ru": "Утвердить план? (шагов: {steps}, примерно {cost})",
    },
    "generating": {
        "en": "Generating {what}…",
        "zh": "正在生成{what}……",
        "ja": "{what}を生成しています…",
        "ru": "Генерирую: {what}…",
    },
    "result_ready": {
        "en": "{what} is ready: {path}",
        "zh": "{what}已完成：{path}",
        "ja": "{what}ができました：{path}",
        "ru": "Готово — {what}: {path}",
    },
    "all_done": {
        "en": "All done: {title}.",
        "zh": "全部完成：{title}。",
        "ja": "すべて完了しました：{title}。",
        "ru": "Всё готово: {title}.",
    },
    "ask_which_task": {
        "en": "Which task do you mean?",
        "zh": "你指的是哪个任务？",
        "ja": "どのタスクのことですか？",
        "ru": "Какую задачу вы имеете в виду?",
    },
    "ask_source_image": {
        "en": "Which image should I start from?",
        "zh": "要用哪张图片作为素材？",
        "ja": "どの画像を元にしますか？",
        "ru": "С какого изображения начать?",
    },
    "ask_which_flow": {
        "en": "Which flow should I edit?",
        "zh": "要修改哪个流程？",
        "ja": "どのフローを編集しますか？",
        "ru": "Какой флоу править?",
    },
    "opt_latest_image": {
        "en": "The most recent image",
        "zh": "最近的一张图片",
        "ja": "いちばん新しい画像",
        "ru": "Последнее изображение",
    },
    "opt_pick_file": {
        "en": "Let me pick a file",
        "zh": "我来选文件",
        "ja": "ファイルを選ぶ",
        "ru": "Я выберу файл",
    },
    "stopped": {
        "en": "Stopped: {title}.",
        "zh": "已停止：{title}。",
        "ja": "停止しました：{title}。",
        "ru": "Остановлено: {title}.",
    },
    "paused": {
        "en": "Paused: {title}. Say “resume” when you want it to continue.",
        "zh": "已暂停：{title}。想继续时说“恢复”即可。",
        "ja": "一時停止しました：{title}。続けるときは「再開」と言ってください。",
        "ru": "Пауза: {title}. Скажите «возобнови», чтобы продолжить.",
    },
    "resumed": {
        "en": "Resumed: {title}.",
        "zh": "已恢复：{title}。",
        "ja": "再開しました：{title}。",
        "ru": "Возобновлено: {title}.",
    },
    "unknown_task": {
        "en": "I can't find that task.",
        "zh": "找不到这个任务。",
        "ja": "そのタスクが見つかりません。",
        "ru": "Не могу найти эту задачу.",
    },
    "conflict_reread": {
        "en": "{path} changed since I read it; I'm re-reading it and keeping your edits.",
        "zh": "{path} 在我读取之后被修改了；我会重新读取并保留你的修改。",
        "ja": "{path} は読み込んだ後に変更されました。読み直して、あなたの編集を残します。",
        "ru": "{path} изменился после чтения; перечитываю его и сохраняю ваши правки.",
    },
    # --- simple answers -------------------------------------------------------------------
    "spent_today": {
        "en": "You've spent {spent} today.",
        "zh": "今天已花费 {spent}。",
        "ja": "今日の支出は {spent} です。",
        "ru": "Сегодня потрачено {spent}.",
    },
    "spent_today_cap": {
        "en": "You've spent {spent} today of the {cap} daily cap ({left} left).",
        "zh": "今天已花费 {spent}，每日上限 {cap}（还剩 {left}）。",
        "ja": "今日の支出は {spent} です。1日の上限は {cap}（残り {left}）。",
        "ru": "Сегодня потрачено {spent} из дневного лимита {cap} (осталось {left}).",
    },
    "time_now": {
        "en": "It's {time}.",
        "zh": "现在是 {time}。",
        "ja": "今は {time} です。",
        "ru": "Сейчас {time}.",
    },
    "date_today": {
        "en": "Today is {date}.",
        "zh": "今天是{date}。",
        "ja": "今日は{date}です。",
        "ru": "Сегодня {date}.",
    },
    "math_result": {
        "en": "{expr} = {result}",
        "zh": "{expr} = {result}",
        "ja": "{expr} = {result}",
        "ru": "{expr} = {result}",
    },
    "tasks_count": {
        "en": "You have {total} tasks: {breakdown}.",
        "zh": "你共有 {total} 个任务：{breakdown}。",
        "ja": "タスクは {total} 件です：{breakdown}。",
        "ru": "Задач: {total} — {breakdown}.",
    },
    "tasks_total": {
        "en": "You have {total} tasks.",
        "zh": "你共有 {total} 个任务。",
        "ja": "タスクは {total} 件です。",
        "ru": "Задач: {total}.",
    },
    "tasks_none": {
        "en": "You have no tasks yet.",
        "zh": "目前还没有任务。",
        "ja": "まだタスクはありません。",
        "ru": "Задач пока нет.",
    },
    # --- checklist titles -----------------------------------------------------------------
    "step_poster": {
        "en": "Poster {n} of {total}",
        "zh": "海报 {n}/{total}",
        "ja": "ポスター {n}/{total}",
        "ru": "Постер {n} из {total}",
    },
    "step_image_n": {
        "en": "Image {n} of {total}",
        "zh": "图片 {n}/{total}",
        "ja": "画像 {n}/{total}",
        "ru": "Изображение {n} из {total}",
    },
    "step_review_series": {
        "en": "Review the series",
        "zh": "检查整组作品",
        "ja": "シリーズ全体を確認",
        "ru": "Проверить серию",
    },
    "step_pick_source": {
        "en": "Pick the source image",
        "zh": "选定素材图片",
        "ja": "元画像を選ぶ",
        "ru": "Выбрать исходное изображение",
    },
    "step_keyframe": {
        "en": "Key frame",
        "zh": "关键帧",
        "ja": "キーフレーム",
        "ru": "Ключевой кадр",
    },
    "step_video": {
        "en": "{seconds}-second clip",
        "zh": "{seconds} 秒视频",
        "ja": "{seconds}秒の動画",
        "ru": "Ролик на {seconds} с",
    },
    "step_concept": {
        "en": "Concept image",
        "zh": "概念图",
        "ja": "コンセプト画像",
        "ru": "Концепт-изображение",
    },
    "step_model3d": {
        "en": "3D model",
        "zh": "3D 模型",
        "ja": "3D モデル",
        "ru": "3D-модель",
    },
    "step_storyboard": {
        "en": "Write the storyboard ({shots} shots)",
        "zh": "编写分镜（{shots} 个镜头）",
        "ja": "絵コンテを書く（{shots} カット）",
        "ru": "Написать раскадровку ({shots} кадров)",
    },
    "step_shot_frame": {
        "en": "Key frame for shot {n} of {total}",
        "zh": "镜头 {n}/{total} 的关键帧",
        "ja": "カット {n}/{total} のキーフレーム",
        "ru": "Ключевой кадр сцены {n} из {total}",
    },
    "step_pick_flow": {
        "en": "Choose the flow",
        "zh": "选择流程",
        "ja": "フローを選ぶ",
        "ru": "Выбрать флоу",
    },
    "step_read_flow": {
        "en": "Read the flow",
        "zh": "读取流程",
        "ja": "フローを読む",
        "ru": "Прочитать флоу",
    },
    "step_edit_flow": {
        "en": "Edit the flow nodes",
        "zh": "修改流程节点",
        "ja": "フローのノードを編集",
        "ru": "Изменить узлы флоу",
    },
    "step_audio": {
        "en": "Audio",
        "zh": "音频",
        "ja": "音声",
        "ru": "Аудио",
    },
    "step_document": {
        "en": "Write the draft",
        "zh": "撰写草稿",
        "ja": "下書きを書く",
        "ru": "Написать черновик",
    },
    "step_plan": {
        "en": "Write the plan",
        "zh": "写出计划",
        "ja": "計画を書く",
        "ru": "Составить план",
    },
    "step_image": {
        "en": "Image",
        "zh": "图片",
        "ja": "画像",
        "ru": "Изображение",
    },
    "step_video_plain": {
        "en": "Video",
        "zh": "视频",
        "ja": "動画",
        "ru": "Видео",
    },
    "step_revise": {
        "en": "Revise the last result",
        "zh": "修改上一个结果",
        "ja": "前の結果を修正",
        "ru": "Доработать последний результат",
    },
    "step_review": {
        "en": "Review the result",
        "zh": "检查成果",
        "ja": "結果を確認",
        "ru": "Проверить результат",
    },
    # --- prompt fragments -----------------------------------------------------------------
    "prompt_poster": {
        "en": "poster {n} of {total}",
        "zh": "海报 {n}/{total}",
        "ja": "ポスター {n}/{total}",
        "ru": "постер {n} из {total}",
    },
    "prompt_image_n": {
        "en": "image {n} of {total}",
        "zh": "图片 {n}/{total}",
        "ja": "画像 {n}/{total}",
        "ru": "изображение {n} из {total}",
    },
    "prompt_n": {
        "en": "{n} of {total}",
        "zh": "{n}/{total}",
        "ja": "{n}/{total}",
        "ru": "{n} из {total}",
    },
    "prompt_keyframe": {
        "en": "key frame",
        "zh": "关键帧",
        "ja": "キーフレーム",
        "ru": "ключевой кадр",
    },
    "prompt_concept": {
        "en": "concept art, front view, plain background",
        "zh": "概念图，正视图，纯色背景",
        "ja": "コンセプトアート、正面図、無地の背景",
        "ru": "концепт-арт, вид спереди, однотонный фон",
    },
    "prompt_shot": {
        "en": "shot {n} of {total}",
        "zh": "镜头 {n}/{total}",
        "ja": "カット {n}/{total}",
        "ru": "кадр {n} из {total}",
    },
    "prompt_matching": {
        "en": "{what} to match {subject}",
        "zh": "与{subject}相配的{what}",
        "ja": "{subject}に合わせた{what}",
        "ru": "{what} в пару к: {subject}",
    },
    "prompt_key_visual": {
        "en": "key visual",
        "zh": "主视觉",
        "ja": "キービジュアル",
        "ru": "ключевой визуал",
    },
    # --- brief ----------------------------------------------------------------------------
    "brief_request": {"en": "Request", "zh": "原始需求", "ja": "依頼", "ru": "Запрос"},
    "brief_goal": {"en": "Goal", "zh": "目标", "ja": "目標", "ru": "Цель"},
    "brief_deliverables": {"en": "Deliverables", "zh": "交付物", "ja": "成果物", "ru": "Результат"},
    "brief_style": {"en": "Style", "zh": "风格", "ja": "スタイル", "ru": "Стиль"},
    "brief_constraints": {"en": "Constraints", "zh": "约束", "ja": "制約", "ru": "Ограничения"},
    "brief_files": {"en": "Files", "zh": "文件", "ja": "ファイル", "ru": "Файлы"},
    "brief_open": {"en": "not specified", "zh": "未指定", "ja": "指定なし", "ru": "не указано"},
    "quote": {"en": "“{text}”", "zh": "“{text}”", "ja": "「{text}」", "ru": "«{text}»"},
    "list_sep": {"en": ", ", "zh": "、", "ja": "、", "ru": ", "},
    "n_of": {"en": "{n} × {what}", "zh": "{n} 个{what}", "ja": "{what} × {n}", "ru": "{what} × {n}"},
    "duration": {"en": "{seconds} s", "zh": "{seconds} 秒", "ja": "{seconds} 秒", "ru": "{seconds} с"},
    "needs_source": {"en": "starts from an existing image", "zh": "基于已有图片", "ja": "既存の画像から作る",
                     "ru": "на основе существующего изображения"},
    "goal_poster_series": {"en": "Poster series", "zh": "海报系列", "ja": "ポスターシリーズ", "ru": "Серия постеров"},
    "goal_short_clip": {"en": "Short clip", "zh": "短片", "ja": "短い動画", "ru": "Короткий ролик"},
    "goal_3d_object": {"en": "3D object", "zh": "3D 物件", "ja": "3D オブジェクト", "ru": "3D-объект"},
    "goal_storyboard": {"en": "Storyboard", "zh": "分镜", "ja": "絵コンテ", "ru": "Раскадровка"},
    "goal_flow_edit": {"en": "Flow edit", "zh": "流程修改", "ja": "フローの編集", "ru": "Правка флоу"},
    "goal_audio_piece": {"en": "Audio piece", "zh": "音频作品", "ja": "音声作品", "ru": "Аудио"},
    "goal_document": {"en": "Document", "zh": "文档", "ja": "文書", "ru": "Документ"},
    "goal_general": {"en": "Project", "zh": "项目", "ja": "プロジェクト", "ru": "Проект"},
    "goal_one_shot": {"en": "One piece", "zh": "单件作品", "ja": "単発の制作", "ru": "Одна работа"},
    "goal_revise": {"en": "Revision", "zh": "修改", "ja": "修正", "ru": "Доработка"},
    "media_image": {"en": "image", "zh": "图片", "ja": "画像", "ru": "изображение"},
    "media_poster": {"en": "poster", "zh": "海报", "ja": "ポスター", "ru": "постер"},
    "media_video": {"en": "video", "zh": "视频", "ja": "動画", "ru": "видео"},
    "media_3d": {"en": "3D model", "zh": "3D 模型", "ja": "3D モデル", "ru": "3D-модель"},
    "media_audio": {"en": "audio", "zh": "音频", "ja": "音声", "ru": "аудио"},
    "media_document": {"en": "document", "zh": "文档", "ja": "文書", "ru": "документ"},
    "media_flow": {"en": "flow", "zh": "流程", "ja": "フロー", "ru": "флоу"},
    "media_shot": {"en": "storyboard shot", "zh": "分镜镜头", "ja": "カット", "ru": "кадр раскадровки"},
    # --- storyboard file ------------------------------------------------------------------
    "sb_title": {"en": "Storyboard: {subject}", "zh": "分镜：{subject}", "ja": "絵コンテ：{subject}",
                 "ru": "Раскадровка: {subject}"},
    "sb_shot": {"en": "Shot {n}", "zh": "镜头 {n}", "ja": "カット {n}", "ru": "Кадр {n}"},
    "sb_fields": {
        "en": "- Duration: {seconds} s\n- Frame: {frame}\n- Action: {action}\n- Sound: {sound}",
        "zh": "- 时长：{seconds} 秒\n- 画面：{frame}\n- 动作：{action}\n- 声音：{sound}",
        "ja": "- 長さ：{seconds} 秒\n- 画面：{frame}\n- 動き：{action}\n- 音：{sound}",
        "ru": "- Длительность: {seconds} с\n- Кадр: {frame}\n- Действие: {action}\n- Звук: {sound}",
    },
}


class _Fields(dict):
    """Leaves unknown placeholders visible instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def phrase(key: str, lang: str, **fields: object) -> str:
    """The template `key` in `lang` (English when the language is unknown), filled with `fields`.

    Raises KeyError for an unknown key; a missing field stays visible as ``{name}``."""
    texts = PHRASES[key]
    return texts.get(lang, texts["en"]).format_map(_Fields(fields))
