"""Context engineering (DESIGN E1–E4): what a step's model call sees, within a token budget.

- `tokens`: cheap token estimates for the hot path.
- `budget`: the per-step budget (model window, reply room, config overrides).
- `outputs`: large tool results kept outside the context, paged back by handle.
- `summaries`: appended history summary segments (extractive offline, a model call remotely).
- `domains`: which tool domains a step sees (core always; others on demand).
- `assemble`: the layers, stable first, and where the provider cache breakpoints go.
"""
