"""Tables (SQLAlchemy Core). The database is the source of truth for everything the runtime does.

Times are UNIX seconds (float). JSON columns hold decisions, arguments, results and event data.
Migrations in `store/migrations/versions` create these; keep both in step.
"""
from __future__ import annotations

from sqlalchemy import (JSON, Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text,
                        UniqueConstraint, false, true)

metadata = MetaData()

tasks = Table(
    "tasks", metadata,
    Column("id", String(40), primary_key=True),
    Column("kind", String(16), nullable=False),  # main | lightweight | persistent
    Column("status", String(24), nullable=False),
    Column("title", Text, nullable=False),
    Column("goal", Text, nullable=False, server_default=""),
    Column("brief", Text, nullable=False, server_default=""),
    Column("language", String(8), nullable=False, server_default="en"),
    Column("summary", Text, nullable=False, server_default=""),
    Column("status_reason", Text, nullable=False, server_default=""),
    Column("epoch", Integer, nullable=False, server_default="0"),
    Column("archived", Boolean, nullable=False, server_default=false()),
    Column("revisions", Integer, nullable=False, server_default="0"),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("autonomy", String(16), nullable=False, server_default="plan"),  # ask | plan | auto (0003)
    Column("idle_turns", Integer, nullable=False, server_default="0"),  # turns in a row without progress (0004)
    Column("source_inbox", String(40)),  # the creator's message that started it (0004)
    Column("search_text", Text, nullable=False, server_default=""),  # keywords for FTS (0004)
)
Index("ix_tasks_updated", tasks.c.updated_at)

messages = Table(
    "messages", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("turn_id", String(40)),
    Column("step", Integer),
    Column("role", String(16), nullable=False),  # user | assistant | tool | system
    Column("content", Text),
    Column("tool_calls", JSON),
    Column("tool_call_id", String(120)),
    Column("name", String(80)),
    Column("created_at", Float, nullable=False),
)
Index("ix_messages_task", messages.c.task_id, messages.c.id)
# messages.name of a note the runtime writes to the model (a held call has run): role "system", never "user" —
# the creator did not say it. (Rows before this was fixed have role "user"; readers treat the name as the mark.)
RUNTIME_NOTE = "lomo"

inbox = Table(
    "inbox", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("text", Text, nullable=False),
    Column("source", String(16), nullable=False, server_default="creator"),
    Column("status", String(16), nullable=False, server_default="pending"),  # pending | consumed | withdrawn
    Column("sent_at", Float, nullable=False),
    Column("consumed_turn", String(40)),
    Column("consumed_step", Integer),
    Column("consumed_at", Float),
    Column("replaces", String(40)),
    Column("origin", String(40)),  # the inbox id this message was routed from (main thread)
)
Index("ix_inbox_task_status", inbox.c.task_id, inbox.c.status)

turns = Table(
    "turns", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("status", String(16), nullable=False),  # queued | running | waiting | completed | failed | stopped
    Column("epoch", Integer, nullable=False, server_default="0"),
    Column("lease_owner", String(120)),
    Column("lease_expires", Float),
    Column("checkpoint", Integer, nullable=False, server_default="0"),
    Column("steps", Integer, nullable=False, server_default="0"),
    Column("model_calls", Integer, nullable=False, server_default="0"),
    Column("crash_count", Integer, nullable=False, server_default="0"),
    Column("wait_kind", String(16)),
    Column("wait_ref", String(120)),
    Column("wait_refs", JSON),  # [{"kind": "gate"|"job", "ref": id}] a step's calls were parked on (0006)
    Column("reason", Text, nullable=False, server_default=""),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("finished_at", Float),
)
Index("ix_turns_status", turns.c.status)
Index("ix_turns_task", turns.c.task_id)

