"""A tool's refusal and a studio job's failure reach the creator in the task's language (#12 §5) while the model
reads the same English as before: `ToolError.said` (catalogue `[tool_error]`), the job's `[job]` keys, and
`error_said` kept beside the English on the ledger's row."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from sqlalchemy import select

from conftest import LomoEnv
from lomo_tui.errors import Said
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s
from lomo_tui.tools.registry import ToolError

MESSAGES = Path(__file__).resolve().parents[1] / "lomo_tui" / "language" / "messages"
BROKEN_PNG = b"\x89PNG\r\n\x1a\n" + b"not really an image" * 8  # passes for a PNG, cannot be decoded


def call(name: str, content: str | None = None, **arguments: object) -> dict:
    return {"content": content, "tool_calls": [{"name": name, "arguments": arguments}]}


async def _run(lomo: LomoEnv, title: str, lang: str, words: str) -> tuple[Runtime, str]:
    rt = Runtime(lomo.settings())
    await rt.start()
    task = await rt.ledger.create_task(title, language=lang)
    await rt.send(words, task)
    assert await rt.run_until_quiescent(60)
    return rt, task


async def _tool_rows(rt: Runtime, task: str) -> tuple[list, list]:
    async with rt.db.read() as conn:
        calls = (await conn.execute(select(s.tool_calls).join(s.turns, s.turns.c.id == s.tool_calls.c.turn_id).where(
            s.turns.c.task_id == task, s.tool_calls.c.name == "generate_image"))).all()
        said = (await conn.execute(select(s.messages.c.content).where(
            s.messages.c.task_id == task, s.messages.c.role == "tool"))).scalars().all()
    return calls, list(said)


async def test_a_chinese_tasks_refused_input_is_chinese_for_the_creator_and_english_for_the_model(
        lomo: LomoEnv) -> None:
    from lomo_tui.cli.state import render_task, task_document
    from lomo_tui.context.history import History
    from lomo_tui.views import load_cards

    (lomo.workspace / "notes.md").write_text("# 笔记\n", encoding="utf-8")
    plan = call("update_plan", brief="封面", steps=[{"title": "封面", "tool": "generate_image"}])
    order = call("generate_image", "正在生成封面…", prompt="a cover", inputs=["notes.md"], step="1")
    lomo.replay(plan, *[order] * 6)
    rt, task = await _run(lomo, "封面", "zh", "用 notes.md 做一张封面")
    try:
        calls, tool_messages = await _tool_rows(rt, task)
        doc = await task_document(rt.db, task)
        card = (await load_cards(rt.db, [task]))[task]
        history = History(task)
        async with rt.db.read() as conn:
            await history.refresh(conn)
        chat = [m for m in history.verbatim_layer()[0] if m["role"] == "tool"]
    finally:
        await rt.close()
    english = ("input notes.md is a text document, not an image; pass images only (png, jpeg, gif, webp) "
               "or leave inputs out")
    chinese = "输入 notes.md 是文本文档，不是图片；只能用图片（png、jpeg、gif、webp），或不给输入"
    assert len(calls) == 2 and all(c.status == "failed" for c in calls)  # stopped on the second, as before
    stored = [json.loads(c.result) if isinstance(c.result, str) else c.result for c in calls]
    assert all(r["error"] == english and r["error_said"]["key"] == "tool_error.input_not_image" for r in stored)
    # the model reads exactly what it read before: the English, without the creator's wording
    model_reads = [json.loads(m) for m in tool_messages if "notes.md" in m]
    assert model_reads and all(m == {"error": english, "error_kind": "bad_input"} for m in model_reads), model_reads
    assert any(json.loads(m["content"]) == {"error": english, "error_kind": "bad_input"} for m in chat), chat
    assert doc["status"] == "failed" and chinese in doc["status_reason"] and "input notes.md" not in doc["status_reason"]
    [gate] = [g for g in doc["gates"] if g["status"] == "pending"]
    assert chinese in gate["question"], gate["question"]
    assert chinese in render_task(doc, "en")  # the task's words are its own, whoever reads them
    assert card.outcome.startswith("输入 notes.md 是文本文档"), card.outcome
    assert chinese in card.reason


async def test_a_japanese_tasks_failed_render_says_so_in_japanese_where_the_creator_reads_it(lomo: LomoEnv) -> None:
    from lomo_tui.cli.state import render_report, render_task, run_report, task_document
    from lomo_tui.views import load_cards

    (lomo.workspace / "broken.png").write_bytes(BROKEN_PNG)
    plan = call("update_plan", brief="ポスター", steps=[{"title": "ポスター", "tool": "generate_image"}])
    order = call("generate_image", "ポスターを生成しています…", prompt="a poster", inputs=["broken.png"], step="1")
    lomo.replay(plan, *[order] * 6)
    rt, task = await _run(lomo, "ポスター", "ja", "broken.png からポスターを作って")
    try:
        calls, tool_messages = await _tool_rows(rt, task)
        doc = await task_document(rt.db, task)
        report = await run_report(rt.db, 0.0, [], True)
        card = (await load_cards(rt.db, [task]))[task]
    finally:
        await rt.close()
    made_en = "the embedded studio could not render this image"
    made_ja = "内蔵スタジオはこの画像を描画できませんでした"
    assert [j["status"] for j in doc["jobs"]] == ["failed", "failed"]
    assert all(j["error"] == made_en and j["error_text"] == made_ja for j in doc["jobs"]), doc["jobs"]
    english = [json.loads(m)["error"] for m in tool_messages if "was not made" in m]
    assert english and all(e.startswith("the image was not made (job ") and e.endswith(
        f"failed): {made_en}; any charge was refunded") for e in english), english
    assert all("error_said" not in m for m in tool_messages)
    assert "画像は作られませんでした（ジョブ " in doc["status_reason"] and made_ja in doc["status_reason"]
    assert made_en not in doc["status_reason"]
    assert f"— {made_ja}" in render_task(doc, "ja")
    assert made_ja in render_report(report, "ru")  # the report's own words are the reader's, the job's its task's
    assert card.outcome == f"作れませんでした：{made_ja}。料金はすべて返金されました", card.outcome


async def test_a_russian_one_shot_with_a_missing_input_fails_with_a_russian_reason(lomo: LomoEnv) -> None:
    """The one-shot path (stopcheck.one_shot_verdict): its failed order is the task's reason."""
    from lomo_tui.cli.state import render_report, run_report

    order = call("generate_image", "Рисую…", prompt="a poster", inputs=["нет.png"])
    lomo.replay(order, {"content": "готово", "tool_calls": []})
    rt = Runtime(lomo.settings())
    await rt.start()
    try:
        task = await rt.ledger.create_task("Постер", kind="lightweight", language="ru")
        await rt.send("сделай постер из нет.png", task)
        assert await rt.run_until_quiescent(60)
        calls, tool_messages = await _tool_rows(rt, task)
        report = await run_report(rt.db, 0.0, [], True)
    finally:
        await rt.close()
    [row] = [t for t in report["tasks"] if t["id"] == task]
    assert row["status"] == "failed" and row["reason"] == "входа нет.png нет в рабочей папке", row
    assert "  причина: входа нет.png нет в рабочей папке" in render_report(report, "ru").replace("    ", "  ")
    assert [json.loads(m) for m in tool_messages] == [
        {"error": "input нет.png does not exist in the workspace", "error_kind": "bad_input"}]


