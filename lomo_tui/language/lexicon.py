"""Word tables of the offline language layer: concept -> language -> entries.

Entry syntax (compiled by `nlu.text.pattern`), after normalisation (NFKC, case-folded, ё -> е):
- Latin/Cyrillic: a whole word (an English plural ``s``/``es`` allowed); a trailing ``*`` makes it a
  stem matching any ending; spaces match any run of whitespace or hyphens.
- CJK/kana: a literal substring.
- ``re:<regex>``: a raw regular expression.
English entries also apply to the other languages: creators mix English terms in.
"""
from __future__ import annotations

from .verbs import CREATE, CREATE_ONLY, CREATE_STOPWORDS, alternation

LANGS = ("en", "zh", "ja", "ru")

Table = dict[str, dict[str, tuple[str, ...]]]

# --- conversational acts -------------------------------------------------------------------
# Control verbs: for en/ru they must open the message (after fillers); zh/ja match anywhere.
CONTROL: Table = {
    "stop": {
        "en": ("stop", "cancel", "abort", "halt", "kill", "never mind", "nevermind"),
        "zh": ("停止", "停下", "停掉", "别做了", "不要做了", "不做了", "取消", "终止", "re:^停[!！。]*$"),
        "ja": ("中止", "止めて", "やめて", "ストップ", "キャンセル", "停止して"),
        "ru": ("стоп", "останови*", "отмени*", "прекрати*", "хватит", "прерви*"),
    },
    "pause": {
        "en": ("pause", "hold", "put on hold", "suspend"),
        "zh": ("暂停", "先停一下", "先放一放", "先放着"),
        "ja": ("一時停止", "一旦止め", "いったん止め", "保留", "中断"),
        "ru": ("пауз*", "приостанови*", "поставь на паузу"),
    },
    "resume": {
        "en": ("resume", "unpause", "restart", "pick up", "start again",
               "re:(?:can|could|shall) we (?:restart|resume|unpause|pick up|start again)\\b"),
        "zh": ("恢复", "重新开始", "接着做"),
        "ja": ("再開", "復活させ"),
        "ru": ("возобнови*", "сними с паузы", "запусти снова", "вернемся к", "вернись к", "вернитесь к",
               "вернуться к"),
    },
    "continue": {
        "en": ("continue", "go on", "keep going", "carry on", "proceed", "go ahead", "next"),
        "zh": ("继续", "接着来", "下一步"),
        "ja": ("続けて", "続き", "進めて", "次へ"),
        "ru": ("продолж*", "дальше", "далее", "доделай*", "закончи", "закончите"),
    },
    "forget": {
        "en": ("forget",),
        "zh": ("忘掉", "忘记", "别记", "不要记"),
        "ja": ("忘れて",),
        "ru": ("забудь*", "забыть"),
    },
    "delete": {
        "en": ("delete", "erase", "trash", "get rid of", "throw away"),
        "zh": ("删除", "删掉", "删了", "移除"),
        "ja": ("削除", "消して", "捨てて"),
        "ru": ("удали*", "сотри*", "выкинь*"),
    },
}
# Filler words that may precede an en/ru control verb ("please stop", "ну, стоп").
LEAD_FILLERS = {
    "en": ("please", "pls", "ok", "okay", "hey", "hi", "hello", "lomo", "now", "just", "can you",
           "could you", "would you", "can u", "could u", "pls can u", "kindly", "and", "so", "then", "ah", "oh", "thanks", "thank you",
           "quick q", "quick question", "quick one", "question", "q", "btw", "also", "um", "hmm", "re:he+y+",
           "re:hi+", "random q", "random question", "dumb q", "dumb question", "silly question", "side question",
           "off topic", "unrelated"),
    "ru": ("пожалуйста", "ну", "давай", "ладно", "окей", "ломо", "можешь", "слушай", "так", "а",
           "теперь", "привет", "спасибо"),
    # "まず、店先に出す看板を…", "先帮我写个…": "first" says when, not what
    "ja": ("まず", "まずは", "とりあえず", "最初に", "さっそく"),
    "zh": ("首先", "re:先(?=帮|给|做|画|来|写|弄|生成)"),
}
# Units a number measures rather than counts: "a 4 bar loop" is one loop, "a 30 minute podcast" one episode
MEASURE_UNITS = {
    "en": ("bar", "bars", "beat", "beats", "bpm", "second", "seconds", "sec", "secs", "s", "minute", "minutes", "min",
           "mins", "hour", "hours", "px", "pixel", "pixels", "inch", "inches", "cm", "mm", "fps", "percent"),
    "ru": ("такт*", "секунд*", "сек", "минут*", "мин", "час*", "пиксел*"),
}
# What a numbered range counts ("audiograms for episodes 1 to 6", "с 1 по 5 урок", "第1到6集"): one piece
# for each number in it
RANGE_NOUNS = {
    "en": ("episode", "episodes", "ep", "eps", "part", "parts", "chapter", "chapters", "day", "days", "week",
           "weeks", "level", "levels", "issue", "issues", "volume", "volumes", "lesson", "lessons", "round",
           "rounds", "stage", "stages", "step", "steps", "slide", "slides", "page", "pages", "scene", "scenes",
           "track", "tracks", "month", "months", "module", "modules", "unit", "units", "#", "no.", "nos."),
    "ru": ("эпизод*", "выпуск*", "серия", "серии", "серий", "част*", "глав*", "день", "дня", "дней", "недел*",
           "уровн*", "урок*", "слайд*", "страниц*", "сцен*", "трек*", "модул*", "№"),
}
RANGE_COUNTERS = ("集", "话", "話", "期", "课", "課", "回", "章", "日", "天", "周", "週", "页", "頁", "ページ", "枚", "张")
# Words that hand out one piece to each of a number of things ("one file each", "по одному на каждую"), or say
# how many there are apart from the noun ("портреты актёров, их шесть", "six of them in total")
DISTRIBUTIVE = {
    "en": ("re:\\b(?:one|1|a)\\s+(?:[a-z]+\\s+)?(?:each|apiece|per\\s+[a-z]+)\\b", "re:\\bfor each of\\b",
           "re:\\bone for each\\b", "re:\\bone per\\b", "re:\\b(?:in total|in all|of them)\\b"),
    "ru": ("re:по одно(?:му|й)", "re:для каждо(?:го|й)", "re:на каждо(?:го|й|е)", "re:(?<![а-я])(?:их|всего)\\s+(?=[а-я0-9])"),
}
NEGATION = {
    "en": ("don't", "dont", "do not", "never", "not"),
    "zh": ("不要", "别", "不用", "没"),
    "ja": ("ないで", "なくて", "しない"),
    "ru": ("не",),
}

# Kinds of thing named bare, for "ability" below
# (a few words may describe the kind: "short sound clips", "underwater-looking video", "painted canvas backdrops";
# never an article, a possessive or a count, which make it one piece asked for)
_KINDS_EN = ("(?:(?:any|some|real|short|long|little|simple|moving|animated|3d|2d)\\s+)*"
             "(?:(?!(?:an?|the|my|our|your|this|that|these|those|one|two|three|\\d+)\\b)[a-z][\\w'-]*\\s+){0,3}?"
             "(?:videos?|clips?|animations?"
             "|gifs?|images?|pictures?|pics|photos?|drawings?|illustrations?|art(?:work)?|3d(?: models?| objects?)?"
             "|models?|music|songs?|sounds?|sound effects|audio|voice(?:overs?)?|logos?|posters?|stickers?|icons?"
             "|films?|movies?|stills?|storyboards?|textures?|sprites?|sprite sheets?|tilesets?|mock-?ups?|renders?"
             "|backdrops?|backgrounds?|patterns?|dielines?|fonts?|maps?|menus?|banners?|flyers?|signs?|labels?)")
_KIND_EN = _KINDS_EN + "(?:\\s+(?:stuff|things|work))?"  # "3d stuff"
_KINDS_ZH = ("(?:视频|影片|动画|音乐|音频|声音|音效|图片|图|插画|海报|3d模型|3d的?|立体图|模型|动图|gif|logo|短片|电影|贴纸|图标"
             "|图案|纹理|菜单|刀模图|精灵图|贴图|背景|壁纸|字体|包装|设计稿|设计图|印刷品|宣传品)")
_KINDS_JA = ("(?:(?:音声|音|動画|映像|3d|立体)の)?"  # "音声の作品": works of a kind
             "(?:動画|ビデオ|アニメーション|アニメ|音楽|音声|効果音|画像|イラスト|絵|写真|3dモデル|モデル|ポスター|gif"
             "|ロゴ|映画|ショートフィルム|短編映画|作品|bgm)")
_KINDS_RU = ("(?:видео|ролик\\w*|музык\\w*|картин\\w*|изображени\\w*|3[dд][- ]?модел\\w*|модел\\w*|анимаци\\w*"
             "|гифк\\w*|постер\\w*|звук\\w*|логотип\\w*|фильм\\w*)")

# "太亮了": too much of something — not the 太 of 太极, 太阳, 太空
_ZH_TOO = "re:太(?!极|阳|空|太|平|湖|原|子|后|古|白|仓|岁|鼓)"

# English comparatives an edit asks for ("warmer", "glowier", "thicker")
_COMPARATIVE_EN = ("(?:blu|warm|dark|bright|redd|soft|cool|bigg|small|light|bold|simpl|clean|sharp|calm|crisp|happi|"
                   "sadd|cut|tall|short|wid|long|quiet|loud|fast|slow|green|pink|moodi|punchi|brav|dreami|nois|grain|"
                   "thick|thinn|glowi|shini|fluffi|fuzzi|spooki|scari|creepi|fatt|slimm|round|deep|pal|rich|strong|"
                   "smooth|rough|heavi|pretti|sunni|gloomi|foggi|misti|gritti)i?er")

