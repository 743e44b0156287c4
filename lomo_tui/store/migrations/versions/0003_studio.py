"""Studio jobs, charges and authorisations; a task's autonomy level.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("workspace", sa.Text, nullable=False),
        sa.Column("idempotency_key", sa.String(120), nullable=False),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id")),
        sa.Column("turn_id", sa.String(40)),
        sa.Column("step", sa.Integer),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("provider", sa.String(80), nullable=False),
        sa.Column("provider_job_id", sa.String(160)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("progress", sa.Float, nullable=False, server_default="0"),
        sa.Column("event_seq", sa.Integer, nullable=False, server_default="0"),
        sa.Column("prompt", sa.Text, nullable=False, server_default=""),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("cost", sa.Float, nullable=False, server_default="0"),
        sa.Column("artifact_path", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("deadline", sa.Float, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
        sa.UniqueConstraint("workspace", "idempotency_key", name="uq_jobs_workspace_key"),
    )
    op.create_index("ix_jobs_status", "jobs", ["status"])
    op.create_table(
        "charges",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("job_id", sa.String(40), sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("task_id", sa.String(40)),
        sa.Column("amount", sa.Float, nullable=False),
        sa.Column("currency", sa.String(16), nullable=False, server_default="credits"),
        sa.Column("idempotency_key", sa.String(120), nullable=False, unique=True),
        sa.Column("status", sa.String(16), nullable=False, server_default="charged"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("refunded_at", sa.Float),
    )
    op.create_table(
        "authorisations",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task_id", sa.String(40), sa.ForeignKey("tasks.id")),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("idempotency_key", sa.String(120)),
        sa.Column("amount", sa.Float, nullable=False),
        sa.Column("gate_id", sa.String(40)),
        sa.Column("granted_by", sa.String(80), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float),
    )
    op.create_index("ix_authorisations_task", "authorisations", ["task_id"])
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("autonomy", sa.String(16), nullable=False, server_default="plan"))


def downgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("autonomy")
    for name in ("authorisations", "charges", "jobs"):
        op.drop_table(name)
