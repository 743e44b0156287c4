"""Workspace objects, versions, task references and change notices.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "objects",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("deleted", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("last_author", sa.String(16), nullable=False),
        sa.Column("last_task_id", sa.String(40)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_objects_path", "objects", ["path"])
    op.create_table(
        "object_versions",
        sa.Column("object_id", sa.String(40), sa.ForeignKey("objects.id"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("author", sa.String(16), nullable=False),
        sa.Column("task_id", sa.String(40)),
        sa.Column("idempotency_key", sa.String(120)),
        sa.Column("content", sa.Text),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_object_versions_key", "object_versions", ["idempotency_key"])
    op.create_table(
        "task_objects",
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), primary_key=True),
        sa.Column("object_id", sa.String(40), sa.ForeignKey("objects.id"), primary_key=True),
        sa.Column("last_read_version", sa.Integer),
        sa.Column("last_written_version", sa.Integer),
        sa.Column("role", sa.String(16), nullable=False, server_default="ref"),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_table(
        "notices",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("object_id", sa.String(40), sa.ForeignKey("objects.id"), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("from_version", sa.Integer, nullable=False),
        sa.Column("to_version", sa.Integer, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="open"),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_notices_task", "notices", ["task_id", "status"])


def downgrade() -> None:
    for name in ("notices", "task_objects", "object_versions", "objects"):
        op.drop_table(name)
