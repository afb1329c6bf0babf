"""Rule families; each module holds the rules of one family."""
from .accumulation import AccumulationRule
from .links import LinkRule
from .self_capture import SelfCaptureRule
from .storage import StorageRule

ALL_RULES = (SelfCaptureRule, LinkRule, AccumulationRule, StorageRule)