ACTS: Table = {
    "status": {
        "en": ("status", "progress", "re:how(?:'s| is| are)\\b.{0,40}\\bgoing", "where are we",
               "re:\\b(?:is|are) (?:it|they|you|that|this|those|these) (?:all )?(?:done|ready|finished|sorted|fixed|working"
               "|back up|through|ok now|okay now)", "what are you working on",
               "what's left", "what is left"),
        "zh": ("进度", "状态", "怎么样了", "好了吗", "做到哪", "完成了吗", "做完了吗"),
        "ja": ("進捗", "状況", "どうなって", "ステータス", "終わった", "できた？", "できましたか", "直った", "直りました",
               "復旧し", "re:(?:でき|出来|終わっ|仕上がっ)て(?:い)?(?:ますか|る[?？]|るの[?？]?)"),  # "もうできてますか"
        "ru": ("статус*", "прогресс*", "как продвига*", "как дела с", "готово?", "как идет*",
               "что с задач*", "re:(?<![а-я])(?:уже\\s+)?готов[аоы]?(?:\\s+ли)?\\s*[?？]\\s*$",
               "re:(?<![а-я])(?:закончил[аио]?|доделал[аио]?)(?:\\s+ли)?(?:\\s+[а-я]+){0,3}\\s*[?？]\\s*$",
               "что-нибудь выполняется", "что-то выполняется", "что-нибудь работает", "что-то работает",
               "что-нибудь запущено"),
    },
    "help": {
        "en": ("help", "what can you do", "how do you work", "how does this work", "what are you",
               "re:\\bwhat (?:kinds? of |sorts? of )?(?:things|stuff) (?:can|could|do) you\\b",
               "re:\\bwhat (?:you are|you're) able to\\b",
               "who are you", "what do you do", "capabilities", "/help"),
        "zh": ("帮助", "你能做什么", "你会什么", "你可以做什么", "可以做什么", "能做什么", "会做什么", "能干什么",
               "怎么用", "你是谁", "功能"),
        "ja": ("ヘルプ", "何ができ", "なにができ", "何が出来", "使い方", "あなたは誰", "機能",
               "re:どんな(?:もの|こと)(?:を|が)?(?:作|描|でき|出来|して)"),
        "ru": ("помощь", "помоги", "что ты умеешь", "что умеешь", "что ты можешь", "как тобой пользоваться",
               "кто ты", "справка"),
    },
    # Asking whether Lomo can make a kind of thing at all ("can you do videos too?", "你能做视频吗",
    # "動画も作れますか", "а видео ты умеешь делать?") is a question about what it does, not an order: the kind is
    # named bare (no subject, no count, no article) and the verb is one of ability. "can you make a poster of a
    # fox?" and "能帮我做个视频吗" stay requests.
    "ability": {
        "en": ("re:^(?:(?:hi|hey|hello|yo|ok(?:ay)?|so|and|also|oh|lomo|btw|there|good (?:morning|afternoon|evening)|quick q"
               "(?:uestion)?|morning|evening)\\b[\\s,!.:—–-]*)*(?:(?:can|could|do|will|would) (?:you|u)|does (?:it|this|this app|lomo)"
               "|(?:are you|is (?:it|this|this app|lomo)) able to)"
               " (?:also |even |actually |still |already )?(?:do|make|create|generate|draw|render|produce|handle"
               "|animate|compose|paint|edit|work with)\\s+" + _KIND_EN + "(?:\\s+(?:and|or|&)\\s+" + _KIND_EN + ")*"
               # "… 3D models i can actually print?": what the kind is for, said of the creator
               "(?:\\s+(?:that|which|i|we|people)\\s+(?:can|could|would|will)\\s+(?:actually\\s+|really\\s+)?[a-z]+"
               "(?:\\s+(?:it|them|out|at home))?)?"
               "(?:\\s+(?:too|as well|also|at all|yet|now|either|for me|for people|here|offline))*"
               # "… or is it just flat pictures?"
               "(?:,?\\s+(?:or|and) (?:is it |is that |do you |are you )?(?:only|just) (?:flat |still |static |2d )?"
               + _KIND_EN + ")?"
               # "… sound clips, like a clean tuning A at 440?": an example before the question mark
               "(?:,\\s+(?:like|e\\.g\\.|such as|for example|say)\\b(?!\\s+(?:the|our|my|those|these|that|this)\\b)[^?]*)?"
               "\\s*[?]*"
               # "… as well? like screams, chains, that kinda stuff": an example after the question mark, still a question
               "(?:(?<=[?])\\s*(?:like|e\\.g\\.|such as|for example|say)\\b[^?]*[?]*)?\\s*$",
               # "can you do 3d mockups of a jar too or is it just flat pictures": a kind of a thing, then the
               # alternative — still what Lomo can make, not an order
               "re:^\\W*(?:can|could|do) (?:you|u) (?:also |even )?(?:do|make|create|generate|draw|render|produce)\\s+"
               + _KIND_EN + "(?:\\s+of\\s+(?:an?|the|my|our)\\s+\\w+)?(?:\\s+(?:too|as well|also))?"
               "\\s+or (?:is it |is that |do you |are you )?(?:only|just) (?:flat |still |static |2d )?" + _KIND_EN
               + "\\s*[?]*\\s*$"),
        "zh": ("re:(?:你|您)?(?:还|也)?(?:能|会|可以|能不能|会不会|可不可以)(?:帮我|给我)?(?:做|画|生成|制作|弄|搞|出)"
               "(?:点|些)?(?:什么|啥|哪些|哪种|哪几种)",
               # "你们能做视频吗？", "哈啰～可以帮我做影片吗？": a kind of thing named bare, no subject of its own
               "re:(?:^|[～~，,!！。\\s]|想问一下|问一下|想问下|问下|请问|想问)(?:你们|您们|你|您)?(?:还|也)?(?:能不能|可不可以|会不会|能|会|可以)(?:帮我们|帮我|给我|帮忙)?(?:做|画|生成|制作|弄|出)"
               # "你们能做会动的图吗？像甜筒转圈那种": a kind described in a few characters, then an example
               # ("你能做扎染那种纹理的图案吗", "你们能做中日双语的菜单吗")
               + "(?:(?:会动|能动|动态|立体|三维|3d|有声|带声音|带音乐)的|短|小|[^，。,？?！!一两二三四五六七八九十几个张套份]{1,20}的)?"
               + _KINDS_ZH + "(?:和" + _KINDS_ZH + ")?(?:(?:吗|么|不|嘛)\\s*[?？]?|\\s*[?？])"
               "\\s*(?:(?:(?:像|比如|例如)[^？?。]*|想要[^？?。0-9一二两三四五六七八九十几]*)[。.]?)?\\s*$"),
        "ja": ("re:^(?:(?:こんにちは|こんばんは|おはよう|やあ|ねえ|あの)[、,!！\\s]*)?" + _KINDS_JA +
               "(?:も|は|とか|って|を)?(?:作れ|作成でき|生成でき|描け|作ることが?でき|でき)(?:ます|る)(?:か|の)?"
               "\\s*[?？]?(?:(?<=[?？])\\s*[^?？。]{1,16}(?:とか|など|なんか|みたいな(?:もの|の)?)[。.]?)?\\s*$",
               "re:(?:何|なに|どんなもの|どんなこと)(?:が|を)?(?:作れ|描け|生成でき|作成でき)"),
        "ru": ("re:(?<![а-я])(?:умеешь|умеете)(?![а-я])",
               "re:(?<![а-я])(?:можешь|можете)(?:\\s+ли)?\\s+(?:ты\\s+|вы\\s+)?(?:делать|создавать|рисовать|"
               "генерировать)\\s+" + _KINDS_RU + "\\s*[?？]?\\s*$",
               # "Привет, а можешь сделать анимацию иконок?": a greeting, then whether a kind of thing can be made
               # (named with at most what it is of), nothing else — what Lomo does, not an order
               "re:^\\W*(?:привет|здравствуй(?:те)?|добрый (?:день|вечер)|доброе утро|здорово)[\\s,.!]+(?:а\\s+)?"
               "(?:ты\\s+|вы\\s+)?(?:можешь|можете|сможешь|сможете|умеешь|умеете)(?:\\s+ли)?\\s+(?:ты\\s+|вы\\s+)?"
               "(?:сделать|делать|создать|создавать|нарисовать|рисовать|сгенерировать|генерировать)\\s+" + _KINDS_RU
               + "(?:[\\s,]+[а-я-]+){0,3}\\s*[?？]\\s*$",
               # "А со звуком вы работаете или только картинки делаете?"
               "re:(?<![а-я])(?:со?\\s+" + _KINDS_RU + "\\s+(?:вы|ты)\\s+работа\\w*|(?:вы|ты)\\s+работа\\w*\\s+со?\\s+"
               + _KINDS_RU + ")(?:\\s+или\\s+только\\s+" + _KINDS_RU + "(?:\\s+\\w+)?)?\\s*[?？]\\s*$",
               # "а 3д модель куклы вы можете сделать? для сайта": the kind first, then whether it can be made
               "re:^\\W*(?:а\\s+|и\\s+)?" + _KINDS_RU + "(?:\\s+[а-я]+)?\\s+(?:вы|ты)\\s+(?:можете|можешь|умеете|умеешь)"
               "\\s+(?:сделать|делать|создать|нарисовать)\\s*[?？](?:\\s*(?:для|на|в)\\s+[а-я]+[.!]?)?\\s*$"),
    },
    # Asking what Lomo could do for the creator, whatever came before ("hi! I paint miniatures, what can you do
    # for me", "你能帮我们火锅店做些什么？", "どんなことをお願いできますか", "чем вы можете помочь магазину?"):
    # an offer of help asked for, not an order, even after words about the creator's own work
    "offer": {
        "en": ("re:\\b(?:what|how)\\s+(?:else\\s+|exactly\\s+|all\\s+|(?:kinds?|sorts?) of (?:things|stuff)\\s+)?"
               "(?:can|could|would|do|might)\\s+(?:you|u|lomo)\\s+(?:\\w+\\s+){0,2}?"
               "(?:do|help(?: with)?|offer)(?=\\s*(?:for\\b|to help\\b|here\\b|today\\b|now\\b|[?!.]|$))",
               "re:\\bhow (?:can|could|would|might) (?:you|u|lomo) help(?: (?:me|us|my|our)\\b)?",
               "re:\\bwhat (?:do|would|could) (?:you|u) (?:offer|suggest i (?:make|use you for))\\b"),
        "zh": ("re:(?:能|可以|会)(?:帮|为|给|替)(?:我|我们|咱们|你们|您)?(?:的)?[\\u4e00-\\u9fff]{0,10}?(?:做|干|弄|搞|出)"
               "(?:点|些|一些)?(?:什么|啥|哪些)",
               "re:帮(?:得)?上?(?:什么|啥|哪些)忙",
               "re:(?:能|可以)(?:为|帮|给)(?:我|我们|咱们)?[\\u4e00-\\u9fff]{0,10}?提供(?:什么|哪些|啥)"),
        "ja": ("re:(?:どんなこと|どういうこと|何|なに)(?:を|が)?(?:お願いでき|頼め|依頼でき|手伝って(?:もらえ|くれ)"
               "|お手伝いでき|手伝え|してもらえ|してくれ)",),
        "ru": ("re:(?<![а-я])(?:чем|с чем)\\s+(?:ты\\s+|вы\\s+)?(?:можешь|можете|мог бы|могла бы|могли бы|сможешь|сможете)"
               "\\s+(?:мне\\s+|нам\\s+)?(?:ты\\s+|вы\\s+)?помочь",
               "re:(?<![а-я])что\\s+(?:ты\\s+|вы\\s+)?(?:можешь|можете|сможешь|сможете)\\s+(?:мне\\s+|нам\\s+)?"
               "(?:сделать|предложить)\\s+(?:для|мне|нам)(?![а-я])"),
    },
    # Not liking a piece is not praise: "i dont like the first one", "不太喜欢第二张", "2枚目は好きじゃない",
    # "вторая не нравится" ask for a change to it.
    "dislike": {
        "en": ("re:\\b(?:don'?t|do not|doesn'?t|didn'?t|not|never)\\s+(?:really\\s+|quite\\s+)?(?:like|love|dig)\\b",
               "not a fan", "not feeling", "not happy with", "not great", "not right", "not quite right", "hate"),
        "zh": ("不喜欢", "不太喜欢", "不满意", "不太满意", "不好看", "不太好看", "不对劲", "讨厌"),
        "ja": ("好きじゃな", "好きではな", "気に入らな", "気に入ってな", "イマイチ", "いまいち", "微妙"),
        "ru": ("не нравится", "не нравятся", "не очень нравится", "не то", "не так", "не зашл*"),
    },
    "greeting": {
        "en": ("hi", "hello", "hey", "yo", "good morning", "good afternoon", "good evening", "howdy", "morning",
               "evening", "sup", "wassup", "whats up", "hey there", "hi there",
               "greetings", "hiya", "how are you", "how's it going", "what's up", "i'm back", "im back",
               "how's your day", "how was your day", "i am back", "hello again", "hi again", "hey again",
               "welcome back"),
        "zh": ("你好", "您好", "嗨", "嗨嗨", "哈喽", "哈囉", "哈啰", "安安", "午安", "早上好", "晚上好", "下午好", "早安", "在吗", "你好吗", "我回来了"),
        "ja": ("こんにちは", "こんばんは", "おはよう", "やあ", "もしもし", "はじめまして", "お元気ですか", "元気？",
               "ただいま", "どうもー", "どうもどうも", "やっほー"),
        "ru": ("привет*", "здравствуй*", "добрый день", "доброе утро", "добрый вечер", "хай", "салют",
               "как дела", "как ты", "я вернулся", "я вернулась"),
    },
    "thanks": {
        "en": ("thanks", "thank you", "thx", "ty", "cheers", "much appreciated", "appreciate it", "thanks a lot",
               "thanks a million", "thanks a bunch", "thanks so much", "thank you so much", "thank you very much",
               "many thanks", "thank u", "tysm"),
        "zh": ("谢谢", "多谢", "感谢", "谢了", "谢啦", "辛苦了", "辛苦啦", "麻烦你了"),
        "ja": ("ありがとう", "おおきに", "どうも", "感謝", "助かります", "助かった", "サンキュー", "お疲れ様", "おつかれさま",
               "お疲れさま", "おつかれ", "お疲れ", "おつ", "よろしくお願いします", "助かりました",
               "ありがとうございました"),
        "ru": ("спасибо", "благодар*", "спс", "спасибки", "мерси", "спасибо еще раз"),
    },
}
# Courtesy that answers nothing and asks for nothing: praise of the work, acknowledgements, goodbyes. With
# greetings and thanks they make a message the Main thread answers itself — as long as the rest of the
# message carries no instruction ("great, now make it bigger" is a revision; see intent._courtesy).
COURTESY: Table = {
    "praise": {
        "en": ("great", "looks great", "looks good", "looks nice", "looks amazing", "looks perfect", "love it",
               "i love it", "love this", "love them", "awesome", "amazing", "perfect", "nice", "nice work",
               "nice job", "good job", "great job", "great work", "well done", "beautiful", "gorgeous",
               "excellent", "wonderful", "fantastic", "brilliant", "wow", "sweet", "neat", "lovely", "superb",
               "impressive", "stunning", "exactly what i wanted", "nailed it", "that's it", "just right",
               "cute", "so cute", "adorable", "charming", "how cute", "too cute", "so pretty",
               "you're fast", "youre fast", "that was fast", "lifesaver", "life saver", "you rock", "you're the best",
               "youre the best", "you're a star", "that was quick", "so fast", "so quick",
               "re:^(?:i |we )?(?:really |just )?(?:love|adore)\\s+[a-z]+s[!.]*$",
               "re:^(?:ok(?:ay)?[,!.]?\\s+)?cool[!.]*$", "re:^cool(?=,)",
               "re:\\b(?:i |we )?(?:really |just |totally )?(?:love|like|adore)\\b(?=\\s+(?:the|this|that|these|those|"
               "how|your|it|them|all)\\b)"),
        "zh": ("太棒了", "太好了", "好棒", "真棒", "很棒", "棒", "不错", "很好", "真好", "好看", "很好看", "真好看",
               "挺好看", "漂亮", "真漂亮", "完美", "厉害", "赞", "喜欢", "爱了", "满意", "挺好", "可以的",
               "就是这样", "正是我想要的", "好可爱", "真可爱", "太可爱", "可爱", "好萌", "哇", "哇塞", "绝了",
               "太美了", "太美", "好美", "真美", "美极了", "好漂亮", "太漂亮了", "帮大忙了", "你真行",
               "re:[做画写拍弄搞剪]得(?:真|很|太|挺|非常|特别)?(?:好|棒|不错|漂亮)"),
        "ja": ("いいね", "いいですね", "いい感じ", "良い感じ", "素晴らしい", "すばらしい", "完璧", "最高", "素敵",
               "すてき", "すごい", "凄い", "きれい", "綺麗", "バッチリ", "ばっちり", "さすが", "気に入りました",
               "気に入った", "イメージ通り", "よくできて", "上出来", "かわいい", "可愛い", "カワイイ"),
        "ru": ("супер", "отлично", "отличн*", "re:(?<![а-я]\\s)(?<![а-я])класс(?![а-я])(?!\\s+[а-я])", "классно", "круто", "здорово", "прекрасно", "замечательно",
               "великолепно", "шикарно", "красиво", "идеальн*", "молодец", "нравится", "то что надо", "огонь",
               "зачет", "восторг", "прелесть", "вау", "чудо", "просто чудо", "шедевр", "мило", "милота",
               "re:именно то,? что (?:я )?(?:хотел[аи]?|нужно|надо|просил[аи]?)"),
    },
    "ack": {
        "en": ("ok", "okay", "got it", "sure", "alright", "all right", "understood", "sounds good", "noted",
               "fine", "i see", "makes sense", "no problem", "no worries", "haha", "hahaha", "lol", "hmm", "heh",
               "bet", "aight", "cool cool",
               "re:^(?:k|kk|yep|yup|yes|yeah|ah|oh)[!.]*$"),
        "zh": ("好的", "收到", "了解", "明白", "明白了", "知道了", "没问题", "好吧", "行吧",
               "哈哈", "嗯嗯", "re:^(?:好|行|嗯|ok|可以|哦|噢)[的吧啊呀嘞了]*[!！。.~～]*$"),
        "ja": ("了解", "わかった", "わかりました", "分かりました", "分かった", "承知しました", "承知", "オッケー",
               "なるほど", "笑", "re:^(?:はい|うん|ええ|w+)[!！。.]*$"),
        "ru": ("понятно", "ясно", "хорошо", "ладно", "ок", "окей", "принято", "договорились", "понял", "поняла",
               "хаха", "ахах", "ахаха", "re:^(?:да|ага|угу)[!.]*$"),
    },
    "chat": {  # small talk about the creator's day, not about the work
        "en": ("i'm tired", "im tired", "so tired", "i'm bored", "i'm hungry", "i'm sleepy", "long day", "busy day",
               "what a day", "nice weather", "lovely weather", "it's raining", "tell me a joke", "i'm fine",
               "i'm good", "i'm ok", "i'm okay", "not bad", "doing well", "doing good", "all good", "me too",
               "you too", "same here", "are you there", "you there", "you awake", "still up", "still awake",
               "still working", "still running", "are you up"),
        "zh": ("好累", "累了", "累死了", "累翻了", "累坏了", "累趴了", "累惨了", "哈哈", "好无聊", "饿了", "好困", "天气不错", "天气真好", "下雨了", "讲个笑话",
               "说个笑话", "我很好", "还不错", "挺好的", "我也是", "你也是", "在吗", "在不在", "你在吗", "还在吗",
               "还醒着吗", "还在工作吗"),
        "ja": ("疲れた", "眠い", "お腹すいた", "いい天気", "雨だ", "冗談を言って", "元気です", "元気だよ", "まあまあ",
               "私も", "僕も", "動いてる", "起きてる", "いますか", "まだ起きて"),
        "ru": ("устал", "устала", "скучно", "хочу есть", "хорошая погода", "идет дождь", "расскажи анекдот",
               "расскажи шутку", "нормально", "все хорошо", "все отлично", "я тоже", "тебе тоже", "и тебе",
               "ты тут", "ты здесь", "ты на месте", "не спишь", "ты еще работаешь"),
    },
    "farewell": {
        "en": ("bye", "goodbye", "good bye", "bye bye", "good night", "see you", "see ya", "cya", "talk later",
               "have a good day", "have a nice day", "have a good one", "that's all for today", "that's all",
               "i'm done for today", "brb", "be right back", "i'll be back", "going to lunch", "off to lunch",
               "gn", "gnight", "g'night", "nite", "night night", "gtg", "got to go", "ttyl", "later", "laters",
               "peace", "peace out", "catch you later", "logging off", "signing off"),
        "zh": ("再见", "拜拜", "晚安", "回头见", "明天见", "下次见", "今天就到这", "我先走了", "去吃饭了"),
        "ja": ("さようなら", "またね", "また明日", "おやすみ", "じゃあね", "お先に失礼", "失礼します", "今日はここまで"),
        "ru": ("пока", "до свидания", "спокойной ночи", "доброй ночи", "споки", "до завтра", "увидимся",
               "до встречи", "всего доброго", "на сегодня все"),
    },
}

