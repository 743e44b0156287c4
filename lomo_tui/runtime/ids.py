"""Old path of lomo_tui.base.ids (moved with #11 §8); import from there."""
from ..base.ids import *  # noqa: F401,F403
