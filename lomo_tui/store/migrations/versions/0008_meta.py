"""A small key-value table for facts about the database itself (e.g. which keyword scheme the
tasks' search_text was written with).

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("meta", sa.Column("key", sa.String(64), primary_key=True),
                    sa.Column("value", sa.Text, nullable=False))


def downgrade() -> None:
    op.drop_table("meta")