# Question topics answered offline (answer_simple).
TOPICS: Table = {
    "time": {
        "en": ("what time", "the time", "time is it", "current time", "time now"),
        "zh": ("几点", "什么时间", "现在时间", "现在几"),
        "ja": ("何時", "なんじ", "今の時間", "現在時刻", "時刻"),
        "ru": ("который час", "сколько времени", "текущее время", "время сейчас"),
    },
    "date": {
        "en": ("what day", "the date", "today's date", "date today", "what's today", "which day",
               "date is it"),
        "zh": ("几号", "日期", "星期几", "今天是", "礼拜几", "周几"),
        "ja": ("何日", "日付", "何曜日", "今日は何"),
        "ru": ("какое сегодня число", "какое число", "какой сегодня день", "какой день", "дата",
               "какое сегодня"),
    },
    "spend": {
        "en": ("spent", "spend", "spending", "cost me", "budget", "how much money", "costs today"),
        "zh": ("re:(?<![太很好挺真])花了", "花费", "费用", "预算", "多少钱", "开销", "消费"),  # 太花了: too busy
        "ja": ("使った", "費用", "予算", "いくら", "支出"),
        "ru": ("потрат*", "расход*", "бюджет*", "траты", "сколько стоил*", "израсход*"),
    },
    "tasks": {
        "en": ("how many tasks", "what tasks", "which tasks", "my tasks", "list tasks", "list my tasks",
               "tasks do i have", "task list"),
        "zh": ("几个任务", "多少任务", "多少个任务", "任务列表", "哪些任务", "有什么任务"),
        "ja": ("タスクはいくつ", "タスク一覧", "何個のタスク", "いくつのタスク", "どんなタスク", "タスクの数"),
        "ru": ("сколько задач", "какие задачи", "список задач", "мои задачи"),
    },
}
# Words that may surround an arithmetic expression ("what is 12*7?", "посчитай 3+4").
MATH_WORDS = {
    "en": ("what is", "what's", "whats", "calculate", "compute", "how much is", "equals", "solve",
           "please", "is", "tell me"),
    "zh": ("等于多少", "等于几", "等于", "是多少", "多少", "计算", "算一下", "算算", "请问", "几"),
    "ja": ("は何", "はいくつ", "はいくら", "計算して", "計算", "を計算", "ですか", "いくつ", "は"),
    "ru": ("сколько будет", "сколько", "посчитай", "вычисли", "чему равно", "равно", "будет"),
}
MATH_OPERATORS = {  # spoken operators, replaced by symbols before parsing
    "en": (("multiplied by", "*"), ("divided by", "/"), ("to the power of", "**"), ("plus", "+"),
           ("minus", "-"), ("times", "*"), ("mod", "%")),
    "zh": (("乘以", "*"), ("除以", "/"), ("加上", "+"), ("减去", "-"), ("加", "+"), ("减", "-"), ("乘", "*")),
    "ja": (("足す", "+"), ("たす", "+"), ("引く", "-"), ("ひく", "-"), ("掛ける", "*"), ("かける", "*"),
           ("割る", "/"), ("わる", "/")),
    "ru": (("умножить на", "*"), ("разделить на", "/"), ("делить на", "/"), ("плюс", "+"),
           ("минус", "-"), ("в степени", "**")),
}

QUESTION: Table = {
    # wh-questions about something, not requests to make it
    "lead": {
        "en": ("re:^(?:what|how|why|when|where|who|whom|whose|which|is|are|does|did|was|were|"
               "do (?:you|u|i|we)|whats|hows|wheres|whos|whens|wat|wats)\\b",
               # information asked for in the imperative ("tell me how flows work", "explain what a storyboard is")
               "re:^(?:tell me|explain|remind me|what do you think)\\b",
               "re:^(?:(?:hi|hey|ok|so|and|lomo),?\\s+)*(?:can|could|would) (?:you|u) (?:please )?(?:explain|tell me"
               "|describe|remind me)\\b"),
        "zh": ("什么是", "是什么", "为什么", "怎么", "如何", "谁", "哪", "re:吗[?？]?$", "re:呢[?？]?$",
               "re:^(?:请)?(?:告诉我|解释一下|介绍一下|你觉得|讲讲|说说)"),
        "ja": ("re:とは(?!別|違|異|限ら)", "って何", "ってなに", "なぜ", "どうして", "どうやって", "re:ですか[?？]?$", "何です",
               "re:(?:でしょうか|でしょう|ですかね|ますかね|んですか|のですか)[?？]?$",
               "誰", "どこ", "いつ", "re:(?:を|について)[^、。]{0,6}(?:教えて|説明して)"),
        "ru": ("re:^(?:что|как|почему|зачем|когда|где|кто|какой|какая|какое|какие|каким|какими|какую|каких|какого|каком"
               "|сколько|разве)"
               "(?![а-я])", "re:(?<![а-я])ли(?![а-я])",
               "re:^(?:расскажи|объясни|подскажи)(?![а-я])",
               # "Привет, можешь объяснить, чем отличается…": asked to explain, after a greeting
               "re:^\\W*(?:(?:привет|здравствуй(?:те)?|добрый (?:день|вечер)|доброе утро)[\\s,.!]+)?(?:а\\s+)?"
               "(?:ты\\s+|вы\\s+)?(?:можешь|можете|могли бы|не мог бы|не могли бы)\\s+(?:ты\\s+|вы\\s+)?"
               "(?:объяснить|рассказать|подсказать|пояснить)(?![а-я])"),
    },
    # interrogative words anywhere in a sentence that ends as a question ("短片一般多长比较合适？",
    # "蓝色和什么颜色搭配好看？", "the clip is how long?"): a question unless it asks for a change or a creation
    "open": {
        "en": ("re:\\b(?:what|what's|whats|how|why|when|where|who|whom|whose|which)\\b",),
        "zh": ("什么", "怎么", "怎样", "为什么", "为何", "如何", "多长", "多久", "多大", "多少", "多高", "多宽", "多重", "多远",
               "几", "哪", "谁", "是否", "有没有", "是不是", "对不对", "会不会", "re:还是[^？?]{1,12}[?？]?\\s*$", "re:吗[?？]", "re:呢[?？]?\\s*$"),
        "ja": ("何", "なに", "なん", "どう", "いつ", "どこ", "誰", "だれ", "なぜ", "どれ", "どんな", "どの", "いくつ",
               "いくら", "どちら", "どっち", "re:(?:ほうが|方が)[^、。]*[?？]\\s*$",
               "re:って[^、。]*(?<!でき)(?<!られ)(?:る|い|た)[?？]\\s*$", "re:か[?？]\\s*$", "re:の[?？]\\s*$",
               "re:(?:種類|方法|違い|目安|相場|理由|コツ|ポイント)は[?？]\\s*$"),
        "ru": ("re:(?<![а-я])(?:что|чем|чего|как|какой|какая|какое|какие|какого|каком|какую|каких|почему|зачем|"
               "когда|где|куда|откуда|кто|кого|сколько|ли|разве|неужели)(?![а-я])",),
    },
    # what is usually done ("拍汉服一般用什么灯光", "what font do people usually use"): a question with one of
    # these asks for knowledge, even when it has a making verb in it
    "habitual": {
        "en": ("usually", "generally", "typically", "normally", "in general", "most people", "people usually",
               "a good", "the best", "good for"),
        "zh": ("一般", "通常", "平时", "平常", "大家都", "大多", "比较好", "比较合适", "最好", "更好卖", "才够用", "够不够"),
        "ja": ("普通", "一般的", "普段", "たいてい", "大体", "よく使", "がいい", "が良い", "がおすすめ", "がいいんだろう",
               "ほうがいい", "ほうが良い", "方がいい", "決まって", "わかりやすい", "分かりやすい"),
        "ru": ("обычно", "как правило", "вообще", "чаще всего", "лучше всего", "лучше"),
    },
    # polite request forms that look like questions ("can you draw…?", "能帮我画…吗")
    "request": {
        "en": ("re:^(?:please |pls |ok |okay |hey |lomo,? )*(?:can|could|would|will) (?:you|u)\\b"
               "(?! (?:please )?(?:explain|tell me|describe|remind me)\\b)",
               "re:^(?:please |ok |okay |hey |lomo,? )*(?:how about|what about|what if|why not|why don't you|"
               "would it be possible|is it possible to|could we|can we|shall we)\\b"),
        "zh": ("能不能", "能否", "可以帮", "你能", "你可以", "能帮", "帮我", "请帮", "麻烦", "可不可以",
               "re:(?:能|可以)[^？?。！!]{1,30}(?:吗|嘛|么)[?？]?\\s*$"),
        "ja": ("てくれ", "てください", "てもらえ", "ていただけ", "てほしい", "て欲しい", "てもらっていい",
               "てもいい", "re:[^\\s、。][くに](?:でき|出来)(?:ます|る|ない|そう)"),
        "ru": ("re:(?<![а-я])(?:можешь|можете|не могли бы|не мог бы|не могла бы)(?![а-я])"
               "(?!\\s+(?:ты\\s+|вы\\s+)?(?:объяснить|рассказать|подсказать|пояснить)(?![а-я]))",
               "пожалуйста", "давай", "что если", "а если"),
    },
}

