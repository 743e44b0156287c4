"""Core tools, always visible: files (with optimistic concurrency) and asking the creator."""
from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select

from ..errors import Said
from ..governance.gates import open_gate
from ..language import message
from ..store import schema as s
from .registry import Registry, Suspend, ToolContext, ToolError, obj, tool
from .. import clock

STR = {"type": "string"}
PATH = {"type": "string", "description": "workspace path, relative to the workspace root (e.g. posters/a.md)"}
BASE = {"type": ["integer", "null"], "description": "the version read_file returned (null for a new file); "
        "refused with a conflict if the file changed since"}
PATTERN = {"type": "string", "description": "glob over workspace paths, e.g. '*.md' or 'posters/*' (default '*')"}
READ_CHARS = 6000  # read_file's default page: a larger file is cut and says so
LIST_LIMIT = 100


def _desc(text: str, kind: str = "string", **more: Any) -> dict[str, Any]:
    return {"type": kind, "description": text, **more}


def page_text(result: dict[str, Any], offset: int, limit: int | None) -> dict[str, Any]:
    """Cut a read's content to [offset, offset+limit) and say where the rest is."""
    content = result.get("content") or ""
    limit = READ_CHARS if limit is None else max(1, int(limit))
    offset = max(0, int(offset or 0))
    if offset == 0 and len(content) <= limit:
        return result
    chunk = content[offset:offset + limit]
    end = offset + len(chunk)
    return dict(result, content=chunk, offset=offset, total_chars=len(content), truncated=end < len(content),
                next_offset=end if end < len(content) else None)


