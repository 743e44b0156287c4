"""Core ledger: tasks, messages, inbox, turns, steps, tool calls, model calls, events, gates.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("goal", sa.Text, nullable=False, server_default=""),
        sa.Column("brief", sa.Text, nullable=False, server_default=""),
        sa.Column("language", sa.String(8), nullable=False, server_default="en"),
        sa.Column("summary", sa.Text, nullable=False, server_default=""),
        sa.Column("status_reason", sa.Text, nullable=False, server_default=""),
        sa.Column("epoch", sa.Integer, nullable=False, server_default="0"),
        sa.Column("archived", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("revisions", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_tasks_updated", "tasks", ["updated_at"])
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("turn_id", sa.String(40)),
        sa.Column("step", sa.Integer),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text),
        sa.Column("tool_calls", sa.JSON),
        sa.Column("tool_call_id", sa.String(120)),
        sa.Column("name", sa.String(80)),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_messages_task", "messages", ["task_id", "id"])
    op.create_table(
        "inbox",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("source", sa.String(16), nullable=False, server_default="creator"),
        sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("sent_at", sa.Float, nullable=False),
        sa.Column("consumed_turn", sa.String(40)),
        sa.Column("consumed_step", sa.Integer),
        sa.Column("consumed_at", sa.Float),
        sa.Column("replaces", sa.String(40)),
        sa.Column("origin", sa.String(40)),
    )
    op.create_index("ix_inbox_task_status", "inbox", ["task_id", "status"])
    op.create_table(
        "turns",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lease_owner", sa.String(120)),
        sa.Column("lease_expires", sa.Float),
        sa.Column("checkpoint", sa.Integer, nullable=False, server_default="0"),
        sa.Column("steps", sa.Integer, nullable=False, server_default="0"),
        sa.Column("model_calls", sa.Integer, nullable=False, server_default="0"),
        sa.Column("crash_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("wait_kind", sa.String(16)),
        sa.Column("wait_ref", sa.String(120)),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
    )
    op.create_index("ix_turns_status", "turns", ["status"])
    op.create_index("ix_turns_task", "turns", ["task_id"])
    op.create_table(
        "steps",
        sa.Column("turn_id", sa.String(40), sa.ForeignKey("turns.id"), primary_key=True),
        sa.Column("step", sa.Integer, primary_key=True),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("decision", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "tool_calls",
        sa.Column("id", sa.String(120), primary_key=True),
        sa.Column("turn_id", sa.String(40), sa.ForeignKey("turns.id"), nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("arguments", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("result", sa.JSON),
        sa.Column("idempotency_key", sa.String(120), nullable=False),
        sa.Column("executions", sa.Integer, nullable=False, server_default="0"),
        sa.Column("side_effect", sa.String(16), nullable=False, server_default="read"),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
        sa.UniqueConstraint("turn_id", "step", "seq", name="uq_tool_calls_position"),
    )
    op.create_table(
        "model_calls",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(40)),
        sa.Column("turn_id", sa.String(40)),
        sa.Column("step", sa.Integer),
        sa.Column("purpose", sa.String(16), nullable=False, server_default="worker"),
        sa.Column("model", sa.String(120), nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cached_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cost", sa.Float),
        sa.Column("latency_ms", sa.Float, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("task_id", sa.String(40)),
        sa.Column("turn_id", sa.String(40)),
        sa.Column("data", sa.JSON),
    )
    op.create_index("ix_events_task", "events", ["task_id"])
    op.create_table(
        "gates",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id")),
        sa.Column("turn_id", sa.String(40)),
        sa.Column("tool_call_id", sa.String(120)),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("scope", sa.JSON),
        sa.Column("continues", sa.Text, nullable=False, server_default=""),
        sa.Column("dedupe_key", sa.String(160), unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("resolved_at", sa.Float),
        sa.Column("resolution", sa.JSON),
        sa.Column("resolved_by", sa.String(80)),
    )
    op.create_index("ix_gates_status", "gates", ["status"])


def downgrade() -> None:
    for name in ("gates", "events", "model_calls", "tool_calls", "steps", "turns", "inbox", "messages", "tasks"):
        op.drop_table(name)
