"""Step evidence (DESIGN J2, J4): structured, checkable reasons a checklist step is done.

Steps already done keep their free-text evidence; they have no rows here (the metrics count them as claimed,
not verified).

Revision ID: 0015
Revises: 0014
"""
import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "step_evidence",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("item_id", sa.String(40), sa.ForeignKey("checklist.id"), nullable=False),
        sa.Column("transition", sa.String(40), nullable=False),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("job_id", sa.String(40)),
        sa.Column("gate_id", sa.String(40)),
        sa.Column("tool_call_id", sa.String(120)),
        sa.Column("object_id", sa.String(40)),
        sa.Column("version", sa.Integer),
        sa.Column("goal_version", sa.Integer),
        sa.Column("checks", sa.JSON),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("status", sa.String(16), nullable=False, server_default="valid"),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("produced_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float),
    )
    op.create_index("ix_step_evidence_item", "step_evidence", ["item_id"])
    op.create_index("ix_step_evidence_object", "step_evidence", ["object_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_step_evidence_object", "step_evidence")
    op.drop_index("ix_step_evidence_item", "step_evidence")
    op.drop_table("step_evidence")
