"""Short films: shot clips from the embedded studio cut together, with a sound, into a real video file."""
from __future__ import annotations

import wave
from pathlib import Path

import av
import pytest
from PIL import Image, ImageStat

from conftest import LomoEnv
from lomo_tui.studio import video
from lomo_tui.studio.assembly import assemble
from lomo_tui.studio.render import render_audio, render_clip
from lomo_tui.studio.video import CLIP_FPS, read_clip

DONE = {"content": "done", "tool_calls": []}
COLOURS = [(200, 40, 40), (40, 180, 60), (30, 60, 210)]


def _probe(path: Path) -> dict:
    """What PyAV reads back: streams, frames decoded, durations."""
    with av.open(str(path)) as container:
        v = container.streams.video[0]
        out = {"codec": v.codec_context.name, "fps": v.average_rate, "size": (v.width, v.height),
               "seconds": float(v.duration * v.time_base),
               "audio": [(a.codec_context.name, float(a.duration * a.time_base)) for a in container.streams.audio]}
        out["frames"] = [frame.to_image() for frame in container.decode(video=0)]
    return out


def _mean(image: Image.Image) -> tuple[float, ...]:
    return tuple(ImageStat.Stat(image.convert("RGB")).mean)


def _shots(tmp_path: Path, lengths: list[float], formats: list[str]) -> list[Path]:
    """One clip per length, each animating a key frame of its own colour."""
    clips = []
    for i, (seconds, fmt) in enumerate(zip(lengths, formats)):
        key = tmp_path / f"key{i}.png"
        Image.new("RGB", (320, 180), COLOURS[i]).save(key)
        clip = tmp_path / f"shot{i}.{fmt}"
        clip.write_bytes(render_clip(f"shot {i}", seed=i, seconds=seconds, size=(320, 180), inputs=[key], fmt=fmt))
        clips.append(clip)
    return clips


def test_clips_are_cut_in_order_for_their_lengths_with_the_sound_under_them(tmp_path: Path) -> None:
    clips = _shots(tmp_path, [1, 1.5, 2], ["mp4", "gif", "webp"])
    sound = tmp_path / "score.wav"
    sound.write_bytes(render_audio("calm snow", seed=1, seconds=7))  # longer than the film: cut to it
    film = assemble(clips, sound)
    assert (film.format, film.fps, film.frames, film.audio) == ("mp4", CLIP_FPS, 36, True)
    assert film.shots == [1, 1.5, 2] and film.seconds == 4.5
    out = tmp_path / "film.mp4"
    out.write_bytes(film.data)
    probe = _probe(out)
    assert (probe["codec"], probe["fps"], probe["size"]) == ("h264", CLIP_FPS, (320, 180))
    assert len(probe["frames"]) == 36 and probe["seconds"] == pytest.approx(4.5, abs=0.01)
    [(codec, seconds)] = probe["audio"]
    assert codec == "aac" and seconds == pytest.approx(4.5, abs=0.1)
    starts = [0, 8, 20]  # each shot opens on its own key frame, in order
    for start, colour in zip(starts, COLOURS):
        r, g, b = _mean(probe["frames"][start])
        assert max(abs(r - colour[0]), abs(g - colour[1]), abs(b - colour[2])) < 30, (start, (r, g, b))


def test_a_film_without_an_h264_encoder_is_an_animated_webp_that_says_the_sound_was_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clips = _shots(tmp_path, [0.5, 1], ["gif", "gif"])
    sound = tmp_path / "score.wav"
    sound.write_bytes(render_audio("calm", seed=1, seconds=1))
    monkeypatch.setattr(video, "video_codec", lambda: None)  # a PyAV build without H.264
    film = assemble(clips, sound)
    assert (film.format, film.frames, film.audio) == ("webp", 12, False) and "sound was left out" in film.note
    out = tmp_path / "film.webp"
    out.write_bytes(film.data)
    back = read_clip(out)
    assert len(back.frames) == 12 and back.seconds == pytest.approx(1.5, abs=0.01)


def test_a_clip_that_is_not_a_video_stops_the_cut_with_a_sentence(tmp_path: Path) -> None:
    good = _shots(tmp_path, [0.5], ["mp4"])[0]
    bad = tmp_path / "notes.mp4"
    bad.write_text("not a video")
    with pytest.raises(ValueError, match="notes.mp4 is not a video the studio can read"):
        assemble([good, bad])
    with pytest.raises(ValueError, match="not a WAV"):
        assemble([good], bad)


def _wav_seconds(path: Path) -> float:
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


