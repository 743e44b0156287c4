"""Tasks belong to a workspace: `tasks.workspace_id` is the folder a task was created in. Only a process
serving that folder runs, routes to or shows the task (NULL: the main thread, or a task from before this
revision until a workspace that holds its files adopts it). `inbox.workspace_id` is the folder a message was
typed in: the main thread routes it there.

Revision ID: 0017
Revises: 0016
"""
import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("workspace_id", sa.String(40)))
    op.create_index("ix_tasks_workspace", "tasks", ["workspace_id"])
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("workspace_id", sa.String(40)))


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("workspace_id")
    op.drop_index("ix_tasks_workspace", "tasks")
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("workspace_id")
