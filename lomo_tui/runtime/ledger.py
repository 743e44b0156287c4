"""Old path of lomo_tui.ledger (moved with #11 §8); import from there."""
from ..ledger.core import *  # noqa: F401,F403
from ..ledger.core import Claim, Ledger, StartedCall, ensure_turn, now  # noqa: F401
