"""Summary vectors of tasks, for semantic retrieval when an embedding model is configured.

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "task_vectors",
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), primary_key=True),
        sa.Column("model", sa.String(160), nullable=False),
        sa.Column("digest", sa.String(40), nullable=False),
        sa.Column("vector", sa.JSON, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("task_vectors")
