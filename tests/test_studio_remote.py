"""The litellm studio provider against a real HTTP server speaking OpenAI's images, videos and speech APIs."""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import asyncio
import base64
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from conftest import LomoEnv, async_wait_for
from lomo_tui.models import remote
from lomo_tui.studio.providers import STATUS_RANK, JobEvent, ProviderError
from lomo_tui.studio.remote import LiteLLMStudio, _nearest, event_seq, normalise
from media_stub import MP3, MP4, MediaStub, png

KEY = "sk-test-media-0123456789"


pytestmark = pytest.mark.usefixtures("loopback_only")  # no test here reaches past 127.0.0.1 (conftest)


@pytest.fixture(scope="module")
def server(loopback_only: None) -> Iterator[MediaStub]:
    remote.preload()  # once for the module (seconds)
    with MediaStub() as running:
        yield running


@pytest.fixture
def stub(server: MediaStub) -> MediaStub:
    server.reset()
    return server


class Sink:
    def __init__(self) -> None:
        self.events: list[JobEvent] = []

    async def __call__(self, event: JobEvent) -> None:
        self.events.append(event)

    def of(self, job_id: str) -> list[JobEvent]:
        return [e for e in self.events if e.provider_job_id == job_id]


def make(stub: MediaStub, spool: Path, sink: Sink | None = None, **config: Any) -> LiteLLMStudio:
    config = {"image_model": "openai/gpt-image-1", "video_model": "openai/sora-2", "speech_model": "openai/tts-1",
              "api_base": stub.base_url, "api_key": KEY, "timeout": 5, "poll_seconds": 0.02, **config}
    studio = LiteLLMStudio(config, spool)
    if sink is not None:
        studio.subscribe(sink)
    return studio


async def finished(sink: Sink, job_id: str, timeout: float = 10) -> JobEvent:
    return await async_wait_for(lambda: next((e for e in sink.of(job_id) if e.status in ("done", "failed")), None),
                                timeout=timeout, what=f"{job_id} to finish")


def assert_monotonic(events: list[JobEvent]) -> None:
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
    ranks = [STATUS_RANK[e.status] for e in events]
    assert ranks == sorted(ranks), [e.status for e in events]
    progress = [e.progress for e in events]
    assert progress == sorted(progress), progress


# ---- images --------------------------------------------------------------------------------------
async def test_image_is_done_at_submit_and_fetch_returns_the_png(stub: MediaStub, tmp_path: Path) -> None:
    stub.image = png(5, 5, (10, 20, 30))
    sink = Sink()
    studio = make(stub, tmp_path, sink)
    await studio.start()
    try:
        job_id = await studio.submit("image", {"prompt": "a red fox", "size_px": [768, 768]}, "turn1:0:call1")
        assert job_id.startswith("img-")
        [request] = stub.hits("POST", "/v1/images/generations")
        assert request.body == {"model": "gpt-image-1", "prompt": "a red fox", "n": 1, "size": "768x768"}
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert request.headers["idempotency-key"].startswith("lomo-")
        await finished(sink, job_id)
        assert [e.status for e in sink.of(job_id)][:2] == ["queued", "done"]
        assert_monotonic(sink.of(job_id)[:2])
        assert await studio.status(job_id) == JobEvent(job_id, event_seq("done", 1), "done", 1.0)
        assert await studio.fetch(job_id) == (stub.image, "png")
        # the same key again (a second worker of the same turn) orders nothing
        assert await studio.submit("image", {"prompt": "a red fox"}, "turn1:0:call1") == job_id
        assert len(stub.hits("POST", "/v1/images/generations")) == 1
        studio.discard(job_id)
        assert list(tmp_path.iterdir()) == []
    finally:
        await studio.stop()


async def test_image_sizes_snap_and_input_images_use_the_edit_endpoint(stub: MediaStub, tmp_path: Path) -> None:
    source = tmp_path / "in.png"
    source.write_bytes(png(2, 2))
    studio = make(stub, tmp_path / "spool", image_sizes=["1024x1024", "1536x1024", "1024x1536"])
    await studio.start()
    try:
        await studio.submit("image", {"prompt": "wide", "size_px": [896, 640]}, "k-wide")
        await studio.submit("image", {"prompt": "edit", "size_px": [640, 896], "input_files": [str(source)]}, "k-edit")
        stub.image_as_url = True  # dall-e style answers are downloaded
        by_url = await studio.submit("image", {"prompt": "url"}, "k-url")
        assert await studio.fetch(by_url) == (stub.image, "png")
        assert len(stub.hits("GET", "/v1/files/image.png")) == 1
    finally:
        await studio.stop()
    generated, _ = stub.hits("POST", "/v1/images/generations")
    assert generated.body["size"] == "1536x1024"
    [edited] = stub.hits("POST", "/v1/images/edits")
    assert edited.body["size"] == "1024x1536" and list(edited.files.values()) == [png(2, 2)]
    assert _nearest([768, 768], []) == "768x768" and _nearest(None, []) is None