# --- generation ----------------------------------------------------------------------------
GEN: Table = {
    "create": {
        "en": CREATE + ("give me", "i want", "i need", "i'd like", "show me", "come up with"),
        "zh": ("画", "生成", "做", "制作", "创作", "设计", "来一", "写", "渲染", "弄", "搞", "拍", "我想要",
               "我要", "我需要", "配"),
        "ja": ("描いて", "描く", "作って", "作る", "作成", "生成", "書いて", "書く", "デザイン", "ほしい",
               "欲しい", "ください", "お願い", "制作", "作りたい", "描きたい", "書きたい"),
        "ru": ("сделай*", "нарисуй*", "создай*", "сгенерир*", "напиши*", "придумай*", "сочини*",
               "спроектир*", "разработ*", "изобрази*", "сними*", "анимир*", "оживи*", "хочу",
               "нужен", "нужна", "нужно", "дай*", "покажи*", "набросай*"),
    },
    # Revision markers. Strong ones revise whatever else the message says ("make it a video");
    # weak ones only when no new deliverable is named ("bluer", "more contrast").
    "revise_strong": {
        "en": ("again", "instead", "redo", "tweak", "adjust", "change", "switch", "swap", "replace",
               "re:\\bmake (?:it|them|that one|this one)\\b", "re:^\\W*(?:now\\s+|ok\\s+|and\\s+)?make (?:her|his|their)\\b(?!\\s+(?:an?|some|one|two|three|\\d+)\\b)", "turn it", "turn that", "another one",
               "another version", "one more time", "try again", "fix", "do the same", "same for",
               # redoing the piece just made: "draw it with a hat", "a version in orange", "a longer one"
               "re:\\b(?:" + alternation() + "|redraw|repaint|give)\\s+(?:it|them)\\b",
               "re:\\b(?:an?|new|different)\\s+(?:[a-z-]+\\s+)?(?:version|variant|variation|take)\\b",
               # (not a description: "this is a bigger one", "that's a tricky one")
               "re:(?<!\\bis )(?<!'s )(?<!\\bwas )\\ban?\\s+(?:(?!(?:an)?other\\b)[a-z]+er|(?:more|less)\\s+[a-z]+)\\s+one\\b",
               "re:^\\W*(?:the\\s+)?same\\s+(?:thing\\s+|one\\s+)?but\\b", "redraw", "repaint"),
        "zh": ("换成", "改成", "改为", "改一下", "变成", "re:再来(?!一[套张个幅份组段首支款])", "重新", "重做", "得更", "得再", "去掉", "再试", "重试", "再跑一次",
               "换个", "改",
               # "把它画成水彩风格", "画成夜景": drawing the piece just made over
               "re:把(?:它|它们)", "re:(?<![计計规規策])(?:画|渲染)成"),
        "ja": ("もっと", "変えて", "変えたい", "直したい", "変更", "もう一度", "やり直", "修正", "直して", "替えて", "にして",
               "もう少し", "もう一", "re:に(?:でき|出来)(?:ます|る|ない)",
               "re:(?:それ|これ|あれ)を[^、。]{0,12}(?:描いて|作って|描き直|作り直)", "描き直", "作り直",
               # "ロゴ、黒バージョンも欲しい", "マップ、韓国語版も作ってほしい": another version of a piece named first
               "re:^\\W*(?!新しい|新規|別の)[^、,。\\s]{1,12}[、,]\\s*[^、,。]{1,10}(?:バージョン|版|違い)も"),
        # «пере-» imperatives redo what exists: перемонтируй, перепиши, перекрась, переозвучь, переверстай
        "ru": ("re:(?<![а-я])пере[а-я]{3,}(?:уй|ай|ей|и|ь)(?:те)?(?![а-я])",
               "еще раз", "заново", "переделай*", "поменяй*", "измени*", "замени*", "сделай его",
               "сделай ее", "сделай их", "сделай это", "исправь*", "перерисуй*",
               # "сделай вариант обложки без текста", "логотип в белом варианте": another version of a piece
               "re:(?<![а-я])(?:сделай|сделайте|нужен|дай|дайте)\\s+(?:мне\\s+|нам\\s+)?(?:ещё\\s+)?(?:[а-я]+\\s+)?"
               "(?:вариант|версию)(?![а-я])",
               "re:(?<![а-я])в\\s+(?:[а-я]+(?:ом|ой|ем|ей)\\s+)?(?:варианте|версии)(?![а-я])",
               # "сделай такое же, но с лавандой": the piece again, changed
               "re:(?<![а-я])(?:такое|такую|такой|такие|то) же(?: самое| самую| самый)?(?![а-я])",
               "re:(?<![а-я])(?:нарисуй|сгенерируй|создай|изобрази)\\s+(?:его|ее|их)(?![а-я])"),
    },
    # Edit verbs: they work on something that exists ("shorten the clip", "把视频剪短", "短くして",
    # "сократи ролик") — unless a creation verb comes first ("нарисуй кота и добавь шляпу" is one new
    # picture). English ones open a clause and take a definite object.
    "edit_verb": {
        "en": ("re:(?:^\\s*|[,;:.!?]\\s*|\\b(?:and|then|please|pls|now|also|just|can you|could you|would you)\\s+)"
               "(?:shorten|lengthen|trim|crop|resize|rescale|extend|speed|slow|brighten|darken|lighten|"
               "recolou?r|rename|retime|mute|unmute|loop|reverse|flip|mirror|rotate|sharpen|blur|desaturate|"
               "saturate|tighten|enlarge|shrink|soften|straighten|cut|fade|stretch|move|shift|nudge|raise|"
               "lower|increase|decrease|reduce|bump|rearrange|reorder|redraw|reshoot|re-?render|retouch|"
               "recrop|clean|touch|tone|punch|warm|cool|center|centre|align|enhance|upscale)"
               "(?:\\s+(?:up|down|out|back|in))?\\s+(?:the|my|our|that|this|those|these|its|their|both|all)\\b",
               # what an existing piece lacks: "the drop teaser needs the date at the end", "the cover could use more red"
               "re:^\\W*(?:the|this|that|my|our|these|those)\\s+(?:[\\w'.-]+\\s+){0,3}(?:needs?|should (?:have|say|show|use)"
               "|could use|has to have|must have)\\s+(?:(?:an?|the|more|less|some|its|bigger|smaller|to|our|my|your|"
               "their|new|another)\\b|\\d)",
               # asked of an existing piece: "can the rental flyer get a QR code?", "can they be die-cut round?"
               "re:\\b(?:can|could|would)\\s+(?:the|this|that|these|those|my|our|it|they|them)\\b(?:\\s+[\\w'-]+){0,5}?"
               "\\s+(?:get|be|have|use|go|look|become|feel|show|say)\\b",
               # what a piece that exists must say: "stream banner: schedule should say 8 PM CST"
               "re:\\b(?:should|needs? to|has to|must)\\s+(?:say|read|show|display|list)\\b"),
        "zh": ("缩短", "剪短", "剪掉", "裁掉", "裁剪", "加快", "放慢", "拉长", "延长", "调亮", "调暗", "调快",
               "调慢", "调大", "调小", "调高", "调低", "re:放大(?!镜)", "缩小",
               # "再暖一点", "再亮一些": a degree more of something that exists
               "re:再[^\\s，。,、！!？?]{0,3}(?:一点|一些|点儿|些)",
               # putting something onto existing work: "在海报上加日期", "把日期加到海报上", "给海报加上日期"
               "re:在[^，。,；;]{1,12}?[上里中](?:加|添|放|写|印|标|去掉|删)", "加到", "放到", "写到", "印到",
               "re:把[^，。,；;]{1,8}?(?:放在|移到|挪到|放进)",
               # drawing a part otherwise: "把月亮画大一点", "把字写小点"
               "re:把[^，。,；;]{1,8}?[画写](?:得|大|小|粗|细|高|低|亮|暗|圆|长|短)",
               # room left on existing work: "宣传视频结尾留出报名二维码的位置"
               "留出", "空出", "预留", "留个位置", "留点空间",
               "re:给(?![我你他她它们])[^，。,；;]{1,12}?(?:加上|加个|添加|加一)",
               # one more entry on a piece that exists: "餐牌加多一款抹茶雞蛋仔", "菜单再加一道菜"
               "re:^[^，。,；;\\s]{1,10}?(?:加多|多加|再加|新增|添加|加)(?:一|两|几)(?:款|项|行|道|样|种)",
               # what a part of the piece must say: "日期寫9/17", "标题写成「中秋快乐」"
               "re:^\\W*(?:日期|时间|标题|副标题|文字|字|价格|地址|电话|店名|名字)(?:要|就|改|请)?写(?:成|上|为|着)?\\s*[^\\s，。,]"),
        "ja": ("re:(?<=[^\\s、。]く)(?=して|する|しよう|でき|出来)", "縮めて", "伸ばして", "早めて", "速めて", "カットして",
               "トリミング", "を入れて", "を追加", "追加して", "を加えて", "を載せて", "を外して", "を上げて", "を下げて",
               "を付けて", "をつけて", "を足して", "増やして", "減らして",
               # "動画の最後にロゴ入れて": something put into a piece that exists, particle dropped
               "re:に[^、。\\s]{1,10}?(?:入れて|載せて|付けて|足して)", "re:を[^、。\\s]{0,4}[0-9０-９一二三四五六七八九十]+秒[^、。\\s]{0,2}出して", "を消して",
               "re:もう[0-9一二三四五六七八九十]",
               # "バナーに「送料無料」って入れて": quoted words put onto a piece
               "re:[」』\"”]\\s*(?:って|と)\\s*(?:入れ|書い|載せ|足し|追加し)て",
               # "ロゴの赤、ちょっと暗めに", "音を大きめで": a -me degree ending the message
               "re:[^\\s、。]め(?:に|で)[!！。.]*\\s*$"),
        "ru": ("убери*", "поправь*", "подправь*", "сократи*", "обрежь*", "подрежь*", "укороти*", "удлини*",
               "ускорь*", "замедли*", "увеличь*", "уменьши*", "перекрась*", "осветли*", "затемни*", "растяни*",
               "сожми*", "переименуй*", "подкрути*", "убавь*", "прибавь*", "сдвинь*", "передвинь*", "добавь*",
               "вставь*", "впиши*", "нанеси*", "повысь*", "понизь*", "подними*", "вырежи*", "вырежьте", "обнови*",
               # infinitives after a polite frame ("можешь добавить в трейлер музыку?")
               "re:(?<![а-я])(?:добавить|убрать|поменять|изменить|заменить|сократить|укоротить|удлинить|ускорить|"
               "замедлить|увеличить|уменьшить|перекрасить|осветлить|затемнить|исправить|переделать|поправить|"
               "подправить|сдвинуть|передвинуть|вставить|вписать|обрезать|переименовать)(?![а-я])"),
    },
    # Words about the request itself that look like a revision ("this is a bigger one, …"): blanked before
    # the weak revision words are looked for
    "about_request": {
        "en": ("re:^\\W*(?:and\\s+|oh\\s+|ok\\s+)?(?:another|one more|other) thing\\b", "re:\\b(?:this|that|it|the next|next)\\s*(?:one\\s+)?(?:is|'s|will be)\\s+(?:a\\s+)?(?:bit\\s+)?"
               "(?:an?\\s+)?[a-z]+(?:er)?\\s+(?:one|job|thing|project|request|ask|task)\\b",),
    },
    "revise": {
        "en": ("more", "less", "but", "too", "add", "remove", "version", "variation", "variant", "another",
               "put", "insert", "include", "place", "bump up", "bump it", "boost", "crank up", "tone down",
               "dial up", "dial down", "turn up", "turn down",
               "re:\\b" + _COMPARATIVE_EN + "\\b"),
        "zh": ("更", "一点", "一些", "调", "加上", "加个", _ZH_TOO, "不要", "换"),
        "ja": ("少し", "消して", "足して", "加えて", "すぎ", "より"),
        "ru": ("еще", "убери*", "добавь*", "побольше", "поменьше", "более", "менее", "слишком",
               "теплее", "холоднее", "синее", "темнее", "светлее", "ярче", "краснее", "зеленее",
               "мягче", "проще", "больше", "меньше", "контрастнее", "насыщеннее", "веселее",
               "мрачнее", "четче", "другой вариант", "вариант"),
    },
    # Degree words: in languages without articles a noun with one of these and no creation verb
    # ("ролик покороче", "海报暖一点", "ポスターを少し明るく") revises that piece.
    # a message that opens on a comparative changes what is there: "glowier letters", "thicker lines", "more fog"
    "comparative_lead": {
        "en": ("re:^\\W*(?:(?:a bit|a little|a tad|slightly|much|way|even|and|but|ok|okay|now|maybe)\\s+)*"
               "(?:" + _COMPARATIVE_EN + ")\\b",),
    },
    "degree": {
        "en": (),
        "zh": ("更", "一点", _ZH_TOO, "点儿"),
        "ja": ("少し", "すぎ", "やや", "ちょっと"),
        "ru": ("чуть", "слегка", "побольше", "поменьше", "более", "менее", "слишком",
               "теплее", "холоднее", "синее", "темнее", "светлее", "ярче", "краснее", "зеленее", "мягче",
               "проще", "контрастнее", "насыщеннее", "веселее", "мрачнее", "четче", "короче", "длиннее",
               "быстрее", "медленнее", "громче", "тише", "шире", "выше", "ниже", "крупнее", "мельче",
               "тоньше", "толще", "резче", "спокойнее", "живее", "чище", "глубже", "бледнее",
               "динамичнее", "ровнее", "выразительнее", "прозрачнее", "плотнее", "сочнее", "строже",
               "наряднее",
               # "потемнее", "покороче", "поярче": по- + comparative (not "похоже", "последнее")
               "re:(?<![а-я])по(?!хож|следн|дходящ|зже)[а-я]{2,}(?:ее|че|ше|же|ще)(?![а-я])"),
    },
    # What a new piece is for or about ("для кофейни", "про котов"): with it, a Russian degree word
    # describes the new piece ("сделай постер для кофейни, побольше кофе") rather than revising one.
    "purpose": {
        "en": (), "zh": (), "ja": (),
        "ru": ("re:(?<![а-я])(?:для|про|об?|с|со)\\s+[а-я]",),
    },
    # Creation verbs that only ever make something new (not "make"/"сделай"/"做", which also edit).
    "create_only": {
        "en": CREATE_ONLY + ("give me", "i want", "i need", "i'd like", "come up with"),
        "zh": ("re:(?<![油插动图漫壁版国绘糖字书年])画(?![面风家廊布像质])", "生成", "制作", "创作", "re:写(?!实)", "渲染",
               "拍", "来一", "我想要", "我要", "我需要",
               # "做海报" makes one, "海报做暖一点" edits it
               "re:(?:做|弄|搞)(?:[0-9一二两三四五六七八九十几]*[张个幅份套段首支部件组款])?(?:海报|图片|图|画|视频|短片|"
               "动画|logo|标志|名片|封面|图标|壁纸|头像|音乐|歌|模型|插画|横幅|传单|菜单|请柬)"),
        "ja": ("描いて", "描く", "作って", "作る", "作成", "生成", "書いて", "書く", "ほしい", "欲しい", "制作",
               "re:(?:作り|描き|書き)(?:たい|ませんか)"),
        "ru": ("нарисуй*", "создай*", "сгенерир*", "напиши*", "придумай*", "сочини*", "спроектир*",
               "разработ*", "изобрази*", "сними*", "анимир*", "набросай*", "хочу", "нужен", "нужна", "нужно"),
    },
    # Pronouns pointing back at earlier work (cut from subjects) …
    "deictic": {
        "en": ("it", "its",
               # "make her helmet gold", "give him a cape", "her dress should be red": the one just made
               "re:^\\W*(?:(?:now|ok|okay|and|also|just|pls|please|then)\\s+)*(?:(?:make|give|turn|paint|colou?r|put)\\s+)?"
               "(?:her|his|their)\\s+(?!(?:an?|some|one|two|three|four|five)\\b)[a-z]",
               "re:\\bthat\\b(?!\\s+(?:i|you|we|he|she|they|it|the|node|is|was|a|an|my|says|reads|shows|spells|has|"
               "looks|glows|holds|goes|feels|sounds|plays|lights|will|would|can|could)\\b)",
               "this", "these", "those", "them", "that one", "this one", "the last one", "the previous one",
               "the same", "same one", "the result"),
        "zh": ("它", "那个", "这个", "那些", "这些", "上一个", "上一张"),
        # not the conjunctions それと, それから, それに, これから ("and also", "then", "from now on")
        "ja": ("re:(?:それ|これ|あれ)(?!と[、,\\s]|から|に[、,\\s]|で[、,\\s]|では|じゃ)",),
        # "сова Буба — это бабушка Миры": after a dash «это» is the copula "is", not "this one"
        "ru": ("его", "ее", "re:(?<![а-я])их(?![а-я])(?!\\s+(?:дв|тр|четыр|пят|шест|сем|восем|девят|десят|\\d))", "re:(?<![—–-])(?<![—–-]\\s)(?<![а-я])это(?![а-я])", "этот", "эту", "эта", "этого", "тот", "ту", "то же", "такой же"),
    },
    # … and determiners doing the same ("那张海报", "その絵", "прошлый постер"), kept in subjects.
    "deictic_det": {
        "en": (),
        "zh": ("那张", "这张", "刚才", "刚刚", "之前那", "同样", "那只", "这只", "那幅", "这幅", "那段", "这段",
               "那套", "这套", "那组", "这组", "上次那", "上次的", "之前的", "原来的"),
        "ja": ("その", "この", "あの", "さっき", "先ほど", "前の", "同じ"),
        "ru": ("предыдущ*", "последн*", "прошл*"),
    },
    # Marks a media word as an input rather than the deliverable ("from this photo", "把这张照片").
    "source": {
        "en": ("re:\\b(?:this|that|my|our|from|yesterday's|yesterdays|today's|last week's|the last|"
               "previous|existing|uploaded|of the|of my|of this|of our|with this|using|based on|"
               "for the|for my|for our)\\b(?:\\s+[\\w'-]+){0,2}\\s*$",),
        "zh": ("re:(?:这张|那张|这个|那个|这段|那段|昨天|上次|之前|刚才|我的|用|把|根据|基于|从)[^，。,]{0,6}$",),
        "ja": ("re:(?:この|その|あの|昨日|前の|さっきの|私の|うちの)[^、。]{0,6}$",
               "re:^[^、。]{0,3}(?:から|を元に|をもとに|を使って)"),
        "ru": ("re:(?<![а-я])(?:этой|этот|эту|этого|из|с|со|по|мой|мою|моей|моего|наш\\w*|вчерашн\\w*|"
               "прошл\\w*|для)(?:\\s+[а-я-]+){0,2}\\s*$",),
    },
    "past_ref": {  # the creator points at something that already exists ("yesterday's cat")
        "en": ("yesterday's", "yesterdays", "yesterday", "last week's", "earlier", "my photo*",
               "my picture*", "my cat", "my dog", "our photo*", "from this", "from my", "this photo*",
               "this image*", "this picture*", "the photo", "the one i", "uploaded"),
        "zh": ("昨天", "上次", "之前", "刚才", "我的照片", "这张照片", "那张照片", "这张图", "那张图", "我家"),
        "ja": ("昨日", "前回", "さっきの", "この写真", "その写真", "私の写真", "うちの"),
        "ru": ("вчерашн*", "вчера", "прошл*", "эту фот*", "этой фот*", "моего", "моей", "мою фот*",
               "эту картинк*", "этой картинк*"),
    },
    "series": {
        "en": ("series", "set of", "collection", "a couple of", "a few", "several", "multiple",
               "bunch of", "batch of", "campaign", "kit", "bundle"),
        "zh": ("系列", "一套", "一组", "几张", "多张", "一些", "几幅", "组图", "一式", "全套", "整套", "套装"),
        "ja": ("シリーズ", "セット", "連作", "何枚か", "数枚", "いくつか", "複数"),
        "ru": ("сери*", "набор*", "комплект*", "несколько", "пару"),
    },
    "sequence": {
        "en": ("and then", "then", "after that", "afterwards", "followed by", "matching", "as well as",
               "plus a", "and also", "step by step", "to match"),
        "zh": ("然后", "接着", "之后", "re:再做(?!一次|一遍|一回|一下)", "配套", "搭配", "以及", "并且", "同时", "一步步"),
        "ja": ("それから", "その後", "そして", "次に", "合わせた", "合わせて", "に合う", "とそれに", "も作って"),
        "ru": ("потом", "затем", "а затем", "после этого", "подходящ*", "в пару", "в тон", "также",
               "а также"),
    },
    "project": {
        "en": ("project", "campaign", "launch", "brand", "branding", "plan", "roadmap", "pitch",
               "moodboard", "mood board", "identity"),
        "zh": ("项目", "活动策划", "策划", "品牌", "方案", "re:宣传(?:片|视频|图|册|海报|活动|方案|计划|物料|照|素材|文案|单|页|短片|动画|\\s*$)", "企划", "计划"),
        "ja": ("プロジェクト", "キャンペーン", "企画", "ブランド", "計画", "プラン"),
        "ru": ("проект*", "кампани*", "бренд*", "план", "запуск*", "айдентик*"),
    },
    "design": {  # design-style verbs make a 3D request a multi-step goal
        "en": ("design", "concept", "prototype"),
        "zh": ("设计", "概念"),
        "ja": ("デザイン", "コンセプト", "設計"),
        "ru": ("спроектир*", "разработ*", "дизайн*", "концепт*"),
    },
    "film": {  # a film of several shots: storyboard + production graph (with a length or a shot count)
        "en": ("short film", "film", "movie", "cut together"),
        "zh": ("短片", "影片", "电影", "微电影"),
        "ja": ("短編", "ショートフィルム", "映画", "ショートムービー"),
        "ru": ("короткометраж*", "фильм*", "кино"),
    },
    "regenerate": {  # "regenerate shot 2 only": make a node again with unchanged inputs
        "en": ("regenerate", "redo", "remake", "re-run", "rerun", "make again", "try again"),
        "zh": ("重新生成", "重做", "重拍", "再生成"),
        "ja": ("作り直", "再生成", "撮り直"),
        "ru": ("перегенерир*", "передела*", "пересним*", "заново"),
    },
    "storyboard": {
        "en": ("storyboard*", "shot list", "story board"),
        "zh": ("分镜", "故事板"),
        "ja": ("絵コンテ", "ストーリーボード", "コンテ"),
        "ru": ("раскадровк*", "сториборд*"),
    },
    "flow": {  # (a *.flow.json file name counts too: see intent.py)
        "en": ("flow", "workflow", "node", "pipeline", "graph"),
        "zh": ("流程", "节点", "工作流"),
        "ja": ("フロー", "ノード", "ワークフロー"),
        "ru": ("узел", "узл*", "воркфлоу", "флоу", "поток*", "пайплайн*", "граф", "графа", "графе", "графом", "графу"),
    },
    # An imperative that puts something into (or takes it out of) existing work: "put the date on the
    # poster", "在海报上加上日期", "ポスターに日付を入れて", "добавь дату на постер". Such a message is no
    # question about the date, the time, the status or the budget. en/ru: it opens the message.
    "edit_lead": {
        "en": ("put", "add", "insert", "include", "place", "stamp", "print", "write", "remove", "move",
               "change", "update", "set", "use", "replace", "swap", "delete", "drop", "fix", "label the",
               "caption the", "annotate", "retitle", "rename", "recolor", "recolour", "crop", "resize"),
        "zh": ("加上", "加个", "加到", "添加", "加入", "写上", "写到", "放上", "放到", "印上", "印到", "标上",
               "标注", "去掉", "删掉", "改成", "换成", "改为"),
        # (a te-form before も is "even if", no edit: "食洗機に入れても大丈夫ですか")
        "ja": ("re:(?:入れ|加え|載せ|書い|表示し|消し|つけ|付け|変え|にし)て(?!も)", "追加", "書き込", "入れる",
               "re:を[^、。を]{1,12}に[。!！]?$"),  # "チラシのほうの日付を4月12日に": the verb left out
        "ru": ("добавь*", "поставь*", "напиши*", "вставь*", "укажи*", "убери*", "размести*", "помести*",
               "впиши*", "нанеси*", "измени*", "поменяй*", "замени*", "удали*"),
    },
    "edit": {
        "en": ("edit", "change", "modify", "update", "tweak", "adjust", "set", "make", "use", "uses",
               "replace", "switch"),
        "zh": ("改", "编辑", "修改", "调整", "换", "设置", "更新", "用"),
        "ja": ("編集", "変更", "修正", "変えて", "調整", "使う", "して"),
        "ru": ("измени*", "отредактир*", "поменяй*", "исправь*", "обнови*", "настрой*", "замени*",
               "сделай*"),
    },
}
# What asks for a piece in one clause of a message: a creation verb or a wish ("we need", "这次需要", "нужны"). The
# clause that asks holds the request, and its title ("our old logo looks dated. draw a new one with a croissant").
GEN["asks"] = {lang: words + {
    "en": ("we need", "we want", "we'd like", "i'm looking for", "could we get", "can we get", "can i get"),
    "zh": ("需要", "想要"),
    "ja": ("が欲しい", "がほしい"),
    "ru": ("нужны", "надо", "хотим", "хотелось бы"),
}.get(lang, ()) for lang, words in GEN["create"].items()}

