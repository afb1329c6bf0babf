"""Names a branch knows hold no tensor, as a type checker narrows them: past the ``isinstance`` tests of a helper
that detaches whatever it is handed (``if isinstance(x, torch.Tensor): ... elif isinstance(x, (list, tuple)): ...
elif isinstance(x, dict): ... else: return x``), ``x`` is none of those kinds, so handing it back keeps no graph.

A fact is ``name:kind``, one per kind the tests rule out. Only a name ruled out as a tensor, a list, a tuple and a
dict counts as plain: one tested only against ``torch.Tensor`` may still be a list of attached tensors."""
from __future__ import annotations

import libcst as cst

from . import exprs as ex

KINDS = frozenset({"tensor", "list", "tuple", "dict"})
_KIND_OF = {"Tensor": ("tensor",), "list": ("list",), "List": ("list",), "tuple": ("tuple",), "Tuple": ("tuple",),
            "dict": ("dict",), "Dict": ("dict",), "Mapping": ("dict",), "MutableMapping": ("dict",),
            "Sequence": ("list", "tuple"), "MutableSequence": ("list",)}

Facts = tuple[frozenset[str], frozenset[str]]
_NONE: Facts = (frozenset(), frozenset())


def kind_tests(test: cst.BaseExpression) -> Facts:
    """The ``name:kind`` facts ``test`` proves where it holds, and where it does not: ``isinstance(x, dict)``
    proves ``x:dict`` ruled out where it fails; ``not`` swaps them; an ``or`` fails where both sides fail."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        holds, fails = kind_tests(test.expression)
        return fails, holds
    if isinstance(test, cst.BooleanOperation):
        left, right = kind_tests(test.left), kind_tests(test.right)
        if isinstance(test.operator, cst.Or):
            return frozenset(), left[1] | right[1]
        return left[0] | right[0], frozenset()
    if isinstance(test, cst.Call) and ex.callee(test) == "isinstance" and len(test.args) == 2 \
            and isinstance(test.args[0].value, cst.Name):
        name, kinds = test.args[0].value.value, test.args[1].value
        types = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        ruled_out = {kind for t in types for kind in _KIND_OF.get(ex.last_part(ex.dotted(t) or "") or "", ())}
        return frozenset(), frozenset(f"{name}:{kind}" for kind in ruled_out)
    return _NONE


def plain(name: str, ruled_out: frozenset[str]) -> bool:
    """``name`` is known to be no tensor and no list, tuple or dict that could hold one."""
    return bool(ruled_out) and all(f"{name}:{kind}" in ruled_out for kind in KINDS)
