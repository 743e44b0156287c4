"""Paid generation tools: quote first, ask when over the limits, then order once per idempotency key.

The budget check happens inside the durable step, before the side effect (G8). Submitting does not
hold the turn open: the call is parked on its job (deferred), the step's other calls go on, and the
turn waits — holding no model request or lease — until its jobs settle (D1).
"""
from __future__ import annotations

import hashlib

from typing import Any

from sqlalchemy import select, update

from ..errors import Said
from ..governance.budget import check_spend, hold_spending
from ..governance.gates import open_gate
from ..language import message
from ..store import schema as s
from ..tasks import checklist
from ..studio.prices import quote, simulated_latency
from ..workspace.errors import WorkspaceError
from ..workspace.files import kind_for
from .registry import Registry, Suspend, ToolContext, ToolError, obj, plain_error, refusal_why, tool

STR = {"type": "string"}
INPUTS = {"type": "array", "items": STR, "description": "workspace paths of input images"}
PROMPT = {"type": "string", "description": "what to make: subject, style, colours, composition"}
SIZE = {"type": "string", "description": "square, portrait, landscape, poster, wide, or WxH (64–2048)"}
SEED = {"type": "integer", "description": "a fixed seed to reproduce a result (optional)"}
OUTPUT = {"type": "string", "description": "workspace path to write the result to (optional; an existing piece's "
          "path makes its next version; default: a new file under renders/)"}


def _seconds(default: float, most: float) -> dict:
    return {"type": "number", "description": f"length in seconds (default {default:g}, at most {most:g})"}

STEP = {"type": "string", "description": "the checklist step (id or number) this result completes"}
SIZES = {"square": (768, 768), "portrait": (640, 896), "landscape": (896, 640), "poster": (640, 896),
         "wide": (1024, 576)}


def _size(size: Any) -> tuple[int, int]:
    if size is None:
        return SIZES["square"]
    if isinstance(size, str) and size in SIZES:
        return SIZES[size]
    if isinstance(size, str) and "x" in size:
        w, _, h = size.lower().partition("x")
        if w.isdigit() and h.isdigit() and 64 <= int(w) <= 2048 and 64 <= int(h) <= 2048:
            return int(w), int(h)
    raise ToolError.said("size", size=repr(size), sizes=", ".join(SIZES))


NOT_IMAGES = ("document", "audio", "video", "3d", "flow", "image")  # `tool_error.input_is_*`: what an input was
KINDS = ("image", "video", "3d", "audio")  # `tool_error.kind_*`: the kinds of generation


def kind_words(kind: str) -> Said | str:
    """A generation's KIND as the catalogue says it (an unknown kind as it is)."""
    return Said(f"tool_error.kind_{kind}") if kind in KINDS else kind


# The first bytes of the raster formats the studio reads (an image input must be one of them).
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")


