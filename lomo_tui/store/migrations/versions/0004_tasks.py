"""Checklists and their artifact links, routing memory, task search (FTS5 on SQLite), progress counters.

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# search_text holds language-aware keywords (word stems, CJK bigrams) written by the application, so
# one plain unicode61 index serves every language.
FTS_SQL = [
    "CREATE VIRTUAL TABLE tasks_fts USING fts5(search_text, content='tasks', content_rowid='rowid', "
    "tokenize='unicode61')",
    "CREATE TRIGGER tasks_fts_ai AFTER INSERT ON tasks BEGIN INSERT INTO tasks_fts(rowid, search_text) "
    "VALUES (new.rowid, new.search_text); END",
    "CREATE TRIGGER tasks_fts_ad AFTER DELETE ON tasks BEGIN INSERT INTO tasks_fts(tasks_fts, rowid, search_text) "
    "VALUES ('delete', old.rowid, old.search_text); END",
    "CREATE TRIGGER tasks_fts_au AFTER UPDATE OF search_text ON tasks BEGIN INSERT INTO tasks_fts(tasks_fts, rowid, "
    "search_text) VALUES ('delete', old.rowid, old.search_text); INSERT INTO tasks_fts(rowid, search_text) "
    "VALUES (new.rowid, new.search_text); END",
    "INSERT INTO tasks_fts(tasks_fts) VALUES ('rebuild')",
]


def upgrade() -> None:
    op.create_table(
        "checklist",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("needs_confirmation", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("tool", sa.String(80)),
        sa.Column("args", sa.JSON),
        sa.Column("evidence", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("done_at", sa.Float),
    )
    op.create_index("ix_checklist_task", "checklist", ["task_id", "position"])
    op.create_table(
        "checklist_links",
        sa.Column("item_id", sa.String(40), sa.ForeignKey("checklist.id"), primary_key=True),
        sa.Column("object_id", sa.String(40), sa.ForeignKey("objects.id"), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "route_memory",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("keywords", sa.Text, nullable=False),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("idle_turns", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("source_inbox", sa.String(40)))
        batch.add_column(sa.Column("search_text", sa.Text, nullable=False, server_default=""))
    if op.get_bind().dialect.name == "sqlite":
        for statement in FTS_SQL:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS tasks_fts")
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("search_text")
        batch.drop_column("source_inbox")
        batch.drop_column("idle_turns")
    for name in ("route_memory", "checklist_links", "checklist"):
        op.drop_table(name)
