"""Pilot tests of the memory view, the stats view and the task view's cache figures, on states seeded through
the real runtime (tests/tui_apps/states.py: "memory", "stats", "busy"; workers off). Every action is checked in
the database it went through; synchronisation is by `wait_until`, never by sleeps."""
from __future__ import annotations

import pytest

from sqlalchemy import select

from lomo_tui.memory.actions import CONFIRMED_TEXT
from lomo_tui.store import schema as s
from lomo_tui.tui.screens.confirm import ConfirmScreen
from lomo_tui.tui.screens.memory import MemoryList, MemoryScreen
from lomo_tui.tui.screens.prompt import PromptScreen
from lomo_tui.tui.screens.stats import StatsScreen
from lomo_tui.tui.screens.task import TaskScreen
from lomo_tui.tui.widgets.composer import Composer
from tui_apps.live import notifications, type_text, wait_until
from tui_apps.states import make_app, until_ready

SIZE = (120, 36)


def shown(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def open_memory(pilot) -> MemoryScreen:
    await until_ready(pilot)
    await pilot.press("f2")
    screen = await wait_until(pilot, lambda: isinstance(pilot.app.screen, MemoryScreen) and pilot.app.screen.loaded
                              and pilot.app.screen, what="the memory view")
    return screen


async def versions_of(app, text_part: str) -> list:
    async with app.session.db.read() as conn:
        memory_id = (await conn.execute(select(s.memory_versions.c.memory_id).where(
            s.memory_versions.c.text.contains(text_part)))).scalar()
        return list((await conn.execute(select(s.memory_versions).where(
            s.memory_versions.c.memory_id == memory_id).order_by(s.memory_versions.c.version))).all())


async def links_of(app, version_id: str) -> list:
    async with app.session.db.read() as conn:
        return list((await conn.execute(select(s.memory_evidence_links.c.role, s.memory_evidence.c.text).join(
            s.memory_evidence, s.memory_evidence.c.id == s.memory_evidence_links.c.evidence_id).where(
            s.memory_evidence_links.c.version_id == version_id))).all())


def highlight(screen: MemoryScreen, words: str) -> None:
    listing = screen.query_one(MemoryList)
    ids = list(listing.entries)
    listing.highlighted = next(n for n, i in enumerate(ids) if words in listing.entries[i].text)
    listing.focus()


async def test_the_memory_view_shows_each_memory_with_its_sources_scope_and_version(tmp_path):
    app = make_app(tmp_path, "memory")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot)
        listing = screen.query_one(MemoryList)
        assert listing.option_count == 5 and listing.has_focus
        assert "5 memories" in shown(screen, "#memory-title")
        detail = shown(screen, "#memory-detail")  # the newest change: the brand fact the creator confirmed
        assert "Our brand colour is teal." in detail and "stated by you" in detail and "version 1" in detail
        assert "“Our brand colour is teal.”" in detail and "Main · 09:41" in detail
        assert "confirmed in this view" in detail
        highlight(screen, "cream accent")
        await pilot.pause()
        detail = shown(screen, "#memory-detail")
        assert "version 2 (1 earlier)" in detail and "“Also with a soft cream accent.”" in detail
        assert "refined" in detail and "v1 superseded I usually like muted, low-saturation colours." in detail
        highlight(screen, "watercolour")
        await pilot.pause()
        detail = shown(screen, "#memory-detail")
        assert "inferred by Lomo (not your words)" in detail and "“make a robot in watercolour style”" in detail
        highlight(screen, "A3 portrait")
        await pilot.pause()
        assert "project: Poster series" in shown(screen, "#memory-detail")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, MemoryScreen), what="back to the main screen")


@pytest.mark.slow
async def test_the_memory_and_stats_views_open_from_the_palette(tmp_path):
    app = make_app(tmp_path, "memory")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        for words, kind in (("memory: what lomo remembers", MemoryScreen), ("stats: verified", StatsScreen)):
            await pilot.press("ctrl+p")
            await type_text(pilot, words)
            await wait_until(pilot, lambda: app.screen.query("CommandList") and
                             app.screen.query_one("CommandList").option_count, what="a palette hit")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, kind) and app.screen.loaded, what=kind.__name__)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, kind), what="back")


async def test_confirm_adds_confirm_evidence_and_edit_makes_a_new_version_from_the_creators_words(tmp_path):
    app = make_app(tmp_path, "memory")
    seen = notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot)
        highlight(screen, "Never put text")
        await pilot.press("c")
        [v1] = await versions_of(app, "Never put text")
        await wait_until(pilot, lambda: any("Confirmed" in m for _, m in seen), what="the confirmation")
        assert sorted(r.role for r in await links_of(app, v1.id)) == ["confirm", "origin"]
        assert "confirmed in this view" in shown(screen, "#memory-detail")

        await pilot.press("e")
        prompt = await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen) and app.screen,
                                  what="the edit prompt")
        field = prompt.query_one("#prompt-input")
        assert field.value == "Never put text over faces."
        field.value = "Never put text over faces or hands."
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("version 2" in m for _, m in seen), what="the edit")
        old, new = await versions_of(app, "Never put text")
        assert (old.status, new.status, new.text) == ("superseded", "active", "Never put text over faces or hands.")
        roles = sorted((r.role, r.text) for r in await links_of(app, new.id))
        assert roles == [("origin", "Never put text over faces."), ("refine", "Never put text over faces or hands.")]
        assert CONFIRMED_TEXT not in [t for _, t in roles]  # a confirmation is not carried into the new version
        await wait_until(pilot, lambda: "or hands" in shown(screen, "#memory-detail"), what="the new version shown")


