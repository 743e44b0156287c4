"""Lomo TUI — a local-first creative agent that lives in the terminal."""

__version__ = "0.1.0"
