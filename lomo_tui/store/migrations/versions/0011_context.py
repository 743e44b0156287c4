"""Context engineering (E1–E4): appended history summary segments, each linked to the message ids it
covers (one per span: unique start), and the cache-write tokens of each model call.

Revision ID: 0011
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "context_summaries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("from_message", sa.Integer, nullable=False),
        sa.Column("to_message", sa.Integer, nullable=False),
        sa.Column("messages", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("model", sa.String(120)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("task_id", "from_message", name="uq_context_summaries_span"),
    )
    op.create_index("ix_context_summaries_task", "context_summaries", ["task_id", "to_message"])
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(sa.Column("cache_write_tokens", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_column("cache_write_tokens")
    op.drop_index("ix_context_summaries_task", "context_summaries")
    op.drop_table("context_summaries")
