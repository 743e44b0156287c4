"""Memory (DESIGN F1–F5): evidence, atomic memories and their versions, evidence and derivation links,
suppressions, episodic summaries, the creator profile, context uses, forget cascades; FTS5 on SQLite.

The tables are created from `store/schema.py`'s memory block as it stood at this revision (a later
change to them needs a migration of its own).

Revision ID: 0012
Revises: 0008
"""
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

TABLES = ("memory_evidence", "memories", "memory_versions", "memory_evidence_links", "memory_derivations",
          "memory_suppressions", "memory_summaries", "memory_profiles", "memory_context_uses", "memory_forgets")

# A plain (content-keeping) FTS5 table keyed by version id: rows are deleted explicitly when a version
# stops being active, and the index is optimised after a forget so no segment keeps the old terms.
FTS_SQL = "CREATE VIRTUAL TABLE memory_fts USING fts5(version_id UNINDEXED, search_text, tokenize='unicode61')"


def upgrade() -> None:
    from lomo_tui.store import schema

    bind = op.get_bind()
    for name in TABLES:
        schema.metadata.tables[name].create(bind)
    if bind.dialect.name == "sqlite":
        op.execute(FTS_SQL)


def downgrade() -> None:
    from lomo_tui.store import schema

    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS memory_fts")
    for name in reversed(TABLES):
        schema.metadata.tables[name].drop(bind)