MEDIA: Table = {
    "image": {
        "en": ("image", "picture", "pic", "pics", "photo", "illustration", "drawing", "painting",
               "poster", "portrait", "logo", "icon", "wallpaper", "artwork", "sketch", "banner",
               "cover", "thumbnail", "sticker", "keyframe", "draw", "paint", "render", "flyer",
               "postcard", "avatar", "card", "invitation",
               # a post for a feed ("4 instagram posts"), not the verb ("post it on the site")
               "re:\\b(?:(?:instagram|insta|ig|social|social media|telegram|facebook|fb|linkedin|blog|feed)\\s+)posts?\\b",
               "brochure", "pamphlet", "booklet", "leaflet", "lanyard", "name badge"),
        "zh": ("图片", "图像", "照片", "画", "插画", "海报", "头像", "壁纸", "封面", "图标", "图", "横幅",
               "贴纸", "传单", "明信片", "名片", "请柬", "邀请函", "宣传册", "小册子", "胸牌", "工牌", "线稿", "线描", "素描", "速写", "主视觉", "贴文", "帖子"),
        "ja": ("絵", "画像", "写真", "イラスト", "ポスター", "アイコン", "壁紙", "描い", "描く", "ロゴ", "背景画",
               "バナー", "表紙", "チラシ", "ステッカー", "名刺", "招待状", "看板", "栞", "しおり", "ラベル", "案内状",
               "ブックカバー", "立て看板", "リーフレット", "線画", "スケッチ", "デッサン", "キービジュアル", "メインビジュアル"),
        "ru": ("картин*", "изображен*", "рисун*", "фото*", "постер*", "плакат*", "иллюстрац*",
               "логотип*", "нарису*", "обложк*", "иконк*", "аватар*", "афиш*", "баннер*", "открытк*",
               "арт", "фотк*", "стикер*", "наклейк*", "визитк*", "листовк*", "флаер*", "эмблем*",
               "этикетк*", "пригласительн*", "брошюр*", "буклет*", "бейдж*",
               "re:(?<![а-я])карт(?:а|у|е|ы|ой|ам|ах)(?![а-я])",  # a map (not «картинка», already above)
               "re:(?<![а-я])пост(?:ы|ов|ам|ами|ах)(?![а-я])"),  # posts for a feed (not «пост», a fast)
    },
    "video": {
        "en": ("video", "clip", "animation", "animate", "movie", "film", "gif", "footage", "trailer",
               "commercial", "ad", "advert", "teaser", "reel"),
        "zh": ("视频", "短片", "动画", "片段", "影片", "短视频", "动图", "广告片", "预告片"),
        "ja": ("動画", "ビデオ", "クリップ", "アニメーション", "映像", "ムービー", "cm", "アニメ化", "映画", "短編映画",
               "ショートフィルム", "re:アニメ(?!調|風|っぽ|タッチ|化|ーション|絵)"),  # "短いアニメ", not "アニメ調"
        "ru": ("видео*", "ролик*", "клип*", "анимац*", "анимир*", "фильм*", "гифк*", "реклам*",
               "оживи*", "трейлер*"),
    },
    "3d": {
        "en": ("re:(?<![a-z0-9])3-?d(?![a-z0-9])", "mesh", "sculpt*", "gltf", "glb", "obj model",
               "3d model", "figurine"),
        "zh": ("三维", "立体", "模型", "手办"),
        "ja": ("立体", "モデル", "3次元", "フィギュア"),
        "ru": ("re:(?<![a-zа-я0-9])3-?[dд](?![a-zа-я0-9])", "трехмерн*", "объемн*", "модел*",
               "фигурк*", "скульптур*"),
    },
    "audio": {
        "en": ("audio", "sound", "music", "song", "jingle", "soundtrack", "voiceover", "voice over",
               "melody", "tune", "beat", "podcast", "sfx", "narration", "track", "theme song", "drum loop",
               "guitar loop", "bass loop", "synth loop", "piano loop", "lofi loop", "music loop", "audio loop",
               "beat loop"),
        "zh": ("音频", "音乐", "歌", "配乐", "音效", "声音", "旋律", "配音", "曲子", "背景音乐", "吉他loop", "鼓loop",
               "循环乐段"),
        "ja": ("音楽", "音声", "曲", "サウンド", "効果音", "bgm", "歌", "ジングル", "メロディ", "ナレーション",
               "環境音", "ループ素材", "ドラムループ"),
        "ru": ("аудио*", "музык*", "песн*", "звук*", "мелоди*", "саундтрек*", "джингл*", "озвучк*",
               "трек*", "подкаст*"),
    },
    "document": {
        "en": ("document", "doc", "docs", "script",
               # an Instagram story, or "a story version" of a picture, is a format, not a text
               "re:(?<!instagram )(?<!insta )(?<!ig )\\bstory\\b(?!\\s+(?:version|format|size|post|ratio|frame|cut))",
               "essay", "article", "brief", "outline",
               "notes", "markdown", "poem", "write-up", "blurb", "copy", "caption", "tagline", "text",
               "re:\\bletter\\b", "treatment"),  # (not "glowier letters": the letters on a piece)
        "zh": ("文档", "文案", "剧本", "脚本", "故事", "文章", "大纲", "文字", "诗", "标语", "说明"),
        "ja": ("文書", "ドキュメント", "台本", "脚本", "物語", "ストーリー", "文章", "記事", "詩", "原稿",
               "キャッチコピー", "コピー"),
        "ru": ("документ*", "текст*", "сценари*", "истори*", "стать*", "стих*", "рассказ*", "слоган*",
               "конспект*", "письм*"),
    },
}
# Document words that also name a part of a picture or a clip ("remove the text", "把文字去掉", "подпись
# крупнее"): in an edit they say what changes on the piece, not that the piece is a document
PIECE_PARTS = {
    "en": ("text", "caption", "captions", "copy", "tagline", "title text", "subtitle", "subtitles", "lettering",
           "words", "wording", "label", "labels"),
    "zh": ("文字", "字", "标语", "文案", "字幕", "标题"),
    "ja": ("文字", "テキスト", "コピー", "キャッチコピー", "字幕", "タイトル"),
    "ru": ("текст*", "подпис*", "слоган*", "надпис*", "титр*"),
}
POSTER = {  # image words that name the deliverable itself (kept in the subject, set the noun)
    "en": ("poster", "flyer", "banner"),
    "zh": ("海报", "宣传画", "传单"),
    "ja": ("ポスター", "チラシ", "フライヤー"),
    "ru": ("постер*", "плакат*", "афиш*"),
}
# Deliverables a kit lists ("logo, business card and banner", "一式：logo、名片、海报"): two or more of
# them in a list make a multi-step goal (see intent._bundle_items).
BUNDLE_ITEMS = {
    "en": ("logo", "business card", "card", "banner", "poster", "flyer", "brochure", "menu", "letterhead",
           "envelope", "sticker", "label", "packaging", "package design", "tote bag", "tote", "t-shirt",
           "tee", "mug", "sign", "signage", "icon", "favicon", "website", "landing page", "social post",
           "cover", "thumbnail", "invitation", "badge", "video", "clip", "jingle", "song", "trailer",
           "teaser", "mascot", "wallpaper", "presentation", "deck", "slides", "newsletter", "billboard",
           "catalog", "catalogue", "price list", "coupon", "voucher", "gift card", "name tag", "postcard",
           "storyboard", "script", "illustration", "animation", "3d model", "model", "lookbook",
           "avatar", "ad", "price tag", "leaflet", "certificate", "ticket", "tshirt", "tshirt print",
           "t-shirt print", "shirt", "hoodie", "cap", "lanyard", "wristband", "thank you card", "thank-you card",
           "booklet", "programme", "program", "pamphlet", "medal", "bib", "apron", "banner scroll", "story slides",
           "entrance art", "props", "puzzle props", "reel"),
    "zh": ("标志", "名片", "横幅", "海报", "传单", "宣传册", "菜单", "信纸", "信封", "贴纸", "标签", "包装",
           "手提袋", "t恤", "杯子", "招牌", "图标", "网站", "封面", "请柬", "邀请函", "视频", "短片", "宣传片",
           "配乐", "吉祥物", "壁纸", "幻灯片", "画册", "价目表", "优惠券", "工牌", "明信片", "分镜", "插画",
           "动画", "模型", "头像", "主视觉", "广告", "价签", "门票", "证书", "日历"),
    "ja": ("ロゴ", "名刺", "バナー", "ポスター", "チラシ", "フライヤー", "パンフレット", "メニュー", "便箋", "封筒",
           "ステッカー", "ラベル", "パッケージ", "ショッパー", "tシャツ", "マグ", "看板", "アイコン", "ウェブサイト",
           "サイト", "表紙", "招待状", "動画", "ジングル", "マスコット", "壁紙", "スライド", "カタログ", "クーポン",
           "ショップカード", "紙袋", "ポストカード", "絵コンテ", "イラスト", "アニメーション", "モデル", "広告",
           "値札", "チケット", "カレンダー"),
    "ru": ("логотип*", "визитк*", "баннер*", "постер*", "плакат*", "афиш*", "флаер*", "листовк*", "буклет*",
           "брошюр*", "меню", "бланк*", "конверт*", "стикер*", "наклейк*", "этикетк*", "упаковк*",
           "футболк*", "кружк*", "вывеск*", "иконк*", "сайт*", "лендинг*", "обложк*", "приглашени*",
           "видео*", "ролик*", "джингл*", "маскот*", "талисман*", "обои", "презентаци*", "каталог*",
           "купон*", "сертификат*", "бейдж*", "открытк*", "раскадровк*", "иллюстраци*", "анимаци*",
           "модел*", "аватар*", "реклам*", "ценник*", "билет*", "карточк*", "календар*"),
}
BUNDLE_JOIN = {  # what separates listed items ("logo, card and banner", "logo、名片和海报", "ロゴと名刺")
    "en": r"\s*(?:,|;|/|\+|&|\band\b|\bor\b|\bplus\b)\s*(?:(?:and|or)\s+)?"
          r"(?:(?:an?|the|one|some|matching|new|simple|our|my)\s+)*(?:[a-z'-]+\s+)?",
    "ru": r"\s*(?:,|;|/|\+|(?<![а-я])(?:и|или|а также|плюс)(?![а-я]))\s*(?:(?:и|или)\s+)?(?:[а-я-]+\s+)?",
    "zh": r"\s*(?:[,，、;；/+&]|和|与|跟|及|以及|还有|或)\s*[^\s,，、;；。:：]{0,4}",
    "ja": r"\s*(?:[,，、;；/+&]|と|や)\s*[^\s,，、;；。:：]{0,4}",
}
BUNDLE_INSIDE = {  # a list that only describes a piece ("a poster with a logo and a tagline", "带logo和标语的海报")
    "en": r"\b(?:with|featuring|showing|of|on|in|for|from)\s+(?:(?:an?|the|its|their|our|my)\s+)?$",
    "ru": r"(?<![а-я])(?:с|со|на|из|про|для|в)\s+(?:[а-я-]+\s+)?$",
    "zh": r"(?:带|带有|有|含|包含|印着|印有|配上|配有|上的|里的)\s*$",
    "ja": r"(?:付きの|入りの|入った)\s*$",
}
# Nouns a count may attach to ("4 posters", "три варианта").
DELIVERABLES = {
    "en": ("poster", "image", "picture", "pic", "photo", "illustration", "drawing", "painting",
           "variation", "version", "option", "shot", "frame", "scene", "panel", "clip", "video",
           "song", "track", "logo", "icon", "design", "model", "render", "concept", "draft",
           "wallpaper", "sketch", "banner", "cover", "card", "slide", "keyframe", "sticker",
           "character", "thumbnail", "jingle", "loop", "animation", "page", "flyer", "avatar",
           "variant", "take", "idea", "mockup", "postcard", "invitation", "label", "emoji", "gif", "meme",
           "badge", "layout", "mascot", "tile", "emote", "headshot", "portrait", "vignette", "token", "plate",
           "print", "post", "spread", "coaster", "magnet", "pin", "patch", "bookmark", "recipe", "screenshot",
           "price tag", "reel", "carousel", "episode", "caption"),
    "ru": ("постер*", "плакат*", "картин*", "изображен*", "иллюстрац*", "фото*", "вариант*", "верси*",
           "кадр*", "сцен*", "шот*", "ролик*", "видео*", "клип*", "песн*", "трек*", "мелоди*",
           "логотип*", "иконк*", "обложк*", "модел*", "эскиз*", "афиш*", "рисун*", "баннер*", "арт*",
           "слайд*", "персонаж*", "идеи", "идей", "стикер*", "наклейк*", "визитк*", "открытк*", "листовк*",
           "флаер*", "макет*", "страниц*", "значк*", "эмблем*", "аватар*", "гифк*", "мем*", "эмодзи",
           "приглашени*", "этикет*", "портрет*", "маскот*", "талисман*", "штук*", "пост*", "магнит*", "футболк*", "кружк*", "табличк*",
           "закладк*", "рецепт*", "скриншот*", "разворот*", "ценник*", "сторис", "карточ*", "эпизод*"),
}
CJK_COUNTERS = {  # counters that count deliverables (not 只/匹: "三只猫" is one picture of three cats)
    "zh": ("张", "幅", "份", "段", "首", "部", "款", "版", "条", "帧", "篇", "集", "镜", "支", "个", "页", "頁"),
    "ja": ("枚", "本", "つ", "個", "曲", "点", "案", "カット", "ショット", "コマ", "シーン", "種類", "パターン", "ページ",
           "日分"),
}
PLURAL_DELIVERABLE = {  # a plural deliverable noun asks for a series
    "en": ("re:\\b(?:posters|images|pictures|pics|photos|illustrations|drawings|paintings|icons|"
           "wallpapers|banners|flyers|stickers|covers|logos|avatars|cards|sketches|thumbnails)\\b",),
    "ru": ("постеры", "постеров", "плакаты", "плакатов", "картинок", "изображения", "изображений",
           "иллюстрации", "иллюстраций", "афиши", "обложки", "обложек", "логотипы", "логотипов",
           "рисунки", "рисунков"),
    "zh": (),
    "ja": (),
}

