"""Lomo's own reasons for a goal version (`task_goal_versions.why`) are stored as catalogue text, worded in the
language of whoever reads them; rows written before this revision hold them as English words, which become
the same catalogue text. A creator's own words stay as they wrote them.

Revision ID: 0018
Revises: 0017
"""
import json

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

# the English each reason was stored as before, and its catalogue key
REASONS = {
    "the task was created": "goal_why.created",
    "the plan was revised": "goal_why.plan_revised",
    "changed by the creator": "goal_why.creator_changed",
}


def _stored(key: str) -> str:
    return json.dumps({"fields": {}, "key": key}, ensure_ascii=False, sort_keys=True)


def upgrade() -> None:
    table = sa.table("task_goal_versions", sa.column("why", sa.Text))
    for words, key in REASONS.items():
        op.execute(table.update().where(table.c.why == words).values(why=_stored(key)))


def downgrade() -> None:
    table = sa.table("task_goal_versions", sa.column("why", sa.Text))
    for words, key in REASONS.items():
        op.execute(table.update().where(table.c.why == _stored(key)).values(why=words))
