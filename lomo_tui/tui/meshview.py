"""A still picture of a glTF 2.0 model (.gltf with embedded or side-by-side buffers, or .glb), drawn
with Pillow: triangles of every mesh, flat-shaded in their material's base colour, seen from the
front-right and a little above, far ones first. No GPU, no extra library; meant for a preview."""
from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

COMPONENT = {5120: "b", 5121: "B", 5122: "h", 5123: "H", 5125: "I", 5126: "f"}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}
MAX_TRIANGLES = 200_000


class MeshError(ValueError):
    """The file is not a glTF model this preview can read: WHY is a key of the catalogue's [tui_preview]
    ("mesh_" + WHY); `said(lang)` words it, `str()` in English."""

    def __init__(self, why: str, **fields: Any) -> None:
        self.why, self.fields = why, fields
        super().__init__(self.said("en"))

    def said(self, lang: str | None = None) -> str:
        from .strings import text

        return text("preview.mesh_" + self.why, lang, **self.fields)


def _load(path: Path) -> tuple[dict[str, Any], list[bytes]]:
    data = path.read_bytes()
    if data[:4] == b"glTF":  # binary container: a JSON chunk, then an optional BIN chunk
        doc, blobs, offset = None, [], 12
        while offset + 8 <= len(data):
            length, kind = struct.unpack_from("<I4s", data, offset)
            chunk = data[offset + 8: offset + 8 + length]
            if kind == b"JSON":
                doc = json.loads(chunk)
            elif kind == b"BIN\x00":
                blobs.append(chunk)
            offset += 8 + length
        if doc is None:
            raise MeshError("no_json")
        buffers = [blobs[0] if not b.get("uri") and blobs else _uri(b.get("uri", ""), path)
                   for b in doc.get("buffers", [])]
        return doc, buffers
    try:
        doc = json.loads(data)
    except ValueError:
        raise MeshError("not_json") from None
    return doc, [_uri(b.get("uri", ""), path) for b in doc.get("buffers", [])]


def _uri(uri: str, path: Path) -> bytes:
    if uri.startswith("data:"):
        return base64.b64decode(uri.split(",", 1)[1])
    target = (path.parent / uri).resolve()
    if path.parent.resolve() not in target.parents:  # a buffer outside the model's folder is not read
        raise MeshError("outside", uri=repr(uri))
    return target.read_bytes()


def _accessor(doc: dict[str, Any], buffers: list[bytes], index: int) -> list[tuple[float, ...]]:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    fmt, width, count = COMPONENT[acc["componentType"]], WIDTH[acc["type"]], acc["count"]
    size = struct.calcsize(fmt)
    stride = view.get("byteStride") or size * width
    blob = buffers[view["buffer"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    return [struct.unpack_from(f"<{width}{fmt}", blob, start + i * stride) for i in range(count)]


def _srgb(linear: float) -> int:
    v = linear * 12.92 if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055
    return max(0, min(255, round(v * 255)))


def triangles(path: Path) -> list[tuple[tuple[tuple[float, float, float], ...], tuple[int, int, int]]]:
    """Every triangle of the model (three points) with its base colour (sRGB)."""
    doc, buffers = _load(path)
    materials = doc.get("materials", [])
    out = []
    for mesh in doc.get("meshes", []):
        for prim in mesh.get("primitives", []):
            if prim.get("mode", 4) != 4 or "POSITION" not in prim.get("attributes", {}):
                continue
            points = _accessor(doc, buffers, prim["attributes"]["POSITION"])
            order = ([i[0] for i in _accessor(doc, buffers, prim["indices"])] if "indices" in prim
                     else list(range(len(points))))
            factor = (materials[prim["material"]].get("pbrMetallicRoughness", {}).get("baseColorFactor")
                      if "material" in prim and prim["material"] < len(materials) else None) or [0.7, 0.7, 0.7, 1]
            colour = tuple(_srgb(c) for c in factor[:3])
            for k in range(0, len(order) - 2, 3):
                out.append(((points[order[k]], points[order[k + 1]], points[order[k + 2]]), colour))
                if len(out) > MAX_TRIANGLES:
                    raise MeshError("too_many", count=f"{MAX_TRIANGLES:,}")
    if not out:
        raise MeshError("no_triangles")
    return out  # type: ignore[return-value]


def render_still(path: Path, size: tuple[int, int] = (640, 480)) -> tuple[Image.Image, int]:
    """The picture, and how many triangles it shows."""
    tris = triangles(path)
    yaw, pitch = math.radians(35), math.radians(-20)
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)

    def view(p: tuple[float, float, float]) -> tuple[float, float, float]:
        x, y, z = p
        x, z = x * cy + z * sy, -x * sy + z * cy
        y, z = y * cp - z * sp, y * sp + z * cp
        return x, y, z

    seen = [(tuple(view(p) for p in tri), colour) for tri, colour in tris]
    xs = [p[0] for tri, _ in seen for p in tri]
    ys = [p[1] for tri, _ in seen for p in tri]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    scale = 2 * 0.85 * min(size) / span  # drawn at twice the size, then scaled down (smooth edges)
    cx, cyy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    w, h = size[0] * 2, size[1] * 2
    canvas = Image.new("RGB", (w, h), (24, 26, 32))
    draw = ImageDraw.Draw(canvas)
    light = (0.4, 0.7, 0.6)
    norm = math.sqrt(sum(c * c for c in light))
    light = tuple(c / norm for c in light)
    for tri, colour in sorted(seen, key=lambda t: sum(p[2] for p in t[0])):  # far (low z) first
        (ax, ay, az), (bx, by, bz), (qx, qy, qz) = tri
        nx, ny, nz = (by - ay) * (qz - az) - (bz - az) * (qy - ay), (bz - az) * (qx - ax) - (bx - ax) * (qz - az), \
            (bx - ax) * (qy - ay) - (by - ay) * (qx - ax)
        length = math.sqrt(nx * nx + ny * ny + nz * nz) or 1.0
        shade = 0.35 + 0.65 * abs(nx * light[0] + ny * light[1] + nz * light[2]) / length
        fill = tuple(min(255, round(c * shade)) for c in colour)
        draw.polygon([(w / 2 + (p[0] - cx) * scale, h / 2 - (p[1] - cyy) * scale) for p in tri], fill=fill)
    return canvas.resize(size, Image.LANCZOS), len(tris)