@pytest.mark.slow
def test_a_three_shot_film_from_the_embedded_studio_is_one_real_mp4(lomo: LomoEnv) -> None:
    shots = [("a fox in a snowy forest, wide shot", 1), ("the fox looks up at falling snow", 1.5),
             ("the fox runs into the trees", 2)]
    orders = [{"name": "generate_video", "arguments": {"prompt": p, "seconds": s}} for p, s in shots]
    orders.append({"name": "generate_audio", "arguments": {"prompt": "calm winter wind", "seconds": 5}})
    first = [{"content": None, "tool_calls": orders}, DONE]
    lomo.replay(*first)
    config = lomo.root / "cfg" / "lomo" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[studio]\ndeadline_seconds = 300\n")  # a loaded machine never expires a shot
    task = lomo.new_task("Fox film")
    assert lomo.run("--run-once", "make the shots", "--task", task).returncode == 0
    for gate in lomo.inspect()["gates"]:  # the spend card for the four generations
        assert lomo.run("approve", gate["id"]).returncode == 0
    assert lomo.run("--run-once").returncode == 0
    state = lomo.inspect()
    jobs = sorted((j for j in state["jobs"] if j["status"] == "done"),
                  key=lambda j: int(j["idempotency_key"].rsplit("/", 1)[1]))  # turn/step/seq: in call order
    *clips, audio = [j["artifact_path"] for j in jobs]
    assert [j["kind"] for j in jobs] == ["video", "video", "video", "audio"], state["jobs"]
    assert all(c.endswith(".mp4") for c in clips)
    assert _wav_seconds(lomo.workspace / audio) == 5

    recorded = sum(t["model_calls"] for t in state["turns"])
    cut = {"name": "assemble_film", "arguments": {"clips": clips, "audio": audio, "output": "film/fox.mp4"}}
    lomo.replay(*first, *[DONE] * (recorded - len(first)), {"content": None, "tool_calls": [cut]}, DONE)
    proc = lomo.run("--run-once", "cut it together", "--task", task)
    assert proc.returncode == 0, proc.stderr
    state = lomo.inspect()
    [call] = [c for c in state["tool_calls"] if c["name"] == "assemble_film"]
    assert call["status"] == "done", call
    assert call["result"]["frames"] == 36 and call["result"]["audio"] is True
    probe = _probe(lomo.workspace / "film" / "fox.mp4")
    expected = sum(len(read_clip(lomo.workspace / c).frames) for c in clips)
    assert len(probe["frames"]) == expected == (1 + 1.5 + 2) * CLIP_FPS
    assert probe["seconds"] == pytest.approx(4.5, abs=0.01)
    [(codec, seconds)] = probe["audio"]
    assert codec == "aac" and seconds == pytest.approx(4.5, abs=0.1)
    [obj] = [o for o in state["objects"] if o["path"] == "film/fox.mp4"]
    assert obj["version"] == 1 and obj["kind"] == "video"
    assert len(state["jobs"]) == 4 and len(state["charges"]) == 4  # the cut is local: no order, no charge


def test_a_film_tool_call_with_a_clip_that_is_not_a_video_fails_in_one_sentence_and_writes_nothing(
        lomo: LomoEnv) -> None:
    (lomo.workspace / "shots").mkdir()
    (lomo.workspace / "shots" / "one.mp4").write_text("a text file with the wrong name")
    cut = {"name": "assemble_film", "arguments": {"clips": ["shots/one.mp4", "shots/two.mp4"], "output": "cut.mp4"}}
    wrong = {"name": "assemble_film", "arguments": {"clips": ["shots/one.mp4"], "output": "cut.avi"}}
    bad = {"name": "assemble_film", "arguments": {"clips": ["shots/one.mp4"], "output": "cut.mp4"}}
    lomo.replay({"content": None, "tool_calls": [cut, wrong, bad]}, DONE)
    task = lomo.new_task()
    proc = lomo.run("--run-once", "cut", "--task", task)
    assert proc.returncode == 0, proc.stderr
    calls = [c for c in lomo.inspect()["tool_calls"] if c["name"] == "assemble_film"]
    errors = [c["result"]["error"] for c in sorted(calls, key=lambda c: c["seq"])]
    assert errors == ["clip shots/two.mp4 does not exist in the workspace",
                      "output 'cut.avi' must end in .mp4 (or .webp)",
                      "the film was not made: one.mp4 is not a video the studio can read"], errors
    assert not (lomo.workspace / "cut.mp4").exists() and "Traceback" not in proc.stderr


@pytest.mark.parametrize("request_text, words, fields, subject", [
    ("storyboard for a 15s film of a fox in a snowy forest, three shots", ("Shot", "Duration: 5 s"),
     ("Frame", "Action", "Sound"), "fox"),
    ("给雪林里的狐狸画分镜", ("镜头", "时长"), ("画面", "动作", "声音"), "狐狸"),
])
def test_the_offline_storyboard_has_a_frame_an_action_and_a_sound_for_every_shot_in_the_creators_language(
        request_text: str, words: tuple[str, str], fields: tuple[str, str, str], subject: str) -> None:
    import re

    from lomo_tui.language import classify, make_checklist

    content = make_checklist(classify(request_text))[0].args["content"]
    shots = re.split(rf"^## {words[0]} \d+$", content, flags=re.MULTILINE)[1:]
    assert len(shots) >= 3 and all(words[1] in shot for shot in shots)
    described = []
    for shot in shots:
        lines = {m.group(1): m.group(2).strip() for m in re.finditer(r"^- (\w+)[:：] ?(.*)$", shot, re.MULTILINE)}
        assert all(lines.get(name) for name in fields), shot  # no empty template fields
        described.append(tuple(lines[name] for name in fields))
        assert subject in lines[fields[0]], "the frame shows what the creator asked for"
    assert len(set(described)) == len(described), "each shot is its own beat"
