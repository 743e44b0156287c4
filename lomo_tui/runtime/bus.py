"""Old path of lomo_tui.base.bus (moved with #11 §8); import from there."""
from ..base.bus import *  # noqa: F401,F403