# --- style: tag -> words --------------------------------------------------------------------
STYLES: Table = {
    "retro": {"en": ("retro",), "zh": ("复古",), "ja": ("レトロ",), "ru": ("ретро",)},
    "vintage": {"en": ("vintage", "old-school", "old school"), "zh": ("怀旧", "老式", "年代感"),
                "ja": ("ヴィンテージ", "ビンテージ", "懐かし"), "ru": ("винтаж*", "старин*")},
    "warm": {"en": ("warm*",), "zh": ("暖", "温暖"), "ja": ("暖か", "温か", "暖色", "ウォーム"),
             "ru": ("тепл*",)},
    "cool": {"en": ("cool", "cooler", "cold", "colder", "icy"), "zh": ("冷色", "冷调", "清冷", "冷一点"),
             "ja": ("寒色", "クール", "冷たい"), "ru": ("холодн*", "прохладн*")},
    "blue": {"en": ("blue*", "navy", "azure", "cyan"), "zh": ("蓝",), "ja": ("青", "ブルー"),
             "ru": ("син*", "голуб*")},
    "red": {"en": ("red", "redder", "crimson", "scarlet"), "zh": ("红",), "ja": ("赤", "レッド"),
            "ru": ("красн*", "алый", "алая")},
    "green": {"en": ("green*", "emerald"), "zh": ("绿",), "ja": ("緑", "グリーン"), "ru": ("зелен*",)},
    "yellow": {"en": ("yellow*",), "zh": ("黄色", "金黄"), "ja": ("黄色", "イエロー"), "ru": ("желт*",)},
    "purple": {"en": ("purple*", "violet"), "zh": ("紫",), "ja": ("紫", "パープル"),
               "ru": ("фиолет*", "пурпур*", "сиренев*")},
    "pink": {"en": ("pink*",), "zh": ("粉色", "粉红"), "ja": ("ピンク",), "ru": ("розов*",)},
    "orange": {"en": ("orange",), "zh": ("橙", "橘"), "ja": ("オレンジ", "橙"), "ru": ("оранжев*",)},
    "gold": {"en": ("gold*",), "zh": ("金色", "金光"), "ja": ("金色", "ゴールド"), "ru": ("золот*",)},
    "monochrome": {"en": ("black and white", "b&w", "monochrome", "grayscale", "greyscale"),
                   "zh": ("黑白", "单色"), "ja": ("白黒", "モノクロ"), "ru": ("черно-бел*", "монохром*")},
    "night": {"en": ("night*", "nocturnal", "moonlit"), "zh": ("夜", "晚上"), "ja": ("夜", "ナイト"),
              "ru": ("ночн*", "ночь*", "ночью")},
    "daylight": {"en": ("daylight", "daytime", "sunny"), "zh": ("白天", "阳光"), "ja": ("昼", "晴れ"),
                 "ru": ("дневн*", "солнечн*")},
    "sunset": {"en": ("sunset", "golden hour", "dusk"), "zh": ("日落", "黄昏", "夕阳"),
               "ja": ("夕日", "夕焼け", "夕暮れ"), "ru": ("закат*",)},
    "minimal": {"en": ("minimal*", "clean", "flat"), "zh": ("极简", "简约", "简洁", "扁平"),
                "ja": ("ミニマル", "シンプル", "フラット"), "ru": ("минимал*", "лаконичн*")},
    "neon": {"en": ("neon",), "zh": ("霓虹",), "ja": ("ネオン",), "ru": ("неон*",)},
    "pastel": {"en": ("pastel*",), "zh": ("粉彩", "马卡龙"), "ja": ("パステル",), "ru": ("пастел*",)},
    "cyberpunk": {"en": ("cyberpunk",), "zh": ("赛博朋克",), "ja": ("サイバーパンク",),
                  "ru": ("киберпанк*",)},
    "watercolor": {"en": ("watercolo*",), "zh": ("水彩",), "ja": ("水彩",), "ru": ("акварел*",)},
    "oil": {"en": ("oil paint*", "oil"), "zh": ("油画",), "ja": ("油絵",), "ru": ("маслом", "масл*")},
    "anime": {"en": ("anime", "manga"), "zh": ("动漫", "二次元", "日漫"), "ja": ("アニメ調", "アニメ風", "漫画風"),
              "ru": ("аниме", "манга")},
    "realistic": {"en": ("realistic", "photoreal*", "lifelike"), "zh": ("写实", "逼真"),
                  "ja": ("リアル", "写実"), "ru": ("реалистичн*", "фотореал*")},
    "cinematic": {"en": ("cinematic", "filmic"), "zh": ("电影感", "电影风"), "ja": ("シネマティック", "映画風"),
                  "ru": ("кинематограф*",)},
    "dark": {"en": ("dark*", "moody", "gloomy"), "zh": ("暗", "深色", "阴郁"), "ja": ("暗い", "暗く", "ダーク"),
             "ru": ("темн*", "мрачн*")},
    "bright": {"en": ("bright*", "vivid", "vibrant"), "zh": ("明亮", "鲜艳", "亮"),
               "ja": ("明るい", "明るく", "鮮やか"), "ru": ("ярк*", "ярче", "светл*")},
    "soft": {"en": ("soft*", "gentle"), "zh": ("柔和", "柔"), "ja": ("柔らか", "ソフト"), "ru": ("мягк*", "мягче")},
    "dreamy": {"en": ("dream*", "ethereal"), "zh": ("梦幻",), "ja": ("幻想的", "夢"),
               "ru": ("сказочн*", "мечтательн*", "волшебн*")},
    "futuristic": {"en": ("futuris*", "sci-fi", "scifi"), "zh": ("未来", "科幻"), "ja": ("未来", "sf"),
                   "ru": ("футурист*", "фантастич*")},
    "cartoon": {"en": ("cartoon*",), "zh": ("卡通",), "ja": ("カートゥーン", "マンガ風"), "ru": ("мульт*",)},
    "pixel": {"en": ("pixel*", "8-bit"), "zh": ("像素",), "ja": ("ドット絵", "ピクセル"), "ru": ("пиксел*",)},
    "cute": {"en": ("cute", "kawaii"), "zh": ("可爱", "萌"), "ja": ("かわいい", "可愛い", "カワイイ"),
             "ru": ("мил*",)},
    "jazz": {"en": ("jazz*",), "zh": ("爵士",), "ja": ("ジャズ",), "ru": ("джаз*",)},
    "noir": {"en": ("noir",), "zh": ("黑色电影",), "ja": ("ノワール",), "ru": ("нуар",)},
    "surreal": {"en": ("surreal*",), "zh": ("超现实",), "ja": ("シュール", "超現実"), "ru": ("сюрреал*",)},
    "elegant": {"en": ("elegant", "luxur*"), "zh": ("优雅", "高级感", "奢华"), "ja": ("エレガント", "上品", "高級"),
                "ru": ("элегантн*", "роскошн*")},
}

