"""Indexes for what every step reads: a task's spend, today's spend, the most recently changed media.

Without them the budget line and the workspace view in each step's context scanned every charge and
every object, so a step slowed down as the workspace and its history grew.

Revision ID: 0007
Revises: 0006
"""
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_charges_task", "charges", ["task_id"])
    op.create_index("ix_charges_created", "charges", ["created_at"])
    op.create_index("ix_objects_updated", "objects", ["updated_at"])


def downgrade() -> None:
    op.drop_index("ix_objects_updated", "objects")
    op.drop_index("ix_charges_created", "charges")
    op.drop_index("ix_charges_task", "charges")
