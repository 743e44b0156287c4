"""Widgets of the Lomo TUI. Each module is small and imported by the screen that shows it."""
