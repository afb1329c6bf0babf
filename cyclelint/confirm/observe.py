"""How ``--confirm`` observes each rule, as the rule table declares it (findings.Rule.observed)."""
from __future__ import annotations

from ..findings import RULES

CYCLE = "cycle"
LOOP = "loop"
STATE = "state"
SURVIVOR = "survivor"
BODY = "body"
RUNTIME = "runtime"


def how(code: str) -> str | None:
    """How the detector observes a static finding of ``code``; None for codes it cannot observe."""
    rule = RULES.get(code)
    return rule.observed if rule is not None and rule.observed != RUNTIME else None
