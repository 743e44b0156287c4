"""How lomo/local decides which task a message is for, mechanism by mechanism (#12 §5): a new thing is not an
old task asked again, a position said after a single piece, the value an edit asks for, measure units, and the
reading of questions, goodbyes and capability questions. Each case failed before its mechanism was built."""
from __future__ import annotations

import time
from datetime import datetime

import pytest

from lomo_tui.language import other_thing, parse
from lomo_tui.models.base import ModelRequest
from lomo_tui.language.text import matchable
from lomo_tui.models.local_router import _wanted_value, route


def decide(text: str, *tasks: dict) -> tuple[str, object]:
    """lomo/local's decision for TEXT with TASKS in the index (most recent first; each {"title", "goal"?,
    "files"?, "kind"?, "status"?, "age_s"?, "recency"? (None: found only by search)}): ("create_task", kind) | ("send_to_task", title) | ("clarify", [titles]) |
    ("answer", text)."""
    now = time.time()
    entries = [{"id": f"task-{n:08x}", "title": t["title"], "goal": t.get("goal", ""),
                "status": t.get("status", "idle"), "kind": t.get("kind", "persistent"), "files": t.get("files", []),
                "recency": t.get("recency", n), "updated_at": now - t.get("age_s", 60 + n)} for n, t in enumerate(tasks)]
    tools = [{"type": "function", "function": {"name": n}} for n in ("create_task", "send_to_task", "clarify")]
    reply = route(ModelRequest(messages=[{"role": "user", "content": text}], tools=tools, purpose="router",
                               hints={"task_index": entries, "now": datetime.now().isoformat(),
                                      "mentions": {"missing_files": []}}))
    if not reply.tool_calls:
        return "answer", reply.content
    call = reply.tool_calls[0]
    titles = {e["id"]: e["title"] for e in entries}
    if call.name == "create_task":
        return "create_task", call.arguments["kind"]
    if call.name == "send_to_task":
        return "send_to_task", titles[call.arguments["task_id"]]
    return "clarify", [titles[i] for i in call.arguments["task_ids"]]


CRATE = {"title": "3D prop: wooden loot crate", "goal": "Low poly wooden loot crate prop", "kind": "lightweight",
         "status": "done", "files": ["models/crate.gltf"]}
SPRITES = {"title": "Goblin merchant sprites", "goal": "Pixel sprites for the goblin merchant mod",
           "files": ["sprites/goblin_idle.png", "sprites/goblin_walk.png"]}
TEXTURES = {"title": "Mossy stone wall textures", "goal": "Mossy stone wall texture pack for the dungeon mod",
            "files": ["textures/moss_stone_1.png", "textures/moss_stone_2.png"]}


def test_a_request_about_another_thing_is_no_duplicate() -> None:
    assert decide("then a 3d model of a rusty lantern prop, low poly", CRATE, SPRITES)[0] == "create_task"
    assert other_thing("rusty lantern prop", "3D prop: wooden loot crate\nLow poly wooden loot crate prop")
    # the same thing asked again still is one, and a subject in another language proves nothing
    assert not other_thing("mossy stone wall texture pack", f"{TEXTURES['title']}\n{TEXTURES['goal']}")
    assert not other_thing("复古海报", "Retro poster series\nA retro poster series")


def test_a_position_after_a_single_piece_asks_which_series_or_goes_to_the_only_one() -> None:
    assert decide("make the 2nd one less green", CRATE, SPRITES, TEXTURES) == \
        ("clarify", [SPRITES["title"], TEXTURES["title"]])
    single = {**TEXTURES, "files": ["textures/moss_stone_1.png"], "kind": "lightweight"}
    assert decide("make the 2nd one less green", CRATE, SPRITES, single) == ("send_to_task", SPRITES["title"])


@pytest.mark.parametrize("text, tasks, want", [
    # an English one-shot's purpose names what it is for
    ("I need a label for our ginger kombucha bottles",
     [{"title": "Label for Hollow Oak cider", "goal": "Bottle label for Hollow Oak dry cider bottles"}],
     ("create_task", "lightweight")),
    # "ещё" before a deliverable no task makes is one more piece, not more of the cards
    ("ещё нарисуй схему опыта с лакмусовой бумажкой для 8 класса",
     [{"title": "Карточки с химическими элементами", "goal": "Карточки для 8 класса"}], ("create_task", "lightweight")),
    # a deliverable brought in with "a …": the "it" after it is the t-shirt
    ("also want merch, a tshirt design with the low tide wave on it",
     [{"title": "Album cover for 'Low Tide'", "goal": "Album cover for the record 'Low Tide'"}],
     ("create_task", "lightweight")),
    # several pieces are not a revision of a one-shot that shares the subject
    ("ok so i need product photos of our sourdough loaves, croissants and the cinnamon buns, like 6 shots",
     [{"title": "Shop sign for Crumb & Co", "goal": "Hand-painted shop sign for Crumb & Co bakery",
       "kind": "lightweight", "status": "done", "files": ["signs/crumb.png"]}], ("create_task", "persistent")),
    # "с иголкой и ниткой" says what the sign shows, not how the atelier's tasks should look
    ("сделай вывеску для ателье с иголкой и ниткой",
     [{"title": "Фото платьев для каталога", "goal": "Фото платьев для каталога ателье",
       "files": ["catalog/dress_1.png", "catalog/dress_2.png"]},
      {"title": "Прайс-лист ателье", "goal": "Прайс-лист ателье «Игла»", "kind": "lightweight", "status": "done",
       "files": ["docs/igla_prices.md"]},
      {"title": "Промо-ролик для ателье «Игла»", "goal": "Промо-ролик на 30 секунд для ателье «Игла»",
       "status": "stopped", "files": ["clips/igla_promo.webp"]}], ("create_task", "lightweight")),
])
def test_a_new_piece_is_not_attached_to_a_task_about_something_else(text: str, tasks: list[dict], want: tuple) -> None:
    assert decide(text, *tasks) == want


def test_the_value_an_edit_asks_for_names_no_task() -> None:
    lanterns = {"title": "元宵节灯笼插画", "goal": "Lantern festival illustrations",
                "files": ["art/lantern_1.png", "art/lantern_2.png", "art/lantern_3.png"]}
    car = {"title": "Vintage car illustration", "goal": "A red vintage car illustration", "kind": "lightweight",
           "status": "done"}
    assert decide("the lantern illustrations, make the third one more red", car, lanterns) == \
        ("send_to_task", lanterns["title"])
    menu = {"title": "披露宴のメニュー表", "kind": "lightweight", "status": "done", "files": ["menu/menu.png"]}
    movie = {"title": "プロフィールムービー", "files": ["movie/profile.mp4"]}
    assert decide("メニュー表のデザート、チョコケーキに変えて", movie, menu) == ("send_to_task", menu["title"])


