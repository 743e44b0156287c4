"""Core tools, always visible: files (with optimistic concurrency) and asking the creator."""
from __future__ import annotations

import hashlib
import time
from typing import Any

from ..governance.gates import open_gate
from .registry import Registry, Suspend, ToolContext, ToolError, obj, tool

STR = {"type": "string"}
INT_OR_NULL = {"type": ["integer", "null"]}


def register(reg: Registry) -> None:
    @tool(reg, "read_file", "Read a workspace file; returns its content and version.", obj({"path": STR}, ["path"]),
          side_effect="read", idempotent=True)
    async def read_file(ctx: ToolContext, path: str) -> dict[str, Any]:
        return await ctx.runtime.workspace.read(path, ctx.task_id)

    @tool(reg, "write_file", "Create or fully rewrite a workspace file. base_version: the version you read "
          "(null for a new file); refused if the file changed since.",
          obj({"path": STR, "content": STR, "base_version": INT_OR_NULL}, ["path", "content"]),
          side_effect="write", idempotent=True)
    async def write_file(ctx: ToolContext, path: str, content: str, base_version: int | None = None) -> dict[str, Any]:
        return await ctx.runtime.workspace.write(path, content, base_version, ctx.task_id, ctx.key)

    @tool(reg, "edit_file", "Replace exact, unique snippets in a file: `old`/`new`, or `edits` "
          "[{old, new}, ...]; all apply or none.",
          obj({"path": STR, "old": STR, "new": STR, "base_version": INT_OR_NULL,
               "edits": {"type": "array", "items": obj({"old": STR, "new": STR}, ["old", "new"])}}, ["path"]),
          side_effect="write", idempotent=True)
    async def edit_file(ctx: ToolContext, path: str, old: str | None = None, new: str | None = None,
                        base_version: int | None = None, edits: list[dict[str, str]] | None = None) -> dict[str, Any]:
        pairs = [(e["old"], e["new"]) for e in edits or []]
        if old is not None:
            pairs.insert(0, (old, new or ""))
        if not pairs:
            raise ToolError("edit_file needs old/new or a list of edits")
        return await ctx.runtime.workspace.edit(path, pairs, base_version, ctx.task_id, ctx.key)

    @tool(reg, "append_file", "Append text to a workspace file (notes, logs). Not idempotent: after an "
          "interruption, check the file before appending again.",
          obj({"path": STR, "text": STR}, ["path", "text"]), side_effect="write", idempotent=False)
    async def append_file(ctx: ToolContext, path: str, text: str) -> dict[str, Any]:
        return await ctx.runtime.workspace.append(path, text, ctx.task_id, ctx.key)

    @tool(reg, "search_files", "Find text in the workspace's text files (case-insensitive); optional glob "
          "pattern. Returns up to 50 matching lines with their file and line number.",
          obj({"query": STR, "pattern": STR}, ["query"]), side_effect="read", idempotent=True)
    async def search_files(ctx: ToolContext, query: str, pattern: str = "*") -> dict[str, Any]:
        if not query.strip():
            raise ToolError("say what to look for")
        return {"matches": await ctx.runtime.workspace.search(query, pattern)}

    @tool(reg, "delete_file", "Delete a workspace file. Irreversible: the creator is always asked first.",
          obj({"path": STR}, ["path"]), side_effect="irreversible", idempotent=True)
    async def delete_file(ctx: ToolContext, path: str) -> Any:
        workspace = ctx.runtime.workspace
        target, rel = workspace.resolve(path)
        async with ctx.runtime.ledger.fenced(ctx.claim) as conn:
            gate = await open_gate(conn, task_id=ctx.task_id, kind="irreversible", dedupe_key=f"delete:{ctx.key}",
                                   question=f"Delete {rel}? This cannot be undone.", turn_id=ctx.claim.turn_id,
                                   tool_call_id=ctx.key,
                                   options=[{"label": f"Delete {rel}", "consequence": "the file is gone for good"},
                                            {"label": "Keep it", "consequence": "nothing changes"}],
                                   scope={"description": f"deleting {rel}", "path": rel},
                                   continues="everything else, this task's other work included")
        if gate.status == "pending":
            return Suspend("gate", gate.id, "waiting_gate", defer=True)
        if gate.status != "approved" or (gate.resolution or {}).get("option") != 1:
            raise ToolError(f"the creator kept {rel}; do not delete it")
        return await workspace.delete(rel, ctx.task_id)

    @tool(reg, "list_files", "List workspace files (optional glob pattern) with kind and version.",
          obj({"pattern": STR}, []), side_effect="read", idempotent=True)
    async def list_files(ctx: ToolContext, pattern: str = "*") -> dict[str, Any]:
        return {"files": await ctx.runtime.workspace.list(pattern)}

    @tool(reg, "ask_user", "Ask the creator a question with options; the task waits for the answer. "
          "deadline_minutes: stop waiting after this long, going on with the option if_unanswered names "
          "(or with no answer).",
          obj({"question": STR, "options": {"type": "array", "items": STR},
               "deadline_minutes": {"type": "number", "exclusiveMinimum": 0}, "if_unanswered": STR}, ["question"]),
          side_effect="gate", idempotent=True, kinds=("main", "lightweight", "persistent"))
    async def ask_user(ctx: ToolContext, question: str, options: list[str] | None = None,
                       deadline_minutes: float | None = None, if_unanswered: str | None = None) -> Any:
        asked, options = options, options or ["Yes", "No"]
        scope: dict[str, Any] = {"turn": ctx.claim.turn_id, "description": "this task's next step"}
        deadline = None
        if deadline_minutes is not None:
            if if_unanswered is not None and if_unanswered not in options:
                raise ToolError(f"if_unanswered must be one of the options ({', '.join(options)})")
            deadline = time.time() + float(deadline_minutes) * 60
            scope.update(default=if_unanswered, on_expiry=f"went on with “{if_unanswered}”" if if_unanswered
                         else "went on without an answer")
        async with ctx.runtime.ledger.fenced(ctx.claim) as conn:
            # one card per distinct question of a step: asking the same thing twice merges into one answer
            same = hashlib.sha1(f"{question}\n{asked}".encode()).hexdigest()[:12]
            gate = await open_gate(conn, task_id=ctx.task_id, kind="question", question=question, options=options,
                                   dedupe_key=f"ask:{ctx.claim.turn_id}/{ctx.step}/{same}", turn_id=ctx.claim.turn_id,
                                   tool_call_id=ctx.key, scope=scope, continues="other tasks go on", deadline=deadline)
        if gate.status == "pending":  # the step's other calls run first; questions of one step wait together
            return Suspend("gate", gate.id, "waiting_gate", defer=True)
        resolution = gate.resolution or {}
        if gate.status == "expired":  # nobody answered in time: what the card said would happen instead
            return {"answer": (gate.scope or {}).get("default"), "expired": True, "gate_id": gate.id,
                    "reason": resolution.get("reason"), "instead": resolution.get("instead")}
        if not resolution.get("approved"):
            return {"answer": None, "declined": True, "gate_id": gate.id}
        return {"answer": resolution.get("label"), "option": resolution.get("option"), "gate_id": gate.id}

