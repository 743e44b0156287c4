"""`lomo/local`: the embedded offline planner. Deterministic, no network, no litellm.

It speaks the same protocol as any model: it reads the messages, tool schemas and hints it is given
and answers with content or tool calls; the runtime never branches on its name. The main thread's
policy (routing) lives in `local_router`; this module plans the work inside a task:

- a persistent task's first message becomes a brief and a checklist (`update_plan`);
- each later step runs the next open checklist items (independent generations in parallel);
- a revision becomes a new step that regenerates from the latest result;
- a lightweight task makes its one piece;
- when nothing is left, it reports what was made, in the creator's language.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ..language import media_kinds
from .base import ModelReply, ModelRequest, TokenSink, ToolCall, Usage
from .local_nlu import (
    classify, detect_language, find_reference, is_regenerate, make_brief, make_checklist, phrase, shot_change,
    shot_named,
)

OUTPUT_EXT = {"image": (".png",), "video": (".gif", ".webp")}  # what generate_image / generate_video may save as
GENERATE = {"image": "generate_image", "video": "generate_video", "3d": "generate_3d", "audio": "generate_audio"}
PARALLEL = frozenset(GENERATE.values())
MEDIA_EXT = {"png": "image", "jpg": "image", "jpeg": "image", "webp": "image", "gif": "video", "mp4": "video",
             "glb": "3d", "gltf": "3d", "wav": "audio"}


def media_of(path: str) -> str | None:
    """The kind of media a workspace path holds, by its extension."""
    return MEDIA_EXT.get(path.rsplit(".", 1)[-1].lower()) if "." in path else None


class LocalModel:
    name = "lomo/local"

    async def complete(self, request: ModelRequest, on_token: TokenSink | None = None) -> ModelReply:
        if request.hints.get("task_kind") == "main":
            from .local_router import route

            reply = route(request)
        else:
            reply = Planner(request).next()
        if on_token is not None and reply.content:
            for piece in re.findall(r"\S+\s*", reply.content):
                result = on_token(piece)
                if result is not None:
                    await result
        reply.model = self.name
        reply.usage = Usage(prompt_tokens=sum(len(str(m.get("content") or "")) // 4 for m in request.messages),
                            completion_tokens=len(reply.content or "") // 4)
        return reply


def latest_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results of the most recent step's tool calls (parsed), oldest first."""
    last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    if last_assistant < 0 or not messages[last_assistant].get("tool_calls"):
        return []
    names = {c["id"]: c["function"]["name"] for c in messages[last_assistant]["tool_calls"]}
    out = []
    for message in messages[last_assistant + 1:]:
        if message["role"] != "tool":
            continue
        try:
            data = json.loads(message.get("content") or "{}")
        except json.JSONDecodeError:
            data = {"text": message.get("content")}
        out.append({"name": names.get(message.get("tool_call_id"), ""),
                    "data": data if isinstance(data, dict) else {"value": data}})
    return out


def last_result(messages: list[dict[str, Any]], tool: str) -> dict[str, Any] | None:
    """The newest successful result of TOOL anywhere in the history (parsed): a flow read in one step is
    what the edit of a later step patches, after the step between them that completed the read."""
    names = {c["id"]: c["function"]["name"] for m in messages if m["role"] == "assistant"
             for c in m.get("tool_calls") or []}
    for message in reversed(messages):
        if message["role"] != "tool" or names.get(message.get("tool_call_id")) != tool:
            continue
        try:
            data = json.loads(message.get("content") or "{}")
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and "error" not in data:
            return data
    return None


def answers(messages: list[dict[str, Any]]) -> list[str]:
    """The creator's answers to ask_user, oldest first."""
    out = []
    for message in messages:
        if message["role"] == "tool" and '"answer"' in (message.get("content") or ""):
            try:
                answer = json.loads(message["content"]).get("answer")
            except (json.JSONDecodeError, AttributeError):
                continue
            if answer:
                out.append(str(answer))
    return out


