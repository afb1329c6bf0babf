"""Which names and dotted paths a stored value keeps alive (used by the walker and the rules)."""
from __future__ import annotations

import libcst as cst

from .. import judgements
from .cst_reading import CST


def held_names(value: cst.BaseExpression) -> set[str]:
    """Names a value holds strongly: the name itself or inside tuple/list/set/dict displays."""
    return {path for path in held_paths(value) if "." not in path}


def held_paths(value: cst.BaseExpression) -> list[str]:
    """Dotted paths held strongly by ``value`` (``judgements.held_paths``, shared with the pre-filter)."""
    return judgements.held_paths(CST, value)
