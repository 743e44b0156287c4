"""Tasks saved under an older keyword scheme are re-keyed once, so old tasks stay findable after the
language layer changes (router.reindex)."""
from __future__ import annotations

import sqlite3

from conftest import LomoEnv
from lomo_tui.router import reindex
from lomo_tui.router.index import search_text
from lomo_tui.runtime.scheduler import Runtime


def _rows(env: LomoEnv) -> dict[str, str]:
    with sqlite3.connect(env.db_path) as db:
        return dict(db.execute("SELECT id, search_text FROM tasks"))


async def test_stale_keywords_are_rewritten_once_and_the_scheme_recorded(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(), watch=False)
    try:
        await rt.open()
        ids = [await rt.ledger.create_task(f"Spring poster series {n}", goal="posters for the running club")
               for n in range(5)]
        await rt.rekey.start()
        await rt.rekey.wait()
    finally:
        await rt.close()
    with sqlite3.connect(lomo.db_path) as db:  # as an older language layer would have left them
        db.executemany("UPDATE tasks SET search_text = 'spr poster seri' WHERE id = ?", [(i,) for i in ids])
        db.execute("UPDATE meta SET value = 'older' WHERE key = ?", (reindex.KEY,))
        hits = db.execute("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH 'spring'").fetchone()[0]
    assert hits == 0  # the stale keywords hide the tasks from a search for "spring"

    rt = Runtime(lomo.settings(), watch=False)
    try:
        await rt.start()
        assert await rt.rekey.wait() == 5
    finally:
        await rt.close()
    rows = _rows(lomo)
    assert all(rows[i] == search_text(f"Spring poster series {n}", "posters for the running club")
               for n, i in enumerate(ids))
    with sqlite3.connect(lomo.db_path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = ?", (reindex.KEY,)).fetchone()[0] == reindex.scheme()
        assert db.execute("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH 'spring'").fetchone()[0] == 5

    rt = Runtime(lomo.settings(), watch=False)  # current now: the next start does nothing
    try:
        await rt.start()
        assert await rt.rekey.wait() == 0
    finally:
        await rt.close()


async def test_rekeying_goes_in_small_transactions(lomo: LomoEnv) -> None:
    rt = Runtime(lomo.settings(), watch=False)
    try:
        await rt.open()
        for n in range(7):
            await rt.ledger.create_task(f"Task {n}")
        async with rt.db.write() as conn:
            await conn.exec_driver_sql("UPDATE tasks SET search_text = ''")
        before = rt.db.commits["synced"]
        assert await reindex.rekey(rt.db, batch=3) == 8  # seven tasks and the main thread
        assert rt.db.commits["synced"] - before == 4  # batches of 3, 3, 2, then the scheme
    finally:
        await rt.close()


def test_the_scheme_follows_the_language_layer() -> None:
    assert reindex.scheme().startswith(reindex.MANUAL + ":")
    assert "spring" in search_text(reindex.PROBE[0]).split()  # the probe covers the stemmer's edge cases