CASES = [
    ("version_not_kept", dict(version=3, path="a.flow.json"),
     "version 3 of a.flow.json is not kept; read_flow it again and redo the edit"),
    ("no_node", dict(path="a.flow.json", node=repr("n1")), "a.flow.json has no node 'n1'"),
    ("kept_file", dict(path="a.png"), "the creator kept a.png; do not delete it"),
    ("if_unanswered", dict(options="a, b"), "if_unanswered must be one of the options (a, b)"),
    ("step_needs_confirmation", dict(n=2), "step 2 needs the creator's confirmation; the runtime asks them"),
    ("size", dict(size=repr("huge"), sizes="square, portrait"),
     "size 'huge' is not one of square, portrait or WxH between 64 and 2048"),
    ("input_outside", dict(path=repr("../x.png"), why=Said("tool_error.outside")),
     "input '../x.png' is not a workspace path: it is outside"),
    ("changed", dict(files="a.md, b.md"), "a.md, b.md changed since this step was decided; nothing was ordered "
                                          "or charged. Re-read it and order again with what it says now"),
    ("production_declined", {}, "the creator declined the production card; nothing was made or charged. "
                                "Do not run it again unless they ask"),
    ("spend_declined", dict(amount="0.40", currency="credits", what=Said("tool_error.kind_image")),
     "the creator declined spending 0.40 credits on this image; do not order it again unless they ask"),
    ("no_shots", dict(path="s.md"), "s.md has no '## Shot N' sections to make a graph from"),
    ("seconds_range", dict(most=60), "seconds must be between 0.5 and 60"),
    ("job_unknown", dict(id="job_1", reason=Said("tool_error.outcome_unknown")),
     "job job_1: its outcome is unknown. It was not resubmitted; check with the creator before ordering again."),
    ("not_made", dict(what=Said("tool_error.kind_3d"), id="job_2", status=Said("tool_error.status_expired"),
                      reason=Said("job.deadline"), refund=""),
     "the 3d was not made (job job_2 expired): no result before the deadline; the charge was refunded"),
]


