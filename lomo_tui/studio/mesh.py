"""Simple meshes chosen from a prompt, written as single-file glTF 2.0 or Wavefront OBJ."""
from __future__ import annotations

import base64
import json
import math
import sys
from array import array
from dataclasses import dataclass, field
from random import Random
from typing import Callable

from ..language import KeywordTable as Table, most_mentioned as best
from .palette import RGB, Palette, mix, palette_for
from .subjects import SUBJECT_WORDS

Vec = tuple[float, float, float]

SHAPE_WORDS: Table = {
    "cube": ("cube*", "box*", "block*", "dice", "crate*", "立方体", "方块", "盒子", "箱", "キューブ",
             "ブロック", "куб*", "коробк*", "ящик*", "блок*"),
    "sphere": ("sphere*", "ball*", "planet*", "orb", "globe", "球", "ボール", "шар*", "сфер*", "мяч*",
               "планет*"),
    "cylinder": ("cylinder*", "pillar*", "column*", "tube*", "圆柱", "円柱", "柱", "цилиндр*",
                 "колонн*", "труб*"),
    "vase": ("vase*", "cup*", "mug*", "bottle*", "jar*", "pot", "花瓶", "杯", "瓶", "カップ", "壺",
             "ваз*", "кружк*", "стакан*", "бутыл*", "горш*"),
    "cone": ("cone*", "圆锥", "锥", "円錐", "コーン", "конус*"),
    "tree": SUBJECT_WORDS["tree"] + ("ツリー",),
    "torus": ("torus", "ring*", "donut*", "doughnut*", "bagel*", "圆环", "环", "甜甜圈", "戒指", "リング",
              "ドーナツ", "тор", "кольц*", "пончик*", "бублик*"),
    "character": SUBJECT_WORDS["person"] + ("character*", "robot*", "figure*", "avatar*", "hero", "人物",
                                            "角色", "机器人", "キャラ", "ロボット", "フィギュア",
                                            "персонаж*", "робот*", "фигур*"),
    "animal": SUBJECT_WORDS["cat"] + SUBJECT_WORDS["dog"] + SUBJECT_WORDS["fox"] + ("animal*", "pet", "horse*", "动物", "動物",
                                                             "животн*", "лошад*"),
}
DEFAULT_SHAPE = "cube"
MESH_FORMATS = ("gltf", "obj")


def mesh_shape(prompt: str) -> str:
    """The shape a prompt asks for (a cube when it names none)."""
    return best(prompt, SHAPE_WORDS, DEFAULT_SHAPE)


@dataclass
class Part:
    """One coloured piece: vertices with normals, and counter-clockwise (outward) triangles."""

    name: str
    colour: RGB
    positions: list[Vec] = field(default_factory=list)
    normals: list[Vec] = field(default_factory=list)
    triangles: list[tuple[int, int, int]] = field(default_factory=list)

    def vertex(self, p: Vec, n: Vec) -> int:
        self.positions.append(p)
        self.normals.append(n)
        return len(self.positions) - 1

    def triangle(self, a: int, b: int, c: int) -> None:
        """Add a triangle unless it is degenerate (zero area, as at a pole or apex)."""
        pa, pb, pc = self.positions[a], self.positions[b], self.positions[c]
        if _length(_cross(_sub(pb, pa), _sub(pc, pa))) > 1e-12:
            self.triangles.append((a, b, c))


def _sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _length(v: Vec) -> float:
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def _box(part: Part, centre: Vec, size: Vec) -> Part:
    """Add an axis-aligned box with flat faces."""
    for axis in range(3):
        for sign in (1, -1):
            u, v = (axis + 1) % 3, (axis + 2) % 3
            if sign < 0:
                u, v = v, u
            n = [0.0, 0.0, 0.0]
            n[axis] = float(sign)
            corners = []
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = list(centre)
                p[axis] += sign * size[axis] / 2
                p[u] += du * size[u] / 2
                p[v] += dv * size[v] / 2
                corners.append(part.vertex((p[0], p[1], p[2]), (n[0], n[1], n[2])))
            part.triangle(corners[0], corners[1], corners[2])
            part.triangle(corners[0], corners[2], corners[3])
    return part


