"""The production graph's plan card says why it asks (issue #12): the limit governance found the plan's cost
over, or the task's autonomy, on one short line in the task's language. Real runtime, real SQLite, `lomo/local`
and the embedded studio (nothing is made: the card waits)."""
from __future__ import annotations

import pytest
from sqlalchemy import insert, select

from conftest import LomoEnv
from lomo_tui import clock
from lomo_tui.governance.budget import Budget, plan_why
from lomo_tui.language import message
from lomo_tui.runtime.scheduler import Runtime
from lomo_tui.store import schema as s

FILMS = {
    "en": "make a 15-second short film of a fox in a snowy forest, three shots",
    "zh": "做一个雪林里狐狸的15秒短片，分三个镜头",
    "ja": "雪の森のキツネの15秒の短編映画を作って、3ショットで",
    "ru": "сделай 15-секундный короткий фильм про лису в снежном лесу, три кадра",
}


def _budget(lomo: LomoEnv, **values: float) -> None:
    for where in (lomo.root / "cfg", lomo.root / "cfg" / "lomo"):
        where.mkdir(parents=True, exist_ok=True)
        (where / "config.toml").write_text("[budget]\n" + "".join(f"{k} = {v}\n" for k, v in values.items()))


async def _plan_card(lomo: LomoEnv, lang: str, autonomy: str = "plan") -> tuple[Runtime, object]:
    rt = Runtime(lomo.settings(model="lomo/local"))
    await rt.start()
    task = await rt.ledger.create_task("Film")
    async with rt.db.write() as conn:
        await conn.execute(s.tasks.update().where(s.tasks.c.id == task).values(language=lang, autonomy=autonomy))
    await rt.send(FILMS[lang], task)
    assert await rt.run_until_quiescent(120)
    async with rt.db.read() as conn:
        [card] = (await conn.execute(select(s.gates).where(s.gates.c.status == "pending"))).all()
    return rt, card


@pytest.mark.parametrize("lang", ["en", "zh", "ja", "ru"])
async def test_the_plan_card_says_it_is_over_today_s_free_allowance(lomo: LomoEnv, lang: str) -> None:
    _budget(lomo, free_per_call=100, daily_free_cap=0.25)
    rt, card = await _plan_card(lomo, lang)
    try:
        assert card.kind == "spend" and card.scope["role"] == "plan"
        total, currency = card.scope["amount"], rt.budget.currency
        assert total > 0.25  # what governance compares: the plan's cost against what today leaves free
        why = message("production.why_over_free", lang, total=f"{total:.2f}", left="0.25", currency=currency)
        assert card.question.splitlines()[-1] == why == card.scope["why"]
        assert f"{total:.2f}" in why and "0.25" in why
    finally:
        await rt.close()


async def test_an_auto_task_s_card_says_it_is_over_its_auto_approve_limit(lomo: LomoEnv) -> None:
    _budget(lomo, free_per_call=100, daily_free_cap=0.05, auto_daily_cap=0.25)
    rt, card = await _plan_card(lomo, "zh", autonomy="auto")
    try:
        total = card.scope["amount"]
        assert card.question.splitlines()[-1] == message("production.why_over_auto", "zh", total=f"{total:.2f}",
                                                         left="0.25", currency=rt.budget.currency)
    finally:
        await rt.close()


async def test_a_plan_within_every_free_limit_says_the_task_approves_each_plan(lomo: LomoEnv) -> None:
    _budget(lomo, free_per_call=100, daily_free_cap=100)
    rt, card = await _plan_card(lomo, "en")
    try:
        assert card.question.splitlines()[-1] == "asked because this task approves each plan before anything is made"
    finally:
        await rt.close()


@pytest.mark.parametrize("lang", ["en", "zh", "ja", "ru"])
async def test_why_reads_what_was_spent_today_and_each_limit(lomo: LomoEnv, lang: str) -> None:
    """The reason from the spend already charged today (a real charge row), in each language."""
    rt = Runtime(lomo.settings(model="lomo/local"), watch=False)
    await rt.start()
    try:
        budget = Budget(free_per_call=0.10, daily_free_cap=1.00, auto_daily_cap=2.00)
        async with rt.db.write() as conn:
            task = await rt.ledger.create_task("Film", conn=conn)
            t = clock.now()  # 0.80 already charged today for a finished job
            await conn.execute(insert(s.jobs).values(
                id="job-today", workspace=rt.studio.workspace_key, idempotency_key="test/today", task_id=task,
                kind="image", provider="embedded", status="succeeded", prompt="a fox", params={}, cost=0.80,
                deadline=t, created_at=t, updated_at=t))
            await conn.execute(insert(s.charges).values(id="chg-today", job_id="job-today", task_id=task,
                                                        amount=0.80, idempotency_key="test/today", created_at=t))
            over_free = await plan_why(conn, budget, autonomy="plan", amount=0.40, lang=lang)
            over_auto = await plan_why(conn, budget, autonomy="auto", amount=1.50, lang=lang)
            over_call = await plan_why(conn, budget, autonomy="plan", amount=0.15, lang=lang)
            within = await plan_why(conn, budget, autonomy="plan", amount=0.05, lang=lang)
            ask = await plan_why(conn, budget, autonomy="ask", amount=0.05, lang=lang)
        c = budget.currency
        assert over_free == message("production.why_over_free", lang, total="0.40", left="0.20", currency=c)
        assert over_auto == message("production.why_over_auto", lang, total="1.50", left="1.20", currency=c)
        assert over_call == message("production.why_over_call", lang, total="0.15", limit="0.10", currency=c)
        assert within == message("production.why_plan", lang) and ask == message("production.why_ask", lang)
        assert len({over_free, over_auto, over_call, within, ask}) == 5
    finally:
        await rt.close()
