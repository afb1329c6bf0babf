"""How ``--confirm`` observes each rule: the one place the watch plan reads it from.

Once the rule registry declares this per rule, ``how()`` reads it from there instead of this table.
"""
from __future__ import annotations

CYCLE = "cycle"  # a cycle the collector frees matches the finding
LOOP = "loop"  # the accumulator grows across passes of the flagged loop
STATE = "state"  # the attribute grows across calls of the flagged method
SURVIVOR = "survivor"  # instances of the flagged class are still alive at exit
BODY = "body"  # as SURVIVOR, and the flagged line is a decorator: the method's body must run

_HOW = {
    **dict.fromkeys(("CYC101", "CYC102", "CYC103", "CYC104", "CYC201", "CYC202", "CYC203", "CYC401", "CYC403",
                     "CYC405"), CYCLE),
    **dict.fromkeys(("CYC301", "CYC302", "CYC303", "CYC304"), LOOP),
    "CYC305": STATE,
    "CYC402": BODY,
    "CYC404": SURVIVOR,
}


def how(code: str) -> str | None:
    """How the detector observes ``code``; None for codes it cannot observe."""
    return _HOW.get(code)