async def test_forget_asks_first_and_only_an_explicit_yes_forgets(tmp_path):
    app = make_app(tmp_path, "memory")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot)
        highlight(screen, "cream accent")
        await pilot.press("f")
        dialog = await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen,
                                  what="the forget dialog")
        detail = shown(dialog, "#confirm-detail")
        assert "v1 (superseded): I usually like muted, low-saturation colours." in detail
        assert "v2 (active): I usually like muted, low-saturation colours. Also with a soft cream accent." in detail
        assert "leaves your profile" in detail
        await pilot.press("y", "f", "enter")  # letters do nothing; Enter is on Cancel
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen), what="back in the view")
        assert [v.status for v in await versions_of(app, "cream accent")] == ["superseded", "active"]

        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the dialog again")
        await pilot.press("right", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen) and screen.query_one(
            MemoryList).option_count == 4, what="the memory to leave the view")
        async with app.session.db.read() as conn:
            statuses = (await conn.execute(select(s.memory_versions.c.status, s.memory_versions.c.text).where(
                s.memory_versions.c.memory_id.not_in(select(s.memory_versions.c.memory_id).where(
                    s.memory_versions.c.status != "forgotten"))))).all()
        assert [(st, t) for st, t in statuses] == [("forgotten", ""), ("forgotten", "")]
        assert "cream" not in "".join(e.text for e in screen.query_one(MemoryList).entries.values())


async def test_letters_without_a_key_in_the_memory_view_go_to_its_input_which_talks_to_main(tmp_path):
    app = make_app(tmp_path, "memory")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot)
        await pilot.press("x", "y")
        composer = screen.query_one(Composer)
        assert composer.input.value == "xy" and composer.input.has_focus and composer.task_id is None
        await pilot.press("e")  # in the input, e is a letter again
        assert composer.input.value == "xye"


async def test_the_stats_view_shows_the_figures_and_charts_and_p_changes_the_period(tmp_path):
    app = make_app(tmp_path, "stats")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await pilot.press("f3")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.loaded
                                  and app.screen, what="the stats view")
        numbers = shown(screen, "#stats-numbers")
        assert "Verified transitions     71% (5 of 7 claimed steps)" in numbers
        assert "Unsafe actions stopped   1" in numbers
        assert "36,000 prompt tokens · 17,480 read from the cache (49%) · 12,160 written" in numbers
        chart = shown(screen, "#stats-chart")
        assert "Last 14 days" in chart and "13d ago" in chart
        assert "Poster series" in chart and "31 calls" in chart and "8 calls · 5/7 steps verified" in chart
        lines = {line.split("  ")[1].strip(): line for line in chart.splitlines() if line.startswith("  ")
                 and line.split("  ")[1].strip() in ("verified steps", "model calls")}
        assert lines["verified steps"].rstrip().endswith(" 5") and lines["model calls"].rstrip().endswith(" 42")
        assert screen.doc["counts"]["verified_transitions"] == 5 and screen.activity["days"][-1]["verified"] == 1
        await pilot.press("p")
        await wait_until(pilot, lambda: "last 24 hours" in shown(screen, "#stats-title"), what="the next period")
        assert "(1 of 1 claimed steps)" in shown(screen, "#stats-numbers")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, StatsScreen), what="back")


async def test_the_task_view_shows_its_prompt_and_cache_tokens(tmp_path):
    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await app.open_task("task-poster")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded
                                  and app.screen, what="the task view")
        assert "2 model calls · 240 prompt tokens · 100 read from the cache (42%) · 100 written" in shown(
            screen, "#task-title")
        assert screen.usage == {"calls": 2, "prompt_tokens": 240, "cache_read_tokens": 100,
                                "cache_write_tokens": 100, "cache_read_share": 0.4167}
        await pilot.press("f2")  # nothing said as lasting in this state: the memory view says how it begins
        memory = await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen) and app.screen.loaded
                                  and app.screen, what="the memory view")
        assert "Nothing remembered yet" in shown(memory, "#memory-detail")
        assert not memory.query_one(MemoryList).display and "nothing yet" in shown(memory, "#memory-title")


async def test_f4_shows_what_the_open_tasks_next_step_would_send(tmp_path):
    from lomo_tui.tui.screens.context_view import ContextScreen

    app = make_app(tmp_path, "busy")
    async with app.run_test(size=SIZE) as pilot:
        await until_ready(pilot)
        await app.open_task("task-poster")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.loaded, what="task view")
        await pilot.press("f4")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.loaded
                                  and app.screen, what="the context view")
        body = shown(screen, "#context-text")
        assert screen.task_id == "task-poster" and screen.doc["task_id"] == "task-poster"
        assert "tokens" in body and "layer" in body and "Tools: " in body  # the layers, the budget, the tools
        assert all(layer["name"] in body for layer in screen.doc["layers"])
        assert screen.task_title and screen.task_title in shown(screen, "#context-title")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen), what="back to the task view")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TaskScreen), what="the main screen")
        await pilot.press("f4")  # outside a task: the main thread's prompt
        main = await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.loaded
                                and app.screen, what="the main thread's context")
        assert main.task_id is None and main.doc["task_id"] == "main"