def _grid(part: Part, rows: int, cols: int, at: Callable[[int, int], tuple[Vec, Vec]]) -> Part:
    """Add a (rows+1) x (cols+1) vertex grid from ``at(i, j) -> (position, normal)`` and stitch it;
    triangles face outward where (i, j) -> (i+1, j) -> (i, j+1) turns counter-clockwise from outside."""
    base = len(part.positions)
    for i in range(rows + 1):
        for j in range(cols + 1):
            part.vertex(*at(i, j))
    for i in range(rows):
        for j in range(cols):
            a, b = base + i * (cols + 1) + j, base + (i + 1) * (cols + 1) + j
            part.triangle(a, b, a + 1)
            part.triangle(a + 1, b, b + 1)
    return part


def _sphere(part: Part, centre: Vec, radius: float, rings: int = 16, segments: int = 24) -> Part:
    def at(i: int, j: int) -> tuple[Vec, Vec]:
        theta, phi = math.pi * i / rings, math.tau * j / segments
        n = (math.sin(theta) * math.cos(phi), math.cos(theta), -math.sin(theta) * math.sin(phi))
        return (centre[0] + radius * n[0], centre[1] + radius * n[1], centre[2] + radius * n[2]), n

    return _grid(part, rings, segments, at)


def _lathe(part: Part, profile: list[tuple[float, float]], segments: int = 32) -> Part:
    """Spin a (radius, height) profile, listed from top to bottom, around the y axis."""
    last = len(profile) - 1

    def at(i: int, j: int) -> tuple[Vec, Vec]:
        (r0, y0), (r1, y1) = profile[max(i - 1, 0)], profile[min(i + 1, last)]
        dr, dy = r1 - r0, y1 - y0
        size = math.hypot(dr, dy) or 1.0
        nr, ny = -dy / size, dr / size
        phi = math.tau * j / segments
        c, s = math.cos(phi), -math.sin(phi)
        r, y = profile[i]
        return (r * c, y, r * s), (nr * c, ny, nr * s)

    return _grid(part, last, segments, at)


def _disc(part: Part, y: float, radius: float, up: bool, segments: int = 32) -> Part:
    normal = (0.0, 1.0 if up else -1.0, 0.0)
    centre = part.vertex((0.0, y, 0.0), normal)
    ring = [part.vertex((radius * math.cos(math.tau * j / segments), y, -radius * math.sin(math.tau * j / segments)),
                        normal) for j in range(segments + 1)]
    for j in range(segments):
        a, b = (ring[j], ring[j + 1]) if up else (ring[j + 1], ring[j])
        part.triangle(centre, a, b)
    return part


def _torus(part: Part, major: float, minor: float, rings: int = 32, sides: int = 16) -> Part:
    def at(i: int, j: int) -> tuple[Vec, Vec]:
        phi, theta = math.tau * i / rings, math.tau * j / sides
        n = (math.cos(theta) * math.cos(phi), math.sin(theta), -math.cos(theta) * math.sin(phi))
        ring = major + minor * math.cos(theta)
        return (ring * math.cos(phi), minor + minor * math.sin(theta), -ring * math.sin(phi)), n

    return _grid(part, rings, sides, at)


def _main(p: Palette) -> RGB:
    """The palette's most colourful colour, for the main material."""
    colours = (*p.sky, p.far, p.ground, p.light, p.accent, p.subject)
    return max(colours, key=lambda c: max(c) - min(c))


def _cube(p: Palette, rng: Random) -> list[Part]:
    s = rng.uniform(0.9, 1.1)
    return [_box(Part("cube", _main(p)), (0, s / 2, 0), (s, s, s))]


def _sphere_shape(p: Palette, rng: Random) -> list[Part]:
    r = rng.uniform(0.45, 0.55)
    return [_sphere(Part("sphere", _main(p)), (0, r, 0), r)]


def _cylinder(p: Palette, rng: Random) -> list[Part]:
    r, h = rng.uniform(0.3, 0.4), rng.uniform(0.9, 1.2)
    part = _lathe(Part("cylinder", _main(p)), [(r, h), (r, 0)])
    return [_disc(_disc(part, h, r, True), 0, r, False)]