@pytest.mark.parametrize("text, act", [
    ("minecraft 皮肤是多少像素的", "question"),  # a Chinese question that ends on a noun
    ("3D模型一般导出成什么格式比较通用", "question"),
    ("quick q how many moons does jupiter have", "question"),
    ("ok thats all for today", "thanks"),  # no apostrophe
    ("你好 你能帮我做音乐吗", "help"),
    ("good morning! quick q, can you make videos or only images", "help"),
    ("then next weeks topic is the water cycle, need a set of 4 illustrations for worksheets", "goal"),
    ("the opening ones, put the date sat 14th on both", "revise"),  # an edit after a short topic, no date asked
    ("next", "continue"),
])
def test_what_a_message_is(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_a_number_before_a_unit_measures_the_piece_and_a_position_is_no_count() -> None:
    loop = parse("next: a 4 bar lofi drum loop at 80 bpm").intent()
    assert (loop.count, parse("a 4 bar lofi drum loop").intent().media) == (None, "audio")
    assert parse("2枚目も同じように").intent().count is None
    assert parse("3枚のポスター").intent().count == 3
    assert parse("сделай 15-секундный короткий фильм про лису, три кадра").intent().count == 3


# ---- session 8: heldout10's misses, as mechanisms ----------------------------------------------------------

def test_a_failed_task_takes_its_retry() -> None:
    failed = {"title": "Summer sale banner", "goal": "A banner for the summer sale", "status": "failed"}
    other = {"title": "Loyalty card", "goal": "A loyalty card for the shop"}
    assert decide("the summer sale banner failed, try again with a darker sky", other, failed) == \
        ("send_to_task", failed["title"])
    # the message reaches it without a card; a stopped or archived task still asks (only a resume restarts it)
    from types import SimpleNamespace
    from lomo_tui.router.deterministic import usable
    row = SimpleNamespace(kind="persistent", archived=False, status="failed")
    assert usable(row) and not usable(SimpleNamespace(**{**vars(row), "status": "stopped"}))
    assert not usable(SimpleNamespace(**{**vars(row), "archived": True}))


def test_traditional_chinese_reads_as_simplified() -> None:
    from lomo_tui.language.text import simplified
    assert simplified("哈囉，幫我做一組四張的季節香調插畫，檔名") == "哈啰，帮我做一组四张的季节香调插画，档名"
    assert simplified("動画を作って") == "动画を作って"  # only for text known to be Chinese: the caller decides
    series = {"title": "咖啡店海报系列", "goal": "咖啡店的四张海报", "files": ["posters/cafe_1.png", "posters/cafe_2.png"]}
    logo = {"title": "花店标志", "goal": "花店的标志", "kind": "lightweight", "status": "done"}
    assert decide("咖啡店海報第二張的顏色再暖一點", logo, series) == ("send_to_task", series["title"])
    assert parse("太漂亮了，謝謝你！").intent().act == "thanks"


@pytest.mark.parametrize("text, act", [
    ("哈啰～可以帮我做动画吗？", "help"),  # a kind named bare after a greeting, no 你
    ("你们会做音乐吗", "help"),
    ("可以帮我做一个小狗的视频吗？", "one_shot"),  # a subject of its own: a request
    ("拍产品照一般用什么背景布比较好", "question"),  # what is usually done, with a making verb in it
    ("ロゴってどんな色がいいかな", "question"),  # a Japanese sentence that wonders
    ("拍一张产品照", "one_shot"),
    ("you rock, thanks", "thanks"),
    ("peace out", "greeting"),
    ("还在吗？", "greeting"),  # small talk: are you there
    ("the flyer needs the date at the bottom", "revise"),  # names the date, asks none
    ("what's the date?", "question"),
    ("а ещё нужен лист персонажа для ежа Тоши — это друг Миры", "one_shot"),  # «— это» is the copula
    ("трейлер перемонтируй покороче", "revise"),  # a «пере-» imperative redoes what exists
    ("海报第3张，字再大点", "revise"),  # 第3张 is a position
    ("hi, new here. do you do logos?", "help"),  # the last sentence asks what Lomo makes
    ("morning! does it do animations?", "help"),
    ("はじめまして。動画も作れますか", "help"),
    ("can you explain what a storyboard is", "question"),  # information asked for politely
    ("can you make a storyboard", "goal"),
    ("それと、湯気のループ動画も欲しいです", "one_shot"),  # それと is "and also", no pointer
    ("one more: an instagram countdown series, 5 days to 1", "goal"),
    ("再来一套花的手绘插画，玫瑰、百合、雏菊三种", "goal"),  # 再来一套: one more set, not "again"
    ("hi, I run a bike shop. is this for images only or video too?", "question"),  # the last sentence asks
    ("Добрый день. Сколько стоит сгенерировать видео?", "question"),
    ("hi. make the logo bluer. is that ok?", "revise"),  # … not after a sentence that asks for a change
    ("Good morning! Could you tell me what you are able to create for us?", "help"),
    ("こんにちは！カフェをやっています。どんなものを作ってもらえますか？", "help"),
])
def test_what_a_message_is_2(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_ranges_and_one_each_count_pieces_and_last_month_is_a_time() -> None:
    from lomo_tui.language import find_reference
    assert parse("next: covers for episodes 3 to 7, square").intent().count == 5
    assert parse("3d badges for the five club members, one file each").intent().count == 5
    assert parse("第2到4集的封面").intent().count == 3
    assert parse("海报第3张，字再大点").intent().count is None
    assert parse("a 10-15 second clip of waves").intent().count != 6  # a length, not pieces 10 to 15
    assert find_reference("the map animation from last month, slower please", "en") is None
    assert find_reference("make the last one slower", "en") is not None


def test_what_an_edit_changes_on_a_piece_is_no_kind_of_piece() -> None:
    avatar = {"title": "书店的微信头像", "goal": "书店头像，一本打开的书", "kind": "lightweight", "status": "done"}
    banner = {"title": "读书会横幅", "goal": "读书会的横幅"}
    catalogue = {"title": "新书目录", "goal": "春季新书目录"}
    assert decide("再简单点，把文字删掉", avatar, banner, catalogue) == ("send_to_task", avatar["title"])


def test_one_more_for_another_subject_beside_a_single_piece_is_new() -> None:
    sheet = {"title": "Лист персонажа: ёжик Тоша", "goal": "Лист персонажа ёжика Тоши", "kind": "lightweight",
             "status": "done"}
    book = {"title": "Развороты книги про ёжика", "goal": "Шесть разворотов книги"}
    assert decide("а ещё нужен лист персонажа для совы Фили — это бабушка Тоши, в очках", sheet, book) == \
        ("create_task", "lightweight")


def test_a_file_name_range_the_creator_asks_for_is_output() -> None:
    from lomo_tui.models.local_router import _names_output
    text = "另外做四张插画，文件名用 tea_1.png 到 tea_4.png"
    assert _names_output(text, "tea_4.png", "zh") and _names_output(text, "tea_1.png", "zh")
    assert _names_output("four icons, file names icon_1.png to icon_4.png", "icon_4.png", "en")
    assert not _names_output("icon_4.png 背景太亮了", "icon_4.png", "zh")


def test_a_pop_is_a_kind_of_piece() -> None:
    package = {"title": "秋の新作パッケージ", "goal": "秋の新作のパッケージデザイン"}
    assert decide("店頭用のPOPを1枚、「秋の新作入荷」で", package) == ("create_task", "lightweight")


def test_a_count_said_apart_and_a_new_kind_beside_a_related_task() -> None:
    assert parse("и ещё сделай портреты актёров для фойе, их шесть").intent().count == 6
    poster = {"title": "Постер мастер-класса по керамике", "goal": "Постер мастер-класса по керамике"}
    assert decide("а ещё сделай сертификат участника мастер-класса", poster) == ("create_task", "lightweight")
    tickets = {"title": "Comedy night tickets", "goal": "Four ticket designs",
               "files": ["t/1.png", "t/2.png", "t/3.png", "t/4.png"]}
    thumbs = {"title": "Science channel thumbnails", "goal": "Five thumbnails",
              "files": ["s/1.png", "s/2.png", "s/3.png", "s/4.png"]}
    assert decide("チケットの2枚目、日付を大きく", thumbs, tickets) == ("send_to_task", tickets["title"])
    comp = {"title": "Climbing comp poster", "goal": "A poster for the bouldering comp"}
    medals = {"title": "Medal designs", "goal": "Medal designs for the comp"}
    assert decide("also need a results board template for the comp", comp, medals)[0] == "create_task"


# ---- session 9: heldout11's and heldout12's misses, as mechanisms -------------------------------------------

@pytest.mark.parametrize("text, act", [
    ("hey! first time using this, what can you actually do for a tiny perfume brand", "help"),
    ("hi! I paint miniatures and sell commissions, what can you do for me", "help"),  # a making verb before
    ("你好呀，你能帮我们火锅店做些什么？", "help"),
    ("你好，我们是一家建筑事务所，想看看你能帮上什么忙", "help"),
    ("おはようございます。小さな陶芸工房をやってますが、どんなことをお願いできますか", "help"),
    ("Здравствуйте. Я часовщик, чем можете помочь?", "help"),
    ("hello! we run a small record shop. can u do stickers and posters?", "help"),  # "u" is "you"
    ("哈囉～想問一下你可以幫我做影片嗎？", "help"),
    ("heyyy quick one, does light actually slow down in water or is that a myth", "question"),
    ("熱燗と冷やって、どっちが辛口に感じますか", "question"),  # …ますか asks
    ("啤酒花是煮沸的时候加的吗？还是发酵的时候", "question"),  # a question, then its other alternative
    ("视频那个再试一次吧", "revise"),  # a retry
    ("and then, this is a bigger one, we have a tv in the waiting room, so I want a welcome video for it",
     "one_shot"),  # "a bigger one" describes the request: no revision
    ("сделай такое же, но с лавандовым мылом", "revise"),
    ("для Spotify сделай вариант обложки без текста", "revise"),
    ("логотип сделай в белом варианте для тёмного фона", "revise"),
    ("сделай три варианта логотипа для кофейни", "goal"),  # options for a new logo
])
def test_what_a_message_is_3(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_counts_and_a_then_that_opens_a_message() -> None:
    assert parse("then a poster of a fox").intent().goal_type is None
    assert parse("然后帮我画一张多肉拼盘的插画，放在店门口黑板旁边").intent().goal_type is None  # one picture
    assert parse("画一只猫，然后做成动画").intent().goal_type is not None  # a step within the request
    assert parse("also a botanical alphabet poster, A to Z, 26 little vignettes").intent().count == 26
    assert parse("下学期要做一本绘本，大概十页，每页一种情绪").intent().count == 10
    assert parse("наклейки на раму с логотипом, штук пять разных").intent().count == 5
    assert decide("дальше — наклейки на раму с логотипом, штук пять разных",
                  {"title": "Логотип «Спица»", "goal": "Логотип веломастерской"}) == ("create_task", "persistent")
    assert decide("排練到很晚，大家都累翻了哈哈", {"title": "Poster", "goal": "A poster"})[0] == "answer"  # small talk
    # a phone number is no Russian ordinal; «4-м кадре» is one
    assert parse("поменяй телефон на +7 916 000-12-34").reference is None
    assert parse("в 4-м кадре темно").reference.n == 4


def test_words_that_point_at_nothing_and_words_that_name_a_task() -> None:
    from lomo_tui.language import kana_words
    assert not parse("стикерпак, с фразочками «это база» и «ну такое»").intent().refers_back  # quoted words
    assert kana_words("ろくろ動画") == {"ろくろ"} and kana_words("やきものの器") == {"やきもの"}
    wheel = {"title": "ろくろ動画", "goal": "ろくろで器を作る動画", "status": "failed", "files": ["clips/rokuro.webp"]}
    drone = {"title": "Drone footage color grade", "goal": "Color grade the drone footage", "files": ["d.mp4"]}
    assert decide("ろくろの動画、もう一回やってみて", drone, wheel) == ("send_to_task", wheel["title"])
    cards = {"title": "Визитки мастерской", "goal": "Визитки часовой мастерской", "kind": "lightweight",
             "status": "done"}
    cat = {"title": "Открытка с котом", "goal": "Открытка с рыжим котом", "kind": "lightweight", "status": "done"}
    assert decide("визитки, которые мы делали давно, — поменяй телефон", cat, cards) == \
        ("send_to_task", cards["title"])  # «которые» is no cat
    shirt = {"title": "Мерч: футболка", "goal": "Футболка с фразой", "kind": "lightweight", "status": "done"}
    crest = {"title": "Football team crest", "goal": "A crest for the football team", "kind": "lightweight",
             "status": "done"}
    assert decide("на футболке шрифт пожирнее", crest, shirt) == ("send_to_task", shirt["title"])
    soap = {"title": "肥皂礼盒中文标签", "goal": "肥皂礼盒的中文标签"}
    labels = {"title": "Этикетки для мыла", "goal": "Этикетки для мыла ручной работы"}
    assert decide("на китайской этикетке сделай иероглифы крупнее", labels, soap) == ("send_to_task", soap["title"])


def test_which_series_a_position_points_into() -> None:
    chaika = {"title": "Афиши «Чайки»", "goal": "Серия из трёх афиш к премьере «Чайки»",
              "files": ["p/chaika_1.png", "p/chaika_2.png", "p/chaika_3.png"]}
    morozko = {"title": "Афиша «Морозко»", "goal": "Афиша детского спектакля «Морозко»", "files": ["p/morozko.png"]}
    assert decide("вторую афишу сделай потемнее", morozko, chaika) == ("send_to_task", chaika["title"])
    labels = {"title": "Perfume label series", "goal": "Three bottle labels: Cedar Smoke, Fig Leaf, Night Tuberose",
              "files": ["l/cedar.png", "l/fig_leaf.png", "l/tuberose.png"]}
    email = {"title": "Fig Leaf launch email", "goal": "Email announcing the Fig Leaf eau de parfum",
             "files": ["docs/fig_leaf_email.md"], "status": "done"}
    assert decide("the second label feels too busy, strip it back to the leaf outline", email, labels) == \
        ("send_to_task", labels["title"])  # a task that wrote only a text holds no series
    ferns = {"title": "Fern plate series", "goal": "Five botanical plates of ferns",
             "files": ["f/1.png", "f/2.png", "f/3.png", "f/4.png"]}
    flyer = {"title": "Botanical drawing workshop flyer", "goal": "Flyer for the workshop", "kind": "lightweight",
             "status": "done"}
    assert decide("then a sixth fern plate — maidenhair, same paper texture", flyer, ferns) == \
        ("send_to_task", ferns["title"])


def test_new_things_and_the_piece_a_pronoun_means() -> None:
    dragon = {"title": "Dragon diorama turntable", "goal": "Turntable video of the swamp dragon diorama",
              "files": ["clips/dragon.webp"]}
    assert decide("а ещё нужна обложка для видео на ютуб про покраску дракона", dragon) == \
        ("create_task", "lightweight")  # «а ещё нужна» is something new, not more of the video
    posts = {"title": "Посты для инстаграма мастерской", "goal": "Пять постов о сезонном ТО велосипеда",
             "files": [f"s/post_{n}.png" for n in range(1, 5)]}
    assert decide("сделай картинку: велосипед с корзинкой цветов, для открытки к 8 марта", posts) == \
        ("create_task", "lightweight")
    roads = {"title": "Объявления о ремонте дорог", "goal": "Объявления о ремонте дорог в районе"}
    assert decide("сделайте объявление о субботнике 20 апреля", roads) == ("create_task", "lightweight")
    just = {"title": "Image", "goal": "a square podcast cover, moon over a night bus", "kind": "lightweight",
            "status": "done"}
    art = {"title": "Podcast cover art — Night Shift Stories", "goal": "Cover art, a version for each platform"}
    assert decide("perfect. also a square version of it", just, art) == ("send_to_task", just["title"])
    card = {"title": "Quick thank-you card design", "goal": "A thank-you card", "kind": "lightweight",
            "status": "done"}
    mono = {"title": "P&T monogram", "goal": "Monogram for Priya and Tom", "kind": "lightweight", "status": "done"}
    assert decide("the monogram looks great, can you export it in white on transparent", card, mono) == \
        ("send_to_task", mono["title"])


def test_a_file_in_the_pattern_of_names_a_task_was_asked_for() -> None:
    from lomo_tui.models.local_router import _in_pattern, _names_output
    text = "next: 6 resource tokens — wood, stone, glass. name them token_wood.png, token_stone.png etc"
    assert _names_output(text, "token_stone.png", "en")
    assert _in_pattern("token_glass.png", text) and not _in_pattern("token_gold.png", text)
    assert not _in_pattern("badge_glass.png", text)


@pytest.mark.parametrize("text, act", [
    ("вывеску сделай потемнее, фон пусть будет графитовый", "revise"),  # the piece named before the verb exists
    ("логотип сделай со светофором вместо круга", "revise"),
    ("футболку сделай с большим солнцем на спине", "revise"),
    ("сделай вывеску для кафе", "one_shot"),  # verb first: a new one
    ("логотип для кофейни сделай", "one_shot"),  # … and what it is for makes it new
    ("в третьем ролике вырежи кусок с дождём", "revise"),
    ("海报用什么纸打印比较好？铜版纸还是哑粉纸", "question"),  # usual practice, whatever verb it names
    ("宣传册一般做三折页还是骑马钉比较好？", "question"),
    ("吉祥物一般要画几个表情才够用？", "question"),
    ("ポスターって屋外に貼るならラミネートしたほうがいい？", "question"),
    ("Steamのカプセル画像ってサイズ決まってる？", "question"),
    ("ロゴって青にできる？", "revise"),  # asks for a change
    ("can the rental flyer get a QR code in the bottom corner?", "revise"),  # asked of an existing piece
    ("the stickers — can they be die-cut round?", "revise"),
    ("can you make a poster?", "one_shot"),
])
def test_what_a_message_is_4(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_subjects_across_languages_and_values_that_name_no_task() -> None:
    memo = {"title": "Памятка для туристов", "goal": "Памятка для русскоязычных туристов о фестивале"}
    poster = {"title": "夏祭りのポスター", "goal": "商店街の夏祭りの駅貼りポスター"}
    assert decide("ロシア語の案内に駐車場の情報も入れて", poster, memo) == ("send_to_task", memo["title"])
    course = {"title": "课程介绍视频", "goal": "三段式的课程介绍视频", "files": ["clips/course.webp"]}
    schedule = {"title": "Расписание занятий", "goal": "Расписание занятий на летний семестр"}
    assert decide("课表里周六加一节下午的课", course, schedule) == ("send_to_task", schedule["title"])
    card = {"title": "宠物疫苗提醒卡", "goal": "宠物疫苗接种提醒卡", "kind": "lightweight", "status": "done"}
    booklet = {"title": "Буклет ветклиники", "goal": "Буклет ветклиники на русском"}
    assert decide("можно карточку про прививки перевести на русский?", booklet, card) == \
        ("send_to_task", card["title"])
    kimono = {"title": "花衣のチラシ", "goal": "着物レンタル花衣のチラシ"}
    guide = {"title": "Town map", "goal": "A map of the old town"}
    assert decide("花衣のチラシ、裏面に地図を入れて", guide, kimono) == ("send_to_task", kimono["title"])


@pytest.mark.parametrize("text, act", [
    ("bouldering grades: is V scale or Font more common in Europe?", "question"),  # a question after a topic
    ("poster: make it blue", "revise"),
    ("the hero images failed, is that sorted yet?", "status"),
    ("動画の生成は直った？", "status"),  # asked at the end, whatever it names
    ("Каким шрифтом сделана афиша?", "question"),
    ("another thing: a small drinks menu for our Christmas market stall, just 5 drinks", "one_shot"),
    ("И ещё: постов штук пять для ВК про летний лагерь", "goal"),
])
def test_what_a_message_is_5(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_more_pieces_for_a_set_the_creator_has() -> None:
    assert parse("Потом нужен буклет для выставки, страниц на восемь").intent().count == 8
    posters = {"title": "Kayak tour poster series", "goal": "Three posters for the kayak tours",
               "files": ["p/sunrise.png", "p/lagoon.png", "p/cliffs.png"]}
    shop = {"title": "Rental price board", "goal": "Price board for the rental hut", "kind": "lightweight",
            "status": "done"}
    assert decide("one more poster for the series please, the night paddle with glow sticks", shop, posters) == \
        ("send_to_task", posters["title"])
    stickers = {"title": "大理石手机壳贴纸", "goal": "大理石纹手机壳的贴纸三张", "files": ["s/1.png", "s/2.png", "s/3.png"]}
    assert decide("再做三张贴纸，延续那套的风格", shop, stickers) == ("send_to_task", stickers["title"])
    mooncake = {"title": "中秋节海报", "goal": "中秋节海报一套四张", "files": [f"m/{n}.png" for n in range(4)]}
    assert decide("给我做一套端午节的海报，四张，风格跟中秋那套不一样", mooncake) == ("create_task", "persistent")


# ---- heldout13 opened (session 10): its misses as mechanisms -------------------------------------------------
@pytest.mark.parametrize("text, act", [
    # a question, then a sentence that only says why it is asked
    ("Чем акрил отличается от гуаши? Родители часто спрашивают", "question"),
    ("想问一下菜单一般做什么尺寸？我们的桌子比较小", "question"),
    # a Japanese question that ends on ですかね / ますかね
    ("面と小手、どっちを先に練習するのがいいですかね", "question"),
    # a choice between two ways asks for advice, whatever making verb it names
    ("拍产品照用白底还是木纹背景效果好一点？", "question"),
    # a greeting, then only who the creator is
    ("hi there! we run a small surf school in Cornwall", "greeting"),
    ("Здравствуйте! Мы — пасека под Тулой", "greeting"),
    ("こんにちは。神保町で古本屋をやっています", "greeting"),
    ("hello, we're a circus, make us a poster", "one_shot"),  # … not when it asks for something
    # counted pieces that are recipes, days of posts, price tags
    ("Ещё: восемь рецептов с нашим мёдом для буклета", "goal"),
    ("それから、開店までのカウントダウン投稿を5日分", "goal"),
    ("Ещё задача: витрина к Новому году — плакат, ценники и открытка", "goal"),
    # "宣传" as a verb with its object is no campaign; a 宣传片 still is
    ("帮我写一段小红书文案，宣传周末限定甜品，买一送一", "one_shot"),
    ("做一个跑团宣传片，30秒，包括热身、起跑、冲线", "goal"),
])
def test_what_a_message_is_6(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_a_failed_try_and_work_remembered_from_long_ago() -> None:
    radio = {"title": "Радиореклама пасеки", "goal": "20-секундный радиоролик о мёде", "kind": "lightweight",
             "status": "failed"}
    labels = {"title": "Этикетки для мёда", "goal": "Этикетки: липовый, гречишный, донниковый",
              "files": ["labels/lime.png"]}
    # the failed task the message names takes the retry, not a new one-shot
    assert decide("радиоролик опять не вышел, повтори с тем же текстом", labels, radio) == \
        ("send_to_task", radio["title"])
    assert decide("the jingle didn't come out, same words please", labels,
                  {**radio, "title": "Radio jingle", "goal": "A 20 second radio jingle for the honey farm"}) == \
        ("send_to_task", "Radio jingle")
    brand = {"title": "Brand kit for Golden Comb", "goal": "Logo, sign and business cards for Golden Comb honey",
             "files": ["brand/logo.png", "brand/card.png"]}
    # older work named by memory ("remember the … from way back?") is that task, not a new one-shot
    assert decide("remember the Golden Comb brand kit from way back? the business card needs the new address",
                  labels, brand) == ("send_to_task", brand["title"])


# ---- heldout14 opened (session 11): its misses as mechanisms -------------------------------------------------
@pytest.mark.parametrize("text, act", [
    # a greeting, then news of the creator's day: small talk
    ("哈囉～今天終於下雨了", "greeting"),
    ("安安～", "greeting"),
    ("こんばんは〜、今日の営業終わりました", "greeting"),
    ("hello! first time using this from my phone, my partner reads the replies", "greeting"),
    ("hiya, the skyline one — bump up the contrast", "revise"),  # … nor an edit
    # what Lomo can make, asked with an alternative or an example
    ("hey! can you actually do music stuff or is it just pictures?", "help"),
    ("Здравствуйте! А с видео вы работаете или только картинки рисуете?", "help"),
    ("你们能做会动的海报吗？像转圈那种", "help"),
    ("你能做一张猫的海报吗？", "one_shot"),  # a piece with its subject is a request
    # questions: after "random q", with "do u", ending on でしょうか, or a usual practice the creator will write up
    ("random q - what size do print shops usually want for flyers", "question"),
    ("do u know if instagram crops images a lot? whats safe", "question"),
    ("茶葉って、冷蔵庫で保存したほうがいいんでしょうか", "question"),
    ("Что обычно пьют с сыром — белое или красное? Хочу написать в меню", "question"),
    ("what font do people usually use for menus? make me one", "one_shot"),
    ("チラシとは別に、英語のポスターも一枚ほしい", "one_shot"),  # とは is "apart from" here, not "what is"
    # a clip of a few seconds made from nothing is one generation; a longer one, or one of existing work, a goal
    ("Ещё нужно маленькое видео: дождь за окном кафе, секунд пять", "one_shot"),
    ("then a short clip: waves at dawn, 6 sec or so", "one_shot"),
    ("做一个猫咪眨眼的小动画，三秒就行", "one_shot"),
    ("make a 20 second promo video for the bakery", "goal"),
    ("also a 6 sec looping video of the bottle turning", "goal"),
    # after "and also", a kind of piece named without a verb is the next piece (the とお of ぺこっとお辞儀 counts nothing)
    ("それと、幕間で流す短いアニメ。ねこがぺこっとお辞儀するだけ", "one_shot"),
    ("А ещё звук для ролика: скрип двери, секунды три", "one_shot"),
    # an opening comparative, or her/his thing made so, changes what is there
    ("glowier letters", "revise"),
    ("make her helmet gold", "revise"),
    ("make her a poster for her birthday", "one_shot"),
])
def test_what_a_message_is_7(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_news_that_work_failed_is_no_small_talk() -> None:
    assert parse("hey the voucher didnt come through").intent().act != "greeting"
    assert parse("hi! the render didn't work again").intent().act != "greeting"


def test_a_japanese_native_number_starts_a_word() -> None:
    assert parse("それと、幕間で流す短いアニメ。ねこがぺこっとお辞儀するだけ").intent().count is None
    assert parse("ステッカーをみっつ").intent().count == 3


def test_another_try_goes_to_the_failed_task() -> None:
    season = {"title": "Афиши сезона", "goal": "Четыре афиши концертного сезона",
              "files": ["posters/season_1.png", "posters/season_2.png"]}
    teaser = {"title": "Тизер новогоднего концерта", "kind": "lightweight", "status": "failed"}
    # a pronoun and "again": the only failed task in view, not the one just worked on
    assert decide("Запусти его заново, только покороче", season, teaser) == ("send_to_task", teaser["title"])
    bib = {"title": "Race bib template", "kind": "lightweight", "status": "failed"}
    posts = {"title": "Countdown posts", "goal": "Countdown posts 30, 20, 10 days to the race",
             "files": ["social/countdown_30.png"]}
    assert decide("ok retry it, sponsor logo top left", posts, bib) == ("send_to_task", bib["title"])
    # a question about the failure, then "once more": the retry, not an answer
    melt = {"title": "冰淇淋融化慢镜头", "kind": "lightweight", "status": "failed"}
    assert decide("融化慢镜头怎么又失败了，再来一次吧", posts, melt) == ("send_to_task", melt["title"])
    # … unless the words name another task
    assert decide("retry the countdown posts with bigger numbers", posts, bib) == ("send_to_task", posts["title"])


def test_more_versions_are_of_the_piece_just_made() -> None:
    logo = {"title": "Kids club logo", "goal": "logo for our kids club, a little crab riding a board",
            "kind": "lightweight", "status": "done", "files": ["brand/kids_logo.png"]}
    camp = {"title": "Summer surf camp posters", "files": ["posters/camp_1.png", "posters/camp_2.png"]}
    assert decide("再来两个配色版本", logo, camp) == ("send_to_task", logo["title"])


@pytest.mark.parametrize("text, act", [
    # a campaign that lists its pieces is new work, whatever "bigger" or "that … look" it says on the way
    ("ok so bigger thing. i want a proper launch campaign – a poster for the window, 3 story slides and a short "
     "reel, all in that retro look", "goal"),
    ("make that campaign poster bigger", "revise"),
    # merch and stationery listed are several pieces
    ("we also need crew stuff - a tshirt print, a lanyard, and a thank you card", "goal"),
])
def test_what_a_message_is_8(text: str, act: str) -> None:
    assert parse(text).intent().act == act


def test_a_request_repeating_a_task_is_asked_about_or_sent() -> None:
    jars = {"title": "蜂蜜罐標籤", "goal": "三款蜂蜜罐的標籤：龍眼蜜、荔枝蜜、百花蜜",
            "files": ["labels/jar_1.png", "labels/jar_2.png", "labels/jar_3.png"]}
    stall = {"title": "市集攤位招牌", "kind": "lightweight", "status": "done", "files": ["signs/stall.png"]}
    # the thing asked for (without "我想做一組…的") is the task's title: not a second task
    assert decide("我想做一組蜂蜜罐的標籤", jars, stall)[0] in ("send_to_task", "clarify")
    assert decide("我想做一組蜂蜜罐的標籤", jars, stall) != ("create_task", "persistent")


def test_a_position_with_a_value_after_a_colon() -> None:
    # "改成中文：夏季冲浪营": the words after the colon are the new title, not a task they happen to name
    camp = {"title": "Summer surf camp posters", "files": ["posters/camp_1.png", "posters/camp_2.png",
                                                            "posters/camp_3.png"]}
    reel = {"title": "冲浪课宣传短视频", "goal": "冲浪课宣传短视频", "files": ["video/reel_storyboard.md"]}
    assert decide("第一张海报上的标题改成中文：夏季冲浪营", reel, camp) == ("send_to_task", camp["title"])
    assert {"冲浪", "夏季"} <= _wanted_value(matchable("第一张海报上的标题改成中文：夏季冲浪营"))


def test_more_of_what_was_just_made_when_no_task_is_named() -> None:
    cups = {"title": "杯身插圖", "goal": "手搖飲杯身插圖三款", "files": ["cups/cup_1.png", "cups/cup_2.png"]}
    menu = {"title": "飲料菜單看板", "files": ["menus/board_1.png"]}
    assert decide("再多兩款，一款芋頭紫、一款抹茶綠", cups, menu) == ("send_to_task", cups["title"])


def test_first_says_when_not_what() -> None:
    # "まず、…" / "先帮我…" opens the request; the title keeps the piece
    assert parse("まずはロゴを作って").intent().subject == "ロゴ"
    assert parse("先帮我画个月亮").intent().act == "one_shot"


def test_a_value_the_edit_wants_names_no_task() -> None:
    # "more fog + green light": green is the value; a plant shop whose file is green_grid.png is not meant
    pharaoh = {"title": "Room art: The Pharaoh's Tomb", "files": ["rooms/pharaoh_1.png", "rooms/pharaoh_2.png",
                                                                 "rooms/pharaoh_3.png"]}
    lab = {"title": "Room art: Mad Scientist Lab", "files": ["rooms/lab_1.png", "rooms/lab_2.png", "rooms/lab_3.png"]}
    grid = {"title": "Plant shop Instagram grid", "goal": "Nine-tile grid for Green Corner plant shop",
            "files": ["social/green_grid.png"]}
    days = {"age_s": 3 * 86400}  # none of them worked on today
    kind, options = decide("yo! third one needs more fog + green light", {**pharaoh, **days}, {**lab, **days},
                           {**grid, **days})
    assert kind == "clarify" and options[:2] == [pharaoh["title"], lab["title"]]


def test_a_quoted_order_and_a_terse_comparative() -> None:
    assert parse("quick one: a 'no phones beyond this point' sign, spooky font").intent().act == "one_shot"
    sign = {"title": "No phones sign", "kind": "lightweight", "status": "done", "files": ["signs/no_phones.png"]}
    letter = {"title": "Cover letter for the grant", "files": ["docs/letter.md"], "status": "done"}
    # "glowier letters" right after the sign: the sign's letters, not the task with a letter in its name
    assert decide("glowier letters", sign, letter) == ("send_to_task", sign["title"])


# ---- heldout16 aggregates (session 12) ---------------------------------------------------------------------
def test_small_talk_that_names_no_work_is_answered_not_asked_about() -> None:
    # nothing asked, nothing named, nothing worked on a moment ago: a greeting back, not "which task do you mean?"
    old = (dict(SPRITES, age_s=7200), dict(TEXTURES, age_s=9000))
    for text in ("just got back from vacation", "终于周末了", "週末だー", "ну и денёк"):
        kind, reply = decide(text, *old)
        assert kind == "answer" and reply, (text, kind, reply)
    # the same words a moment after a piece was made still go to the piece at hand
    assert decide("终于周末了", dict(CRATE, age_s=30), *old)[0] != "clarify"


def test_ok_then_retry_is_a_retry_not_thanks() -> None:
    # "ok retry it" asks for another try of the failed task; "ok" alone is still an acknowledgement
    failed = {"title": "Jingle for the bakery", "kind": "lightweight", "status": "failed", "age_s": 120}
    old = (dict(SPRITES, age_s=7200), dict(TEXTURES, age_s=9000))
    for text in ("ok retry it", "thanks, retry it please"):
        assert decide(text, failed, *old) == ("send_to_task", failed["title"]), text
    assert decide("ok", failed, *old)[0] == "answer"


# ---- heldout16 opened (session 12): its misses as mechanisms -------------------------------------------------
def test_a_greeting_then_news_with_numbers_colours_or_a_new_thing_is_small_talk() -> None:
    for text in ("morning!! sold 40 jars at the market, six hives to go 🐝", "嗨～今天下雨，院子里的枫叶红得刚好",
                 "Привет! Вчера поставили новый телескоп на крышу", "どうもー、花屋の二代目です。今日は雨ですね",
                 "yo. fixed a prophet-5 today that sat in a barn for 20 yrs, still smells like hay lol"):
        assert parse(text).intent().act == "greeting", text
    # … but a greeting that asks for pieces still does
    assert parse("hey, 3 posters for the fair").intent().act == "goal"
    assert parse("Привет! Нужна новая афиша").intent().act == "one_shot"


def test_capability_questions_naming_a_kind_of_a_thing_or_the_kind_first() -> None:
    for text in ("can you do 3d renders of a bottle too or is it just flat images",
                 "а 3д модель вазы вы можете сделать? для магазина", "你们可以做3D的吗？想要花瓶的立体图"):
        assert parse(text).intent().act == "help", text
    assert parse("你们可以做海报吗？想要一张猫的").intent().act == "one_shot"  # a count: the order itself


def test_all_three_names_the_set_of_three() -> None:
    labels = {"title": "Honey jar labels",
              "goal": "Three jar labels for Hollow Oak Apiary: wildflower, clover and heather honey",
              "files": ["labels/wildflower.png", "labels/clover.png", "labels/heather.png"], "age_s": 120}
    buzz = {"title": "Little buzzing sound for the end of the reel", "kind": "lightweight", "status": "done",
            "files": ["audio/buzz.wav"], "age_s": 300}
    sign = {"title": "Farmers market stall sign",
            "goal": "Chalkboard-style sign with prices for the Saturday market stall",
            "kind": "lightweight", "status": "done", "files": ["signs/stall.png"], "age_s": 400}
    mascot = {"title": "Bee mascot", "goal": "A friendly cartoon bee mascot", "kind": "lightweight",
              "status": "done", "files": ["art/bee_mascot.png"], "age_s": 6 * 3600}
    # an old task shares "under" ("under-12"): "all three" still names the set of three labels
    crest = {"title": "Football team crest", "goal": "Crest for the Riverside under-12 football team",
             "kind": "lightweight", "status": "done", "files": ["logos/crest.png"], "age_s": 9 * 86400}
    assert decide("ok add 340g under the name on all three then", labels, buzz, sign, mascot, crest) == \
        ("send_to_task", labels["title"])


def test_what_a_piece_is_for_is_no_second_piece() -> None:
    # "…的插画，店铺头像用": one illustration, for the shop's avatar — a one-shot, not a kit of two
    assert parse("另外帮我画一张扳手的插画，店铺头像用").intent().act == "one_shot"
    assert parse("做一套logo、名片、海报").intent().act == "goal"


def test_a_picture_count_points_at_a_set_of_pictures_not_at_a_film() -> None:
    film = {"title": "调律服务宣传短片", "goal": "15秒调律上门服务宣传视频，三个镜头", "files": ["films/promo/storyboard.md"],
            "status": "failed", "age_s": 3600}
    tips = {"title": "钢琴保养小贴士图文系列", "files": [f"social/tips_{n}.png" for n in (1, 2, 3, 4)], "age_s": 7200}
    assert decide("第三张字太小了 看不清", film, tips) == ("send_to_task", tips["title"])


def test_another_version_of_a_piece_named_first_is_that_piece() -> None:
    for text in ("ロゴ、白バージョンも欲しいです", "マップ、英語版も作ってほしい"):
        assert parse(text).intent().act == "revise", text
    assert parse("新しいロゴ、白バージョンも欲しい").intent().act == "one_shot"
    logo = {"title": "ジムのロゴ", "kind": "lightweight", "status": "done", "files": ["logos/gym.png"]}
    flyer = {"title": "体験会のチラシ", "files": ["flyers/trial.png"]}
    assert decide("ロゴ、白バージョンも欲しいです", logo, flyer) == ("send_to_task", logo["title"])


def test_the_poster_getting_a_qr_code_is_an_edit_of_the_poster() -> None:
    posters = {"title": "Summer timetable posters", "files": ["posters/timetable_en.png", "posters/timetable_zh.png"]}
    banner = {"title": "Ticket office banner", "kind": "lightweight", "status": "failed"}
    assert decide("can the timetable poster get a QR code to the live schedule", banner, posters) == \
        ("send_to_task", posters["title"])


def test_a_bare_look_for_a_part_edits_the_piece_just_made() -> None:
    assert parse("red text").intent().act == "revise" and parse("write a text").intent().act == "one_shot"
    sticker = {"title": "No drinks sticker", "kind": "lightweight", "status": "done", "files": ["stickers/bench.png"],
               "age_s": 20}
    notes = {"title": "Newsletter text", "goal": "Text for the monthly newsletter", "files": ["docs/news.md"],
             "age_s": 6 * 86400}
    assert decide("red text", sticker, notes) == ("send_to_task", sticker["title"])


def test_next_is_a_value_for_the_series_but_a_kind_of_piece_is_new() -> None:
    baths = {"title": "季節湯のポスター", "goal": "季節湯のポスター：ゆず湯、菖蒲湯、ラベンダー湯、桜湯",
             "files": ["posters/yuzu.png", "posters/shobu.png"], "age_s": 7200}
    reel = {"title": "銭湯紹介リール", "files": ["films/reel/storyboard.md"], "age_s": 600}
    assert decide("次はラベンダー湯", reel, baths) == ("send_to_task", baths["title"])
    assert decide("次はホールドのアイコン", reel, baths) == ("create_task", "lightweight")


def test_a_quoted_passage_names_no_task() -> None:
    wrap = {"title": "Van wrap design", "files": ["wrap/left.png", "wrap/right.png"], "age_s": 4000}
    posts = {"title": "Before and after posts", "goal": "Five before/after Instagram posts",
             "files": ["social/ba_1.png", "social/ba_2.png"], "age_s": 5000}
    text = 'put this review on the next post pls:\n"She came out of the van calm and smelling amazing. 10/10" - Sarah'
    assert decide(text, wrap, posts) == ("send_to_task", posts["title"])


def test_an_english_word_glued_to_chinese_is_still_a_word() -> None:
    teaser = {"title": "Mid-Autumn show teaser", "goal": "20-second teaser video for the Mid-Autumn drone show",
              "files": ["films/teaser/storyboard.md", "films/teaser/shot1.mp4"], "age_s": 20 * 3600}
    music = {"title": "灯光秀背景音乐", "kind": "lightweight", "status": "done", "files": ["audio/bgm.wav"], "age_s": 60}
    poster = {"title": "中秋灯光秀海报", "kind": "lightweight", "status": "done", "files": ["posters/m.png"]}
    grade = {"title": "Drone footage color grade", "goal": "Colour grading of the coastal drone footage",
             "files": ["films/coast/graded.mp4"], "age_s": 5 * 86400}
    assert decide("teaser最后加上日期 9月17日 深圳湾公园", music, poster, teaser, grade) == ("send_to_task", teaser["title"])


def test_a_colour_after_a_comma_is_the_value_wanted() -> None:
    slime = {"title": "Slime enemy sprite", "kind": "lightweight", "status": "done", "files": ["sprites/slime.png"],
             "age_s": 3600}
    grid = {"title": "Plant shop Instagram grid", "goal": "Nine-tile grid for Green Corner plant shop",
            "files": ["social/green_grid.png"], "age_s": 8 * 86400}
    assert decide("slime needs a second color variant, poison green", slime, grid) == ("send_to_task", slime["title"])


def test_the_piece_at_hand_leading_by_a_tie_margin_takes_a_terse_next_item() -> None:
    birds = {"title": "Bird portrait series", "goal": "Portraits: harris hawk, owl, kestrel, red kite",
             "files": ["portraits/harris.png", "portraits/owl.png"], "age_s": 30}
    car = {"title": "Vintage car illustration", "goal": "A red roadster", "kind": "lightweight", "status": "done",
           "files": ["art/car.png"], "age_s": 9 * 86400}
    assert decide("then the red kite", birds, car) == ("send_to_task", birds["title"])


def test_more_ways_to_ask_again_or_to_put_words_on() -> None:
    failed = {"title": "春茶预售海报", "kind": "lightweight", "status": "failed", "age_s": 3600}
    cakes = {"title": "茶饼包装纸系列", "files": ["pack/a.png", "pack/b.png"]}
    assert decide("预售海报又没出来 重新弄一下", cakes, failed) == ("send_to_task", failed["title"])
    assert parse("バナーに「送料無料」って入れてほしい").intent().act == "revise"
    assert parse("ロゴの色も新色に合わせて変えたいな").intent().act == "revise"


# ---- heldout15 opened (session 13): its misses as mechanisms -------------------------------------------------
def test_a_short_detail_about_a_piece_the_work_just_begun_lists_is_for_that_work() -> None:
    campaign = {"title": "蘑菇种植体验日推广", "goal": "我们想做一个蘑菇种植体验日的长期推广，包括报名海报、短视频和公众号推文",
                "age_s": 5}
    banner = {"title": "Farmers market banner", "kind": "lightweight", "status": "done", "files": ["b.png"],
              "age_s": 50 * 3600}
    assert decide("海报先出三个方向", campaign, banner) == ("send_to_task", campaign["title"])
    tape = {"title": "紙膠帶圖案系列", "goal": "另外想做一組紙膠帶的圖案，四款，之後可能還要延伸成貼紙", "age_s": 5}
    covers = {"title": "手帳封面系列", "files": ["covers/n1.png"], "age_s": 20 * 3600}
    assert decide("圖案裡要有貓", tape, covers) == ("send_to_task", tape["title"])
    # asked for with a creation verb or an addition lead, it is a piece of its own
    assert decide("另外，海报三张", campaign, banner)[0] == "create_task"


def test_real_quick_is_no_subject() -> None:
    listing = {"title": "Real estate listing photos", "goal": "Staged photos for the Elm Street listing",
               "files": ["listings/elm_1.png"], "age_s": 9 * 86400}
    tickets = {"title": "Fright Night ticket design", "kind": "lightweight", "status": "done",
               "files": ["tickets/fright.png"], "age_s": 5 * 3600}
    assert decide("gimme a creepy 'exit this way' sign real quick, one image", tickets, listing) == \
        ("create_task", "lightweight")


def test_more_of_another_kind_after_a_piece_is_new() -> None:
    logo = {"title": "Логотип мебельной мастерской", "kind": "lightweight", "status": "done",
            "files": ["logos/furniture.png"], "age_s": 30}
    assert decide("И ещё визитки, варианта три", logo)[0] == "create_task"


def test_a_separate_project_asked_for_is_new_work() -> None:
    jersey = {"title": "Дизайн формы на сезон", "goal": "Игровая форма команды на новый сезон, перед и спина",
              "files": ["kit/front.png"], "age_s": 3600}
    bout = {"title": "Афиша матча со «Стальными кошками»", "kind": "lightweight", "status": "done",
            "files": ["p/bout.png"], "age_s": 7200}
    assert decide("хотим вести инстаграм команды весь сезон: анонсы матчей, итоги, портреты игроков — заведи это "
                  "отдельным проектом", jersey, bout) == ("create_task", "persistent")


def test_capability_questions_after_a_dash_or_with_an_example_after_the_question() -> None:
    lion = {"title": "Lion feeding video", "goal": "Short video of the lion feeding for the zoo's socials",
            "files": ["films/lion/shot1.mp4"], "age_s": 3600}
    assert decide("morning! quick q — can you do short videos too or is it only pictures?", lion)[0] == "answer"
    tickets = {"title": "Fright Night ticket design", "kind": "lightweight", "status": "done",
               "files": ["tickets/fright.png"], "age_s": 5 * 3600}
    assert decide("yo. can you make audio as well? like screams, chains, that kinda stuff", tickets)[0] == "answer"
    # an example inside the request is no question about what Lomo can do
    assert decide("can you make posters like the fright night ones", tickets)[0] != "answer"


# ---- heldout17 opened (session 14): its misses as mechanisms, in phrasings and domains of their own ---------
def test_a_capability_question_after_a_hyphen_asking_about_stills() -> None:
    reel = {"title": "Harbour tour reel", "goal": "Animated reel of the harbour boat tours", "files": ["clips/tour.webp"]}
    assert decide("hi there, evening! quick q - can you make animated clips too, or only stills?", reel)[0] == \
        "answer"


def test_two_sequence_words_in_a_row_open_one_new_piece() -> None:
    brand = {"title": "茶馆品牌视觉", "goal": "茶馆的整套品牌视觉", "files": ["brand/teahouse.png"]}
    assert decide("然后再做一个茶馆小程序的头像", brand) == ("create_task", "lightweight")


def test_a_list_joined_by_and_is_several_pieces() -> None:
    photos = {"title": "Tea tin photos", "goal": "Product photos of the five tea tins", "files": ["p/tin_1.png"]}
    assert decide("I need a full gift set for the teas: box sleeve, tasting card and a wax seal sticker", photos) == \
        ("create_task", "persistent")


def test_a_piece_named_by_its_number_before_a_colon_is_revised() -> None:
    mugs = {"title": "Mug catalogue photos", "goal": "Product photos of the five glazed mugs",
            "files": [f"catalog/mug_{i}.png" for i in range(1, 6)], "age_s": 8 * 3600}
    logo = {"title": "Studio logo", "kind": "lightweight", "status": "done", "files": ["logos/studio.png"]}
    text = "mug 3 photo: the background is too busy, plain linen please"
    assert decide(text, logo, mugs) == ("send_to_task", "Mug catalogue photos")
    message = parse(text)
    assert message.intent().act == "revise" and message.reference.n == 3  # not a goal of three photos


def test_a_date_asked_for_is_no_position_in_a_series() -> None:
    flyer = {"title": "Pottery workshop flyer", "kind": "lightweight", "status": "done", "files": ["f/workshop.png"]}
    post = {"title": "Pottery workshop Instagram post", "kind": "lightweight", "status": "done",
            "files": ["s/workshop_sq.png"]}
    photos = {"title": "Glaze sample photos", "goal": "Photos of the glaze samples",
              "files": [f"g/glaze_{i}.png" for i in range(1, 16)]}
    route, titles = decide("the workshop one needs the date changed to the 14th", photos, flyer, post)
    assert route == "clarify" and set(titles) == {flyer["title"], post["title"]}


def test_an_update_with_the_new_values_is_an_edit_of_the_task_it_names() -> None:
    slides = {"title": "Crew safety briefing slides", "goal": "Slides for the crew's morning briefing",
              "files": ["slides/briefing.md"], "age_s": 50 * 3600}
    poster = {"title": "Regatta poster", "kind": "lightweight", "status": "done", "files": ["p/regatta.png"]}
    assert decide("update the crew briefing slides with the new tide tables", poster, slides) == \
        ("send_to_task", slides["title"])


def test_older_work_dug_out_by_memory_is_that_work() -> None:
    brochure = {"title": "Summer season brochure", "goal": "Brochure of the summer kayak tours", "recency": None,
                "files": ["docs/summer_brochure.md"], "age_s": 900 * 3600}
    flyer = {"title": "Kayak rental flyer", "kind": "lightweight", "status": "done", "files": ["f/rental.png"]}
    assert decide("dig out the old 2023 summer brochure, we want a 2026 version with the new prices", flyer,
                  brochure) == ("send_to_task", brochure["title"])


def test_an_edit_asked_as_a_question_between_two_close_tasks_is_asked_about() -> None:
    menu = {"title": "Open day menu", "kind": "lightweight", "status": "done", "files": ["m/open_day.png"]}
    invite = {"title": "Open day invite", "kind": "lightweight", "status": "done", "files": ["i/open_day.png"]}
    route, titles = decide("Long day. Anyway, for the open day thing could you move the date to the 21st? Keep "
                           "everything else the same please", menu, invite)
    assert route == "clarify" and set(titles) == {menu["title"], invite["title"]}


def test_what_an_edit_puts_in_names_no_other_task() -> None:
    card = {"title": "名刺も一枚", "kind": "lightweight", "status": "done", "files": ["cards/meishi.png"], "age_s": 30}
    town = {"title": "町内の案内図", "goal": "町内の案内図", "files": ["maps/town.png"], "age_s": 9 * 24 * 3600}
    assert decide("裏面に地図を入れて", card, town) == ("send_to_task", card["title"])


def test_make_it_after_a_piece_is_that_piece_whatever_a_file_name_shares() -> None:
    gif = {"title": "Looping gif of the crane taking off", "kind": "lightweight", "status": "done",
           "files": ["clips/crane.gif"], "age_s": 30}
    drums = {"title": "太鼓音效", "goal": "开场的太鼓音效", "kind": "lightweight", "status": "done",
             "files": ["audio/drum_loop.wav"], "age_s": 7 * 3600}
    assert decide("make it loop smoother", gif, drums) == ("send_to_task", gif["title"])


def test_next_by_a_generic_word_is_no_series_found_by_search() -> None:
    uniform = {"title": "サッカー部のユニフォーム", "goal": "高校サッカー部のユニフォームデザイン", "recency": None,
               "files": ["merch/soccer.png"], "age_s": 12 * 24 * 3600}
    poster = {"title": "演奏会のポスター", "kind": "lightweight", "status": "done", "files": ["p/concert.png"]}
    assert decide("次はメダルのデザイン", poster, uniform) == ("create_task", "lightweight")


def test_one_more_of_a_kind_no_task_makes_is_new() -> None:
    booklet = {"title": "打ち上げ順の冊子", "goal": "打ち上げ順を載せた冊子", "files": ["docs/order.md", "b/cover.png"]}
    sim = {"title": "打ち上げのシミュレーション動画", "goal": "打ち上げのシミュレーション動画", "status": "failed",
           "kind": "lightweight"}
    assert decide("打ち上げの効果音もひとつ作って", sim, booklet) == ("create_task", "lightweight")
    # … but a sound for the piece a task makes, named, is for that task
    board = {"title": "Storyboard: 30s coffee ad", "goal": "storyboard for a 30s coffee ad",
             "files": ["storyboard.md", "frames/shot_1.png"]}
    assert decide("fill in the sound for every shot of the coffee storyboard", board) == ("send_to_task", board["title"])


def test_an_archived_task_a_usable_one_outranks_ties_nothing() -> None:
    cards = {"title": "Карточки дорожных знаков", "goal": "Карточки дорожных знаков для учеников",
             "files": ["cards/sign_01.png"], "age_s": 10 * 3600}
    model = {"title": "3D модель учебной машины", "goal": "3D модель машины со знаком «У»", "status": "archived",
             "kind": "lightweight", "recency": None, "files": ["models/stop.gltf"]}
    assert decide("доделай оставшиеся знаки", cards, model) == ("send_to_task", cards["title"])


def test_a_distinctive_word_outranks_tasks_that_only_share_the_kind_of_piece() -> None:
    guide = {"title": "初心者向け弓道ガイド", "goal": "初心者向けの弓道ガイド、イラスト6枚",
             "files": [f"guide/kyudo_{i}.png" for i in range(1, 4)], "age_s": 10 * 3600}
    tale = {"title": "Иллюстрации к сказке", "goal": "Иллюстрации к сказке", "files": ["t/1.png"]}
    car = {"title": "Vintage car illustration", "kind": "lightweight", "status": "done", "recency": None,
           "files": ["art/car.png"]}
    poster = {"title": "Dojo open day poster", "kind": "lightweight", "status": "done", "files": ["p/open.png"]}
    assert decide("the 4th guide illustration, the bow hand looks wrong - the grip should be softer", poster,
                  guide, tale, car) == ("send_to_task", guide["title"])


def test_russian_ordinals_in_every_case_point_into_a_series() -> None:
    from lomo_tui.language.reference import find_reference

    assert find_reference("на втором баннере замени кота на собаку", "ru").n == 2
    assert find_reference("седьмой самовар обрежь поплотнее", "ru").n == 7


def test_a_message_headed_by_words_of_a_title_names_that_task() -> None:
    promo = {"title": "Bakery promo video", "goal": "30 second promo video of the bakery at dawn", "status": "paused",
             "files": ["clips/bakery_promo.webp"], "age_s": 70 * 3600}
    logo = {"title": "Bakery logo", "kind": "lightweight", "status": "done", "files": ["logos/bakery.png"]}
    intro = {"title": "Travel vlog intro", "goal": "Intro sequence for the travel vlog", "recency": None,
             "files": ["clips/vlog_intro.webp"], "age_s": 12 * 24 * 3600}
    assert decide("promo video: cut the intro down to 3 seconds", logo, promo, intro) == \
        ("send_to_task", promo["title"])


# ---- heldout18 opened (session 15): its misses as mechanisms, in phrasings and domains of their own ---------
def test_new_work_in_the_look_of_a_task_it_names_is_new_work() -> None:
    race = {"title": "Autumn trail race posters", "goal": "Three posters for the autumn trail race",
            "files": [f"posters/race_{i}.png" for i in range(1, 4)]}
    assert decide("also, we need 3 facebook posts for the spring fun run, one a week. same colours as the autumn "
                  "race posters but calmer", race) == ("create_task", "persistent")
    shirts = {"title": "合唱团演出服", "goal": "合唱团的演出服设计", "files": ["wear/choir.png"]}
    assert decide("月底有一场社区音乐会，要一套宣传：海报、节目单和入场券，风格跟演出服一致", shirts) == \
        ("create_task", "persistent")


def test_numbered_items_are_several_pieces_even_when_each_is_one() -> None:
    logo = {"title": "读书会标志", "goal": "周末读书会的标志", "kind": "lightweight", "status": "done",
            "files": ["logo/club.png"]}
    assert decide("下个月读书会办周年活动，需要：1）一张海报 2）20秒的短视频 3）签到用的胸牌", logo) == \
        ("create_task", "persistent")
    from lomo_tui.models.local_router import _listed_pieces

    assert _listed_pieces("需要：1）一张海报 2）20秒的短视频", "zh")
    assert not _listed_pieces("价格是 1.5 元，2.5 元的那张海报", "zh")  # decimals are no numbered items


def test_a_piece_named_by_its_file_stem_and_number_is_that_task_s() -> None:
    clips = {"title": "Yoga class reels", "goal": "Short reels of the morning yoga class",
             "files": [f"clips/reel_{i}.webp" for i in range(1, 4)]}
    drone = {"title": "Drone footage of the retreat", "goal": "Drone footage of the retreat grounds",
             "files": ["clips/drone.mp4"]}
    assert decide("reel 2 is too dark, lift the shadows", drone, clips) == ("send_to_task", clips["title"])


def test_two_generic_words_only_one_title_says_side_by_side_name_it() -> None:
    card = {"title": "Harbor Bistro business card", "kind": "lightweight", "status": "done", "recency": None,
            "files": ["cards/bistro.png"], "age_s": 900 * 3600}
    coaster = {"title": "Coaster design", "kind": "lightweight", "status": "done", "files": ["merch/coaster.png"]}
    post = {"title": "Открытка к празднику", "kind": "lightweight", "status": "done", "files": ["c/holiday.png"]}
    assert decide("that old business card, same layout but the new phone number", coaster, post, card) == \
        ("send_to_task", card["title"])


def test_a_task_named_by_its_whole_title_outranks_one_sharing_a_word_of_its_goal() -> None:
    prices = {"title": "料金表", "goal": "着付けプランの料金表", "kind": "lightweight", "status": "done",
              "files": ["menus/prices.png"]}
    wechat = {"title": "微信推广图", "goal": "面向中国游客的微信推广图", "files": ["social/wechat_1.png"]}
    assert decide("料金表に中国語も併記して", wechat, prices) == ("send_to_task", prices["title"])


def test_a_discount_is_no_count_of_pieces() -> None:
    from lomo_tui.language import series_size

    assert series_size("宠物店的九折优惠券", "zh") is None and series_size("四张复古海报", "zh") == 4
    portraits = {"title": "店猫的画像系列", "goal": "四只店猫的画像", "files": [f"cats/{n}.png" for n in "abcd"]}
    coupon = {"title": "咖啡店优惠券", "goal": "咖啡店的八折优惠券", "kind": "lightweight", "status": "done",
              "recency": None, "files": []}
    assert decide("第2张的眼睛再大一点", portraits, coupon) == ("send_to_task", portraits["title"])


def test_a_name_the_goal_spells_in_hiragana_names_the_task() -> None:
    sweets = {"title": "和菓子の紹介カード", "goal": "新作の和菓子（もなか、どらやき）の紹介カード",
              "files": ["cards/wagashi_1.png", "cards/wagashi_2.png"], "age_s": 6 * 3600}
    shop = {"title": "店頭ポスター", "goal": "店頭のポスター", "files": ["p/shop.png"], "age_s": 3 * 3600}
    assert decide("どらやきの色、もう少し濃いめで", shop, sweets) == ("send_to_task", sweets["title"])


def test_file_names_run_together_with_chinese_are_each_a_name() -> None:
    from lomo_tui.language import find_files
    from lomo_tui.models.local_router import _in_pattern

    assert find_files("再做一组五张的步骤图，文件名step_1.png到step_5.png") == ["step_1.png", "step_5.png"]
    assert find_files("把海报_1.png改暗一点") == ["把海报_1.png"]  # a CJK name keeps its characters
    assert _in_pattern("step_3.png", "一组五张的步骤图，文件名step_1.png到step_5.png")
    assert not _in_pattern("step_7.png", "一组五张的步骤图，文件名step_1.png到step_5.png")


def test_a_few_more_in_cantonese_is_no_question() -> None:
    assert parse("呢張再出多幾個版本").intent().act != "question"
    tart = {"title": "蛋撻插畫", "kind": "lightweight", "status": "done", "files": ["art/tart.png"], "age_s": 30}
    menu = {"title": "餐牌", "goal": "茶餐廳的餐牌", "files": ["menu/board.png"], "age_s": 5 * 3600}
    assert decide("呢張再出多幾個版本", tart, menu) == ("send_to_task", tart["title"])


def test_a_yes_no_question_about_the_world_then_why_it_is_asked_is_answered() -> None:
    signs = {"title": "农场导览牌", "goal": "农场的中文导览牌", "files": ["signs/farm_1.png"]}
    cover = {"title": "小红书封面", "kind": "lightweight", "status": "done", "files": ["c/xhs.png"]}
    assert decide("兔子可以吃香蕉吗？小朋友老问这个", signs, cover)[0] == "answer"
    assert parse("兔子可以吃香蕉吗？小朋友老问这个").intent().act == "question"
    assert parse("能把海报调亮一点吗？客户说太暗").intent().act == "revise"  # a change asked is no question


def test_what_a_piece_should_say_is_an_edit_of_it() -> None:
    assert parse("shop banner: the hours should say 9 to 6").intent().act == "revise"
    assert parse("make a banner that should say open late").intent().act == "one_shot"
    banner = {"title": "直播间横幅", "goal": "直播间顶部的横幅", "kind": "lightweight", "status": "done",
              "files": ["banners/stream.png"]}
    logo = {"title": "Team logo", "kind": "lightweight", "status": "done", "files": ["logos/team.png"]}
    assert decide("stream banner: the schedule should say 9 PM", logo, banner) == ("send_to_task", banner["title"])


def test_make_it_a_moment_after_a_piece_is_that_piece_not_old_tasks_a_reason_names() -> None:
    stage = {"title": "Stage backdrop", "kind": "lightweight", "status": "done", "files": ["p/stage.png"], "age_s": 30}
    gym = {"title": "School gym mural", "goal": "Mural for the school gym wall", "recency": None,
           "files": ["art/gym.png"], "age_s": 800 * 3600}
    hotel = {"title": "Hotel gym flyer", "goal": "Flyer for the hotel gym", "recency": None, "files": ["f/gym.png"],
             "age_s": 700 * 3600}
    assert decide("make it darker, the gym is really bright", stage, gym, hotel) == ("send_to_task", stage["title"])


def test_japanese_positions_and_moves_are_no_new_piece() -> None:
    menu = {"title": "ランチメニュー", "goal": "ランチの2ページのメニュー", "files": ["menus/lunch_1.png", "menus/lunch_2.png"],
            "age_s": 3 * 3600}
    coaster = {"title": "Coaster design", "kind": "lightweight", "status": "done", "files": ["merch/coaster.png"],
               "age_s": 6 * 3600}
    assert decide("ランチメニューの2ページ目、抹茶ラテを一番上に", menu, coaster) == ("send_to_task", menu["title"])
    photos = {"title": "器のカタログ写真", "goal": "器のカタログ写真", "files": [f"cat/{i}.png" for i in range(1, 5)]}
    assert decide("カタログの最後の一枚、背景の青が強すぎ", coaster, photos) == ("send_to_task", photos["title"])
    assert decide("次は、ワイングラスの線画をひとつ", photos, coaster) == ("create_task", "lightweight")


def test_capability_questions_with_help_and_a_short_kind_are_answered() -> None:
    sign = {"title": "攤位招牌", "goal": "攤位的招牌", "files": ["signs/stall.png"]}
    assert decide("哈囉～請問你們也可以幫忙做短影片嗎？", sign)[0] == "answer"


def test_you_know_the_piece_we_did_a_while_back_recalls_it() -> None:
    stamp = {"title": "Bakery rubber stamp", "goal": "Rubber stamp with the bakery's wheat logo", "kind": "lightweight",
             "status": "done", "recency": None, "files": ["stamps/wheat.png"], "age_s": 1200 * 3600}
    flyer = {"title": "Weekend bread flyer", "kind": "lightweight", "status": "done", "files": ["f/bread.png"]}
    assert decide("you know the rubber stamp we did a while back? I need a thin outline version for the bags",
                  flyer, stamp) == ("send_to_task", stamp["title"])


def test_kinds_of_print_are_pieces_to_make() -> None:
    assert parse("also, I need 3 instagram posts announcing the new climbing wall, one a week. same colours as the "
                 "open day posters but way calmer").intent().act == "goal"
    assert parse("それと、海外向けに英語のパンフを作りたいです。10ページくらいで、歴史と使い方を入れて").intent().act == "goal"


def test_a_map_or_a_3d_model_is_the_kind_of_piece_not_a_name() -> None:
    site = {"title": "Festival site map", "goal": "Map of the festival site with the parking and the stages",
            "status": "paused", "files": ["maps/site.png"]}
    aquarium = {"title": "水族館の案内図", "goal": "水族館の案内図", "recency": None, "files": ["maps/aq.png"]}
    poster = {"title": "Festival poster", "kind": "lightweight", "status": "done", "files": ["p/fest.png"]}
    assert decide("on the map mark the new parking lot east of the river", poster, site, aquarium) == \
        ("send_to_task", site["title"])
    lantern = {"title": "提灯の3Dモデル", "kind": "lightweight", "status": "done", "files": ["models/lantern.glb"]}
    lobby = {"title": "Hotel lobby 3D render", "recency": None, "files": ["r/lobby.png", "r/lobby.glb"]}
    chair = {"title": "3D модель стула", "kind": "lightweight", "status": "done", "recency": None,
             "files": ["m/chair.glb"]}
    assert decide("3Dの提灯、もう少し丸く", lantern, lobby, chair) == ("send_to_task", lantern["title"])


def test_it_after_older_work_recalled_by_memory_is_that_work() -> None:
    promo = {"title": "Harvest fair promo video", "goal": "Promo video for the harvest fair", "status": "archived",
             "recency": None, "files": ["films/fair/storyboard.md"], "age_s": 1500 * 3600}
    scarf = {"title": "Club scarf", "kind": "lightweight", "status": "done", "files": ["merch/scarf.png"], "age_s": 60}
    assert decide("the harvest promo from a few years back, can we recut it for this autumn", scarf, promo) == \
        ("send_to_task", promo["title"])  # (the runtime asks before it reopens an archived task)


# ---- heldout19 opened (session 15): its misses as mechanisms, in phrasings and domains of their own ---------
@pytest.mark.parametrize("text", [
    "morning! can you also do short voice clips, like a station jingle?",
    "hey, quick q - can you make dreamy-looking video, like with fog rolling in?",
    "hi, can you do hand-painted shop signs too? like the old barber ones have",
    "想问下你能做水墨那种风格的图案吗",
    "你好！想问一下你能不能生成可以直接放进网页里的图标？",
    "你好，我开了一家面馆。你们能做中英双语的菜单吗？",
])
def test_capability_questions_describe_a_kind_of_piece(text: str) -> None:
    reel = {"title": "Harbour tour reel", "goal": "Animated reel of the harbour boat tours", "files": ["clips/tour.webp"]}
    assert decide(text, reel)[0] == "answer"


def test_a_request_with_an_article_or_a_count_is_still_a_request() -> None:
    assert parse("can you make a poster, like a retro one?").intent().act == "one_shot"
    assert parse("能不能帮我做一张海报？").intent().act == "one_shot"


def test_a_wh_question_after_news_needs_no_question_mark() -> None:
    poster = {"title": "Night market poster", "kind": "lightweight", "status": "done", "files": ["p/market.png"]}
    text = "yo we got a stall at the harbour market lol. anyway what formats can u export for tiktok"
    assert decide(text, poster)[0] == "answer" and parse(text).intent().act == "question"
    assert parse("the poster is done. make it bigger").intent().act == "revise"


def test_a_pasted_brief_that_numbers_its_pieces_is_new_work() -> None:
    posters = {"title": "廟會海報系列", "goal": "去年廟會的海報系列", "files": ["p/fair_1.png", "p/fair_2.png"]}
    brief = "以下是客戶的需求，直接貼上：\n今年燈會\n1. 主視覺一張\n2. 三張社群貼文\n3. 報名表的表頭\n顏色用紅跟金"
    assert decide(brief, posters) == ("create_task", "persistent")
    from lomo_tui.language import media_kinds

    assert media_kinds("主視覺一張") == {"image"}  # traditional characters read as simplified


def test_a_piece_of_another_kind_than_named_is_not_the_piece_at_hand() -> None:
    brief = {"title": "Document: the committee brief", "goal": "The winter schedule brief", "files": ["docs/brief.md"],
             "age_s": 30}
    ids = {"title": "Station ID jingles", "goal": "Sung station IDs, a morning one and an evening one",
           "files": ["audio/id_morning.wav", "audio/id_evening.wav"], "age_s": 5 * 3600}
    assert decide("make the evening one a bit slower, it sounds rushed", brief, ids) == ("send_to_task", ids["title"])


def test_an_edit_a_moment_after_a_piece_is_not_for_an_old_task_found_by_a_word_of_its_goal() -> None:
    poster = {"title": "端午节优惠海报", "kind": "lightweight", "status": "done", "files": ["p/duanwu.png"], "age_s": 30}
    old = {"title": "Board game card art", "goal": "Card illustrations for the Dragon Boat board game",
           "recency": None, "files": ["cards/boat_1.png"], "age_s": 9 * 24 * 3600}
    assert parse("把龙舟画大一点").intent().act == "revise"
    assert decide("把龙舟画大一点，加上“满一百送粽子”", poster, old) == ("send_to_task", poster["title"])


def test_next_then_a_described_piece_is_new_work() -> None:
    prints = {"title": "番付風イラスト", "goal": "力士を番付表風に描いたイラスト", "files": ["a/east.png", "a/west.png"]}
    assert decide("次は、夏祭りのうちわ。表に店の名前、裏に金魚", prints) == ("create_task", "lightweight")
    assert parse("おおきに！").intent().act == "thanks"


def test_a_version_in_another_language_names_no_task() -> None:
    poster = {"title": "梅の季節限定ポスター", "kind": "lightweight", "status": "done", "files": ["p/ume.png"], "age_s": 30}
    ad = {"title": "微信推广海报", "goal": "面向英文读者的推广海报", "kind": "lightweight", "status": "done",
          "files": ["p/wechat.png"], "age_s": 5 * 3600}
    assert decide("那张也出一个英文版", poster, ad) == ("send_to_task", poster["title"])


def test_a_russian_piece_named_first_is_revised_and_the_own_language_task_is_meant() -> None:
    assert parse("карту сделай как старинную морскую").intent().act == "revise"
    spots = {"title": "Карта мест", "goal": "Карта грибных мест с метками", "kind": "lightweight", "status": "done",
             "files": ["maps/spots.png"], "age_s": 7 * 3600}
    aquarium = {"title": "水族館の案内図", "goal": "水族館の案内図", "files": ["maps/aq.png"], "age_s": 9 * 24 * 3600}
    posters = {"title": "Афиши туров", "files": ["p/1.png", "p/2.png"], "age_s": 3600}
    assert decide("карту сделай как старинную", posters, spots, aquarium) == ("send_to_task", spots["title"])


def test_the_x_one_names_a_file_of_a_task() -> None:
    backdrops = {"title": "Backdrop set", "goal": "Printable photo backdrops",
                 "files": ["b/concrete.png", "b/linen.png", "b/terrazzo.png"], "age_s": 4 * 3600}
    cert = {"title": "Gift certificate", "kind": "lightweight", "status": "failed", "age_s": 30}
    assert decide("the linen one is too busy, tone it down", cert, backdrops) == ("send_to_task", backdrops["title"])
    mascot = {"title": "营地吉祥物", "goal": "编程营的猫吉祥物", "files": ["m/cat.png"], "age_s": 3 * 3600}
    shirt = {"title": "营地T恤的图案", "kind": "lightweight", "status": "done", "files": ["s/tee.png"], "age_s": 30}
    assert decide("make the cat bigger on it", shirt, mascot) == ("send_to_task", shirt["title"])  # content, no name


def test_an_old_piece_recalled_by_its_kind_alone() -> None:
    logo = {"title": "Логотип «Самовар»", "goal": "Логотип чайной «Самовар»", "kind": "lightweight", "status": "done",
            "recency": None, "files": ["brand/logo.png"], "age_s": 1200 * 3600}
    pic = {"title": "Картинка пирога", "kind": "lightweight", "status": "done", "files": ["p/pie.png"], "age_s": 30}
    assert decide("старый логотип помнишь? сделай его в тёмном варианте", pic, logo) == ("send_to_task", logo["title"])


def test_a_piece_of_a_planned_set_not_made_yet_is_that_set_s() -> None:
    from lomo_tui.language import series_size

    assert series_size("100円くじの景品イラスト10種", "ja") == 10 and series_size("30秒の動画", "ja") is None
    prizes = {"title": "福引の景品イラスト", "goal": "福引の景品イラスト8種", "status": "paused", "files": ["k/prize_1.png"]}
    pop = {"title": "手書き風POP", "goal": "駄菓子ごとの手書き風POP", "files": ["pop/a.png", "pop/b.png", "pop/c.png"]}
    assert decide("福引の景品、3種類目を描いて", pop, prizes) == ("send_to_task", prizes["title"])
    assert decide("POPの3枚目、ラムネの値段を20円に", pop, prizes) == ("send_to_task", pop["title"])


def test_one_flyer_for_a_set_meal_is_one_piece() -> None:
    cards = {"title": "レシピカード", "goal": "店頭で配るレシピカード", "files": ["c/1.png", "c/2.png"]}
    assert decide("あと、春限定のいちご大福セットのチラシを1枚", cards) == ("create_task", "lightweight")
    # … but one of each is several pieces
    assert decide("另外帮我做一套节日海报，每个节日一张，发朋友圈用", cards) == ("create_task", "persistent")


def test_a_set_worked_on_today_outranks_an_old_one_search_found_by_the_word_set() -> None:
    backdrops = {"title": "Backdrop set", "goal": "Printable photo backdrops", "files": ["b/concrete.png"],
                 "age_s": 22 * 3600}
    bookmarks = {"title": "Bookshop bookmark set", "goal": "Bookmarks for the bookshop", "recency": None,
                 "files": ["b/mark.png"], "age_s": 9 * 24 * 3600}
    cert = {"title": "Подарочный сертификат", "kind": "lightweight", "status": "failed", "age_s": 2 * 3600}
    assert decide("ok then add one like that to the set", cert, backdrops, bookmarks) == \
        ("send_to_task", backdrops["title"])


def test_seasons_and_places_meet_across_languages() -> None:
    terrace = {"title": "Summer terrace poster", "goal": "Poster announcing the summer terrace opening",
               "status": "stopped", "files": ["p/terrace.png"], "age_s": 250 * 3600}
    video = {"title": "Grill smoke video", "files": ["c/smoke.webp"]}
    assert decide("давай снова займёмся постером для летней веранды", video, terrace) == \
        ("send_to_task", terrace["title"])  # (the runtime asks before it resumes a stopped task)


def test_new_work_made_the_way_a_task_was_is_new_persistent_work() -> None:
    calendar = {"title": "版画カレンダー2024", "goal": "12か月の木版画カレンダー", "kind": "persistent", "status": "done",
                "recency": None, "files": ["cal/jan.png"], "age_s": 700 * 24 * 3600}
    flyer = {"title": "体験会のチラシ", "kind": "lightweight", "status": "done", "files": ["f/taiken.png"]}
    assert decide("2024年のカレンダーみたいなのを2027年版でも作りたい", flyer, calendar) == ("create_task", "persistent")


def test_japanese_wondering_about_the_world_is_a_question() -> None:
    assert parse("古本屋って今でもちゃんと儲かるのかな").intent().act == "question"


# ---- heldout20, opened (Session 16) -------------------------------------------------------------------------
def test_a_capability_question_after_a_dashed_aside_is_answered() -> None:
    assert parse("hey! quick one before the meeting — can you also make short videos or just images?").intent().act \
        == "help"
    assert parse("a poster for the fair — can you make it blue?").intent().act != "help"  # a piece named first


def test_a_recall_question_then_a_request_is_for_the_recalled_work() -> None:
    logo = {"title": "琴馆标志", "goal": "松风琴馆的标志", "kind": "lightweight", "status": "done", "recency": None,
            "files": ["logos/songfeng.png"], "age_s": 900 * 3600}
    pic = {"title": "古琴的插画", "kind": "lightweight", "status": "done", "files": ["a/qin.png"], "age_s": 30}
    assert decide("还记得很久以前做的松风琴馆标志吗？要一个白色版本", pic, logo) == ("send_to_task", logo["title"])
    header = {"title": "ウェブサイトのヘッダー画像", "goal": "工房「つぐみ」のウェブサイトのヘッダー", "kind": "lightweight",
              "status": "done", "recency": None, "files": ["web/tsugumi_header.png"], "age_s": 2000 * 3600}
    wall = {"title": "金色の波模様のスマホ壁紙", "kind": "lightweight", "status": "done", "files": ["w/wave.png"], "age_s": 30}
    assert decide("昔作ってもらった工房つぐみのヘッダー、季節に合わせて紅葉を入れたい", wall, header) == \
        ("send_to_task", header["title"])


def test_the_sentence_that_recalls_names_the_work() -> None:
    mascot = {"title": "クラブのマスコット", "goal": "囲碁クラブのマスコット「ごいしくん」", "kind": "lightweight",
              "status": "done", "recency": None, "files": ["mascot/goishi.png"], "age_s": 1800 * 3600}
    kids = {"title": "子ども囲碁教室のポスター", "files": ["p/kids_1.png", "p/kids_2.png"], "age_s": 12 * 3600}
    icon = {"title": "碁盤と碁石のアイコン", "kind": "lightweight", "status": "done", "files": ["i/go.png"], "age_s": 30}
    assert decide("ごいしくん、覚えてる？あの子に帽子をかぶせたバージョンがほしい", icon, kids, mascot) == \
        ("send_to_task", mascot["title"])  # not the kids' posters, which share "子" with "あの子"


def test_a_japanese_even_if_is_no_edit_and_a_question_about_the_world_is_answered() -> None:
    assert parse("金継ぎした器って食洗機に入れても大丈夫なんでしたっけ？お客さんによく聞かれるので").intent().act == "question"
    assert parse("ポスターに日付を入れて").intent().act == "revise"
    assert parse("do closed terrariums need charcoal or is that a myth").intent().act == "question"
    assert parse("can you make the poster bluer").intent().act != "question"
    assert parse("蔵見学の動画はもうできてますか").intent().act == "status"
    assert parse("よくできてる！").intent().act != "status"


def test_stopped_and_archived_work_asked_back_in_other_words() -> None:
    video = {"title": "Видео о валянии", "goal": "Ролик 30 секунд о том, как валяют валенки", "status": "stopped",
             "files": ["clips/felting.webp"], "age_s": 100 * 3600}
    card = {"title": "Открытка для покупателей", "kind": "lightweight", "status": "done", "files": ["c/1.png"],
            "age_s": 30}
    assert decide("давай вернёмся к ролику про валяние", card, video) == ("send_to_task", video["title"])
    box = {"title": "Упаковка подарочного набора", "goal": "Коробка для подарочного набора из ложки и миски",
           "status": "archived", "recency": None, "files": ["pack/gift_box.png"], "age_s": 700 * 3600}
    assert decide("Достань упаковку подарочного набора, хочу поменять надпись", card, box) == \
        ("send_to_task", box["title"])
    kit = {"title": "金継ぎキットのパッケージ", "goal": "初心者向け金継ぎキットの箱のデザイン", "status": "archived",
           "recency": None, "files": ["pack/kit_box.png"], "age_s": 400 * 3600}
    wall = {"title": "金色の波模様のスマホ壁紙", "kind": "lightweight", "status": "done", "files": ["w/wave.png"], "age_s": 30}
    assert decide("キットの箱のデザイン、また使いたいんだけど", wall, kit) == ("send_to_task", kit["title"])
    logo = {"title": "ショップロゴ", "goal": "古着屋のロゴ", "kind": "lightweight", "status": "archived", "recency": None,
            "files": ["logos/shop.png"], "age_s": 800 * 3600}
    assert decide("ロゴ、前のやつ復活させて", wall, logo) == ("send_to_task", logo["title"])


def test_a_russian_noun_in_ie_meets_its_other_cases() -> None:
    from lomo_tui.language import keywords

    assert set(keywords("про валяние")) & set(keywords("Видео о валянии"))


def test_a_position_counted_in_pictures_skips_a_failed_video_that_made_nothing() -> None:
    intro = {"title": "囲碁のルール紹介動画", "goal": "囲碁のルールを1分で紹介する動画", "status": "failed", "age_s": 30}
    big = {"title": "囲碁大会のポスター", "files": ["p/t_1.png", "p/t_2.png", "p/t_3.png"], "age_s": 6 * 3600}
    kids = {"title": "子ども教室のポスター", "files": ["p/k_1.png", "p/k_2.png"], "age_s": 12 * 3600}
    assert decide("2枚目の文字をもっと大きく", intro, big, kids) == ("clarify", [big["title"], kids["title"]])


def test_a_position_in_two_sets_after_other_work_asks_which() -> None:
    sticker = {"title": "Sticker for the volunteers: paw print with a heart", "kind": "lightweight", "status": "done",
               "files": ["s/paw.png"], "age_s": 20}
    dogs = {"title": "Adoption poster series", "goal": "Posters for our adoptable dogs",
            "files": [f"p/dog_{n}.png" for n in range(1, 5)], "age_s": 200}
    cats = {"title": "Cat adoption posters", "files": ["p/cat_1.png", "p/cat_2.png", "p/cat_3.png"],
            "age_s": 9 * 3600}
    assert decide("the third poster looks too busy, too many little paw prints", sticker, dogs, cats) == \
        ("clarify", [dogs["title"], cats["title"]])  # not the sticker its complaint shares words with
    # … the set just worked on is still the one meant when nothing came between
    assert decide("the third poster looks too busy", dogs, cats) == ("send_to_task", dogs["title"])
    kits = {"title": "Terrarium kit product shots", "files": [f"k/kit_{n}.png" for n in range(1, 5)],
            "age_s": 5 * 3600}
    posters = {"title": "Workshop posters", "files": ["w/1.png", "w/2.png"], "age_s": 10 * 3600}
    plants = {"title": "Plant shop Instagram grid", "goal": "Nine posts for a plant shop", "recency": None,
              "files": ["g/1.png", "g/2.png"], "age_s": 9 * 24 * 3600}
    assert decide("the second one needs more plants", kits, posters, plants) == \
        ("clarify", [kits["title"], posters["title"]])  # "plants" is what it wants, not a task it names


def test_a_bulleted_brief_is_several_pieces() -> None:
    tee = {"title": "Volunteer t-shirt", "kind": "lightweight", "status": "done", "files": ["m/tee.png"]}
    assert decide("ok bigger thing. for our open house on may 10 we need:\n- a poster\n- a 10 sec clip for "
                  "instagram\n- name tags for volunteers\ntheme is 'come meet your new best friend'", tee) == \
        ("create_task", "persistent")
    tag = {"title": "値札デザイン", "kind": "lightweight", "status": "done", "files": ["t/tag.png"]}
    assert decide("来月のフリマ出店用にまとめてお願いしたいです。\n・A1のポスター1枚\n・インスタのストーリー用の短い動画\n"
                  "・値下げ用のPOP 3種\n雰囲気は70年代っぽく", tag) == ("create_task", "persistent")


def test_continue_goes_to_the_halted_task_of_two_that_share_words() -> None:
    kit = {"title": "市集一整套：布條、短片、名牌", "goal": "攤位的直幅布條、15秒的短片、工作人員名牌，風格跟竹里工坊的標誌一致",
           "age_s": 60}
    doc = {"title": "竹編紀錄短片", "goal": "60秒的竹編師傅紀錄短片", "status": "paused", "files": ["clips/master.webp"],
           "age_s": 36 * 3600}
    assert decide("紀錄短片繼續做吧，結尾加上工坊地址", kit, doc) == ("send_to_task", doc["title"])


def test_what_a_part_must_say_and_one_too_many_are_edits_of_the_piece() -> None:
    notice = {"title": "中秋節公休的公告", "kind": "lightweight", "status": "done", "files": ["n/closed.png"], "age_s": 20}
    menu = {"title": "鹹酥雞菜單", "files": ["m/menu.png"], "age_s": 5 * 3600}
    assert decide("日期寫9/17", notice, menu) == ("send_to_task", notice["title"])
    assert parse("写一首关于中秋的诗").intent().act == "one_shot"
    problems = {"title": "詰碁問題集の図", "goal": "初級者向け詰碁10問の図", "files": [f"t/q_{n}.png" for n in range(1, 5)],
                "age_s": 30 * 3600}
    icon = {"title": "碁盤と碁石のアイコン", "kind": "lightweight", "status": "done", "files": ["i/go.png"], "age_s": 20}
    assert parse("詰碁の7問目、白石が一つ多いです").intent().count is None
    assert decide("詰碁の7問目、白石が一つ多いです", icon, problems) == ("send_to_task", problems["title"])
    assert parse("アイコンを一つ作って").intent().count == 1


def test_can_we_restart_asks_to_resume() -> None:
    assert parse("can we restart the counselor t-shirts? new logo is ready").intent().act == "resume"
    assert parse("давай вернёмся к ролику про валяние").intent().act == "resume"


def test_a_katakana_name_meets_its_latin_spelling() -> None:
    from lomo_tui.language import katakana_keys, latin_keys

    assert katakana_keys("昔のオリベッティのポスター") & latin_keys("Olivetti Lettera poster")
    assert katakana_keys("ロボットの絵") & latin_keys("robot mascot")
    assert not katakana_keys("ポスターを2枚") & latin_keys("Jazz poster series")  # a kind of piece meets nothing
    assert not katakana_keys("ラベルの2枚目") & latin_keys("Herb label set")
    old = {"title": "Olivetti Lettera poster", "goal": "Illustrated poster of an Olivetti Lettera 32",
           "kind": "lightweight", "status": "done", "recency": None, "files": ["art/lettera.png"], "age_s": 1500 * 3600}
    card = {"title": "Business card", "kind": "lightweight", "status": "done", "files": ["c/card.png"], "age_s": 30}
    assert decide("昔のオリベッティのポスター、覚えてますか？色違いがほしい", card, old) == ("send_to_task", old["title"])


# ---- heldout21, opened (Session 17) -------------------------------------------------------------------------
def test_edits_phrased_as_needs_and_additions_are_edits() -> None:
    assert parse("the flyer needs our new phone number 0161 555 0199").intent().act == "revise"
    assert parse("餐牌加多一款抹茶雞蛋仔,$28").intent().act == "revise"  # one more item on the menu, not a new piece
    assert parse("動画の最後にロゴ入れて").intent().act == "revise"  # に … 入れて without を
    assert parse("i need a flyer for our new phone line").intent().act != "revise"  # a request, not an edit


def test_a_greeting_then_a_capability_question_is_answered() -> None:
    for text in ("hi, can you make 3D models i can actually print? like STL?",
                 "Привет, а можешь сделать анимацию иконок?", "Привет. Можешь сделать звуки леса, пение птиц?"):
        assert parse(text).intent().act == "help", text
    assert parse("Привет, сделай анимацию иконок").intent().act != "help"  # an order, not a question


def test_a_chinese_either_or_question_without_a_particle_and_taiji_is_no_degree() -> None:
    assert parse("太极拳算内家拳还是外家拳").intent().act == "question"
    assert parse("标题太小了").intent().act == "revise"  # 太 … 了 still says too much


def test_a_russian_imperative_may_close_the_message() -> None:
    assert parse("карту зон доставки доделай").intent().act == "continue"
    assert parse("Ролик о мастерской доделай, пожалуйста").intent().act == "continue"
    zones = {"title": "Delivery zone map", "goal": "Map of the delivery zones", "status": "stopped",
             "files": ["maps/zones.png"], "age_s": 60 * 3600}
    icons = {"title": "Courier app icons", "files": ["icons/pickup.png", "icons/route.png"], "age_s": 600}
    # the stopped map, across languages (the runtime then asks whether to resume it)
    assert decide("карту зон доставки доделай", icons, zones) == ("send_to_task", zones["title"])


def test_recalled_old_work_among_ties_is_the_old_one() -> None:
    icons = {"title": "Courier app icons", "files": ["icons/pickup.png", "icons/route.png"], "age_s": 600}
    jacket = {"title": "Rider jacket design", "kind": "lightweight", "status": "done", "recency": None,
              "files": ["merch/jacket.png"], "age_s": 2700 * 3600}
    assert decide("куртку для курьеров, которую делали давным-давно, перекрась в оранжевый", icons, jacket) == \
        ("send_to_task", jacket["title"])
    catalogue = {"title": "Exhibition catalogue cover", "goal": "Cover for the 2022 exhibition catalogue",
                 "kind": "lightweight", "status": "done", "recency": None, "files": ["covers/expo_2022.png"],
                 "age_s": 1900 * 3600}
    pendant = {"title": "金丝龙吊坠", "kind": "lightweight", "status": "done", "files": ["p/dragon.png"], "age_s": 30}
    assert decide("把以前那个展览图录封面找出来,改成2025年的", pendant, catalogue) == \
        ("send_to_task", catalogue["title"])


def test_a_piece_named_only_as_the_look_to_follow_is_not_the_target() -> None:
    ghost = {"title": "Ghost Pepper label series", "goal": "Three bottle labels for the ghost pepper line",
             "files": ["labels/ghost_1.png", "labels/ghost_2.png", "labels/ghost_3.png"], "age_s": 4 * 3600}
    launch = {"title": "Launch campaign for the chipotle honey sauce",
              "goal": "4 instagram posts, a shelf talker and a 10 second clip", "age_s": 30}
    assert decide("for the shelf talker use the same font as the ghost pepper labels", launch, ghost) == \
        ("send_to_task", launch["title"])


def test_cjk_names_fold_across_scripts_and_positions_are_no_names() -> None:
    from lomo_tui.language import keywords

    assert set(keywords("风吕敷的第三个花纹")) & set(keywords("風呂敷の柄シリーズ"))  # zh 风吕敷 = ja 風呂敷
    assert "枚目" not in keywords("4枚目は麻の葉模様に")


def test_a_russian_title_phrase_tells_two_catalogues_apart() -> None:
    dishes = {"title": "Каталог посуды «Гжель»", "goal": "Предметные фото чайников и чашек с синей росписью для каталога",
              "files": [f"catalog/gzhel_{n}.png" for n in range(1, 5)], "age_s": 6 * 3600}
    souvenirs = {"title": "Каталог сувениров «Гжель»", "goal": "Фото фигурок и колокольчиков с гжельской росписью",
                 "files": ["souvenirs/gzhel_1.png", "souvenirs/gzhel_2.png"], "age_s": 9 * 3600}
    assert decide("вторую фотографию из каталога посуды сделай на белом фоне", dishes, souvenirs) == \
        ("send_to_task", dishes["title"])
    from lomo_tui.models.local_router import _pairs

    said = _pairs("вторую фотографию из каталога посуды")  # the two words side by side, in any case
    assert said & _pairs(dishes["title"]) and not said & _pairs(souvenirs["title"])


def test_the_clause_that_recalls_names_the_work_not_the_reason_after_it() -> None:
    oil = {"title": "換機油教學影片", "goal": "自己換機油的教學影片,兩段", "files": ["clips/oil_1.webp"], "age_s": 15 * 3600}
    prices = {"title": "價目表", "goal": "維修與保養價目表", "kind": "lightweight", "status": "archived",
              "recency": None, "files": ["docs/prices_2021.md"], "age_s": 3000 * 3600}
    assert decide("之前那份價目表拿出來更新一下,機油漲價了", oil, prices) == ("send_to_task", prices["title"])


def test_the_one_task_of_the_kind_named_beats_the_piece_just_worked_on() -> None:
    lookbook = {"title": "冬季 Lookbook", "goal": "冬季服飾 lookbook 八頁", "age_s": 30,
                "files": ["lookbook/page_1.png", "lookbook/page_2.png"]}
    stickers = {"title": "貼紙包", "goal": "店家貼紙包六款", "status": "stopped", "age_s": 120 * 3600,
                "files": ["stickers/s1.png", "stickers/s2.png"]}
    assert decide("貼紙再加兩款，其中一款是店貓", lookbook, stickers) == ("send_to_task", stickers["title"])


# ---- heldout22, opened (Session 17) -------------------------------------------------------------------------
def test_questions_about_lomo_and_the_world_that_name_a_making_verb_are_answered() -> None:
    for text in ("Привет, можешь объяснить, чем отличается обычная задача от проекта у тебя?",
                 "你好，我是画壁画的，中文日文都会用，可以混着说吗",  # who asks is no request to paint
                 "お米のおいしい炊き方って、水加減どれくらいがいいの", "外壁に描くなら、どんな塗料が長持ちしますか"):
        assert parse(text).intent().act in ("question", "greeting", "help"), text
    for text in ("哈囉，請問你可以幫我做印刷品的設計稿嗎？", "はじめまして。音声の作品も作れますか？BGMとか"):
        assert parse(text).intent().act == "help", text
    assert parse("можешь сделать постер с котом?").intent().act not in ("question", "help")  # still an order
    assert parse("我是开咖啡店的，帮我做个logo").intent().act == "one_shot"


def test_a_redo_and_a_position_with_its_content_are_edits() -> None:
    assert parse("первый пост — утренний класс у станка").intent().act == "revise"  # «класс» is no praise here
    assert parse("класс!").intent().act == "thanks"
    assert parse("去年母親節禮盒的DM，今年再做一次，價格漲100").intent().act == "one_shot"  # 再做一次 is again, not "then"


def test_a_videos_sound_is_the_video_at_hand() -> None:
    teaser = {"title": "Короткий ролик-тизер для ютуба про новую модель", "kind": "lightweight", "status": "done",
              "files": ["clips/teaser.webp"], "age_s": 20}
    sticker = {"title": "Наклейка на деку", "kind": "lightweight", "status": "done", "files": ["s/logo.png"],
               "age_s": 70 * 3600}
    assert decide("звук погромче, музыки поменьше", teaser, sticker) == ("send_to_task", teaser["title"])


def test_the_content_of_a_position_names_no_task() -> None:
    series = {"title": "Серия постов «Один день балерины» для VK", "goal": "серия из 4 постов", "age_s": 20}
    enrol = {"title": "Набор в подготовительный класс — пост", "kind": "lightweight", "status": "done",
             "files": ["social/nabor.png"], "age_s": 30 * 3600}
    assert decide("первый пост — утренний класс у станка", series, enrol) == ("send_to_task", series["title"])


def test_a_one_shot_asked_again_goes_to_it_and_the_next_of_a_series_like_the_others_joins_it() -> None:
    specimen = {"title": "Marlow Serif specimen poster", "goal": "A1 specimen poster for the Marlow Serif family",
                "kind": "lightweight", "status": "done", "files": ["specimens/marlow-serif.png"], "age_s": 15 * 3600}
    other = {"title": "Tallow Grotesk specimen poster", "kind": "lightweight", "status": "done",
             "files": ["specimens/tallow.png"], "age_s": 14 * 3600}
    assert decide("Make a specimen poster for Marlow Serif", other, specimen) == ("send_to_task", specimen["title"])
    assert decide("make another specimen poster for Marlow Serif", other, specimen)[0] == "create_task"
    logo = {"title": "道場ロゴ", "goal": "剣道道場のロゴ", "kind": "lightweight", "status": "done", "files": ["l/dojo.png"],
            "age_s": 3600}
    assert decide("道場ロゴ入りのTシャツデザインを一枚お願いします", logo)[0] == "create_task"  # a T-shirt, not the logo
    parks = {"title": "National parks puzzle series", "goal": "Puzzle artwork series, one national park each",
             "files": ["parks/yosemite.png", "parks/zion.png", "parks/acadia.png"], "age_s": 12 * 3600}
    box = {"title": "Coastal lighthouse box art", "kind": "lightweight", "status": "done", "files": ["b/l.png"],
           "age_s": 60}
    assert decide("next park: Glacier, same style as the others", box, parks) == ("send_to_task", parks["title"])


def test_search_and_evidence_cross_languages_by_subject_and_skip_lone_characters() -> None:
    from lomo_tui.language import keywords

    labels = {"title": "Kombucha bottle labels (4 flavours)", "files": ["labels/ginger.png"], "age_s": 7 * 3600}
    clip = {"title": "新品上市短视频", "goal": "新口味上市的15秒短视频", "kind": "lightweight", "status": "done",
            "files": ["video/launch.mp4"], "age_s": 30 * 3600}
    assert decide("瓶标还差一个柠檬草口味，帮我补上", labels, clip) == ("send_to_task", labels["title"])
    flyer = {"title": "Lantern workshop flyer", "goal": "Flyer for the paper lantern workshop", "kind": "lightweight",
             "status": "done", "recency": None, "files": ["flyers/lantern-workshop.png"], "age_s": 3200 * 3600}
    shogi = {"title": "将棋教室のチラシ", "kind": "lightweight", "status": "done", "files": ["f/shogi.png"], "age_s": 600}
    assert decide("前にやったランタンのワークショップのチラシ、また使いたいので日付を7月に", shogi, flyer) == \
        ("send_to_task", flyer["title"])
    assert not {"好", "次", "秒"} & set(keywords("再试一次，30秒就好"))


def test_a_piece_its_title_names_beats_one_whose_brief_mentions_it() -> None:
    flyer = {"title": "書道体験のチラシ", "goal": "日本人観光客向けの書道体験チラシ", "kind": "lightweight", "status": "done",
             "files": ["flyers/shodo_ja.png"], "age_s": 30 * 3600}
    poster = {"title": "英語のポスター", "goal": "書道体験のチラシとは別に、英語のポスターも一枚ほしい。海外のお客さん向け",
              "kind": "lightweight", "status": "done", "files": ["p/en.png"], "age_s": 3600}
    lesson = {"title": "春联教学视频", "goal": "春节写春联的教学视频，分五集", "files": ["v/fu.mp4"], "age_s": 30}
    assert decide("日文那张体验传单，背景再淡一点", lesson, poster, flyer) == ("send_to_task", flyer["title"])
