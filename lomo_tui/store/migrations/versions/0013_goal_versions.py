"""Goal versions (DESIGN J1): every version of a task's goal and brief, with who, why and the message.

Each existing task gets its version 1: the goal and brief as they stood when versions began.

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

SEED = ("INSERT INTO task_goal_versions (task_id, version, goal, brief, who, why, message_id, at) "
        "SELECT id, 1, goal, brief, 'lomo', 'as it stood when goal versions began', source_inbox, updated_at "
        "FROM tasks")


def upgrade() -> None:
    op.create_table(
        "task_goal_versions",
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("goal", sa.Text, nullable=False),
        sa.Column("brief", sa.Text, nullable=False),
        sa.Column("who", sa.String(80), nullable=False),
        sa.Column("why", sa.Text, nullable=False, server_default=""),
        sa.Column("message_id", sa.String(40)),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.execute(SEED)


def downgrade() -> None:
    op.drop_table("task_goal_versions")
