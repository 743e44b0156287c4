"""`lomo task export ID --format md|html`: a task for sharing — brief, checklist, conversation, results.

Markdown links each result relative to the output file (absolute on stdout); HTML embeds images as data
URIs (up to EMBED_LIMIT bytes each) so the page travels alone, and links everything else.
"""
from __future__ import annotations

import base64
import html
import mimetypes
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import LomoError
from ..language import message
from ..workspace.files import atomic_write

EMBED_LIMIT = 8 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/gif", "image/jpeg", "image/webp", "image/svg+xml"})
MARKS = {"done": "[x]", "skipped": "[-]"}


async def export_task(db: Any, settings: Any, task_id: str, fmt: str, output: str | None) -> None:
    from .state import task_document

    doc = await task_document(db, task_id)
    target = Path(output).expanduser().resolve() if output else None
    if target is not None and target.is_dir():
        raise LomoError.said("cli_error.export_folder", target=str(target), example=str(target / f"{task_id}.{fmt}"))
    results = [(a, (settings.workspace / a["path"]).resolve()) for a in doc["artifact_versions"]]
    text = (render_html if fmt == "html" else render_markdown)(doc, results, target)
    if target is None:
        sys.stdout.write(text)
        return
    try:
        atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise LomoError.said("cli_error.export_unwritable", target=str(target), detail=exc.strerror) from exc
    print(target)


def _link(path: Path, target: Path | None) -> str:
    return os.path.relpath(path, target.parent) if target is not None else str(path)


def _type(path: Path) -> str:
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _words(doc: dict[str, Any]) -> Any:
    """The page's words in the task's language (the catalogue's [export])."""
    lang = doc.get("language") or "en"

    def say(key: str, **fields: Any) -> str:
        return message("export." + key, lang, **fields)
    return say


def _who(say: Any, role: str) -> str:
    return say("you") if role == "creator" else say("lomo") if role == "lomo" else role


def _facts(say: Any, doc: dict[str, Any]) -> str:
    kind = say(f"kind_{doc['kind']}") if doc["kind"] in ("persistent", "lightweight", "main") else doc["kind"]
    from .state import label

    status = label(f"wording.status_{doc['status']}", doc["status"], doc.get("language") or "en")
    return say("facts", kind=kind, status=status, id=doc["id"])


def render_markdown(doc: dict[str, Any], results: list[tuple[dict[str, Any], Path]], target: Path | None) -> str:
    say = _words(doc)
    lines = [f"# {doc['title']}", "", f"*{_facts(say, doc)}*", ""]
    if doc["brief"]:
        lines += [f"## {say('brief')}", "", doc["brief"], ""]
    if doc["checklist"]:
        lines += [f"## {say('checklist')}", ""]
        for item in doc["checklist"]:
            evidence = f" — {item['evidence']}" if item["evidence"] else ""
            lines.append(f"- {MARKS.get(item['status'], '[ ]')} {item['title']}{evidence}")
        lines.append("")
    if doc["conversation"]:
        lines += [f"## {say('conversation')}", ""]
        for entry in doc["conversation"]:
            lines += [f"**{_who(say, entry['role'])}:**", "", entry["text"], ""]
    if results:
        lines += [f"## {say('results')}", ""]
        for artifact, path in results:
            link = _link(path, target).replace(" ", "%20")
            name = f"{artifact['path']} (v{artifact['version']})"
            lines += [f"![{name}]({link})" if _type(path) in IMAGE_TYPES else f"- [{name}]({link})", ""]
    spend = doc["spend"]
    if spend["amount"]:
        lines += [say("spent", amount=f"{spend['amount']:.2f}", currency=spend["currency"]), ""]
    return "\n".join(lines)


def render_html(doc: dict[str, Any], results: list[tuple[dict[str, Any], Path]], target: Path | None) -> str:
    e = html.escape
    say = _words(doc)
    lang = e(doc.get("language") or "en")
    parts = ["<!doctype html>", f'<html lang="{lang}"><head><meta charset="utf-8">',
             f"<title>{e(doc['title'])}</title>",
             "<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}"
             "img{max-width:100%}.who{font-weight:bold}.msg{white-space:pre-wrap;margin:0 0 1rem}</style>",
             "</head><body>", f"<h1>{e(doc['title'])}</h1>",
             f"<p><em>{e(_facts(say, doc))}</em></p>"]
    if doc["brief"]:
        parts += [f"<h2>{e(say('brief'))}</h2>", f'<p class="msg">{e(doc["brief"])}</p>']
    if doc["checklist"]:
        parts.append(f"<h2>{e(say('checklist'))}</h2><ul>")
        for item in doc["checklist"]:
            evidence = f" — {e(item['evidence'])}" if item["evidence"] else ""
            box = "☑" if item["status"] == "done" else "☐"
            parts.append(f"<li>{box} {e(item['title'])}{evidence}</li>")
        parts.append("</ul>")
    if doc["conversation"]:
        parts.append(f"<h2>{e(say('conversation'))}</h2>")
        for entry in doc["conversation"]:
            parts += [f'<p class="who">{e(_who(say, entry["role"]))}</p>', f'<p class="msg">{e(entry["text"])}</p>']
    if results:
        parts.append(f"<h2>{e(say('results'))}</h2>")
        for artifact, path in results:
            name = e(f"{artifact['path']} (v{artifact['version']})")
            kind = _type(path)
            if kind in IMAGE_TYPES and path.is_file() and path.stat().st_size <= EMBED_LIMIT:
                data = base64.b64encode(path.read_bytes()).decode("ascii")
                parts.append(f'<figure><img alt="{name}" src="data:{kind};base64,{data}">'
                             f"<figcaption>{name}</figcaption></figure>")
            else:
                parts.append(f'<p><a href="{e(_link(path, target))}">{name}</a></p>')
    spend = doc["spend"]
    if spend["amount"]:
        spent = say("spent", amount=f"{spend['amount']:.2f}", currency=spend["currency"])
        parts.append(f"<p>{e(spent)}</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
