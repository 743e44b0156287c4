"""What a suspended turn waits for, call by call (the gates and jobs its step's calls were parked on).

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("wait_refs", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("wait_refs")
