"""The embedded studio's renderers make real, valid, deterministic files that follow the prompt."""
from __future__ import annotations

import base64
import io
import json
import math
import struct
import wave
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from lomo_tui.studio.audio import audio_mood
from lomo_tui.studio.mesh import SHAPES, mesh_shape
from lomo_tui.studio.palette import PALETTES
from lomo_tui.studio.prices import quote, simulated_latency
from lomo_tui.studio.render import (
    classify_image_family, palette_family, palette_for, render_audio, render_clip, render_image,
    render_mesh,
)
from lomo_tui.studio.video import CLIP_FPS, read_clip

SMALL = (160, 160)

# One prompt per palette family in English, Chinese, Japanese and Russian.
FAMILY_PROMPTS = {
    "warm": ("a cozy autumn cabin", "温暖的秋天小屋", "暖かい秋の小屋", "уютный осенний дом"),
    "retro": ("a vintage poster of a car", "复古海报里的汽车", "レトロなポスターの車", "ретро плакат с машиной"),
    "cool": ("a blue ocean with a boat", "蓝色的大海", "青い海と船", "синее море и лодка"),
    "night": ("a cat under the stars at night", "夜晚的星空和猫", "夜の星空と猫", "ночь, звёзды и кот"),
    "pastel": ("a cute pastel bunny", "可爱的粉彩兔子", "パステルのかわいいうさぎ", "нежный пастельный зайчик"),
    "forest": ("a deep green forest", "绿色的森林", "緑の森の中の家", "зелёный лес и дерево"),
    "sunset": ("a sunset over the mountains", "山上的日落", "山の夕焼け", "закат над горами"),
    "mono": ("a black and white noir street", "黑白的街道", "モノクロの街", "чёрно-белая улица"),
    "neon": ("a neon cyberpunk city", "霓虹灯下的赛博朋克城市", "ネオンのサイバーパンク都市", "неоновый киберпанк город"),
    "neutral": ("a dog and a person", "一只狗和一个人", "犬と人", "собака и человек"),
}