def _is_raster_image(path: Any) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return head.startswith(IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


async def _inputs(ctx: ToolContext, inputs: list[str] | None) -> list[str]:
    """The absolute paths of INPUTS, each checked before anything is ordered: inside the workspace, an
    existing file, and an image the studio can read (a storyboard or a sound is not a source image)."""
    files = []
    for rel in inputs or []:
        try:
            path, rel = ctx.services.workspace.resolve(rel)
        except (WorkspaceError, ValueError, OSError) as exc:
            raise ToolError.said("input_outside", kind="bad_input", path=repr(rel),
                                 why=refusal_why(exc)) from None
        if not path.is_file():
            raise ToolError.said("input_missing", kind="bad_input", path=rel)
        if not _is_raster_image(path):
            kind = kind_for(path)
            what = Said(f"tool_error.input_is_{kind if kind in NOT_IMAGES else 'other'}")
            raise ToolError.said("input_not_image", kind="bad_input", path=rel, what=what)
        files.append(str(path))
    return files


def _output(ctx: ToolContext, output: str | None, extensions: tuple[str, ...]) -> dict[str, Any]:
    """The params naming where the result goes: OUTPUT checked to be a workspace path of the right kind."""
    if not output:
        return {}
    try:
        path, rel = ctx.services.workspace.resolve(output)
    except (WorkspaceError, ValueError, OSError) as exc:
        raise ToolError.said("output_outside", kind="bad_input", path=repr(output),
                             why=refusal_why(exc)) from None
    if not rel.lower().endswith(extensions):
        raise ToolError.said("output_ext", kind="bad_input", path=rel, extensions=" or ".join(extensions))
    # what the result may replace: the file as it is now (H2/H3 — a save made after this is never overwritten)
    base = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return {"output": rel, "output_base": base}


async def generate(ctx: ToolContext, kind: str, prompt: str, params: dict[str, Any], step: str | None = None
                   ) -> Any:
    """The shared body of the generate_* tools. STEP: the checklist step the result completes."""
    studio = ctx.services.studio
    job = await studio.job_for_key(ctx.key)
    if job is None:
        if step is not None:
            async with ctx.services.db.read() as conn:
                item = await checklist.find(conn, ctx.task_id, step)
            if item is None:
                raise ToolError.said("no_checklist_step", step=repr(step))
            params = dict(params, step=item.id)
        amount = quote(kind, params)
        expected = simulated_latency(kind, params, 0)
        placed = await _authorise_and_place(ctx, kind, prompt, dict(params, prompt=prompt), amount, expected)
        if not isinstance(placed, str):
            return placed
        job = await studio.send(placed)
    else:
        job = await studio.recover(job)
    return outcome(job, await studio.error_said(job))


async def _authorise_and_place(ctx: ToolContext, kind: str, prompt: str, params: dict[str, Any], amount: float,
                               expected: float) -> Any:
    """The placed job's id when the spend may go ahead — checked and charged in one transaction, under the
    spend lock, so no other process can spend the same room (G8); a Suspend on a gate otherwise. Raises if
    declined."""
    sv = ctx.services
    async with sv.ledger.fenced(ctx.claim) as conn:
        task = (await conn.execute(select(s.tasks).where(s.tasks.c.id == ctx.task_id))).one()
        plan_gate = (await conn.execute(select(s.gates.c.id).where(
            s.gates.c.task_id == ctx.task_id, s.gates.c.kind == "plan", s.gates.c.status == "pending"))).scalar()
        if plan_gate is not None:  # paid work waits for the plan's approval (the gate's scope)
            return Suspend("gate", plan_gate, "waiting_gate", defer=True, holds=True)
        changed = await changed_since_decided(conn, ctx)
        if changed:  # e.g. the creator edited the storyboard while the plan gate waited
            raise ToolError.said("changed", files=", ".join(changed))
        await hold_spending(conn)
        verdict = await check_spend(conn, sv.budget, task_id=ctx.task_id, autonomy=task.autonomy, key=ctx.key,
                                    amount=amount, lang=task.language or "en")
        if verdict.allowed:
            return await sv.studio.place(conn, ctx, kind, prompt, params, amount, expected)
        gate = await _spend_gate(ctx, conn, task, kind, prompt, amount, verdict.reason)
    if gate.status == "pending":  # the card covers this order only: the task's other work goes on (G4)
        return Suspend("gate", gate.id, "waiting_gate", defer=True, holds=True)
    raise ToolError.said("spend_declined", kind="declined", amount=f"{amount:.2f}", currency=sv.budget.currency,
                         what=kind_words(kind))


async def changed_since_decided(conn: Any, ctx: ToolContext) -> list[str]:
    """Files the creator changed, unread by the task, since this call's step was decided (G4: a step that
    runs after a gate re-reads what changed meanwhile instead of spending on a stale decision)."""
    decided = (await conn.execute(select(s.steps.c.created_at).where(
        s.steps.c.turn_id == ctx.claim.turn_id, s.steps.c.step == ctx.step))).scalar()
    if decided is None:
        return []
    rows = (await conn.execute(select(s.notices.c.path).where(
        s.notices.c.task_id == ctx.task_id, s.notices.c.status == "open", s.notices.c.created_at > decided))).all()
    return sorted({r.path for r in rows})


async def _spend_gate(ctx: ToolContext, conn: Any, task: Any, kind: str, prompt: str, amount: float,
                      reason: str) -> Any:
    """The step's spend card: paid calls of one step that need approval share one card (G4: batched), so
    four posters over the limit are one question, not four. Approving it authorises each call's key."""
    currency = ctx.services.budget.currency
    batch_key = f"spend:{ctx.claim.turn_id}/{ctx.step}"
    batch = (await conn.execute(select(s.gates).where(s.gates.c.dedupe_key == batch_key))).first()
    if batch is not None and batch.status != "pending":
        if ctx.key in (batch.scope or {}).get("keys", []):
            return batch  # answered, and this call was on it: declined (an approval authorised it already)
        batch_key, batch = f"spend:{ctx.key}", None  # a call after the card was answered gets its own
    items = list((batch.scope or {}).get("items", [])) if batch is not None else []
    if ctx.key not in [i["key"] for i in items]:
        items.append({"key": ctx.key, "amount": amount, "kind": kind, "prompt": prompt[:120]})
    total = round(sum(i["amount"] for i in items), 2)
    lang, amount_text = task.language or "en", f"{total:.2f}"
    money = {"amount": amount_text, "currency": currency}
    if len(items) == 1:
        try:
            what = message(f"made.{kind}", lang)
        except KeyError:
            what = kind
    else:
        what = message("card.spend_many", lang, n=len(items))
    question = message("card.spend_question", lang, what=what, title=task.title, reason=reason, **money)
    options = [{"label": message("card.spend_approve", lang, **money),
                "consequence": message("card.spend_approve_one" if len(items) == 1 else "card.spend_approve_many",
                                       lang, **money)},
               {"label": message("card.spend_decline", lang), "consequence": message("card.spend_decline_then", lang)}]
    scope = {"keys": [i["key"] for i in items], "items": items, "amount": total,
             "description": message("card.spend_scope", lang, what=what, **money)}
    if batch is None:
        return await open_gate(conn, task_id=ctx.task_id, kind="spend", dedupe_key=batch_key,
                               turn_id=ctx.claim.turn_id, tool_call_id=ctx.key, question=question, options=options,
                               scope=scope, continues=message("card.spend_continues", lang))
    await conn.execute(update(s.gates).where(s.gates.c.id == batch.id, s.gates.c.status == "pending").values(
        question=question, options=options, scope=scope))
    return (await conn.execute(select(s.gates).where(s.gates.c.id == batch.id))).one()


def outcome(job: Any, said: Said | None = None) -> Any:
    """The call's result once its job settled, or a deferred wait on it. SAID: the job's error as catalogue
    text (the creator reads that; the model reads the stored English `job.error`)."""
    if job.status == "done":
        return {"job_id": job.id, "status": "done", "path": job.artifact_path, "cost": job.cost}
    if job.status in ("queued", "running", "submitting"):
        return Suspend("job", job.id, "waiting_job", defer=True)
    if job.status == "unknown":
        reason = plain_error(job.error, "")
        raise ToolError.said("job_unknown", kind="job_unknown", id=job.id,
                             reason=_job_reason(reason, said) or Said("tool_error.outcome_unknown"))
    what = kind_words(job.kind)
    reason = plain_error(job.error, "", keep_detail=True)
    refund = "" if "refund" in reason else Said("tool_error.refunded")
    status = Said(f"tool_error.status_{job.status}") if job.status in ("failed", "expired", "cancelled") else job.status
    raise ToolError.said("not_made", kind=f"job_{job.status}", what=what, id=job.id, status=status, refund=refund,
                         reason=_job_reason(reason, said) or Said("tool_error.studio_could_not", what=what))


def _job_reason(reason: str, said: Said | None) -> Said | str:
    """The job's REASON as the model reads it, in its catalogue form SAID when that says the same in English."""
    return said if reason and said is not None and said.text("en") == reason else reason


def register(reg: Registry) -> None:
    @tool(reg, "generate_image", "Generate an image into the workspace (paid; quoted first).",
          obj({"prompt": PROMPT, "size": SIZE, "inputs": INPUTS, "seed": SEED, "step": STEP, "output": OUTPUT},
              ["prompt"]), side_effect="paid", idempotent=True, domain="images")
    async def generate_image(ctx: ToolContext, prompt: str, size: str | None = None, inputs: list[str] | None = None,
                             seed: int | None = None, step: str | None = None, output: str | None = None) -> Any:
        params = {"size_px": list(_size(size)), "input_files": await _inputs(ctx, inputs), "inputs": inputs or [],
                  **_output(ctx, output, (".png",))}
        if seed is not None:
            params["seed"] = seed
        return await generate(ctx, "image", prompt, params, step)

    @tool(reg, "generate_video", "Generate a short clip (paid; quoted first); inputs: a source image.",
          obj({"prompt": PROMPT, "seconds": _seconds(5, 60), "inputs": INPUTS, "step": STEP, "output": OUTPUT},
              ["prompt"]), side_effect="paid", idempotent=True, domain="video")
    async def generate_video(ctx: ToolContext, prompt: str, seconds: float | None = None,
                             inputs: list[str] | None = None, step: str | None = None, output: str | None = None
                             ) -> Any:
        seconds = float(seconds or 5)
        if not 0.5 <= seconds <= 60:
            raise ToolError.said("seconds_range", most=60)
        params = {"seconds": seconds, "size_px": [480, 270], "input_files": await _inputs(ctx, inputs),
                  "inputs": inputs or [], **_output(ctx, output, (".gif", ".webp"))}
        return await generate(ctx, "video", prompt, params, step)

    @tool(reg, "generate_3d", "Generate a 3D mesh (glTF) into the workspace (paid; quoted first).",
          obj({"prompt": PROMPT, "step": STEP}, ["prompt"]), side_effect="paid", idempotent=True, domain="3d")
    async def generate_3d(ctx: ToolContext, prompt: str, step: str | None = None) -> Any:
        return await generate(ctx, "3d", prompt, {}, step)

    @tool(reg, "generate_audio", "Generate audio (WAV) into the workspace (paid; quoted first).",
          obj({"prompt": PROMPT, "seconds": _seconds(3, 120), "step": STEP}, ["prompt"]), side_effect="paid",
          idempotent=True, domain="audio")
    async def generate_audio(ctx: ToolContext, prompt: str, seconds: float | None = None, step: str | None = None
                             ) -> Any:
        seconds = float(seconds or 3)
        if not 0.5 <= seconds <= 120:
            raise ToolError.said("seconds_range", most=120)
        return await generate(ctx, "audio", prompt, {"seconds": seconds}, step)