def register(reg: Registry) -> None:
    @tool(reg, "read_file", f"Read a workspace file; returns its content and version. Long files come in pages of "
          f"{READ_CHARS} characters: the result says truncated and next_offset.",
          obj({"path": PATH, "offset": _desc("first character to return (default 0)", "integer"),
               "limit": _desc(f"characters to return (default {READ_CHARS})", "integer")}, ["path"]),
          side_effect="read", idempotent=True)
    async def read_file(ctx: ToolContext, path: str, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        return page_text(await ctx.services.workspace.read(path, ctx.task_id), offset, limit)

    @tool(reg, "write_file", "Create or fully rewrite a workspace file. base_version: the version you read "
          "(null for a new file); refused if the file changed since.",
          obj({"path": PATH, "content": _desc("the whole new text of the file"), "base_version": BASE},
              ["path", "content"]),
          side_effect="write", idempotent=True)
    async def write_file(ctx: ToolContext, path: str, content: str, base_version: int | None = None) -> dict[str, Any]:
        return await ctx.services.workspace.write(path, content, base_version, ctx.task_id, ctx.key)

    @tool(reg, "edit_file", "Replace exact, unique snippets in a file: `old`/`new`, or `edits` "
          "[{old, new}, ...]; all apply or none.",
          obj({"path": PATH, "old": _desc("exact text to replace; must occur once"),
               "new": _desc("the replacement text"), "base_version": BASE,
               "edits": {"type": "array", "description": "several replacements, applied together",
                         "items": obj({"old": _desc("exact text to replace; must occur once"),
                                       "new": _desc("the replacement text")}, ["old", "new"])}}, ["path"]),
          side_effect="write", idempotent=True)
    async def edit_file(ctx: ToolContext, path: str, old: str | None = None, new: str | None = None,
                        base_version: int | None = None, edits: list[dict[str, str]] | None = None) -> dict[str, Any]:
        pairs = [(e["old"], e["new"]) for e in edits or []]
        if old is not None:
            pairs.insert(0, (old, new or ""))
        if not pairs:
            raise ToolError.said("edit_needs")
        return await ctx.services.workspace.edit(path, pairs, base_version, ctx.task_id, ctx.key)

    @tool(reg, "append_file", "Append text to a workspace file (notes, logs). Not idempotent: after an "
          "interruption, check the file before appending again.",
          obj({"path": PATH, "text": _desc("text to add at the end of the file")}, ["path", "text"]),
          side_effect="write", idempotent=False)
    async def append_file(ctx: ToolContext, path: str, text: str) -> dict[str, Any]:
        return await ctx.services.workspace.append(path, text, ctx.task_id, ctx.key)

    @tool(reg, "search_files", "Find text in the workspace's text files (case-insensitive); optional glob "
          "pattern. Returns up to 50 matching lines with their file and line number.",
          obj({"query": _desc("text to find (case-insensitive)"), "pattern": PATTERN}, ["query"]),
          side_effect="read", idempotent=True)
    async def search_files(ctx: ToolContext, query: str, pattern: str = "*") -> dict[str, Any]:
        if not query.strip():
            raise ToolError.said("search_needs")
        return {"matches": await ctx.services.workspace.search(query, pattern)}

    @tool(reg, "delete_file", "Delete a workspace file. Irreversible: the creator is always asked first.",
          obj({"path": PATH}, ["path"]), side_effect="irreversible", idempotent=True)
    async def delete_file(ctx: ToolContext, path: str) -> Any:
        workspace = ctx.services.workspace
        target, rel = workspace.resolve(path)
        async with ctx.services.ledger.fenced(ctx.claim) as conn:
            lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == ctx.task_id))).scalar() or "en"
            gate = await open_gate(conn, task_id=ctx.task_id, kind="irreversible", dedupe_key=f"delete:{ctx.key}",
                                   question=message("card.delete_question", lang, path=rel), turn_id=ctx.claim.turn_id,
                                   tool_call_id=ctx.key,
                                   options=[{"label": message("card.delete_confirm", lang, path=rel),
                                             "consequence": message("card.delete_confirm_then", lang)},
                                            {"label": message("card.delete_keep", lang),
                                             "consequence": message("card.delete_keep_then", lang)}],
                                   scope={"description": message("card.delete_scope", lang, path=rel), "path": rel},
                                   continues=message("card.delete_continues", lang))
        if gate.status == "pending":  # the card covers this deletion only: the task's other work goes on (G4)
            return Suspend("gate", gate.id, "waiting_gate", defer=True, holds=True)
        if gate.status != "approved" or (gate.resolution or {}).get("option") != 1:
            raise ToolError.said("kept_file", path=rel)
        return await workspace.delete(rel, ctx.task_id)

    @tool(reg, "list_files", f"List workspace files (optional glob pattern) with kind and version, "
          f"{LIST_LIMIT} at a time: the result says truncated and next_offset.",
          obj({"pattern": PATTERN, "offset": _desc("how many matching files to skip (default 0)", "integer"),
               "limit": _desc(f"files to return (default {LIST_LIMIT})", "integer")}, []),
          side_effect="read", idempotent=True)
    async def list_files(ctx: ToolContext, pattern: str = "*", offset: int = 0, limit: int = LIST_LIMIT
                         ) -> dict[str, Any]:
        files = await ctx.services.workspace.list(pattern)
        offset, limit = max(0, int(offset or 0)), max(1, int(limit or LIST_LIMIT))
        page = files[offset:offset + limit]
        result: dict[str, Any] = {"files": page}
        if offset or len(files) > offset + limit:
            end = offset + len(page)
            result.update(offset=offset, total=len(files), truncated=end < len(files),
                          next_offset=end if end < len(files) else None)
        return result

    @tool(reg, "ask_user", "Ask the creator a question with options; the task waits for the answer. "
          "deadline_minutes: stop waiting after this long, going on with the option if_unanswered names "
          "(or with no answer).",
          obj({"question": _desc("the question, in the creator's language"),
               "options": {"type": "array", "items": STR,
                           "description": "the answers to choose from (default Yes / No)"},
               "deadline_minutes": {"type": "number", "exclusiveMinimum": 0,
                                    "description": "minutes to wait for an answer before going on without one"},
               "if_unanswered": _desc("the option to go on with when the deadline passes (one of options)"),
               "valid_minutes": {"type": "number", "exclusiveMinimum": 0,
                                 "description": "for an answer that holds only for a while (a date, a price, an "
                                                "availability): minutes it stays true; then the step it completed "
                                                "is checked again"}},
              ["question"]),
          side_effect="gate", idempotent=True, kinds=("main", "lightweight", "persistent"))
    async def ask_user(ctx: ToolContext, question: str, options: list[str] | None = None,
                       deadline_minutes: float | None = None, if_unanswered: str | None = None,
                       valid_minutes: float | None = None) -> Any:
        asked, options = options, options or ["Yes", "No"]
        scope: dict[str, Any] = {"turn": ctx.claim.turn_id, "description": "this task's next step"}
        if valid_minutes is not None:
            scope["valid_minutes"] = float(valid_minutes)  # the answer's evidence expires (tasks/evidence.py)
        deadline = None
        if deadline_minutes is not None:
            if if_unanswered is not None and if_unanswered not in options:
                raise ToolError.said("if_unanswered", options=", ".join(options))
            deadline = clock.now() + float(deadline_minutes) * 60
            scope.update(default=if_unanswered)
        async with ctx.services.ledger.fenced(ctx.claim) as conn:
            lang = (await conn.execute(select(s.tasks.c.language).where(s.tasks.c.id == ctx.task_id))).scalar() or "en"
            if asked is None:  # the default Yes / No in the task's language
                options = [message("card.yes", lang), message("card.no", lang)]
                if scope.get("default") in ("Yes", "No"):
                    scope["default"] = options[("Yes", "No").index(scope["default"])]
            scope["description"] = message("gate.next_step", lang)
            if deadline is not None:  # what the card says happens when nobody answers in time (any language)
                instead = (Said("gate_expiry.went_on_with", {"option": scope["default"]}) if scope.get("default")
                           else Said("gate_expiry.went_on_without"))
                scope.update(on_expiry=instead.text("en"), on_expiry_said=instead.stored())
            # one card per distinct question of a step: asking the same thing twice merges into one answer
            same = hashlib.sha1(f"{question}\n{asked}".encode()).hexdigest()[:12]
            gate = await open_gate(conn, task_id=ctx.task_id, kind="question", question=question, options=options,
                                   dedupe_key=f"ask:{ctx.claim.turn_id}/{ctx.step}/{same}", turn_id=ctx.claim.turn_id,
                                   tool_call_id=ctx.key, scope=scope, continues=message("gate.others_go_on", lang),
                                   deadline=deadline)
        if gate.status == "pending":  # the step's other calls run first; questions of one step wait together
            return Suspend("gate", gate.id, "waiting_gate", defer=True)
        resolution = gate.resolution or {}
        if gate.status == "expired":  # nobody answered in time: what the card said would happen instead
            return {"answer": (gate.scope or {}).get("default"), "expired": True, "gate_id": gate.id,
                    "reason": resolution.get("reason"), "instead": resolution.get("instead")}
        if not resolution.get("approved"):
            return {"answer": None, "declined": True, "gate_id": gate.id}
        return {"answer": resolution.get("label"), "option": resolution.get("option"), "gate_id": gate.id}

