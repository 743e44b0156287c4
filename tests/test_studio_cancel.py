"""A cancelled embedded render leaves nothing in the spool, whenever the cancel lands: while the file is being
written by its worker thread, or in the moment after it is written and before the job is done (CI once found
`emb-….mp4` left behind by a stop under load)."""
from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import async_wait_for
from lomo_tui.studio.embedded import EmbeddedStudio


async def test_a_render_cancelled_after_its_file_is_written_leaves_no_file(tmp_path: Path) -> None:
    studio = EmbeddedStudio(tmp_path / "spool", time_scale=1.0)  # a clip's last tick takes a while at full scale
    await studio.start()
    try:
        job = await studio.submit("video", {"prompt": "slow pan", "seconds": 1, "size_px": [64, 36]}, "k1")
        spooled = await async_wait_for(lambda: list((tmp_path / "spool").glob(f"{job}.*")), timeout=60,
                                       what="the render's file to be written")
        assert (await studio.status(job)).status == "running"  # written, not yet done: the window CI hit
        assert await studio.cancel(job)
        assert not any(p.exists() for p in spooled)
        assert (await studio.status(job)).status == "cancelled"
    finally:
        await studio.stop()
    assert not list((tmp_path / "spool").iterdir())


async def test_a_render_called_off_while_its_thread_writes_never_lands(tmp_path: Path) -> None:
    studio = EmbeddedStudio(tmp_path / "spool", time_scale=0.01)
    await studio.start()
    try:
        job = await studio.submit("image", {"prompt": "a fox", "size_px": [32, 32]}, "k2")
        await async_wait_for(lambda: studio._jobs[job].status == "running", what="the job to run")
        record = studio._jobs[job]
        await studio.cancel(job)
        # the worker thread finishing after the cancel puts nothing in place
        assert not await asyncio.to_thread(record.spool, tmp_path / "spool" / f"{job}.png", b"late bytes")
    finally:
        await studio.stop()
    assert not list((tmp_path / "spool").iterdir())
