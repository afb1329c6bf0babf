"""Names and attributes a branch knows to be ``None``: a store there starts the value, it drops nothing.

``if acc is None: acc = out`` / ``else: acc = torch.cat([acc, out])`` is how code grows a value it has no empty
start for (the first batch's predictions, a metric's state built lazily). The first store is no reset: what the
name held was ``None``, so the other branch's growth is kept across iterations and calls as if the first store were
``acc = torch.cat([acc, out])`` too."""
from __future__ import annotations

import libcst as cst

from . import exprs as ex


def none_tests(test: cst.BaseExpression) -> tuple[frozenset[str], frozenset[str]]:
    """The paths ``test`` proves ``None`` where it holds, and where it does not: ``x is None`` and
    ``x is None and ready`` give ``({x}, {})``, ``x is not None`` gives ``({}, {x})``. An ``or``
    proves nothing: ``if x is None or x.shape != y.shape: x = y`` may replace a value."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        left, right = none_tests(test.left)[0], none_tests(test.right)[0]
        return left | right, frozenset()
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        path = ex.dotted(test.left)
        if path is not None and ex.is_none(target.comparator):
            if isinstance(target.operator, cst.Is):
                return frozenset({path}), frozenset()
            if isinstance(target.operator, cst.IsNot):
                return frozenset(), frozenset({path})
    return frozenset(), frozenset()
