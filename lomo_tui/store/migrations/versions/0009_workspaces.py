"""Workspaces get identity; one live object per path in a workspace.

A `workspaces` table (id, real root path), `objects.workspace_id` (NULL for rows from before this
revision: the first workspace opened that holds their files adopts them, see
`workspace.objects.register_workspace`), and a unique index on the live objects' (workspace, path).
Live objects that share a path (left by the races of earlier versions) are merged first into the
oldest: their versions are renumbered in time order (a version repeating the previous one's content
folds into it), and task links, notices and checklist links point at the survivor.

Revision ID: 0009
Revises: 0008
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

VERSION_COLUMNS = ("object_id", "version", "path", "hash", "size", "author", "task_id", "idempotency_key",
                   "content", "created_at")


def upgrade() -> None:
    op.create_table(
        "workspaces",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("root", sa.Text, nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.add_column("objects", sa.Column("workspace_id", sa.String(40)))
    merge_duplicates(op.get_bind())
    op.create_index("uq_objects_live_path", "objects", ["workspace_id", "path"], unique=True,
                    sqlite_where=sa.text("deleted = 0"), postgresql_where=sa.text("deleted = false"))


def downgrade() -> None:
    op.drop_index("uq_objects_live_path", "objects")
    with op.batch_alter_table("objects") as batch:
        batch.drop_column("workspace_id")
    op.drop_table("workspaces")


def merge_duplicates(bind: Any) -> int:
    """Merge every group of live objects sharing a path (and workspace); how many rows went."""
    groups = bind.execute(sa.text(
        "SELECT workspace_id, path FROM objects WHERE deleted = :f GROUP BY workspace_id, path HAVING COUNT(*) > 1"),
        {"f": False}).all()
    removed = 0
    for workspace_id, path in groups:
        same_ws = "workspace_id IS NULL" if workspace_id is None else "workspace_id = :ws"
        ids = [r.id for r in bind.execute(sa.text(
            f"SELECT id FROM objects WHERE deleted = :f AND path = :p AND {same_ws} ORDER BY created_at, id"),
            {"f": False, "p": path, "ws": workspace_id}).all()]
        _merge(bind, ids[0], ids[1:])
        removed += len(ids) - 1
    return removed


def _merge(bind: Any, keep: str, others: list[str]) -> None:
    every = [keep, *others]
    params = {f"o{i}": oid for i, oid in enumerate(every)}
    among = ", ".join(f":o{i}" for i in range(len(every)))
    versions = bind.execute(sa.text(
        f"SELECT {', '.join(VERSION_COLUMNS)} FROM object_versions WHERE object_id IN ({among}) "
        "ORDER BY created_at, version, object_id"), params).all()
    mapping: dict[tuple[str, int], int] = {}
    merged: list[dict[str, Any]] = []
    for row in versions:
        if merged and merged[-1]["hash"] == row.hash:
            mapping[(row.object_id, row.version)] = merged[-1]["version"]
            continue
        record = dict(row._mapping, object_id=keep, version=len(merged) + 1)
        merged.append(record)
        mapping[(row.object_id, row.version)] = record["version"]

    def new_number(object_id: str, version: int | None) -> int | None:
        if version is None:
            return None
        if (object_id, version) in mapping:
            return mapping[(object_id, version)]
        lower = [v for (o, old), v in mapping.items() if o == object_id and old <= version]
        return max(lower) if lower else None

    bind.execute(sa.text(f"DELETE FROM object_versions WHERE object_id IN ({among})"), params)
    if merged:
        bind.execute(sa.text(f"INSERT INTO object_versions ({', '.join(VERSION_COLUMNS)}) VALUES "
                             f"({', '.join(':' + c for c in VERSION_COLUMNS)})"), merged)
        head = merged[-1]
        bind.execute(sa.text("UPDATE objects SET version = :v, hash = :h, size = :s, last_author = :a, "
                             "last_task_id = :t, updated_at = (SELECT MAX(updated_at) FROM objects WHERE id IN "
                             f"({among})) WHERE id = :keep"),
                     dict(params, v=head["version"], h=head["hash"], s=head["size"], a=head["author"],
                          t=head["task_id"], keep=keep))

    links: dict[str, dict[str, Any]] = {}
    for row in bind.execute(sa.text(f"SELECT * FROM task_objects WHERE object_id IN ({among})"), params).all():
        read, written = new_number(row.object_id, row.last_read_version), new_number(row.object_id,
                                                                                     row.last_written_version)
        link = links.setdefault(row.task_id, {"task_id": row.task_id, "object_id": keep, "last_read_version": None,
                                              "last_written_version": None, "role": row.role,
                                              "updated_at": row.updated_at})
        link["last_read_version"] = _most(link["last_read_version"], read)
        link["last_written_version"] = _most(link["last_written_version"], written)
        link["role"] = max(link["role"], row.role, key=("ref", "input", "output").index)
        link["updated_at"] = max(link["updated_at"], row.updated_at)
    bind.execute(sa.text(f"DELETE FROM task_objects WHERE object_id IN ({among})"), params)
    if links:
        bind.execute(sa.text("INSERT INTO task_objects (task_id, object_id, last_read_version, last_written_version,"
                             " role, updated_at) VALUES (:task_id, :object_id, :last_read_version, "
                             ":last_written_version, :role, :updated_at)"), list(links.values()))

    for row in bind.execute(sa.text(f"SELECT id, object_id, from_version, to_version FROM notices "
                                    f"WHERE object_id IN ({among})"), params).all():
        bind.execute(sa.text("UPDATE notices SET object_id = :keep, from_version = :a, to_version = :b WHERE id = :id"),
                     {"keep": keep, "id": row.id, "a": new_number(row.object_id, row.from_version) or row.from_version,
                      "b": new_number(row.object_id, row.to_version) or row.to_version})

    items: dict[str, dict[str, Any]] = {}
    for row in bind.execute(sa.text(f"SELECT * FROM checklist_links WHERE object_id IN ({among})"), params).all():
        version = new_number(row.object_id, row.version) or row.version
        item = items.setdefault(row.item_id, {"item_id": row.item_id, "object_id": keep, "version": version,
                                              "created_at": row.created_at})
        item["version"] = max(item["version"], version)
    bind.execute(sa.text(f"DELETE FROM checklist_links WHERE object_id IN ({among})"), params)
    if items:
        bind.execute(sa.text("INSERT INTO checklist_links (item_id, object_id, version, created_at) VALUES "
                             "(:item_id, :object_id, :version, :created_at)"), list(items.values()))

    gone = {f"g{i}": oid for i, oid in enumerate(others)}
    bind.execute(sa.text(f"DELETE FROM objects WHERE id IN ({', '.join(':' + k for k in gone)})"), gone)


def _most(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)