def _png(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def _solid(path: Path, colour: tuple[int, int, int], size: tuple[int, int] = (96, 64)) -> Path:
    Image.new("RGB", size, colour).save(path)
    return path


# --- images -------------------------------------------------------------------------------------

def test_image_is_a_png_of_the_requested_size_with_prompt_metadata() -> None:
    image = _png(render_image("a cat on a hill", seed=7, size=(320, 200)))
    assert image.format == "PNG"
    assert image.size == (320, 200)
    assert image.text["prompt"] == "a cat on a hill"
    assert image.text["seed"] == "7"
    lo, hi = image.convert("L").getextrema()
    assert hi - lo > 60, "a flat fill is not a picture"


def test_image_keeps_a_non_latin_prompt_in_its_metadata() -> None:
    assert _png(render_image("夜の猫", seed=1, size=SMALL)).text["prompt"] == "夜の猫"


def test_image_is_deterministic_per_seed() -> None:
    first = render_image("a dog in the city", seed=3, size=SMALL)
    assert render_image("a dog in the city", seed=3, size=SMALL) == first
    assert render_image("a dog in the city", seed=4, size=SMALL) != first


@pytest.mark.parametrize("family", list(FAMILY_PROMPTS))
def test_image_matches_the_prompts_palette_family_in_four_languages(family: str) -> None:
    for prompt in FAMILY_PROMPTS[family]:
        assert palette_family(prompt) == family, prompt
        assert classify_image_family(render_image(prompt, seed=11, size=SMALL)) == family, prompt


@pytest.mark.parametrize("colour, family", [((11, 19, 51), "night"), ((128, 128, 128), "mono"),
                                            ((60, 140, 50), "forest"), ((30, 100, 200), "cool"),
                                            ((245, 160, 60), "warm"), ((255, 210, 235), "pastel")])
def test_classifier_agrees_with_the_eye_on_flat_colours(colour: tuple[int, int, int], family: str) -> None:
    out = io.BytesIO()
    Image.new("RGB", (64, 64), colour).save(out, "PNG")
    assert classify_image_family(out.getvalue()) == family


def test_every_family_has_a_distinct_palette() -> None:
    assert set(PALETTES) == set(FAMILY_PROMPTS)
    assert len({p.sky for p in PALETTES.values()}) == len(PALETTES)


def test_longest_keyword_wins_over_the_words_inside_it() -> None:
    assert palette_family("海报") == "retro"  # poster, though 海 alone is the sea
    assert palette_family("golden hour at the beach") == "sunset"
    assert palette_family("a golden cat") == "warm"


def test_a_subject_in_the_prompt_is_drawn() -> None:
    palette = palette_for("a cat")

    def subject_share(prompt: str) -> float:
        image = _png(render_image(prompt, seed=5, size=SMALL)).convert("RGB")
        pixels = image.tobytes()
        hits = sum(pixels[i:i + 3] == bytes(palette.subject) for i in range(0, len(pixels), 3))
        return hits / (image.width * image.height)

    assert subject_share("a cat") > 0.02
    assert subject_share("a quiet afternoon") == 0.0


@pytest.mark.parametrize("prompt", ["a fox in a snowy forest", "雪林里的一只狐狸", "雪の森のキツネ", "лиса в зимнем лесу"])
def test_a_fox_is_drawn_in_four_languages(prompt: str) -> None:
    """The short film's reference case: its character sheet and key frames must show the fox."""
    palette = palette_for(prompt)
    image = _png(render_image(prompt, seed=5, size=SMALL)).convert("RGB")
    pixels = image.tobytes()
    hits = sum(pixels[i:i + 3] == bytes(palette.subject) for i in range(0, len(pixels), 3))
    assert hits / (image.width * image.height) > 0.01


def test_a_leaf_is_not_a_fox() -> None:
    from lomo_tui.language import mentions
    from lomo_tui.studio.subjects import SUBJECT_WORDS

    assert "fox" in mentions("рыжая лиса", SUBJECT_WORDS)
    assert "fox" not in mentions("осенний лист", SUBJECT_WORDS)


def _specks(image: Image.Image, top: int) -> int:
    """Bright pixels with dark sky three pixels away on every side (stars, not the moon)."""
    grey = image.convert("L")
    w, px = grey.width, grey.tobytes()
    return sum(
        1
        for y in range(3, top)
        for x in range(3, w - 3)
        if px[y * w + x] > 120 and max(px[y * w + x - 3], px[y * w + x + 3], px[(y - 3) * w + x], px[(y + 3) * w + x]) < 60
    )


def test_night_sky_has_stars_and_a_sunny_sky_does_not() -> None:
    assert _specks(_png(render_image("night", seed=2, size=(300, 300))), 150) > 20
    assert _specks(_png(render_image("warm", seed=2, size=(300, 300))), 150) == 0


def test_the_first_input_is_the_base_and_its_colour_survives(tmp_path: Path) -> None:
    red, blue = _solid(tmp_path / "red.png", (200, 30, 30)), _solid(tmp_path / "blue.png", (30, 30, 200))
    plain = render_image("a warm cat", seed=1, size=SMALL)
    on_red = render_image("a warm cat", seed=1, size=SMALL, inputs=[red])
    on_blue = render_image("a warm cat", seed=1, size=SMALL, inputs=[blue])
    assert plain != on_red != on_blue

    def red_minus_blue(data: bytes) -> float:
        r, _, b = ImageStat.Stat(_png(data).convert("RGB")).mean
        return r - b

    assert red_minus_blue(on_red) - red_minus_blue(on_blue) > 40


def test_a_neutral_prompt_keeps_the_photo_and_later_inputs_are_laid_over_it(tmp_path: Path) -> None:
    green, blue = _solid(tmp_path / "g.png", (40, 180, 60)), _solid(tmp_path / "b.jpg", (20, 40, 220))
    one = _png(render_image("yesterday's photo", seed=1, size=(240, 160), inputs=[green])).convert("RGB")
    assert ImageStat.Stat(one.crop((0, 0, 240, 80))).mean == pytest.approx([40, 180, 60], abs=2)
    two = _png(render_image("yesterday's photo", seed=1, size=(240, 160), inputs=[green, blue])).convert("RGB")
    corner = ImageStat.Stat(two.crop((192, 106, 228, 140))).mean
    assert corner[2] > 150 and corner[1] < 100, "the second input should show in the bottom-right card"


# --- clips --------------------------------------------------------------------------------------

def _frames(data: bytes) -> tuple[Image.Image, list[int]]:
    clip = Image.open(io.BytesIO(data))
    durations = []
    for i in range(clip.n_frames):
        clip.seek(i)
        clip.load()
        durations.append(clip.info["duration"])
    return clip, durations


def test_gif_clip_has_every_frame_and_the_exact_duration() -> None:
    clip, durations = _frames(render_clip("a starry night", seed=1))
    assert clip.format == "GIF" and clip.size == (480, 270)
    assert clip.n_frames == 40 and sum(durations) == 5000
    clip.seek(0)
    first = clip.convert("RGB")
    clip.seek(39)
    assert ImageStat.Stat(ImageChops.difference(first, clip.convert("RGB"))).mean[0] > 1, "no movement"


def test_webp_clip_with_odd_timing() -> None:
    clip, durations = _frames(render_clip("rain in the forest", seed=2, seconds=1.5, fps=6, size=(160, 90), fmt="webp"))
    assert clip.format == "WEBP" and clip.size == (160, 90)
    assert clip.n_frames == 9 and sum(durations) == 1500


def test_clip_is_made_from_the_input_photo(tmp_path: Path) -> None:
    red = _solid(tmp_path / "red.png", (220, 40, 40), (200, 120))
    clip, durations = _frames(render_clip("turn yesterday's cat photo into a clip", seed=3, seconds=2, fps=4,
                                          size=(100, 60), inputs=[red]))
    assert clip.n_frames == 8 and sum(durations) == 2000
    clip.seek(4)
    r, g, b = ImageStat.Stat(clip.convert("RGB")).mean
    assert r > 150 and g < 90 and b < 90


def test_clip_rejects_an_unknown_format() -> None:
    with pytest.raises(ValueError):
        render_clip("x", seed=1, fmt="avi")


def _mean_difference(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageStat.Stat(ImageChops.difference(a.convert("RGB"), b.convert("RGB"))).mean) / 3


@pytest.mark.parametrize("fmt", ["mp4", "gif", "webp"])
def test_a_clip_animates_its_key_frame_for_the_requested_seconds_at_a_fixed_fps(tmp_path: Path, fmt: str) -> None:
    prompt = "a fox in a snowy forest"
    key = tmp_path / "key.png"
    key.write_bytes(render_image(prompt, seed=4, size=(320, 180)))
    path = tmp_path / f"clip.{fmt}"
    path.write_bytes(render_clip(prompt, seed=4, seconds=2.5, fps=CLIP_FPS, size=(320, 180), inputs=[key], fmt=fmt))
    clip = read_clip(path)
    assert len(clip.frames) == 2.5 * CLIP_FPS == 20
    assert clip.seconds == pytest.approx(2.5, abs=0.01)
    assert clip.frames[0].size == (320, 180)
    with Image.open(key) as keyframe:
        assert _mean_difference(clip.frames[0], keyframe) < 12, "the clip should open on its key frame"
    steps = [_mean_difference(a, b) for a, b in zip(clip.frames, clip.frames[1:])]
    assert min(steps) > 0.3, "every frame moves on from the one before"
    assert _mean_difference(clip.frames[0], clip.frames[-1]) > 5, "the camera travelled"
    other = tmp_path / "other.png"
    Image.new("RGB", (320, 180), (20, 200, 40)).save(other)
    path.write_bytes(render_clip(prompt, seed=4, seconds=0.5, size=(320, 180), inputs=[other], fmt=fmt))
    green = read_clip(path)
    assert _mean_difference(green.frames[0], Image.open(other)) < 12, "a different key frame, a different clip"


def test_an_mp4_clip_is_h264_video_read_back_with_pyav(tmp_path: Path) -> None:
    import av

    path = tmp_path / "clip.mp4"
    path.write_bytes(render_clip("rain on a neon street", seed=1, seconds=3, size=(241, 135), fmt="mp4"))
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and (stream.width, stream.height) == (240, 134)
        assert stream.average_rate == CLIP_FPS
        assert sum(1 for _ in container.decode(stream)) == 3 * CLIP_FPS
        assert float(stream.duration * stream.time_base) == pytest.approx(3, abs=0.01)


def test_a_video_job_is_an_mp4_and_falls_back_to_gif_without_an_h264_encoder(monkeypatch: pytest.MonkeyPatch,
                                                                                tmp_path: Path) -> None:
    from lomo_tui.studio import video
    from lomo_tui.studio.embedded import EmbeddedStudio

    params = {"prompt": "a snowy hill", "seconds": 1}
    data, ext = EmbeddedStudio._render("video", params, 3)
    assert ext == "mp4" and data[4:8] == b"ftyp"
    monkeypatch.setattr(video, "video_codec", lambda: None)  # a PyAV build without H.264
    data, ext = EmbeddedStudio._render("video", params, 3)
    assert ext == "gif" and data.startswith(b"GIF8")
    assert len(_frames(data)[1]) == CLIP_FPS
    data, ext = EmbeddedStudio._render("video", dict(params, format="webp"), 3)
    assert ext == "webp" and data[8:12] == b"WEBP"


# --- meshes -------------------------------------------------------------------------------------

SHAPE_PROMPTS = {"cube": "a wooden box", "sphere": "a planet", "cylinder": "a stone pillar", "vase": "a warm vase",
                 "cone": "a traffic cone", "tree": "a pine tree", "torus": "a neon donut",
                 "character": "a robot", "animal": "a cat"}


def _accessor(doc: dict, blob: bytes, index: int) -> list:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    width = {"VEC3": 3, "SCALAR": 1}[acc["type"]]
    code, size = {5126: ("f", 4), 5123: ("H", 2), 5125: ("I", 4)}[acc["componentType"]]
    start = view["byteOffset"] + acc.get("byteOffset", 0)
    assert start % 4 == 0
    assert acc.get("byteOffset", 0) + acc["count"] * width * size <= view["byteLength"]
    assert view["byteOffset"] + view["byteLength"] <= doc["buffers"][0]["byteLength"]
    values = struct.unpack_from(f"<{acc['count'] * width}{code}", blob, start)
    return [values[i:i + 3] for i in range(0, len(values), 3)] if width == 3 else list(values)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_gltf_is_valid_and_faces_outward(shape: str) -> None:
    prompt = SHAPE_PROMPTS[shape]
    assert mesh_shape(prompt) == shape
    doc = json.loads(render_mesh(prompt, seed=1))
    assert doc["asset"]["version"] == "2.0"
    header, payload = doc["buffers"][0]["uri"].split(",", 1)
    assert header == "data:application/octet-stream;base64"
    blob = base64.b64decode(payload)
    assert len(blob) == doc["buffers"][0]["byteLength"]
    node = doc["nodes"][doc["scenes"][doc["scene"]]["nodes"][0]]
    for prim in doc["meshes"][node["mesh"]]["primitives"]:
        pos_acc = doc["accessors"][prim["attributes"]["POSITION"]]
        positions = _accessor(doc, blob, prim["attributes"]["POSITION"])
        normals = _accessor(doc, blob, prim["attributes"]["NORMAL"])
        indices = _accessor(doc, blob, prim["indices"])
        assert len(normals) == len(positions) and len(indices) % 3 == 0 and indices
        assert max(indices) < len(positions)
        assert pos_acc["min"] == [min(p[i] for p in positions) for i in range(3)]
        assert pos_acc["max"] == [max(p[i] for p in positions) for i in range(3)]
        assert all(abs(math.dist(n, (0, 0, 0)) - 1) < 1e-5 for n in normals)
        for k in range(0, len(indices), 3):
            a, b, c = (positions[i] for i in indices[k:k + 3])
            face = _cross([b[i] - a[i] for i in range(3)], [c[i] - a[i] for i in range(3)])
            mean_normal = [sum(normals[i][j] for i in indices[k:k + 3]) for j in range(3)]
            assert sum(f * n for f, n in zip(face, mean_normal)) > 0, f"triangle {k // 3} faces inward"
        colour = doc["materials"][prim["material"]]["pbrMetallicRoughness"]["baseColorFactor"]
        assert all(0 <= c <= 1 for c in colour) and colour[3] == 1


def _cross(u: list[float], v: list[float]) -> tuple[float, float, float]:
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def test_mesh_material_follows_the_palette() -> None:
    def colour(prompt: str) -> list[float]:
        return json.loads(render_mesh(prompt, seed=1))["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"]

    r, g, b, _ = colour("a black and white cube")
    assert r == g == b
    r, g, b, _ = colour("a green forest cube")
    assert g > r and g > b


@pytest.mark.parametrize("prompt, shape", [("一个花瓶", "vase"), ("ドーナツ", "torus"), ("кольцо", "torus"),
                                           ("ロボット", "character"), ("шар", "sphere"), ("something", "cube"),
                                           ("Can you make me a 3D cat?", "animal")])
def test_mesh_shape_understands_four_languages(prompt: str, shape: str) -> None:
    assert mesh_shape(prompt) == shape


def test_obj_has_vertices_normals_and_faces_in_range() -> None:
    text = render_mesh("a neon donut", seed=1, fmt="obj").decode()
    lines = text.splitlines()
    vertices = [ln for ln in lines if ln.startswith("v ")]
    faces = [ln for ln in lines if ln.startswith("f ")]
    assert vertices and faces and any(ln.startswith("vn ") for ln in lines)
    refs = [int(ref.split("//")[0]) for f in faces for ref in f.split()[1:]]
    assert min(refs) == 1 and max(refs) == len(vertices)
    doc = json.loads(render_mesh("a neon donut", seed=1))
    assert len(vertices) == sum(doc["accessors"][p["attributes"]["POSITION"]]["count"]
                                for p in doc["meshes"][0]["primitives"])


# --- audio --------------------------------------------------------------------------------------

def _wav(data: bytes) -> tuple[wave.Wave_read, list[int]]:
    reader = wave.open(io.BytesIO(data))
    frames = reader.readframes(reader.getnframes())
    return reader, list(struct.unpack(f"<{len(frames) // 2}h", frames))


def test_wav_has_the_requested_rate_and_length() -> None:
    reader, samples = _wav(render_audio("a calm lake", seed=1, seconds=1.5, rate=16000))
    assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (1, 2, 16000)
    assert reader.getnframes() == len(samples) == 24000
    assert max(abs(s) for s in samples) > 10000


def test_audio_is_deterministic_per_seed() -> None:
    first = render_audio("a calm lake", seed=1, seconds=1)
    assert render_audio("a calm lake", seed=1, seconds=1) == first
    assert render_audio("a calm lake", seed=2, seconds=1) != first


def _zero_crossings(samples: list[int]) -> float:
    return sum((a < 0) != (b < 0) for a, b in zip(samples, samples[1:])) / len(samples)


def test_mood_changes_the_sound() -> None:
    assert [audio_mood(p) for p in ("upbeat dance", "暗い森", "雨の夜", "спокойное море")] == \
        ["upbeat", "dark", "rain", "calm"]
    _, dark = _wav(render_audio("a dark gloomy cave", seed=1, seconds=1))
    _, upbeat = _wav(render_audio("a happy dance party", seed=1, seconds=1))
    _, rain = _wav(render_audio("rain on the roof", seed=1, seconds=1))
    assert _zero_crossings(dark) < _zero_crossings(upbeat) < _zero_crossings(rain)


# --- prices -------------------------------------------------------------------------------------

def test_quotes_are_positive_two_decimal_credits() -> None:
    for kind in ("image", "video", "3d", "audio"):
        price = quote(kind, {})
        assert price > 0 and round(price, 2) == price


def test_quotes_grow_with_the_work() -> None:
    assert quote("video", {"seconds": 5}) < quote("video", {"seconds": 10})
    assert quote("video", {"seconds": 5}) < quote("video", {"seconds": 5, "size": (1920, 1080)})
    assert quote("image", {"size": (512, 512)}) < quote("image", {"size": "1024x1024"}) < quote("image", {"size": (4096, 4096)})
    assert quote("image", {"n": 2}) == 2 * quote("image", {})
    assert quote("image", {"size_px": [2048, 2048]}) == quote("image", {"size": (2048, 2048)}) > quote("image", {})
    assert quote("audio", {"seconds": 3}) < quote("audio", {"seconds": 30})
    assert quote("3d", {"n": 2}) == 2 * quote("3d", {})
    with pytest.raises(ValueError):
        quote("hologram", {})
    with pytest.raises(ValueError):
        quote("video", {"seconds": 0})


def test_simulated_latency_is_realistic_and_seeded() -> None:
    assert 3 <= simulated_latency("image", {}, 1) <= 6
    assert 20 <= simulated_latency("video", {"seconds": 5}, 1) <= 40
    assert 8 <= simulated_latency("3d", {}, 1) <= 12
    assert 3 <= simulated_latency("audio", {}, 1) <= 5
    assert simulated_latency("image", {}, 1) == simulated_latency("image", {}, 1)
    assert len({simulated_latency("image", {}, s) for s in range(5)}) == 5
    assert simulated_latency("video", {"seconds": 10}, 1) == 2 * simulated_latency("video", {"seconds": 5}, 1)