# --- stopwords (keywords / similarity) ------------------------------------------------------
STOPWORDS = {
    "en": frozenset(
        "a an the and or but of for to in on at by with from into onto about as is are was were be "
        "been being it its this that these those them they we you i me my our your he she his her "
        "do does did done so then than too very can could would will shall should may might must "
        "please pls give show want need like "
        "let let's lets some any one just also again more less new up down out over now here there "
        "what which who how why when where all each every no not yes ok okay hey hi hello thanks "
        "real really quick quickly gimme kinda sorta".split()
        + list(CREATE_STOPWORDS)),
    "ru": frozenset(
        "и или но а в во на с со к ко по о об от до из у за для при над под про без это этот эта эти "
        "то тот та те его ее их мне меня мой моя мою мои ты вы мы я он она они же ли бы не да нет "
        "пожалуйста сделай сделайте нарисуй нарисуйте создай создайте сгенерируй напиши хочу нужно "
        "нужен нужна еще ещё очень так как что где когда который которая которое".split()),
}
# Words any two creative tasks may share without being about the same thing: media and deliverable
# nouns, series words, edit verbs, degree and aspect words. Matching counts them as weak evidence
# (nlu.matching.is_generic); a shared subject ("jazz", "奶茶", "кофейня") is what ties a message to a task.
GENERIC_WORDS = {
    "en": ("series", "set", "collection", "batch", "bunch", "kit", "bundle", "version", "variation",
           "variant", "option", "draft", "piece", "thing", "stuff", "image", "picture", "pic", "photo",
           "poster", "flyer", "banner", "video", "clip", "film", "movie", "animation", "illustration",
           "drawing", "painting", "design", "graphic", "visual", "artwork", "art", "render", "model",
           "song", "music", "track", "audio", "sound", "document", "doc", "file", "text", "copy", "add",
           "change", "edit", "update", "adjust", "tweak", "fix", "put", "remove", "replace", "turn", "try",
           "redo", "keep", "bit", "little", "lot", "way", "look", "style", "color", "colour", "new", "old",
           "first", "second", "last", "next", "final", "good", "nice", "better", "slightly", "ones",
           "shorten", "trim", "crop", "resize", "bigger", "smaller", "larger", "warmer", "cooler",
           "brighter", "darker", "shorter", "longer", "faster", "slower", "logo", "card", "business",
           "icon", "cover", "sticker", "label", "menu", "invitation", "packaging", "slide", "slides",
           "storyboard", "trailer", "ad", "mascot", "wallpaper", "thumbnail", "avatar", "portrait", "sketch",
           "template", "mockup", "layout", "page", "frame", "shot", "scene", "list", "listing", "product",
           "club", "shop", "store", "studio", "company", "team", "school", "event", "party", "sale", "brand",
           "channel", "app", "website", "post", "opening", "launch", "announcement", "grand", "promo", "promotion",
           "sheet", "character", "turnaround", "3d", "map"),
    "ru": ("серия", "серию", "серии", "набор", "комплект", "коллекция", "версия", "вариант", "картинка", "лист",
           "персонаж",
           "картинки", "изображение", "фото", "постер", "плакат", "видео", "ролик", "клип", "иллюстрация",
           "рисунок", "дизайн", "модель", "песня", "музыка", "трек", "звук", "текст", "документ", "файл",
           "штука", "добавь", "измени", "поменяй", "убери", "поправь", "исправь", "обнови", "замени",
           "используй", "попробуй", "сократи", "немного", "чуть", "стиль", "цвет", "новый", "новую", "новые",
           "старый", "первый", "последний", "хороший", "лучше", "больше", "меньше", "теплее", "ярче",
           "темнее", "короче", "длиннее", "быстрее", "логотип", "визитка", "баннер", "обложка", "иконка",
           "стикер", "наклейка", "этикетка", "меню", "упаковка", "открытка", "приглашение", "раскадровка",
           "трейлер", "реклама", "афиша", "листовка", "флаер", "слайд", "презентация", "кадр", "сцена",
           "клуб", "магазин", "студия", "компания", "команда", "школа", "мероприятие", "вечеринка",
           "распродажа", "бренд", "канал", "приложение", "сайт", "товар", "продукт", "открытие", "открытия",
           "запуск", "анонс", "акция"),
    "zh": ("系列", "一套", "一组", "套", "组", "海报", "图片", "图", "画", "照片", "视频", "短片", "插画", "设计",
           "模型", "音乐", "歌", "文案", "文档", "版本", "方案", "改", "改成", "换成", "加上", "调整", "修改",
           "一点", "一些", "颜色", "配色", "风格", "新的", "再", "更", "标志", "名片", "横幅", "封面", "图标",
           "贴纸", "标签", "菜单", "包装", "请柬", "邀请函", "分镜", "预告片", "广告", "传单", "幻灯片", "壁纸",
           "头像", "镜头", "俱乐部", "工作室", "公司", "团队", "学校", "活动", "派对", "品牌", "频道", "产品", "商品",
           "开业", "开张", "开幕", "宣传", "促销", "上新"),
    "ja": ("シリーズ", "セット", "一式", "ポスター", "画像", "写真", "絵", "イラスト", "動画", "ビデオ", "デザイン",
           "モデル", "音楽", "曲", "文章", "バージョン", "案", "変更", "修正", "追加", "色", "スタイル", "新",
           "ロゴ", "名刺", "バナー", "表紙", "アイコン", "ステッカー", "ラベル", "メニュー", "パッケージ", "招待状",
           "絵コンテ", "予告", "広告", "チラシ", "スライド", "壁紙", "カット", "シーン", "クラブ", "スタジオ", "会社",
           "チーム", "学校", "イベント", "パーティー", "セール", "ブランド", "チャンネル", "アプリ", "商品", "製品",
           "オープン", "告知", "開店", "開業", "新装", "キャンペーン"),
}
CJK_STOPCHARS = frozenset("的了吗呢吧啊呀我你他她它们这那个一只张把给帮请要想让和与及在是就也都还很着过么"
                          "をにがはでともへやのかねよなだです")

# --- subjects across languages ---------------------------------------------------------------
# What a piece is about, in each language, so "灯塔日历" meets the "Lighthouse calendar" task and
# "hotpot posters" finds "火锅店开业海报" by search (A6). Subjects only: deliverable nouns ("poster", "菜单")
# are matched elsewhere and are weak evidence. Entry syntax as above; CJK entries are literal substrings,
# so keep them specific ("灯塔", not "灯").
SUBJECTS: Table = {
    "lighthouse": {"en": ("lighthouse",), "zh": ("灯塔",), "ja": ("灯台",), "ru": ("маяк*",)},
    "cell": {"en": ("cell diagram", "cell biology", "plant cell", "animal cell", "mitochondria"),
             "zh": ("细胞",), "ja": ("細胞",), "ru": ("клетк*", "клеточн*")},
    "molecule": {"en": ("molecule", "molecules", "molecular"), "zh": ("分子",), "ja": ("分子",),
                 "ru": ("молекул*",)},
    "kanji": {"en": ("kanji",), "zh": ("汉字",), "ja": ("漢字",), "ru": ("иероглиф*", "кандзи")},
    "calendar": {"en": ("calendar",), "zh": ("日历", "月历", "挂历", "台历"), "ja": ("カレンダー",),
                 "ru": ("календар*",)},
    "sushi": {"en": ("sushi", "nigiri"), "zh": ("寿司",), "ja": ("寿司", "すし", "スシ"), "ru": ("суши",)},
    "hotpot": {"en": ("hotpot", "hot pot"), "zh": ("火锅",), "ja": ("火鍋",), "ru": ("хотпот*",)},
    "bakery": {"en": ("bakery", "bakeries", "bread", "baker", "croissant"), "zh": ("面包", "烘焙", "可颂"),
               "ja": ("パン屋", "ベーカリー", "クロワッサン"), "ru": ("пекарн*", "хлеб*", "булочн*", "круассан*")},
    "honey": {"en": ("honey",), "zh": ("蜂蜜",), "ja": ("蜂蜜", "はちみつ", "ハチミツ"),
              "ru": ("мед", "меда", "меду", "медом", "медов*")},
    "flower": {"en": ("flower", "florist", "bouquet"), "zh": ("花店", "鲜花", "花束", "花卉"),
               "ja": ("花屋", "花束", "フラワー", "生花"), "ru": ("цветы", "цветочн*", "букет*", "флорист*")},
    "terrace": {"en": ("terrace", "patio", "veranda"), "zh": ("露台", "阳台"), "ja": ("テラス", "ベランダ"),
                "ru": ("веранд*", "террас*")},
    "portfolio": {"en": ("portfolio",), "zh": ("作品集",), "ja": ("ポートフォリオ",), "ru": ("портфолио",)},
    "moon": {"en": ("moon",), "zh": ("月亮", "月球"), "ja": ("ムーン",), "ru": ("луна", "луну", "луны", "луной", "лунн*")},
    "sea": {"en": ("sea", "ocean", "beach", "seaside"), "zh": ("大海", "海边", "海滩", "海洋"),
            "ja": ("海辺", "ビーチ", "海岸"), "ru": ("море", "моря", "морю", "морем", "морск*", "пляж*", "океан*")},
    "mountain": {"en": ("mountain", "hiking"), "zh": ("登山", "雪山", "山峰", "徒步"), "ja": ("登山", "山頂", "雪山"),
                 "ru": ("гора", "горы", "гору", "горах", "re:(?<![а-я])горн(?:ый|ая|ое|ые|ого|ой|ых|ом)(?![а-я])",
                        "поход*")},
    "robot": {"en": ("robot*",), "zh": ("机器人",), "ja": ("ロボット",), "ru": ("робот*",)},
    "dragon": {"en": ("dragon",), "zh": ("龙",), "ja": ("ドラゴン", "竜", "龍"), "ru": ("дракон*",)},
    "space": {"en": ("outer space", "rocket", "astronaut", "planet", "spaceship"),
              "zh": ("太空", "火箭", "宇航员", "星球", "宇宙"), "ja": ("宇宙", "ロケット", "宇宙飛行士"),
              "ru": ("космос*", "космическ*", "ракет*", "космонавт*", "планет*")},
    "book": {"en": ("book", "novel"), "zh": ("图书", "小说", "读书", "书店"), "ja": ("書籍", "小説", "読書", "書店"),
             "ru": ("книг*", "книж*")},
    "library": {"en": ("library",), "zh": ("图书馆",), "ja": ("図書館",), "ru": ("библиотек*",)},
    "christmas": {"en": ("christmas", "xmas"), "zh": ("圣诞",), "ja": ("クリスマス",), "ru": ("рождеств*",)},
    "new_year": {"en": ("new year", "new year's"), "zh": ("新年", "春节", "元旦"), "ja": ("新年", "お正月", "正月"),
                 "ru": ("новый год", "нового года", "новому году", "новогодн*")},
    "halloween": {"en": ("halloween",), "zh": ("万圣节",), "ja": ("ハロウィン",), "ru": ("хэллоуин*", "хеллоуин*")},
    "pizza": {"en": ("pizza", "pizzeria"), "zh": ("披萨", "比萨"), "ja": ("ピザ",), "ru": ("пицц*",)},
    "ice_cream": {"en": ("ice cream", "gelato"), "zh": ("冰淇淋", "雪糕"), "ja": ("アイスクリーム", "ジェラート"),
                  "ru": ("мороженое", "мороженого", "мороженым")},
    "cake": {"en": ("cake", "cupcake"), "zh": ("蛋糕",), "ja": ("ケーキ",), "ru": ("торт*",)},
    "wine": {"en": ("wine", "winery"), "zh": ("葡萄酒", "红酒"), "ja": ("ワイン",), "ru": ("вино", "вина", "вину", "винн*")},
    "beer": {"en": ("beer", "brewery"), "zh": ("啤酒",), "ja": ("ビール",), "ru": ("пиво", "пива", "пивн*")},
    "yoga": {"en": ("yoga",), "zh": ("瑜伽",), "ja": ("ヨガ",), "ru": ("йога", "йоги", "йогу", "йогой")},
    "chess": {"en": ("chess",), "zh": ("象棋",), "ja": ("チェス",), "ru": ("шахмат*",)},
    "chinese": {"en": ("chinese",), "zh": ("中文", "汉语", "华语", "中国"), "ja": ("中国語",), "ru": ("китайск*",)},
    "football": {"en": ("football", "soccer"), "zh": ("足球",), "ja": ("サッカー",), "ru": ("футбол", "футбола", "футболу", "футболом", "футболе", "футбольн*")},
    "marathon": {"en": ("marathon",), "zh": ("马拉松",), "ja": ("マラソン",), "ru": ("марафон*",)},
    "train": {"en": ("train", "railway"), "zh": ("火车", "列车", "地铁"), "ja": ("電車", "列車", "鉄道"),
              "ru": ("поезд*", "электричк*")},
    "bird": {"en": ("bird",), "zh": ("小鸟", "鸟儿", "飞鸟", "鸟类"), "ja": ("鳥",), "ru": ("птиц*",)},
    "fish": {"en": ("fish",), "zh": ("金鱼", "鱼儿"), "ja": ("魚",), "ru": ("рыба", "рыбы", "рыбу", "рыбк*")},
    "rabbit": {"en": ("rabbit", "bunny", "bunnies"), "zh": ("兔",), "ja": ("うさぎ", "ウサギ", "兎"),
               "ru": ("кролик*", "заяц", "зайц*", "зайчик*")},
    "panda": {"en": ("panda",), "zh": ("熊猫",), "ja": ("パンダ",), "ru": ("панд*",)},
    "fox": {"en": ("fox", "foxes"), "zh": ("狐狸",), "ja": ("キツネ", "きつね", "狐"),
            "ru": ("лиса", "лису", "лисы", "лисой", "лисий", "лисенок*", "лисичк*")},
    "forest": {"en": ("forest", "woods"), "zh": ("森林", "树林"), "ja": ("森林",), "ru": ("лес", "лесу", "лесн*")},
    "sakura": {"en": ("cherry blossom", "sakura"), "zh": ("樱花",), "ja": ("桜", "さくら", "サクラ"), "ru": ("сакур*",)},
    "onsen": {"en": ("onsen", "hot spring"), "zh": ("温泉",), "ja": ("温泉",), "ru": ("горячи* источник*", "онсэн")},
    "museum": {"en": ("museum",), "zh": ("博物馆", "美术馆"), "ja": ("博物館", "美術館", "ミュージアム"),
               "ru": ("музей", "музея", "музею", "музеем", "музее")},
    "cafe": {"en": ("cafe", "café"), "ja": ("カフェ", "喫茶"), "ru": ("кафе", "кофейн*")},  # "咖啡店" stays coffee
    "hotel": {"en": ("hotel",), "zh": ("酒店", "宾馆"), "ja": ("ホテル", "旅館"), "ru": ("отел*", "гостиниц*")},
    "noodle": {"en": ("noodle", "ramen", "udon"), "zh": ("面馆", "拉面", "面条"), "ja": ("ラーメン", "うどん", "麺"),
               "ru": ("лапш*", "рамен*")},
    "dentist": {"en": ("dentist", "dental"), "zh": ("牙科", "牙医"), "ja": ("歯科", "歯医者"), "ru": ("стоматолог*",)},
    "fitness": {"en": ("gym", "fitness"), "zh": ("健身",), "ja": ("ジム", "フィットネス"), "ru": ("фитнес*", "спортзал*")},
    "pet": {"en": ("pet", "pets"), "zh": ("宠物",), "ja": ("ペット",), "ru": ("питом*",)},
    "concert": {"en": ("concert", "recital"), "zh": ("音乐会", "演唱会"), "ja": ("コンサート", "演奏会"), "ru": ("концерт*",)},
    "graduation": {"en": ("graduation",), "zh": ("毕业",), "ja": ("卒業",), "ru": ("выпускн*",)},
    "violin": {"en": ("violin",), "zh": ("小提琴",), "ja": ("バイオリン", "ヴァイオリン"), "ru": ("скрипк*", "скрипичн*")},
    "piano": {"en": ("piano",), "zh": ("钢琴",), "ja": ("ピアノ",), "ru": ("пианино", "фортепиан*", "рояль", "рояля")},
    "car": {"en": ("car", "cars"), "zh": ("汽车", "轿车"), "ja": ("自動車", "クルマ"), "ru": ("автомобил*", "машин*")},
    "tiger": {"en": ("tiger",), "zh": ("老虎",), "ja": ("トラ", "虎"), "ru": ("тигр*",)},
    "owl": {"en": ("owl",), "zh": ("猫头鹰",), "ja": ("フクロウ", "ふくろう"),
            "ru": ("сов", "сова", "сову", "совы", "совой", "совен*")},
    "exhibition": {"en": ("exhibition", "expo"), "zh": ("展览", "展会", "展示会"),
                   "ja": ("展示会", "展覧会"), "ru": ("выставк*", "выставочн*")},
    "catalogue": {"en": ("catalog", "catalogue", "catalogs", "catalogues"), "zh": ("图录", "产品目录", "商品目录"),
                  "ja": ("カタログ",), "ru": ("каталог*",)},
    "jacket": {"en": ("jacket", "jackets"), "zh": ("夹克", "外套"), "ja": ("ジャケット",), "ru": ("куртк*", "курточ*")},
    "phone_case": {"en": ("phone case", "phone cases"), "zh": ("手机壳", "手機殼"), "ja": ("スマホケース", "携帯ケース"),
                   "ru": ("чехол", "чехла", "чехлы", "чехлов", "чехлом", "чехлам*")},
    "marble": {"en": ("marble",), "zh": ("大理石",), "ja": ("大理石", "マーブル"), "ru": ("мрамор*",)},
    "delivery": {"en": ("delivery", "deliveries"), "zh": ("配送", "外卖", "送货", "外送"), "ja": ("配達", "デリバリー", "宅配"),
                 "ru": ("доставк*", "доставочн*")},
    "flavour": {"en": ("flavour", "flavours", "flavor", "flavors"), "zh": ("口味",), "ja": ("フレーバー",),
                "ru": ("вкус", "вкуса", "вкусы", "вкусов", "вкусом", "вкусам*")},
    "lantern": {"en": ("lantern", "lanterns"), "ja": ("ランタン", "提灯", "ちょうちん"),  # (灯笼 stays: 灯笼 sets are
                "ru": ("фонарик*", "фонари", "фонарей", "фонарь", "фонаря")},  # their own, not a lantern motif)
    "workshop": {"en": ("workshop", "workshops"), "zh": ("工作坊",), "ja": ("ワークショップ",),
                 "ru": ("мастер-класс*",)},
    "courier": {"en": ("courier", "couriers"), "zh": ("快递员", "骑手", "配送员"), "ja": ("配達員", "クーリエ"),
                "ru": ("курьер*",)},
}

