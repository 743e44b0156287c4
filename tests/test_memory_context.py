"""Memory reaches the model's context (E1, F4): the profile rides in the stable prefix of every task's next
step, and after a forget no trace of it is in any task's next prompt."""
from __future__ import annotations

import json

from conftest import LomoEnv

CANARY = "zebra-stripe teal"


def context_text(lomo: LomoEnv, task_id: str | None = None) -> str:
    proc = lomo.run("context", *([task_id] if task_id else []), "--json", model="lomo/local")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return "\n".join(m["content"] or "" for m in doc["messages"])


def test_a_stated_preference_is_in_every_tasks_prompt_until_it_is_forgotten(lomo: LomoEnv) -> None:
    said = lomo.run("--run-once", f"I always prefer {CANARY} palettes", "--json", model="lomo/local")
    assert said.returncode == 0, said.stderr
    task = lomo.new_task("Poster series")
    assert CANARY in context_text(lomo, task)
    assert CANARY in context_text(lomo)  # the main thread's next step too

    [memory] = json.loads(lomo.run("memory", "list", "--json", model="lomo/local").stdout)
    gone = lomo.run("memory", "forget", memory["id"], "--yes", "--json", model="lomo/local")
    assert gone.returncode == 0, gone.stderr
    assert CANARY not in context_text(lomo, task)