steps = Table(
    "steps", metadata,
    Column("turn_id", String(40), ForeignKey("turns.id"), primary_key=True),
    Column("step", Integer, primary_key=True),
    Column("epoch", Integer, nullable=False),
    Column("decision", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
)

tool_calls = Table(
    "tool_calls", metadata,
    Column("id", String(120), primary_key=True),  # turn/step/seq
    Column("turn_id", String(40), ForeignKey("turns.id"), nullable=False),
    Column("step", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("name", String(80), nullable=False),
    Column("arguments", JSON, nullable=False),
    Column("status", String(20), nullable=False),  # started | done | outcome_unknown | failed
    Column("result", JSON),
    Column("idempotency_key", String(120), nullable=False),
    Column("executions", Integer, nullable=False, server_default="0"),
    Column("side_effect", String(16), nullable=False, server_default="read"),
    Column("epoch", Integer, nullable=False),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    UniqueConstraint("turn_id", "step", "seq", name="uq_tool_calls_position"),
)

model_calls = Table(
    "model_calls", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(40)),
    Column("turn_id", String(40)),
    Column("step", Integer),
    Column("purpose", String(16), nullable=False, server_default="worker"),
    Column("model", String(120), nullable=False),
    Column("prompt_tokens", Integer, nullable=False, server_default="0"),
    Column("completion_tokens", Integer, nullable=False, server_default="0"),
    Column("cached_tokens", Integer, nullable=False, server_default="0"),
    Column("cost", Float),
    Column("latency_ms", Float, nullable=False, server_default="0"),
    Column("created_at", Float, nullable=False),
)

events = Table(
    "events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("type", String(40), nullable=False),
    Column("at", Float, nullable=False),
    Column("task_id", String(40)),
    Column("turn_id", String(40)),
    Column("data", JSON),
)
Index("ix_events_task", events.c.task_id)

gates = Table(
    "gates", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), ForeignKey("tasks.id")),
    Column("turn_id", String(40)),
    Column("tool_call_id", String(120)),
    Column("kind", String(16), nullable=False),  # clarify | plan | spend | irreversible | question
    Column("status", String(16), nullable=False, server_default="pending"),
    Column("question", Text, nullable=False),
    Column("options", JSON, nullable=False),  # [{"label", "consequence"}]
    Column("scope", JSON),  # what waits for this gate
    Column("continues", Text, nullable=False, server_default=""),  # what goes on meanwhile
    Column("dedupe_key", String(160), unique=True),
    Column("created_at", Float, nullable=False),
    Column("resolved_at", Float),
    Column("resolution", JSON),
    Column("resolved_by", String(80)),
)
Index("ix_gates_status", gates.c.status)

