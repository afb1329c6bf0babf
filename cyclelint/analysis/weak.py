"""Weak references and weak containers: values that hold what they point at without keeping it
alive. One predicate for every rule (a registry, a back-pointer or a stored callback made weak is
no cycle and no leak)."""
from __future__ import annotations

import libcst as cst

from .exprs import callee, last_part, positional_args

# weakref.ref/proxy/WeakMethod point at one object; WeakSet and the weak dictionaries hold many;
# weakref.finalize keeps its callback but not the object it watches.
WEAK_CALLEES = frozenset(
    {"ref", "proxy", "WeakMethod", "WeakSet", "WeakValueDictionary", "WeakKeyDictionary", "finalize"}
)
# ``d.setdefault(key, default)`` and ``getattr(obj, name, default)`` give the default the first time,
# and the same object ever after: a weak default makes the result weak.
_DEFAULT_GIVERS = {"setdefault": 1, "get": 1, "getattr": 2}


def is_weak(expr: cst.CSTNode | None) -> bool:
    """``weakref.ref(x)``, ``WeakMethod(m)``, ``WeakSet()``, ``weakref.finalize(...)``, and
    ``torch.__dict__.setdefault("registry", weakref.WeakValueDictionary())``."""
    if not isinstance(expr, cst.Call):
        return False
    name = last_part(callee(expr) or (expr.func.attr.value if isinstance(expr.func, cst.Attribute) else ""))
    if name in WEAK_CALLEES:
        return True
    index = _DEFAULT_GIVERS.get(name)
    args = positional_args(expr)
    return index is not None and len(args) > index and is_weak(args[index])