# --- subject extraction: what to cut away around the creator's noun phrase ------------------
# Regexes over normalised text; "{NUM}" stands for the language's number pattern. Each cut splits
# the text; en/ru join the pieces, zh/ja keep the longest piece. A control message ("pause the
# poster task") only loses the fillers.
SUBJECT_FILLERS = {  # politeness and request frames around any subject
    "en": (
        r"\b(?:hey|hi|hello|ok(?:ay)?|so|now|lomo|please|pls|kindly|just|thanks|thank you)\b",
        r"^\W*(?:how|what) about\b",
        r"\b(?:can|could|would|will) you\b", r"\bi(?:'d| would) like(?: you)?(?: to)?\b",
        r"\bi (?:want|need)(?: you)?(?: to)?\b", r"\blet'?s\b", r"\bhelp me\b", r"\bgo ahead and\b",
        r"\b(?:new )?task\s*:", r"\b(?:use|using)\b", r"\bto (?:" + alternation() + r")\b",
    ),
    "ru": (
        r"(?<![а-я])(?:пожалуйста|можешь|можете|мне|нам|хочу|хотелось бы|нужно|нужен|нужна|нужны|давай|ну|"
        r"плиз|спасибо|ломо)(?![а-я])",
    ),
    "zh": (r"请(?!柬)|麻烦|帮我|帮忙|给我|替我|我想要|我想|我要|我需要|需要|能不能|能否|可以|你能|你可以|一下|好吗|谢谢|吧|吗|呢|啊",),
    "ja": (
        r"をください|ください|下さい|お願いします|お願い|してほしい|して欲しい|してくれますか|してくれる|"
        r"欲しい|ほしい|ちょっと|ありがとう|にして|して|します|する",
    ),
}
SUBJECT_CUTS = {  # counts, verbs and generic media words around a requested subject (durations are
    # blanked before, where they are recognised)
    "en": (
        r"^\W*(?:" + alternation() + r"|give|show|model|edit|change|modify|update|turn|convert|plan|"
        r"prepare|organi[sz]e|put together)"
        r"(?: me| us)?\b",
        r"\b(?:an?|the|some|my)?\s*(?:series|set|collection|couple|pair|bunch|batch)\s+of\s+(?:{NUM})?",
        r"\s(?:series|set)\b",
        r"(?:^|\s)(?:an?|some)\s+(?={NUM}\b)",
        r"^\s*(?:{NUM})\b", r"\b(?:for me|for us)\b",
        r"\b(?:{NUM})[\s-]*(?:shots?|parts?|panels?|frames?|scenes?|pages?|pieces?|steps?)\b",
    ),
    "ru": (
        r"^\W*(?:нарисуй|сделай|создай|сгенерируй|напиши|придумай|сочини|спроектируй|разработай|"
        r"изобрази|сними|смонтируй|анимируй|оживи|покажи|набросай|измени|отредактируй)(?:те)?(?![а-я])",
        r"(?<![а-я])(?:серию|серия|набор|комплект)(?:\s+из)?(?:\s+(?:{NUM}))?(?![а-я])",
        r"^\s*(?:{NUM})(?![а-я0-9])",
        r"(?<![а-я])(?:из\s+|в\s+)?(?:{NUM})\s*(?:кадр|сцен|част|панел|шаг)[а-я]*(?![а-я])",  # "из трёх кадров"
    ),
    "zh": (
        r"(?:{NUM})\s*(?:个镜头|个分镜|张|幅|个|只|份|段|首|部|款|版|条|帧|组|套|支|集|镜|篇)",  # 三个镜头: a shot count
        r"一些|几张|一系列|系列|一套|一组",
        r"做成|变成|转成|改成|(?<![油插动图漫壁版国绘])画(?![面风家廊布像])|生成|制作|创作|设计|(?<![未原起出过后将本])来|写|渲染|做|弄|搞|拍",
    ),
    "ja": (
        r"(?:{NUM})\s*(?:枚|本|つ|個|曲|点|案|カット|ショット|コマ|シーン|種類|パターン)",
        r"シリーズ|セット|一式|何枚か|数枚",
        r"描いて|描く|書いて|書く|作って|作りたい|作る|作成して|作成|生成して|生成|制作して|デザインして|にして|して|する",
    ),
}
MEDIA_CUTS = {  # generic media words: cut from a subject (what it is about), kept in a title (what is made)
    "en": (
        r"\b(?:an?\s+)?(?:picture|image|photo|pic|drawing|illustration|painting|artwork|render|video|"
        r"clip|animation|movie|gif|3-?d model|3-?d|model|mesh|sound|audio|recording|storyboard|"
        r"story board|shot list|document|flow|workflow|pipeline)s?\b(?:\s+(?:of|about|showing|featuring|with|for)\b)?"
        r"(?:\s+(?:an?|the)\b)?",
    ),
    "ru": (
        r"(?<![а-я])(?:картинк[а-я]*|картин[а-я]*|изображени[а-я]*|рисун[а-я]*|фотографи[а-я]*|фотк[а-я]*|"
        r"фото|видео[а-я]*|ролик[а-я]*|клип[а-я]*|анимаци[а-я]*|3-?[dд](?:[\s-]модел[а-я]*)?|"
        r"модел[а-я]*|звук[а-я]*|аудио|раскадровк[а-я]*|флоу|воркфлоу|поток[а-я]*|пайплайн[а-я]*)(?![а-я])",
    ),
    "zh": (
        r"的?(?:工作流|流程|图片|图像|照片|图画|插画|画作|画面|视频|短片|动画|片段|影片|3d模型|三维模型|模型|3d|音频|"
        r"音效|声音|分镜|故事板)",
    ),
    "ja": (
        r"絵コンテ|ワークフロー|フロー|画像|写真|絵|イラスト|動画|ビデオ|映像|アニメーション|クリップ|3dモデル|3d|モデル|音声|サウンド|"
        r"絵コンテ|ストーリーボード",
    ),
}
EDGE_WORDS = {  # function words trimmed from both ends of an en/ru subject
    "en": frozenset("a an the of for with about and to into me us some that so it my our your at on in by from "
                    "matching".split()),
    "ru": frozenset("с со про о об для из на и в мне что до к по от за".split()),
}
EDGE_CHARS = {  # particles and punctuation trimmed from both ends of a zh/ja subject
    "zh": "的了把给用在和跟地得为，。、,.!！?？ \u3000",
    "ja": "のをがはにでもへなや、。,.!！?？ \u3000",
}


# --- production graphs: a shot named in a revision ("change shot 2 to …", "镜头2改成…") --------------------------
SHOT_NUMBER = {"en": r"\bshot\s*#?(\d+)", "zh": r"镜头\s*(\d+)", "ja": r"カット\s*(\d+)", "ru": r"кадр\w*\s*(\d+)"}
SHOT_CHANGE_TO = {"en": r"\bto\s+(.+)$", "zh": r"(?:改成|改为|换成|变成)(.+)$", "ja": r"(?:に変えて|を)(.+)$",
                  "ru": r"\bна\s+(.+)$"}
FILM_LEAD = {  # words before a film's subject, cut from it ("a short film of a fox" → "a fox"); a preposition
    # (group "prep") that puts the subject in a case is undone by `language.cases` ("про лису" → "лиса")
    "en": r"^(?:an?\s+)?(?:\d+[- ]?(?:second|sec|s)\b[- ]?)?(?:short\s+)?(?:film|movie)\s+(?:of|about)\s+",
    "zh": r"^(?:关于)?", "ja": r"^",
    "ru": r"^(?:(?:коротк|небольш|маленьк|короткометражн)\w*\s+)*(?:короткометражк\w*|мультфильм\w*|фильм\w*|кино)"
          r"\s+(?P<prep>про|обо|об|о|со|с)\s+",
}
FILM_TAIL = {  # … and after it, where the film is named last ("雪の森のキツネの短編映画" → "雪の森のキツネ")
    "ja": r"の?(?:短編映画|ショートフィルム|短編|映画|ムービー)$", "zh": r"的?(?:短片|影片|电影|微电影)$",
}
