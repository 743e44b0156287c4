"""The language layer (issue #12 §5): one message catalogue, cards in the task's language, titles that keep
the thing being made, greetings that ask are answered, and the layer sits on the ground floor."""
from __future__ import annotations

import ast
import string
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from conftest import LomoEnv
from lomo_tui.language import LANGUAGES, classify, message
from lomo_tui.language.messages import catalogue
from lomo_tui.models.base import ModelReply, ModelRequest, ToolCall
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.views import load_gates

ROOT = Path(__file__).resolve().parent.parent / "lomo_tui"


# ---- the catalogue ------------------------------------------------------------------------------------
def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_exists_in_every_language_with_the_same_fields() -> None:
    english = catalogue("en")
    for lang in LANGUAGES:
        other = catalogue(lang)
        assert set(other) == set(english), lang
        for section, texts in english.items():
            assert set(other[section]) == set(texts), (lang, section)
            for key, template in texts.items():
                assert _fields(other[section][key]) == _fields(template), (lang, section, key)
                assert other[section][key].strip(), (lang, section, key)


def test_the_language_layer_is_the_ground_floor() -> None:
    for path in sorted((ROOT / "language").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1 and not (node.module or "").startswith("lomo_tui"), path.name
    assert not (ROOT / "models" / "nlu").exists() and not (ROOT / "studio" / "keywords.py").exists()


def test_creator_facing_tables_live_in_the_catalogue_only() -> None:
    """The three old tables (offline replies, routing cards, checkpoint/failure cards) are gone from code."""
    for rel, names in {"router/phrases.py": ("TEXTS",), "tasks/stopcheck.py": ("CHECKPOINT_WORDS", "FAILURE_WORDS"),
                       "language/phrases.py": ("greeting",)}.items():
        source = (ROOT / rel).read_text(encoding="utf-8")
        assert not any(f"{n} = {{" in source or f'"{n}": {{' in source for n in names), rel


# ---- titles and greetings ------------------------------------------------------------------------------
@pytest.mark.parametrize("text,title", [
    ("сделай короткий ролик про кофе", "Короткий ролик про кофе"),  # a one-shot keeps the thing being made
    ("猫の短い動画を作って", "猫の短い動画"),
    ("make a short clip about coffee", "Short clip about coffee"),
    ("做一个关于咖啡的短视频", "关于咖啡的短视频"),
    # a goal names it once: "Retro poster posters", "Poster series: Poster for …" were titles once
    ("a retro poster series of three posters for a jazz night", "Poster series: Retro posters for a jazz night"),
    ("make a poster series for a jazz night, art deco, gold on navy", "Poster series for a jazz night"),
    ("make a 15-second short film of a fox in a snowy forest, three shots", "Short film of a fox in a snowy forest"),
    ("сделай 15-секундный короткий фильм про лису в снежном лесу, три кадра", "Короткометражный фильм: Лиса в снежном лесу"),
])
def test_a_title_names_the_thing_being_made_once(text: str, title: str) -> None:
    from lomo_tui.models.local_router import route

    request = ModelRequest(messages=[{"role": "user", "content": text}], tools=[_tool("create_task")],
                           hints={"tasks": []})
    [call] = route(request).tool_calls
    assert call.name == "create_task" and call.arguments["title"] == title


@pytest.mark.parametrize("text,lang", [
    ("你好，今天可以做什麼？", "zh"), ("你好，今天可以做什么？", "zh"), ("hi, what can you do?", "en"),
    ("こんにちは、何ができますか？", "ja"), ("привет, что ты умеешь?", "ru"),
])
def test_a_greeting_that_asks_what_lomo_can_do_is_answered(text: str, lang: str) -> None:
    from lomo_tui.models.local_router import route

    assert classify(text).act == "help"
    reply = route(ModelRequest(messages=[{"role": "user", "content": text}], tools=[_tool("create_task")],
                               hints={"tasks": []}))
    assert not reply.tool_calls and reply.content == message("reply.help", lang)


def test_traditional_chinese_reads_like_simplified_but_japanese_kanji_stay() -> None:
    assert classify("請幫我畫一張貓的海報").act == "one_shot"
    assert classify("猫の短い動画を作って").media == "video"


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}