# ---- workspace (0002) ---------------------------------------------------------------------------
objects = Table(
    "objects", metadata,
    Column("id", String(40), primary_key=True),
    Column("workspace_id", String(40)),  # workspaces.id (0009); NULL only for rows not yet adopted
    Column("path", Text, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("version", Integer, nullable=False),
    Column("hash", String(64), nullable=False),
    Column("size", Integer, nullable=False),
    Column("deleted", Boolean, nullable=False, server_default=false()),
    Column("last_author", String(16), nullable=False),  # creator | agent
    Column("last_task_id", String(40)),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
Index("ix_objects_path", objects.c.path)
# one live object per path in a workspace: migration 0009 makes it partial (WHERE NOT deleted) on SQLite and
# PostgreSQL alike; the condition is named here for SQLite only, since a postgresql_* keyword would load
# SQLAlchemy's PostgreSQL dialect (~30 ms) on every start.
Index("uq_objects_live_path", objects.c.workspace_id, objects.c.path, unique=True,
      sqlite_where=objects.c.deleted == false())
Index("ix_objects_updated", objects.c.updated_at)

object_versions = Table(
    "object_versions", metadata,
    Column("object_id", String(40), ForeignKey("objects.id"), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("path", Text, nullable=False),
    Column("hash", String(64), nullable=False),
    Column("size", Integer, nullable=False),
    Column("author", String(16), nullable=False),
    Column("task_id", String(40)),
    Column("idempotency_key", String(120)),
    Column("content", Text),  # text snapshots (small documents) for diffs and notices
    Column("created_at", Float, nullable=False),
)
Index("ix_object_versions_key", object_versions.c.idempotency_key)

task_objects = Table(
    "task_objects", metadata,
    Column("task_id", String(40), ForeignKey("tasks.id"), primary_key=True),
    Column("object_id", String(40), ForeignKey("objects.id"), primary_key=True),
    Column("last_read_version", Integer),
    Column("last_written_version", Integer),
    Column("role", String(16), nullable=False, server_default="ref"),  # ref | input | output
    Column("updated_at", Float, nullable=False),
)

notices = Table(
    "notices", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("object_id", String(40), ForeignKey("objects.id"), nullable=False),
    Column("path", Text, nullable=False),
    Column("from_version", Integer, nullable=False),
    Column("to_version", Integer, nullable=False),
    Column("summary", Text, nullable=False),
    Column("status", String(16), nullable=False, server_default="open"),  # open | seen
    Column("created_at", Float, nullable=False),
)
Index("ix_notices_task", notices.c.task_id, notices.c.status)

# ---- studio and governance (0003) --------------------------------------------------------------------
jobs = Table(
    "jobs", metadata,
    Column("id", String(40), primary_key=True),
    Column("workspace", Text, nullable=False),
    Column("idempotency_key", String(120), nullable=False),
    Column("task_id", String(40), ForeignKey("tasks.id")),
    Column("turn_id", String(40)),
    Column("step", Integer),
    Column("kind", String(8), nullable=False),  # image | video | 3d | audio
    Column("provider", String(80), nullable=False),
    Column("provider_job_id", String(160)),
    # submitting | queued | running | done | failed | unknown | expired | cancelled
    Column("status", String(16), nullable=False),
    Column("progress", Float, nullable=False, server_default="0"),
    Column("event_seq", Integer, nullable=False, server_default="0"),
    Column("prompt", Text, nullable=False, server_default=""),
    Column("params", JSON, nullable=False),
    Column("cost", Float, nullable=False, server_default="0"),
    Column("artifact_path", Text),
    Column("error", Text),
    Column("deadline", Float, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("finished_at", Float),
    UniqueConstraint("workspace", "idempotency_key", name="uq_jobs_workspace_key"),
)
Index("ix_jobs_status", jobs.c.status)

charges = Table(
    "charges", metadata,
    Column("id", String(40), primary_key=True),
    Column("job_id", String(40), ForeignKey("jobs.id"), nullable=False),
    Column("task_id", String(40)),
    Column("amount", Float, nullable=False),
    Column("currency", String(16), nullable=False, server_default="credits"),
    Column("idempotency_key", String(120), nullable=False, unique=True),
    Column("status", String(16), nullable=False, server_default="charged"),  # charged | refunded
    Column("created_at", Float, nullable=False),
    Column("refunded_at", Float),
)

Index("ix_charges_task", charges.c.task_id)
Index("ix_charges_created", charges.c.created_at)

authorisations = Table(
    "authorisations", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), ForeignKey("tasks.id")),
    Column("scope", String(16), nullable=False),  # call | plan
    Column("idempotency_key", String(120)),  # the call it covers (scope=call)
    Column("amount", Float, nullable=False),
    Column("gate_id", String(40)),
    Column("granted_by", String(80), nullable=False),  # the creator action that granted it
    Column("created_at", Float, nullable=False),
    Column("revoked_at", Float),
)
Index("ix_authorisations_task", authorisations.c.task_id)

# ---- tasks: checklists, routing memory (0004) --------------------------------------------------------
checklist = Table(
    "checklist", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("state", String(16), nullable=False, server_default="pending"),  # pending | active | done | skipped | removed
    Column("needs_confirmation", Boolean, nullable=False, server_default=false()),
    Column("tool", String(80)),
    Column("args", JSON),
    Column("evidence", Text, nullable=False, server_default=""),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("done_at", Float),
)
Index("ix_checklist_task", checklist.c.task_id, checklist.c.position)

checklist_links = Table(
    "checklist_links", metadata,
    Column("item_id", String(40), ForeignKey("checklist.id"), primary_key=True),
    Column("object_id", String(40), ForeignKey("objects.id"), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
)

route_memory = Table(
    "route_memory", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("keywords", Text, nullable=False),  # space-separated keywords of the message that was routed
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("created_at", Float, nullable=False),
)

# ---- semantic retrieval (0005) --------------------------------------------------------------------------
task_vectors = Table(
    "task_vectors", metadata,
    Column("task_id", String(40), ForeignKey("tasks.id"), primary_key=True),
    Column("model", String(160), nullable=False),
    Column("digest", String(40), nullable=False),  # of the text the vector was made from
    Column("vector", JSON, nullable=False),  # unit length
    Column("updated_at", Float, nullable=False),
)

meta = Table(  # facts about the database itself (0008)
    "meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

# ---- workspaces: identity (0009) --------------------------------------------------------------------
workspaces = Table(
    "workspaces", metadata,
    Column("id", String(40), primary_key=True),
    Column("root", Text, nullable=False, unique=True),  # the folder's real path
    Column("created_at", Float, nullable=False),
)

# ---- money and authority (0010): cancelled jobs, gate deadlines -----------------------------------------
# requested | cancelled | unsupported | kept_aside: how far a stop's cancellation reached the provider
jobs.append_column(Column("cancel_state", String(16)))
gates.append_column(Column("deadline", Float))  # when a pending gate expires by itself (None: never)

# ---- context: history summaries, cache usage (0011) ------------------------------------------------------
context_summaries = Table(  # appended summary segments of a task's history (E3); never rewritten
    "context_summaries", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("from_message", Integer, nullable=False),  # first and last messages.id the segment covers
    Column("to_message", Integer, nullable=False),
    Column("messages", Integer, nullable=False),  # how many messages it covers
    Column("text", Text, nullable=False),
    Column("method", String(16), nullable=False),  # extractive | model
    Column("model", String(120)),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("task_id", "from_message", name="uq_context_summaries_span"),
)
Index("ix_context_summaries_task", context_summaries.c.task_id, context_summaries.c.to_message)
model_calls.append_column(Column("cache_write_tokens", Integer, nullable=False, server_default="0"))

# ---- memory: evidence, versions, derivations, summaries, profile (0012) -----------------------------------
memory_evidence = Table(  # the creator's raw messages a memory may stand on; text never rewritten
    "memory_evidence", metadata,
    Column("id", String(40), primary_key=True),  # the inbox message id
    Column("task_id", String(40)),
    Column("source", String(16), nullable=False, server_default="creator"),
    Column("text", Text, nullable=False),
    Column("language", String(8), nullable=False, server_default="en"),
    Column("eligible", Boolean, nullable=False, server_default=true()),  # may memories stand on it (F4 revokes)
    Column("revoked_at", Float),
    Column("extract_status", String(16), nullable=False, server_default="pending"),  # pending | done | failed
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("created_at", Float, nullable=False),
)
Index("ix_memory_evidence_task", memory_evidence.c.task_id)
Index("ix_memory_evidence_extract", memory_evidence.c.extract_status)

memories = Table(
    "memories", metadata,
    Column("id", String(40), primary_key=True),
    Column("kind", String(16), nullable=False),  # preference | fact | constraint
    Column("scope", String(16), nullable=False),  # creator | project | task
    Column("scope_ref", String(40)),  # the task (or project task) a project/task memory belongs to
    Column("stated", Boolean, nullable=False),  # the creator said it (False: inferred by the agent)
    Column("topic", String(40), nullable=False, server_default=""),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
Index("ix_memories_scope_ref", memories.c.scope_ref)

memory_versions = Table(
    "memory_versions", metadata,
    Column("id", String(40), primary_key=True),
    Column("memory_id", String(40), ForeignKey("memories.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # active | superseded | forgotten
    Column("text", Text, nullable=False),  # blanked when forgotten
    Column("search_text", Text, nullable=False, server_default=""),  # keywords (FTS on SQLite), blanked too
    Column("fingerprint", String(32), nullable=False, server_default=""),  # what it says (extract.fingerprint)
    Column("valid_from", Float, nullable=False),
    Column("valid_to", Float),
    Column("created_at", Float, nullable=False),
    Column("forgotten_at", Float),
    UniqueConstraint("memory_id", "version", name="uq_memory_versions"),
)
Index("ix_memory_versions_memory", memory_versions.c.memory_id)
Index("ix_memory_versions_fingerprint", memory_versions.c.fingerprint)

memory_evidence_links = Table(
    "memory_evidence_links", metadata,
    Column("version_id", String(40), ForeignKey("memory_versions.id"), primary_key=True),
    Column("evidence_id", String(40), ForeignKey("memory_evidence.id"), primary_key=True),
    Column("role", String(8), primary_key=True),  # origin | refine | confirm
    Column("created_at", Float, nullable=False),
)
Index("ix_memory_links_evidence", memory_evidence_links.c.evidence_id)

memory_derivations = Table(  # what came from what: version <- version, summary/profile <- version/evidence
    "memory_derivations", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("target_kind", String(8), nullable=False),  # version | summary | profile
    Column("target_id", String(40), nullable=False),
    Column("source_kind", String(8), nullable=False),  # version | evidence
    Column("source_id", String(40), nullable=False),
    Column("created_at", Float, nullable=False),
)
Index("ix_memory_derivations_source", memory_derivations.c.source_kind, memory_derivations.c.source_id)
Index("ix_memory_derivations_target", memory_derivations.c.target_kind, memory_derivations.c.target_id)

memory_suppressions = Table(  # forgotten facts that old evidence (or the model) may not bring back
    "memory_suppressions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("evidence_id", String(40)),
    Column("fingerprint", String(64), nullable=False),
    Column("forget_id", String(40), nullable=False),
    Column("created_at", Float, nullable=False),
)
Index("ix_memory_suppressions_fp", memory_suppressions.c.fingerprint)

memory_summaries = Table(  # episodic: what happened in a finished task
    "memory_summaries", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), nullable=False),
    Column("version", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # active | replaced | forgotten
    Column("text", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)
Index("ix_memory_summaries_task", memory_summaries.c.task_id)

memory_profiles = Table(  # the small creator profile, one row per version
    "memory_profiles", metadata,
    Column("id", String(40), primary_key=True),
    Column("version", Integer, nullable=False, unique=True),
    Column("status", String(16), nullable=False),  # current | replaced | forgotten
    Column("text", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

memory_context_uses = Table(  # which memory versions a step's context carried
    "memory_context_uses", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(40), nullable=False),
    Column("turn_id", String(40)),
    Column("step", Integer),
    Column("version_id", String(40), nullable=False),
    Column("excluded", Boolean, nullable=False, server_default=false()),
    Column("created_at", Float, nullable=False),
)
Index("ix_memory_uses_version", memory_context_uses.c.version_id)
Index("ix_memory_uses_task", memory_context_uses.c.task_id)

memory_forgets = Table(  # a forget request and how far its cascade got (finished at the next start)
    "memory_forgets", metadata,
    Column("id", String(40), primary_key=True),
    Column("request", JSON, nullable=False),  # {"memories": [...], "evidence": [...]}
    Column("status", String(16), nullable=False),  # awaiting_gate | pending | done | cancelled
    Column("stage", Integer, nullable=False, server_default="0"),
    Column("gate_id", String(40)),
    Column("result", JSON),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
Index("ix_memory_forgets_status", memory_forgets.c.status)

memory_vectors = Table(  # (0016) one embedding per active memory version, with `memory.embedding_model` set
    "memory_vectors", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),  # only grows: a reader loads the new ones
    Column("version_id", String(40), nullable=False, unique=True),
    Column("model", String(160), nullable=False),
    Column("vector", JSON, nullable=False),  # unit length
    Column("created_at", Float, nullable=False),
    sqlite_autoincrement=True,
)

# ---- goal versions (0013): every version of a task's goal and brief, who changed it, why, from which message --
task_goal_versions = Table(
    "task_goal_versions", metadata,
    Column("task_id", String(40), ForeignKey("tasks.id"), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("goal", Text, nullable=False),
    Column("brief", Text, nullable=False),
    Column("who", String(80), nullable=False),  # lomo | agent | creator:… — who made the change
    Column("why", Text, nullable=False, server_default=""),
    Column("message_id", String(40)),  # the creator's inbox message the change came from
    Column("at", Float, nullable=False),
)

# ---- production graphs (0014): each node's latest result, keyed by its inputs and params (DESIGN I1) ------------
production_nodes = Table(
    "production_nodes", metadata,
    Column("workspace", Text, primary_key=True),
    Column("graph", Text, primary_key=True),  # the flow file's workspace path
    Column("node_id", String(80), primary_key=True),
    Column("task_id", String(40)),  # the task that last ran it
    Column("type", String(24), nullable=False),
    Column("key", String(64)),  # hash of the node's type, params and inputs that its result was made from
    Column("status", String(16), nullable=False),  # running | done | failed | declined | skipped
    Column("job_id", String(40)),
    Column("artifact", Text),
    Column("runs", Integer, nullable=False, server_default="0"),  # results made (orders placed, cuts written)
    Column("approved", String(40)),  # the card whose approval this node may still spend (consumed on order)
    Column("error", Text),
    Column("updated_at", Float, nullable=False),
)
Index("ix_production_nodes_task", production_nodes.c.task_id)

# ---- step evidence (0015): why the runtime believes a checklist step is done (DESIGN J2, J4) ----------------
# Written by tasks.evidence only: one row per source of one accepted completion (`transition`), or per
# re-validation after what it points at changed. Read by the checklist, the stop check and the metrics.
step_evidence = Table(
    "step_evidence", metadata,
    Column("id", String(40), primary_key=True),
    Column("task_id", String(40), ForeignKey("tasks.id"), nullable=False),
    Column("item_id", String(40), ForeignKey("checklist.id"), nullable=False),
    Column("transition", String(40), nullable=False),  # the accepted completion this row belongs to
    Column("origin", String(16), nullable=False),  # step (the agent's work verified) | revalidation
    Column("kind", String(16), nullable=False),  # job | object_version | creator_answer | read
    Column("job_id", String(40)),
    Column("gate_id", String(40)),
    Column("tool_call_id", String(120)),
    Column("object_id", String(40)),
    Column("version", Integer),  # the object revision the evidence applies to
    Column("goal_version", Integer),  # the goal/brief revision the step was judged under (J1)
    Column("checks", JSON),  # what validation found (kind, size, length, …)
    Column("note", Text, nullable=False, server_default=""),  # the claim's own words, if any
    Column("status", String(16), nullable=False, server_default="valid"),  # valid | stale
    Column("reason", Text, nullable=False, server_default=""),  # why it went stale
    Column("produced_at", Float, nullable=False),
    Column("expires_at", Float),
)
Index("ix_step_evidence_item", step_evidence.c.item_id)
Index("ix_step_evidence_object", step_evidence.c.object_id, step_evidence.c.status)

# ---- tasks belong to a workspace (0017) ------------------------------------------------------------------
# The folder a task was created in (workspaces.id); NULL for the main thread and for tasks from before 0017
# that no workspace holding their files has adopted yet. Only a process serving that folder runs, routes to
# or shows the task (lomo_tui.workspace.scope).
tasks.append_column(Column("workspace_id", String(40)))
Index("ix_tasks_workspace", tasks.c.workspace_id)
# The folder a message was typed in: the main thread routes it only from there, among that folder's tasks.
inbox.append_column(Column("workspace_id", String(40)))