# ---- videos --------------------------------------------------------------------------------------
async def test_video_returns_the_provider_id_at_once_then_polls_to_done(stub: MediaStub, tmp_path: Path) -> None:
    sink = Sink()
    studio = make(stub, tmp_path, sink, video_durations=[4, 8, 12], video_sizes=["1280x720", "720x1280"])
    await studio.start()
    try:
        reference = tmp_path / "first-frame.png"
        reference.write_bytes(png(3, 3))
        job_id = await studio.submit("video", {"prompt": "slow pan", "seconds": 5, "size_px": [480, 270],
                                               "input_files": [str(reference)]}, "k-video")
        assert stub.hits("GET", "/v1/videos/video_stub0001") == []  # returned before any poll
        [order] = stub.hits("POST", "/v1/videos")
        assert order.headers["content-type"].startswith("multipart/form-data")
        assert order.body == {"model": "sora-2", "prompt": "slow pan", "seconds": "8", "size": "1280x720"}
        assert order.files == {"input_reference": png(3, 3)}
        assert "video_stub0001" in base64.b64decode(job_id.removeprefix("video_")).decode()  # litellm's encoded id
        done = await finished(sink, job_id)
        assert done.status == "done" and done.progress == 1.0
        events = sink.of(job_id)
        assert_monotonic(events)
        assert [e.status for e in events] == ["queued", "running", "running", "done"]
        assert [e.progress for e in events] == [0.0, 0.3, 0.7, 1.0]
        assert await studio.fetch(job_id) == (MP4, "mp4")
        assert len(stub.hits("GET", "/v1/videos/video_stub0001/content")) == 1
    finally:
        await studio.stop()


async def test_provider_status_words_are_normalised(stub: MediaStub, tmp_path: Path) -> None:
    stub.video_steps = [("pending", 0), ("processing", 50), ("processing", 40), ("succeeded", 100)]
    sink = Sink()
    studio = make(stub, tmp_path, sink)
    await studio.start()
    try:
        ok = await studio.submit("video", {"prompt": "a"}, "k-ok")
        await finished(sink, ok)
        assert [(e.status, e.progress) for e in sink.of(ok)] == [("queued", 0), ("running", 0.5), ("done", 1.0)]
        stub.video_steps = [("in_progress", 10), ("failed", 10)]
        bad = await studio.submit("video", {"prompt": "b"}, "k-bad")
        failed = await finished(sink, bad)
        assert failed.status == "failed" and "blocked" in (failed.error or "")
        assert_monotonic(sink.of(bad))
    finally:
        await studio.stop()
    assert normalise({"status": "Canceled"})[0] == "cancelled"
    assert normalise({"status": "RUNNING", "progress": 0.25})[:2] == ("running", 0.25)
    assert normalise({"status": "something-new"})[0] == "running"  # never fails a paid job on a new word


async def test_a_fresh_instance_resumes_a_known_video_by_id(stub: MediaStub, tmp_path: Path) -> None:
    first = make(stub, tmp_path / "a", poll_seconds=60)
    await first.start()
    job_id = await first.submit("video", {"prompt": "restart me"}, "k-restart")
    await first.stop()  # the process ends; the provider keeps the video

    fresh = make(stub, tmp_path / "b")  # nothing in memory, an empty spool
    event = await fresh.status(job_id)
    assert event.provider_job_id == job_id and event.status == "queued"
    sink = Sink()
    fresh.subscribe(sink)
    await fresh.start()
    fresh.resume(job_id, "video", {"prompt": "restart me"})
    try:
        assert (await finished(sink, job_id)).status == "done"
        assert_monotonic(sink.of(job_id))
        assert await fresh.fetch(job_id) == (MP4, "mp4")
    finally:
        await fresh.stop()

    again = make(stub, tmp_path / "c")  # a completed video known only by id: fetch downloads it
    assert await again.fetch(job_id) == (MP4, "mp4")
    assert (await again.status(job_id)).status == "done"
    with pytest.raises(ProviderError, match="404"):
        await make(stub, tmp_path / "d").status("video_nosuchthing")


