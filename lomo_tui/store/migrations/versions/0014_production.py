"""Production graphs (DESIGN I1): each graph node's latest result, keyed by a hash of its inputs and params.

Revision ID: 0014
Revises: 0013
"""
import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "production_nodes",
        sa.Column("workspace", sa.Text, primary_key=True),
        sa.Column("graph", sa.Text, primary_key=True),
        sa.Column("node_id", sa.String(80), primary_key=True),
        sa.Column("task_id", sa.String(40)),
        sa.Column("type", sa.String(24), nullable=False),
        sa.Column("key", sa.String(64)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("job_id", sa.String(40)),
        sa.Column("artifact", sa.Text),
        sa.Column("runs", sa.Integer, nullable=False, server_default="0"),
        sa.Column("approved", sa.String(40)),
        sa.Column("error", sa.Text),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_production_nodes_task", "production_nodes", ["task_id"])


def downgrade() -> None:
    op.drop_index("ix_production_nodes_task", "production_nodes")
    op.drop_table("production_nodes")