def _vase(p: Palette, rng: Random) -> list[Part]:
    belly, h = rng.uniform(0.3, 0.4), rng.uniform(1.0, 1.3)
    profile = [(0.15 + 0.05 * math.cos(math.pi * t) + belly * math.sin(math.pi * t) ** 2 * (1 - t), h * (1 - t))
               for t in (k / 16 for k in range(17))]
    return [_disc(_lathe(Part("vase", _main(p)), profile), 0, profile[-1][0], False)]


def _cone_part(part: Part, radius: float, base: float, height: float) -> Part:
    return _disc(_lathe(part, [(0.0, base + height), (radius, base)]), base, radius, False)


def _cone(p: Palette, rng: Random) -> list[Part]:
    return [_cone_part(Part("cone", _main(p)), rng.uniform(0.4, 0.5), 0.0, rng.uniform(0.9, 1.2))]


def _tree(p: Palette, rng: Random) -> list[Part]:
    trunk = _lathe(Part("trunk", mix(p.subject, p.far, 0.4)), [(0.08, 0.35), (0.1, 0.0)])
    crown = Part("crown", _main(p))
    for k, (radius, base) in enumerate(((0.5, 0.3), (0.4, 0.65), (0.28, 0.95))):
        _cone_part(crown, radius * rng.uniform(0.9, 1.1), base, 0.55 - 0.05 * k)
    return [trunk, crown]


def _torus_shape(p: Palette, rng: Random) -> list[Part]:
    return [_torus(Part("torus", _main(p)), rng.uniform(0.4, 0.5), rng.uniform(0.12, 0.18))]


def _character(p: Palette, rng: Random) -> list[Part]:
    body, skin, limbs = Part("body", _main(p)), Part("head", p.light), Part("limbs", mix(p.subject, p.far, 0.3))
    h = rng.uniform(0.9, 1.1)
    _box(body, (0, 0.75 * h, 0), (0.5, 0.55 * h, 0.28))
    _box(skin, (0, 1.25 * h, 0), (0.36, 0.36 * h, 0.34))
    for x in (-0.13, 0.13):
        _box(limbs, (x, 0.24 * h, 0), (0.16, 0.48 * h, 0.18))
    for x in (-0.34, 0.34):
        _box(limbs, (x, 0.78 * h, 0), (0.14, 0.5 * h, 0.14))
    eyes = Part("eyes", p.subject)
    for x in (-0.08, 0.08):
        _box(eyes, (x, 1.28 * h, 0.175), (0.06, 0.06, 0.02))
    return [body, skin, limbs, eyes]


def _animal(p: Palette, rng: Random) -> list[Part]:
    body, legs = Part("body", _main(p)), Part("legs", mix(p.subject, p.far, 0.3))
    length = rng.uniform(0.9, 1.1)
    _box(body, (0, 0.55, 0), (length, 0.35, 0.36))
    _box(body, (length / 2 + 0.12, 0.82, 0), (0.34, 0.3, 0.3))
    for x in (length / 2 + 0.03, length / 2 + 0.2):
        _box(body, (x, 1.02, 0), (0.08, 0.12, 0.26))
    _box(body, (-length / 2 - 0.15, 0.72, 0), (0.32, 0.07, 0.07))
    for x in (-length / 2 + 0.1, length / 2 - 0.1):
        for z in (-0.12, 0.12):
            _box(legs, (x, 0.19, z), (0.1, 0.38, 0.1))
    return [body, legs]


SHAPES: dict[str, Callable[[Palette, Random], list[Part]]] = {
    "cube": _cube, "sphere": _sphere_shape, "cylinder": _cylinder, "vase": _vase, "cone": _cone,
    "tree": _tree, "torus": _torus_shape, "character": _character, "animal": _animal,
}


def _little_endian(values: array) -> bytes:
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def _linear(c: RGB) -> list[float]:
    """sRGB 0..255 to the linear 0..1 factors glTF materials use, with opaque alpha."""
    def one(v: int) -> float:
        s = v / 255
        return round(s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4, 4)

    return [one(c[0]), one(c[1]), one(c[2]), 1.0]


