"""Alembic environment: runs on the connection the store hands over (never opens its own).

That connection is already inside the store's migration transaction (see store/migrate.py), so Alembic
neither begins nor commits: a revision's DDL and its alembic_version bump commit together, or not at all."""
from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=True, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
