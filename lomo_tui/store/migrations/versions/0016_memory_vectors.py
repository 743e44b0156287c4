"""Memory vectors (F1 recall): one embedding per active memory version when `memory.embedding_model` is
set; rows are deleted in the same transaction that supersedes or forgets their version.

Revision ID: 0016
Revises: 0015
"""
import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_vectors",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("version_id", sa.String(40), nullable=False, unique=True),
        sa.Column("model", sa.String(160), nullable=False),
        sa.Column("vector", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("memory_vectors")
