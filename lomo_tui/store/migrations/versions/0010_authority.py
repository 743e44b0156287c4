"""Money and authority: how a cancelled job's cancellation reached its provider; gate deadlines.

Revision ID: 0010
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("cancel_state", sa.String(16)))
    with op.batch_alter_table("gates") as batch:
        batch.add_column(sa.Column("deadline", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("gates") as batch:
        batch.drop_column("deadline")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("cancel_state")
