"""Task titles read well in en, zh, ja and ru (language/titles.py, titles.toml): the offline Router's
create_task title keeps the thing being made and leaves out the frame of the request — wish and request
leads, trailing fillers, a goal head that does not fit what is made, the list after a colon, a quote left
open, a word cut at the 60-character limit, a title that would be only a verb."""
from __future__ import annotations

from typing import Any

import pytest

from lomo_tui.language.titles import clip
from lomo_tui.models.base import ModelRequest


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}


def title_of(text: str) -> str:
    """The title the offline Router gives the task TEXT starts (no task in view)."""
    from lomo_tui.models.local_router import route

    request = ModelRequest(messages=[{"role": "user", "content": text}], tools=[_tool("create_task")],
                           hints={"tasks": []})
    [call] = route(request).tool_calls
    assert call.name == "create_task"
    return call.arguments["title"]


@pytest.mark.parametrize("text,title", [
    ("we need a 20-second teaser, 3 scenes, for our bakery's grand opening", "Short clip: Teaser"),
    ("need: a logo", "Logo"),
    ("来个3D的兔子模型", "3D的兔子模型"),
    ("新しく本屋のロゴつくって", "本屋のロゴ"),
    ("海の背景画を描きたい", "海の背景画"),
    ("次：猫のイラスト", "猫のイラスト"),
    ("нужен ещё баннер для пекарни", "Баннер для пекарни"),
    ("кстати нарисуй мне сову", "Сову"),
])
def test_a_wish_or_request_lead_is_not_part_of_the_title(text: str, title: str) -> None:
    assert title_of(text) == title


@pytest.mark.parametrize("text,title", [
    ("a set of 6 stickers for the ramen bar", "Sticker series for the ramen bar"),
    ("make a series of invitations for my sister's wedding", "Invitation series for my sister's wedding"),
    ("做一套茶馆的贴纸，五张", "茶馆的贴纸系列"),
    ("画一组城市的插画，六张", "插画系列：城市"),
    ("カフェのステッカーを6枚作って", "カフェのステッカーシリーズ"),
    ("сделай серию наклеек для кофейни", "Серия наклеек для кофейни"),
    ("нарисуй пять открыток с котами", "Серия открыток с котами"),
    ("нарисуй пятнадцать иконок для приложения", "Серия иконок для приложения"),
])
def test_a_goal_head_names_what_is_made_not_posters_for_everything(text: str, title: str) -> None:
    assert title_of(text) == title


@pytest.mark.parametrize("text,title", [
    ("make a poster series for a jazz night, art deco, gold on navy", "Poster series for a jazz night"),
    ("一套节日海报（春节、中秋）", "节日海报系列"),
    ("カフェのポスターを3枚作って", "カフェのポスターシリーズ"),
    ("сделай серию из трёх постеров для марафона", "Серия постеров для марафона"),
])
def test_a_head_that_fits_is_said_once(text: str, title: str) -> None:
    assert title_of(text) == title


@pytest.mark.parametrize("text,title", [
    ("make a logo for a bakery - separate project", "Logo for a bakery"),
    ("画一张海边的日落图就好", "海边的日落图"),
    ("灯台のイラストをひとつ作って", "灯台のイラスト"),
    ("сделай серию из четырёх иллюстраций про осень, коротко", "Серия иллюстраций про осень"),
])
def test_a_trailing_filler_is_left_out(text: str, title: str) -> None:
    assert title_of(text) == title


@pytest.mark.parametrize("text,title", [
    ("design a launch campaign for our cider: poster, coaster and a 10s clip", "Launch campaign for our cider"),
    ("запусти кампанию для нового кафе: баннеры, посты и видео", "Кампанию для нового кафе"),
    ("给我的书店“慢读”做一套品牌物料：logo、书签、帆布袋", "品牌物料"),
    ("make a sticker that says 'stay weird'", "Sticker that says 'stay weird'"),
    ("ゲームのタイトルロゴ『星降る森』を作って", "ゲームのタイトルロゴ『星降る森』"),
    ("「夜のカフェ」という看板のイラストを作って", "「夜のカフェ」という看板のイラスト"),
    ("логотип для кафе «Ромашка»", "Логотип для кафе «Ромашка»"),
])
def test_a_list_after_a_colon_goes_and_quotes_stay_closed(text: str, title: str) -> None:
    assert title_of(text) == title


@pytest.mark.parametrize("text,title", [
    ("make a poster for the annual riverside community garden harvest festival and farmers market weekend",
     "Poster for the annual riverside community garden harvest…"),
    ("сделай постер для ежегодного фестиваля урожая общественного сада на набережной реки и фермерского рынка",
     "Постер для ежегодного фестиваля урожая общественного сада…"),
])
def test_a_long_title_is_cut_at_a_word_with_an_ellipsis(text: str, title: str) -> None:
    assert title_of(text) == title
    assert len(title) <= 60


@pytest.mark.parametrize("long", [
    "夏の海辺の町で毎年開かれる花火大会と盆踊りと屋台の夜市と地元の子どもたちの太鼓の演奏会と朝市と灯籠流しと花火の打ち上げのポスター",
    "我们小区在滨河公园举办的一年一度的中秋赏月晚会猜灯谜游戏亲子手工月饼制作体验露天音乐会和美食市集以及烟花表演和灯笼展览的宣传海报",
])
def test_a_long_cjk_title_is_cut_to_sixty_characters_with_an_ellipsis(long: str) -> None:
    cut = clip(long)
    assert len(long) > 60 and len(cut) == 60 and cut.endswith("…") and long.startswith(cut[:-1])


@pytest.mark.parametrize("text,title", [
    ("next: draw", "Image"),
    ("然后：画", "海报系列：图片"),
    ("次は、店のインスタ用に6枚の投稿を作りたい", "店のインスタ用に6枚の投稿"),
    ("ещё: нарисуй", "Изображение"),
])
def test_a_title_is_never_only_a_verb_or_a_lead(text: str, title: str) -> None:
    assert title_of(text) == title