async def test_a_fresh_instance_announces_a_spooled_image_again(stub: MediaStub, tmp_path: Path) -> None:
    first = make(stub, tmp_path)
    job_id = await first.submit("image", {"prompt": "before the crash"}, "k-crash")
    await first.stop()  # gone before the service took the result
    fresh, sink = make(stub, tmp_path), Sink()
    fresh.subscribe(sink)
    await fresh.start()
    fresh.resume(job_id, "image", {"prompt": "before the crash"})
    fresh.resume("img-unknown", "image", {})  # nothing spooled: nothing to announce, no error
    try:
        assert (await finished(sink, job_id)).status == "done"
        assert await fresh.fetch(job_id) == (stub.image, "png")
        assert (await fresh.status(job_id)).status == "done"
        with pytest.raises(ProviderError, match="no result"):
            await fresh.status("img-unknown")
    finally:
        await fresh.stop()
    assert len(stub.hits("POST", "/v1/images/generations")) == 1


# ---- failures ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,path", [("video", "/v1/videos"), ("image", "/v1/images/generations")])
async def test_submit_timeout_is_unknown_and_never_retried(stub: MediaStub, tmp_path: Path, kind: str,
                                                           path: str) -> None:
    stub.delay(path, 30)  # the provider would answer only after 30 s: the 0.5 s timeout must end the wait
    studio = make(stub, tmp_path, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        await studio.submit(kind, {"prompt": "slow"}, f"k-slow-{kind}")
    assert caught.value.unknown and "may have been accepted" in str(caught.value)
    assert time.monotonic() - started < 20  # long before the provider's answer (a behaviour, not a speed)
    await asyncio.sleep(0.3)
    assert len(stub.hits("POST", path)) == 1
    await studio.stop()


@pytest.mark.parametrize("kind", ["image", "video", "audio"])
async def test_401_is_clear_and_never_shows_the_key(stub: MediaStub, tmp_path: Path, kind: str) -> None:
    stub.require_key = "sk-the-right-one"
    secret = "sk-wrong-but-secret-9876543210"
    studio = make(stub, tmp_path, api_key=secret)
    with pytest.raises(ProviderError) as caught:
        await studio.submit(kind, {"prompt": "x"}, f"k-401-{kind}")
    message = str(caught.value)
    assert "401" in message and "OPENAI_API_KEY" in message and not caught.value.unknown
    assert secret not in message and "wrong-but" not in message
    assert secret not in repr(studio)


async def test_refused_connection_and_gateway_timeouts(stub: MediaStub, tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with pytest.raises(ProviderError) as refused:
        await make(stub, tmp_path, api_base=dead).submit("video", {"prompt": "x"}, "k-dead")
    assert not refused.value.unknown and "could not reach" in str(refused.value)  # nothing was ordered
    stub.fail("/v1/videos", 504, "upstream timed out")
    with pytest.raises(ProviderError) as gateway:
        await make(stub, tmp_path).submit("video", {"prompt": "x"}, "k-504")
    assert gateway.value.unknown
    stub.fail("/v1/images/generations", 400, "Invalid size '768x768'. Supported sizes are 1024x1024.")
    with pytest.raises(ProviderError) as bad:
        await make(stub, tmp_path).submit("image", {"prompt": "x", "size_px": [768, 768]}, "k-400")
    assert not bad.value.unknown and "(400)" in str(bad.value) and "Supported sizes" in str(bad.value)


async def test_3d_and_unconfigured_kinds_are_refused_without_a_call(stub: MediaStub, tmp_path: Path) -> None:
    studio = LiteLLMStudio({"image_model": "openai/gpt-image-1"}, tmp_path)
    with pytest.raises(ProviderError, match="no 3D endpoint through litellm"):
        await studio.submit("3d", {"prompt": "a chair"}, "k-3d")
    with pytest.raises(ProviderError, match="set video_model"):
        await studio.submit("video", {"prompt": "x"}, "k-nov")
    with pytest.raises(ValueError, match="unknown key"):
        LiteLLMStudio({"imagemodel": "x"}, tmp_path)
    assert stub.requests == []


# ---- speech ------------------------------------------------------------------------------------
async def test_speech_bytes_as_wav_or_mp3(stub: MediaStub, tmp_path: Path) -> None:
    studio = make(stub, tmp_path, voice="nova")
    job_id = await studio.submit("audio", {"prompt": "hello there"}, "k-say")
    data, ext = await studio.fetch(job_id)
    assert ext == "wav" and data.startswith(b"RIFF")
    assert stub.requests[-1].body == {"model": "tts-1", "input": "hello there", "voice": "nova",
                                      "response_format": "wav"}
    mp3 = make(stub, tmp_path, audio_format="mp3")
    assert await mp3.fetch(await mp3.submit("audio", {"prompt": "hi"}, "k-mp3")) == (MP3, "mp3")
    await studio.stop()
    await mp3.stop()


# ---- through the runtime -----------------------------------------------------------------------
async def test_end_to_end_image_and_video_through_the_runtime(stub: MediaStub, lomo: LomoEnv) -> None:
    from lomo_tui.runtime.scheduler import Runtime
    from lomo_tui.store import schema as s
    from lomo_tui.studio.service import Studio

    lomo.replay({"content": None, "tool_calls": [
        {"name": "generate_image", "arguments": {"prompt": "a blue cat"}},
        {"name": "generate_video", "arguments": {"prompt": "a blue cat walking", "seconds": 4}}]},
        {"content": "done", "tool_calls": []})
    rt = Runtime(lomo.settings())
    rt.budget = type(rt.budget)(free_per_call=5, daily_free_cap=50)
    rt.studio = Studio(rt, provider=make(stub, lomo.workspace / ".lomo" / "studio"))
    rt.services = [rt.studio if service.__class__ is Studio else service for service in rt.services]
    await rt.start()
    try:
        task = await rt.ledger.create_task("cat")
        await rt.send("make a cat picture and a clip", task)

        async def jobs() -> list[Any]:
            async with rt.db.read() as conn:
                return list((await conn.execute(select(s.jobs).order_by(s.jobs.c.kind))).all())

        async def settled() -> bool:
            rows = await jobs()
            return len(rows) == 2 and all(r.status == "done" for r in rows)

        await async_wait_for(settled, timeout=15, what="both jobs to finish")
        assert await rt.run_until_quiescent(10)
        image, video = await jobs()
        async with rt.db.read() as conn:
            turn = (await conn.execute(select(s.turns).where(s.turns.c.task_id == task))).one()
    finally:
        await rt.close()
    assert (image.provider, video.provider) == ("litellm", "litellm")
    assert (lomo.workspace / image.artifact_path).read_bytes() == stub.image
    assert (lomo.workspace / video.artifact_path).read_bytes() == MP4 and video.artifact_path.endswith(".mp4")
    assert video.provider_job_id.startswith("video_")
    assert (turn.status, turn.model_calls) == ("completed", 2)  # woken once, after both jobs settled
    assert not any(p.is_file() for p in (lomo.workspace / ".lomo" / "studio").iterdir())  # spool emptied


async def test_stopping_a_task_whose_provider_cannot_cancel_keeps_the_late_video_aside(stub: MediaStub,
                                                                                       lomo: LomoEnv) -> None:
    from lomo_tui import views
    from lomo_tui.runtime.scheduler import Runtime
    from lomo_tui.store import schema as s
    from lomo_tui.studio.service import Studio

    stub.video_steps = [("queued", 0)] + [("in_progress", 10)] * 60 + [("completed", 100)]
    lomo.replay({"content": None, "tool_calls": [
        {"name": "generate_video", "arguments": {"prompt": "a long slow pan", "seconds": 4}}]},
        {"content": "done", "tool_calls": []})
    rt = Runtime(lomo.settings())
    rt.budget = type(rt.budget)(free_per_call=5, daily_free_cap=50)
    rt.studio = Studio(rt, provider=make(stub, lomo.workspace / ".lomo" / "studio"))
    rt.services = [rt.studio if service.__class__ is Studio else service for service in rt.services]
    await rt.start()
    try:
        task = await rt.ledger.create_task("clip")
        await rt.send("make a clip", task)

        async def job() -> Any:
            async with rt.db.read() as conn:
                return (await conn.execute(select(s.jobs))).first()

        async def state(*wanted: str) -> bool:
            row = await job()
            return row is not None and f"{row.status}:{row.cancel_state}" in wanted

        await async_wait_for(lambda: state("running:None", "queued:None"), timeout=15, what="the video to start")
        await rt.ledger.control(task, "stop")
        await async_wait_for(lambda: state("cancelled:unsupported", "cancelled:kept_aside"), timeout=15,
                             what="the cancellation to reach the studio")
        card = (await views.load_cards(rt.db, [task]))[task]
        await async_wait_for(lambda: state("cancelled:kept_aside"), timeout=15, what="the late result")
        final = await job()
        async with rt.db.read() as conn:
            charge = (await conn.execute(select(s.charges.c.status))).scalar()
            objects = (await conn.execute(select(s.objects.c.path))).scalars().all()
            events = (await conn.execute(select(s.events.c.type).where(s.events.c.task_id == task))).scalars().all()
            turns = (await conn.execute(select(s.turns.c.status).where(s.turns.c.task_id == task))).scalars().all()
    finally:
        await rt.close()
    assert "kept aside" in card.jobs[0].status  # the card says the provider could not stop it
    assert (final.status, final.artifact_path, charge) == ("cancelled", None, "refunded")
    assert (lomo.workspace / ".lomo" / "late" / f"{final.id}.mp4").read_bytes() == MP4
    assert not any(p.startswith("renders/") for p in objects) and not (lomo.workspace / "renders").exists()
    assert "job_cancelled" in events and "job_result_kept_aside" in events and "job_done" not in events
    assert list(turns) == ["stopped"]