# ---- cards in the task's language (the real runtime, a scripted worker) ----------------------------------
class Worker:
    """The task's model: the first call makes CALL, later calls say done; the main thread is not used."""

    name = "lomo/replay"

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.calls = 0

    async def complete(self, request: ModelRequest, on_token: Any = None) -> ModelReply:
        self.calls += 1
        return ModelReply(content=None, tool_calls=[self.call]) if self.calls == 1 else ModelReply("done")


TITLES = {"en": "Cat clip", "zh": "猫的短片", "ja": "猫の短い動画", "ru": "Ролик про кота"}


async def _card(lomo: LomoEnv, lang: str, call: ToolCall) -> Any:
    rt = Runtime(lomo.settings(), model=Worker(call), watch=False)
    await rt.open()
    try:
        async with rt.db.write() as conn:
            task = await rt.ledger.create_task(TITLES[lang], kind="lightweight", language=lang, conn=conn)
            await conn.execute(update(s.tasks).where(s.tasks.c.id == task).values(autonomy="ask"))
        (lomo.workspace / "old.md").write_text("old")
        await rt.start()
        await rt.ledger.deliver(task, "go")
        await rt.run_until_quiescent(60)
        [gate] = await load_gates(rt.db)
        async with rt.db.read() as conn:
            row = (await conn.execute(select(s.gates).where(s.gates.c.id == gate.id))).one()
        return gate, row
    finally:
        await rt.close()


SPEND = {"en": "Spend", "zh": "花费", "ja": "使いますか", "ru": "Потратить"}
ENGLISH = ("Spend ", "Approve ", "Decline", "waits", "goes on", "other tasks", "Delete ", "Keep it", "this task")


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_the_spend_card_speaks_the_task_language(lomo: LomoEnv, lang: str) -> None:
    gate, row = await _card(lomo, lang, ToolCall("generate_image", {"prompt": "a cat"}))
    assert gate.kind == "spend" and gate.language == lang
    assert SPEND[lang] in gate.question and TITLES[lang] in gate.question
    assert message("budget.ask_always", lang) in gate.question
    amount = f"{row.scope['amount']:.2f}"
    currency = gate.options[0].label.replace(amount, "").strip().split()[-1 if lang != "ja" else 0]
    assert [o.label for o in gate.options] == [message("card.spend_approve", lang, amount=amount, currency=currency),
                                               message("card.spend_decline", lang)]
    assert gate.continues == message("card.spend_continues", lang)
    if lang != "en":  # nothing English reaches a card in another language
        shown = " ".join([gate.question, gate.blocks, gate.continues, *(o.label + o.consequence for o in gate.options)])
        assert not any(word in shown for word in ENGLISH), shown


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_the_delete_card_speaks_the_task_language(lomo: LomoEnv, lang: str) -> None:
    gate, _ = await _card(lomo, lang, ToolCall("delete_file", {"path": "old.md"}))
    assert gate.kind == "irreversible"
    assert gate.question == message("card.delete_question", lang, path="old.md")
    assert [o.label for o in gate.options] == [message("card.delete_confirm", lang, path="old.md"),
                                               message("card.delete_keep", lang)]
    assert gate.blocks == message("card.delete_scope", lang, path="old.md")


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_the_gate_card_labels_speak_the_task_language(lomo: LomoEnv, lang: str) -> None:
    from lomo_tui.tui.widgets.gates import gate_prompt

    gate, _ = await _card(lomo, lang, ToolCall("ask_user", {"question": "?"}))
    shown = gate_prompt(gate).plain
    assert message("gate.waits", lang) in shown and message("gate.goes_on", lang) in shown
    assert message("gate.kind_question", lang) in shown
    assert [o.label for o in gate.options] == [message("card.yes", lang), message("card.no", lang)]
    if lang != "en":
        assert "waits:" not in shown and "goes on:" not in shown and "Yes" not in shown


