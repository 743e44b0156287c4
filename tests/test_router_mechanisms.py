"""How lomo/local decides which task a message is for, mechanism by mechanism (#12 §5): a new thing is not an
old task asked again, a position said after a single piece, the value an edit asks for, measure units, and the
reading of questions, goodbyes and capability questions. Each case failed before its mechanism was built."""
from __future__ import annotations

import time
from datetime import datetime

import pytest

from lomo_tui.language import other_thing, parse
from lomo_tui.models.base import ModelRequest
from lomo_tui.models.local_router import route


def decide(text: str, *tasks: dict) -> tuple[str, object]:
    """lomo/local's decision for TEXT with TASKS in the index (most recent first; each {"title", "goal"?,
    "files"?, "kind"?, "status"?}): ("create_task", kind) | ("send_to_task", title) | ("clarify", [titles]) |
    ("answer", text)."""
    now = time.time()
    entries = [{"id": f"task-{n:08x}", "title": t["title"], "goal": t.get("goal", ""),
                "status": t.get("status", "idle"), "kind": t.get("kind", "persistent"), "files": t.get("files", []),
                "recency": n, "updated_at": now - 60 - n} for n, t in enumerate(tasks)]
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
