"""What a tool body may use: a narrow, typed set of services (#11 §8), instead of the whole runtime.

The runtime builds one per call (`Runtime.tool_services()`), so a service it swapped (a test's studio or
budget) is the one the tool sees. A tool needing something else gets a field here, not the runtime.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..language import Carried

if TYPE_CHECKING:
    from ..config import Settings
    from ..faults import Faults
    from ..governance.budget import Budget
    from ..ledger import Ledger
    from ..store.engine import Database
    from ..studio.service import Studio
    from ..workspace.objects import Workspace
    from .registry import Registry


@dataclass(frozen=True)
class Services:
    db: Database  # reads (`db.read()`); writes on a turn's behalf go through `ledger.fenced(claim)`
    ledger: Ledger
    workspace: Workspace
    studio: Studio
    budget: Budget
    registry: Registry  # the tools themselves (load_tools lists a domain's)
    after_commit_wake: Callable[[str], None]  # wake a task's queued turn once the caller's transaction committed
    settings: Settings  # the workspace folder and `[section] key` values (production.concurrency)
    faults: Faults  # fault points for drills (LOMO_FAULTS): a production graph's after_node_ordered/made
    messages: Carried = field(default_factory=Carried)  # creators' messages as parsed on arrival, by id