class Planner:
    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.hints = request.hints
        self.tools = {t["function"]["name"] for t in request.tools}
        self.new = [m for m in self.hints.get("new_messages") or [] if m.strip()]
        self.lang = self.hints.get("language") or (detect_language(self.new[0]) if self.new else "en")
        self.steps: list[dict[str, Any]] = self.hints.get("checklist") or []
        self.results = latest_results(request.messages)

    def classify(self, text: str) -> Any:
        """The language layer's reading, with the files it names replaced by their workspace paths when the
        runtime found them ("把海报_1.png" → "posters/海报_1.png")."""
        intent = classify(text)
        resolved = self.hints.get("resolved_files") or {}
        intent.files = [resolved.get(f.strip("./") or f, f) for f in intent.files]
        return intent

    def say(self, key: str, **fields: Any) -> ModelReply:
        return ModelReply(content=phrase(key, self.lang, **fields))

    def next(self) -> ModelReply:
        replan = self.hints.get("replan")
        if replan and not self.new and "update_plan" in self.tools and self.hints.get("task_kind") == "persistent":
            return self.plan(replan["new"]["goal"])  # the goal changed: the checklist is rebuilt from the new goal
        errors = [r["data"]["error"] for r in self.results if "error" in r["data"]]
        if errors and not self.new:
            return ModelReply(content="; ".join(errors))
        if self.new:
            intent = self.classify(" ".join(self.new))
            if intent.act in ("greeting", "thanks", "help", "question", "status") and self.steps:
                return self.status()
            if self.hints.get("task_kind") == "persistent" and not self.steps and "update_plan" in self.tools:
                return self.plan(" ".join(self.new))
            graph = self.production_graph()
            shot = shot_named(" ".join(self.new), self.lang) if graph else None
            if graph and shot is not None:
                return self.revise_shot(" ".join(self.new), graph, shot)
            if graph and intent.act not in ("greeting", "thanks", "help", "question", "status"):
                return self.rerun_graph(graph, " ".join(self.new) if intent.act == "revise" else None)
            if intent.act == "revise" or (self.steps and intent.act in ("goal", "one_shot")):
                return self.revise(" ".join(self.new), intent)
            if self.hints.get("task_kind") == "lightweight":
                return self.one_shot(" ".join(self.new), intent)
        return self.advance()

    # ---- first message: the plan ------------------------------------------------------------------
    def plan(self, text: str) -> ModelReply:
        intent = self.classify(text)
        items = make_checklist(intent)
        if not items:
            media = intent.media if intent.media in GENERATE else "image"
            steps = [{"title": phrase("step_image" if media == "image" else "step_video_plain", self.lang),
                      "tool": GENERATE[media], "args": {"prompt": text}}]
        else:
            steps = [{"title": i.title, "tool": i.tool, "args": i.args,
                      "needs_confirmation": i.needs_confirmation and i.tool is None} for i in items]
        brief = make_brief(text, intent)
        return ModelReply(content=phrase("plan_ready", self.lang, title=self.hints.get("title", ""), steps=len(steps)),
                          tool_calls=[ToolCall("update_plan", {"brief": brief, "steps": steps})])

    # ---- later steps: run the checklist -------------------------------------------------------------
    def advance(self) -> ModelReply:
        open_steps = [s for s in self.steps if s["state"] in ("pending", "active")]
        if not open_steps:
            return self.done()
        head = open_steps[0]
        if head.get("needs_confirmation"):
            return ModelReply(content=phrase("result_ready", self.lang, what=self.title(), path=self.made_list()))
        calls = []
        for step in open_steps:
            if step.get("needs_confirmation"):
                break
            call = self.call_for(step)
            if call is None:
                break
            calls.append(call)
            if call.name not in PARALLEL:
                break
        if not calls:
            return ModelReply(content=None, tool_calls=[ToolCall("complete_step", {
                "step": head["id"], "evidence": "noted"})])
        return ModelReply(content=None, tool_calls=calls)

    def call_for(self, step: dict[str, Any]) -> ToolCall | None:
        tool, args = step.get("tool"), dict(step.get("args") or {})
        if tool is None or tool not in self.tools:
            return None
        if tool == "ask_user":
            answered = [r for r in self.results if r["name"] == "ask_user" and r["data"].get("answer")]
            if answered:
                return ToolCall("complete_step", {"step": step["id"],
                                                  "evidence": f"the creator chose: {answered[-1]['data']['answer']}"})
            options = args.get("options") or self.hints.get("flow_files") or [phrase("opt_pick_file", self.lang)]
            return ToolCall("ask_user", {"question": args.get("question", step["title"]), "options": options})
        if tool in ("write_file", "read_flow", "plan_production", "run_production"):
            done = [r for r in self.results if r["name"] == tool and "error" not in r["data"]]
            if done:
                path = done[-1]["data"].get("film" if tool == "run_production" else "path")
                if tool in ("plan_production", "run_production"):
                    return ToolCall("complete_step", {"step": step["id"], "evidence": f"{tool} {path}",
                                                      "artifacts": [path] if path else []})
                return ToolCall("complete_step", {"step": step["id"], "evidence": f"{tool} {path}",
                                                  "artifacts": [path] if tool == "write_file" and path else []})
        if tool == "edit_flow_nodes":
            done = [r for r in self.results if r["name"] == tool and "error" not in r["data"]]
            if done:
                return ToolCall("complete_step", {"step": step["id"], "evidence": done[-1]["data"].get("notice", ""),
                                                  "artifacts": [done[-1]["data"].get("path")]})
            args = self.flow_edits(args)
        resolved = self.resolve(args, step)
        if tool in PARALLEL:
            resolved["step"] = step["id"]
            lost = next((r.get("deleted") or [] for r in self.hints.get("repair") or [] if r.get("step") == step["id"]),
                        [])
            media = next((m for m, t in GENERATE.items() if t == tool), "")
            if len(lost) == 1 and "output" not in resolved and lost[0].lower().endswith(OUTPUT_EXT.get(media, ())):
                resolved["output"] = lost[0]  # a repair makes the deleted result again where it was
        return ToolCall(tool, resolved)

    def resolve(self, args: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
        """Fill the checklist's placeholders ($answer, $source, $prev, $last, $version)."""
        given = answers(self.request.messages)
        artifacts = self.hints.get("artifacts") or []
        position = step.get("n", 0)
        previous = [s for s in self.steps if s.get("n", 0) < position and s.get("artifacts")]
        values = {
            "$answer": given[-1] if given else None,
            "$last": artifacts[0] if artifacts else None,
            "$prev": previous[-1]["artifacts"][0] if previous else (artifacts[0] if artifacts else None),
            "$source": self.source(given),
            "$version": (last_result(self.request.messages, "read_flow") or {}).get("version"),
        }

        def fill(value: Any) -> Any:
            if isinstance(value, str) and value in values:
                return values[value]
            if isinstance(value, list):
                return [v for v in (fill(v) for v in value) if v is not None]
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value

        return fill(args)

    def source(self, given: list[str]) -> str | None:
        images = self.hints.get("recent_images") or []
        if given and given[-1] in images:
            return given[-1]
        return images[0] if images else None

    def flow_edits(self, args: dict[str, Any]) -> dict[str, Any]:
        """Turn the checklist's edit descriptions into node patches against the flow just read."""
        if isinstance(args.get("edits"), dict):  # already node patches (a production graph's shot)
            return args
        nodes = (last_result(self.request.messages, "read_flow") or {}).get("nodes") or []
        patches: dict[str, Any] = {}
        for edit in args.get("edits") or []:
            ref = str(edit.get("node", ""))
            node = next((n for n in nodes if n["id"] == ref), None)
            if node is None and ref.isdigit() and 0 < int(ref) <= len(nodes):
                node = nodes[int(ref) - 1]
            if node is not None:
                patches[node["id"]] = {"style": ", ".join(edit.get("style") or []) or edit.get("change", "")}
        return dict(args, edits=patches)

    # ---- production graphs ------------------------------------------------------------------------------------
    def production_graph(self) -> str | None:
        """The task's production graph, if its plan runs one."""
        return next((s["args"]["path"] for s in reversed(self.steps) if s.get("tool") == "run_production"
                     and isinstance(s.get("args"), dict) and s["args"].get("path")), None)

    def rerun_graph(self, graph: str, change: str | None = None) -> ModelReply:
        """Any other message to a film runs its graph again, which asks once for the stale nodes and makes only
        those. A CHANGE ("make the fox red instead") is first written into the character sheet node's
        direction, so the sheet and everything made from it (key frames, clips, the cut) go stale."""
        kept = [{"id": s["id"], "title": s["title"], "tool": s.get("tool"), "args": s.get("args"),
                 "needs_confirmation": s.get("needs_confirmation", False)} for s in self.steps]
        title = phrase("step_update_film", self.lang)
        if change:
            kept += [{"title": f"{title}: {phrase('step_read_flow', self.lang)}", "tool": "read_flow",
                      "args": {"path": graph}},
                     {"title": f"{title}: {change[:60]}", "tool": "edit_flow_nodes",
                      "args": {"path": graph, "edits": {"character": {"direction": change}},
                               "base_version": "$version"}}]
        kept.append({"title": title, "tool": "run_production", "args": {"path": graph}})
        return ModelReply(content=phrase("generating", self.lang, what=title),
                          tool_calls=[ToolCall("update_plan", {"steps": kept})])

    def revise_shot(self, text: str, graph: str, shot: int) -> ModelReply:
        """"change shot 2 to …" edits that shot's key frame node (its direction); "regenerate shot 2 only" makes
        its clip node again (a new take). Either way the graph then runs, and only the nodes that changed (and the
        cut) are made again."""
        change = None if is_regenerate(text, self.lang) else shot_change(text, self.lang)
        if change:
            edits = {f"shot{shot}_frame": {"direction": change}}
            title = phrase("step_shot_change", self.lang, n=shot)
        else:
            edits = {f"shot{shot}": {"take": len(self.steps) + 1}}
            title = phrase("step_shot_redo", self.lang, n=shot)
        kept = [{"id": s["id"], "title": s["title"], "tool": s.get("tool"), "args": s.get("args"),
                 "needs_confirmation": s.get("needs_confirmation", False)} for s in self.steps]
        kept += [{"title": f"{title}: {phrase('step_read_flow', self.lang)}", "tool": "read_flow",
                  "args": {"path": graph}},
                 {"title": title, "tool": "edit_flow_nodes",
                  "args": {"path": graph, "edits": edits, "base_version": "$version"}},
                 {"title": f"{title}: {phrase('step_update_film', self.lang)}",
                  "tool": "run_production", "args": {"path": graph}}]
        return ModelReply(content=phrase("generating", self.lang, what=title),
                          tool_calls=[ToolCall("update_plan", {"steps": kept})])

    # ---- revisions, one-shots, answers -----------------------------------------------------------------
    def revise(self, text: str, intent: Any) -> ModelReply:
        """B4: a change request becomes a new step that regenerates a piece. A piece the creator points at
        ("the second poster", "that one") is made anew from itself, into its own path (its next version);
        otherwise the latest result is the source of a new piece."""
        kept = [{"id": s["id"], "title": s["title"], "tool": s.get("tool"), "args": s.get("args"),
                 "needs_confirmation": s.get("needs_confirmation", False)} for s in self.steps]
        named = [m for m in media_kinds(text, self.lang) if m in GENERATE]  # "fill in the sound for …": audio
        media = intent.media if intent.media in GENERATE else (named[0] if len(named) == 1 else self.last_media())
        calls = [self.revision_args(text, piece, media) for piece in self.pointed_at(text, media)]
        if not calls:
            # an image is remade from the latest image; a clip takes only pictures as inputs, and its key frame
            # shows the scene before the change, so a changed clip is made from its prompt alone
            inputs = [a for a in self.hints.get("artifacts") or [] if media_of(a) == "image"][:1] \
                if media == "image" else []
            calls = [{"prompt": self.revised_prompt(text), **({"inputs": inputs} if inputs else {})}]
            seconds = next((s["args"].get("seconds") for s in reversed(self.steps) if s.get("tool") == GENERATE[media]
                            and isinstance(s.get("args"), dict) and s["args"].get("seconds")), None)
            if seconds and media in ("video", "audio"):
                calls[0]["seconds"] = seconds  # a changed clip keeps its length
        title = f"{phrase('step_revise', self.lang)}: {text[:60]}"
        revisions = [{"title": title, "tool": GENERATE[media], "args": args} for args in calls]
        reviews = [i for i, s in enumerate(self.steps) if s.get("needs_confirmation") and s["state"] == "pending"]
        at = reviews[0] if reviews else len(kept)
        kept[at:at] = revisions  # before the creator's review
        if self.hints.get("task_kind") == "lightweight":
            return ModelReply(content=phrase("generating", self.lang, what=text),
                              tool_calls=[ToolCall(GENERATE[media], args) for args in calls])
        return ModelReply(content=phrase("generating", self.lang, what=text),
                          tool_calls=[ToolCall("update_plan", {"steps": kept})])

    def series(self, media: str) -> list[str]:
        """The task's pieces of MEDIA in series order: the checklist's order, then any others oldest first."""
        ordered = [a for s in sorted(self.steps, key=lambda s: s.get("n", 0)) for a in s.get("artifacts") or []]
        ordered += list(reversed(self.hints.get("artifacts") or []))
        return [p for p in dict.fromkeys(ordered) if media_of(p) == media]

    def pointed_at(self, text: str, media: str) -> list[str]:
        """The pieces TEXT names by position or reference, in series order (none when it names none)."""
        reference = find_reference(text, self.lang)
        if reference is None or media not in ("image", "video"):
            return []
        recent = [p for p in self.hints.get("artifacts") or [] if media_of(p) == media]
        return reference.pick(self.series(media), recent)

    def revision_args(self, text: str, piece: str, media: str) -> dict[str, Any]:
        """A generation that remakes PIECE from itself into its own path, prompted as it was plus the change."""
        made_by = next((s for s in sorted(self.steps, key=lambda s: s.get("n", 0))
                        if piece in (s.get("artifacts") or []) and isinstance(s.get("args"), dict)
                        and s["args"].get("prompt")), None)
        base = made_by["args"]["prompt"] if made_by else ""
        args: dict[str, Any] = {"prompt": f"{base}, {text}" if base else text, "inputs": [piece], "output": piece}
        if made_by and media == "image" and made_by["args"].get("size"):
            args["size"] = made_by["args"]["size"]
        if made_by and media == "video" and made_by["args"].get("seconds"):
            args["seconds"] = made_by["args"]["seconds"]
        return args

    def one_shot(self, text: str, intent: Any) -> ModelReply:
        media = intent.media if intent.media in GENERATE else "image"
        args: dict[str, Any] = {"prompt": text}
        if intent.seconds and media in ("video", "audio"):
            args["seconds"] = intent.seconds
        if intent.needs_source and media in ("image", "video") and self.source([]):
            args["inputs"] = [self.source([])]
        if intent.needs_source and self.last_prompt():  # "make it bluer": the change, on what it changes
            args["prompt"] = f"{self.last_prompt()}, {text}"
        if intent.output and intent.output.lower().endswith(OUTPUT_EXT.get(media, ())):
            args["output"] = intent.output  # the name the creator asked for ("make perfume.png")
        return ModelReply(content=phrase("generating", self.lang, what=intent.subject or text),
                          tool_calls=[ToolCall(GENERATE[media], args)])

    def revised_prompt(self, text: str) -> str:
        base = next((s.get("args", {}).get("prompt") for s in reversed(self.steps)
                     if isinstance(s.get("args"), dict) and s["args"].get("prompt")), "")
        base = base or self.last_prompt()  # a one-shot has no checklist: its last order is what is being changed
        return f"{base}, {text}" if base else text

    def last_prompt(self) -> str:
        """The prompt of the newest generation this task ordered (from its history)."""
        for message in reversed(self.request.messages):
            for call in reversed(message.get("tool_calls") or [] if message["role"] == "assistant" else []):
                if call["function"]["name"] in PARALLEL:
                    try:
                        args = json.loads(call["function"].get("arguments") or "{}")
                    except json.JSONDecodeError:
                        continue
                    if isinstance(args, dict) and args.get("prompt"):
                        return str(args["prompt"])
        return ""

    def last_media(self) -> str:
        for step in reversed(self.steps):
            for media, tool in GENERATE.items():
                if step.get("tool") == tool:
                    return media
        made = [media_of(a) for a in self.hints.get("artifacts") or []]  # a one-shot has no checklist of its own
        return next((m for m in made if m in GENERATE), "image")

    def status(self) -> ModelReply:
        done = sum(1 for s in self.steps if s["state"] in ("done", "skipped"))
        return ModelReply(content=f"{self.title()}: {done}/{len(self.steps)} — {self.made_list()}")

    def done(self) -> ModelReply:
        made = self.made_list()
        text = phrase("all_done", self.lang, title=self.title())
        return ModelReply(content=f"{text}\n{made}" if made else text)

    def title(self) -> str:
        return str(self.hints.get("title") or "")

    def made_list(self) -> str:
        return ", ".join(self.hints.get("artifacts") or [])