class _Buffer:
    """One binary buffer with 4-byte-aligned views, plus the accessors that read them."""

    def __init__(self) -> None:
        self.blob = bytearray()
        self.views: list[dict] = []
        self.accessors: list[dict] = []

    def add(self, values: array, kind: str, component: int, target: int, **extra: object) -> int:
        self.blob += b"\0" * (-len(self.blob) % 4)
        data = _little_endian(values)
        self.views.append({"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(data), "target": target})
        self.blob += data
        width = 3 if kind == "VEC3" else 1
        self.accessors.append({"bufferView": len(self.views) - 1, "componentType": component,
                               "count": len(values) // width, "type": kind, **extra})
        return len(self.accessors) - 1


_FLOAT, _USHORT, _UINT = 5126, 5123, 5125
_ARRAY_BUFFER, _ELEMENT_ARRAY_BUFFER = 34962, 34963


def _gltf(parts: list[Part], name: str, extras: dict) -> bytes:
    buf, materials, primitives = _Buffer(), [], []
    colours: dict[RGB, int] = {}
    for part in parts:
        positions = array("f", [c for p in part.positions for c in p])
        bounds = [[f(positions[i::3]) for i in range(3)] for f in (min, max)]
        pos = buf.add(positions, "VEC3", _FLOAT, _ARRAY_BUFFER, min=bounds[0], max=bounds[1])
        nor = buf.add(array("f", [c for n in part.normals for c in n]), "VEC3", _FLOAT, _ARRAY_BUFFER)
        wide = len(part.positions) > 65535
        flat = array("I" if wide else "H", [i for t in part.triangles for i in t])
        idx = buf.add(flat, "SCALAR", _UINT if wide else _USHORT, _ELEMENT_ARRAY_BUFFER)
        if part.colour not in colours:
            colours[part.colour] = len(materials)
            materials.append({"name": part.name, "pbrMetallicRoughness": {
                "baseColorFactor": _linear(part.colour), "metallicFactor": 0.0, "roughnessFactor": 0.7}})
        primitives.append({"attributes": {"POSITION": pos, "NORMAL": nor}, "indices": idx,
                           "material": colours[part.colour], "mode": 4})
    buf.blob += b"\0" * (-len(buf.blob) % 4)
    doc = {
        "asset": {"version": "2.0", "generator": "Lomo studio"},
        "scene": 0,
        "scenes": [{"name": name, "nodes": [0]}],
        "nodes": [{"name": name, "mesh": 0}],
        "meshes": [{"name": name, "primitives": primitives}],
        "materials": materials,
        "accessors": buf.accessors,
        "bufferViews": buf.views,
        "buffers": [{"byteLength": len(buf.blob),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(buf.blob).decode()}],
        "extras": extras,
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def _obj(parts: list[Part], name: str, extras: dict) -> bytes:
    lines = [f"# Lomo studio mesh: {name}", f"# prompt: {' '.join(str(extras['prompt']).split())}",
             f"# seed: {extras['seed']}", f"o {name}"]
    offset = 1
    for part in parts:
        lines.append(f"g {part.name}")
        lines.append(f"# colour {part.colour[0]} {part.colour[1]} {part.colour[2]}")
        lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in part.positions]
        lines += [f"vn {x:.6f} {y:.6f} {z:.6f}" for x, y, z in part.normals]
        lines += ["f " + " ".join(f"{i + offset}//{i + offset}" for i in t) for t in part.triangles]
        offset += len(part.positions)
    return ("\n".join(lines) + "\n").encode()


def render_mesh(prompt: str, *, seed: int, fmt: str = "gltf") -> bytes:
    """A mesh of the shape the prompt names, coloured from its palette: glTF 2.0 JSON with an
    embedded buffer (``fmt="gltf"``) or Wavefront OBJ text (``fmt="obj"``)."""
    if fmt not in MESH_FORMATS:
        raise ValueError(f"mesh format must be one of {MESH_FORMATS}, not {fmt!r}")
    shape = mesh_shape(prompt)
    parts = SHAPES[shape](palette_for(prompt), Random(f"{seed}\x03{prompt}"))
    extras = {"prompt": prompt, "seed": seed, "shape": shape}
    return (_gltf if fmt == "gltf" else _obj)(parts, shape, extras)
