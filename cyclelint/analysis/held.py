"""Which names and dotted paths a stored value keeps alive (used by the walker and the rules)."""
from __future__ import annotations

import libcst as cst

from . import exprs as ex


def held_names(value: cst.BaseExpression) -> set[str]:
    """Names a value holds strongly: the name itself or inside tuple/list/set/dict displays."""
    return {path for path in held_paths(value) if "." not in path}


def held_paths(value: cst.BaseExpression) -> list[str]:
    """Dotted paths held strongly by ``value`` (no calls: a weakref or a copy holds nothing)."""
    out: list[str] = []
    stack = [value]
    while stack:
        cur = stack.pop()
        path = ex.dotted(cur)
        if path is not None:
            if path not in ("None", "True", "False"):
                out.append(path)
        elif isinstance(cur, (cst.Tuple, cst.List, cst.Set)):
            stack.extend(e.value for e in cur.elements)
        elif isinstance(cur, cst.Dict):
            for e in cur.elements:
                stack.append(e.value)
                if isinstance(e, cst.DictElement):
                    stack.append(e.key)
        elif isinstance(cur, cst.IfExp):
            stack.extend((cur.body, cur.orelse))
        elif isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.Add) and (
            isinstance(cur.left, (cst.Tuple, cst.List)) or isinstance(cur.right, (cst.Tuple, cst.List))
        ):  # (self,) + args: a new sequence holding both sides' items
            stack.extend((cur.left, cur.right))
        elif isinstance(cur, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            stack.append(cur.elt)
        elif isinstance(cur, cst.DictComp):
            stack.append(cur.value)
    return out
