"""Memory with sources, versions and real forgetting (DESIGN F1–F5, seed §7).

Layers: evidence (the creator's messages), atomic memories and their versions, episodic summaries,
a small versioned creator profile. See `extract` (what is remembered), `store` (the layers),
`recall` (what a step carries), `forget` (the cascade) and `service` (where the runtime calls in).
"""
from __future__ import annotations

from .forget import complete_pending, forget
from .models import MemoryModels
from .recall import (RECALL_TIMEOUT, Recalled, excluded_message_ids, forgets_done, profile_snapshot,
                     profile_with_versions, recall_for_step, record_context_use, render_recall)
from .service import maintain, record_creator_message

__all__ = ["MemoryModels", "RECALL_TIMEOUT", "Recalled", "complete_pending", "excluded_message_ids", "forget",
           "forgets_done", "maintain", "profile_snapshot", "profile_with_versions", "recall_for_step",
           "record_context_use", "record_creator_message", "render_recall"]
