"""Alembic migrations, shipped inside the package and configured in code (no alembic.ini)."""
