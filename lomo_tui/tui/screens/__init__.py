"""Screens, each with its .tcss beside it. The task view, previews and dialogs are imported only
when first opened."""