# ---- the file name a creator asks for ---------------------------------------------------------------------
@pytest.mark.slow
def test_a_requested_file_name_is_kept_and_a_follow_up_naming_it_finds_its_task(lomo: LomoEnv) -> None:
    assert lomo.run("--run-once", "make perfume.png", model="lomo/local").returncode == 0
    assert (lomo.workspace / "perfume.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # saved as the creator said
    assert lomo.run("--run-once", "make perfume.png warmer", model="lomo/local").returncode == 0
    tasks = [t for t in lomo.inspect()["tasks"] if t["kind"] != "main"]
    assert len(tasks) == 1 and tasks[0]["title"] == "Perfume"  # the follow-up went to it, no new task, no card
    assert lomo.inspect()["gates"] == []


def test_a_message_is_parsed_once_and_each_reader_gets_its_own_copy() -> None:
    from lomo_tui.language import intent as reading
    from lomo_tui.language import parse
    from lomo_tui.models.local_router import route

    text = "make a short clip about a lighthouse at dawn"
    message = parse(text)
    before = reading.READS
    first = message.intent()
    first.act, first.files = "changed by a reader", ["x.png"]
    reply = route(ModelRequest(messages=[{"role": "user", "content": text}], tools=[_tool("create_task")],
                               hints={"tasks": [], "new_messages": [text]}, message=message))
    assert reply.tool_calls[0].name == "create_task"
    assert reading.READS == before  # the router read the carried parse, not the words again
    again = message.intent()
    assert again.act == "one_shot" and again.files == []


@pytest.mark.parametrize("text,subject", [
    ("做一个15秒的短片，雪林里的一只狐狸，三个镜头", "雪林里的狐狸"),  # 一个 is "a"; 三个镜头 is how many shots
    ("雪の森のキツネの15秒の短編映画を作って、3ショットで", "雪の森のキツネ"),  # 短編映画 is a film
    ("make a 15-second short film of a fox in a snowy forest, three shots", "fox in a snowy forest"),
])
def test_a_film_request_reads_its_shots_length_and_subject_in_every_language(text: str, subject: str) -> None:
    from lomo_tui.language import classify

    intent = classify(text)
    assert (intent.goal_type, intent.count, intent.seconds) == ("film", 3, 15.0)
    assert subject in intent.subject


@pytest.mark.parametrize("text,subject", [
    ("make a 15-second short film of a fox in a snowy forest, three shots", "a fox in a snowy forest"),
    ("做一个15秒的短片，雪林里的一只狐狸，三个镜头", "雪林里的狐狸"),
    ("雪の森のキツネの15秒の短編映画を作って、3ショットで", "雪の森のキツネ"),
    ("雪の森のキツネの短編映画を作って、15秒、3ショットで", "雪の森のキツネ"),  # the film named last
    ("сделай 15-секундный короткий фильм про лису в снежном лесу, три кадра", "лиса в снежном лесу"),  # про + acc.
    ("сделай короткий фильм о лисе в снежном лесу, 15 секунд, три кадра", "лиса в снежном лесу"),  # о + prep.
    ("сделай короткий фильм с лисой в снежном лесу на 15 секунд из трёх кадров", "лиса в снежном лесу"),  # с + ins.
    ("сними короткий фильм про рыжего кота на крыше, 15 секунд, 3 кадра", "рыжий кот на крыше"),
    ("сделай фильм о старом маяке, три кадра, 15 секунд", "старый маяк"),
])
def test_a_film_s_subject_is_what_it_is_of_in_every_language(text: str, subject: str) -> None:
    """Not the words that say it is a film ("короткий фильм про"), and in Russian in the nominative, so the
    storyboard's sentences read ("появляется лиса в снежном лесу")."""
    from lomo_tui.language import classify, film_subject
    from lomo_tui.language.plan import make_checklist

    intent = classify(text)
    assert (intent.goal_type, intent.count, intent.seconds) == ("film", 3, 15.0)
    assert film_subject(intent) == subject
    board = make_checklist(intent)[0].args
    assert board["path"].startswith("films/") and subject in board["content"]