@pytest.mark.parametrize(("key", "fields", "english"), CASES, ids=[c[0] for c in CASES])
def test_the_english_the_model_reads_is_what_the_tools_said_before(key: str, fields: dict, english: str) -> None:
    """Each converted refusal, in English, word for word as the f-strings wrote it."""
    exc = ToolError.said(key, **fields)
    assert str(exc) == english and exc.text("en") == english
    assert all(exc.text(lang) != english for lang in ("zh", "ja", "ru"))


def test_a_tool_error_without_a_key_and_the_models_copy_of_a_result() -> None:
    from lomo_tui.errors import error_words, for_model

    plain = ToolError("free words")  # one raised without a key reads the same in every language
    assert plain.said_as is None and plain.text("ja") == "free words"
    result = {"error": "x", "error_kind": "refused", "error_said": Said("tool_error.search_needs").stored()}
    assert for_model(result) == {"error": "x", "error_kind": "refused"}
    assert error_words(result, "ja") == "何を探すか指定してください"


def test_every_tool_and_job_text_is_in_all_four_languages_with_the_same_fields() -> None:
    import string

    books = {lang: tomllib.loads((MESSAGES / f"{lang}.toml").read_text(encoding="utf-8"))
             for lang in ("en", "zh", "ja", "ru")}
    for section in ("tool_error", "job"):
        keys = set(books["en"][section])
        assert len(keys) > (40 if section == "tool_error" else 30), section
        for lang, book in books.items():
            assert set(book[section]) == keys, (lang, section, keys ^ set(book[section]))
            for key in keys:
                fields = {f for _, f, _, _ in string.Formatter().parse(book[section][key]) if f}
                wanted = {f for _, f, _, _ in string.Formatter().parse(books["en"][section][key]) if f}
                assert fields == wanted, (lang, section, key)
    # every key the code names is in the catalogue
    code = Path(__file__).resolve().parents[1] / "lomo_tui"
    import re

    named = set()
    for path in list((code / "tools").glob("*.py")) + list((code / "studio").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        named |= {("tool_error", k) for k in re.findall(r'ToolError\.said\("(\w+)"', text)}
        named |= {("job", k) for k in re.findall(r'(?<![.\w])said\("(\w+)"', text)}
        named |= {tuple(k.split(".")) for k in re.findall(r'Said\("((?:tool_error|job)\.\w+)"', text)}
    assert len(named) > 50
    from lomo_tui.tools.media import KINDS, NOT_IMAGES  # keys the code makes from a kind

    named |= {("tool_error", f"input_is_{k}") for k in NOT_IMAGES + ("other",)}
    named |= {("tool_error", f"kind_{k}") for k in KINDS}
    named |= {("tool_error", f"source_{k}") for k in ("clip", "audio")}
    named |= {("tool_error", f"status_{k}") for k in ("failed", "expired", "cancelled")}
    missing = [f"{sec}.{k}" for sec, k in named if k not in books["en"][sec]]
    assert not missing, missing


@pytest.mark.parametrize("lang", ["zh", "ja", "ru"])
def test_a_remote_studios_failure_is_worded_in_the_tasks_language(lang: str) -> None:
    from lomo_tui.studio.providers import ProviderError, said

    exc = ProviderError(said("timeout", model="openai/sora-2", seconds="30", action=said("doing_order")))
    assert str(exc) == "openai/sora-2 did not answer within 30s while ordering the video"
    worded = exc.words.text(lang)
    assert "openai/sora-2" in worded and "30" in worded and "ordering" not in worded
