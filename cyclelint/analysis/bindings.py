"""What a module's names are bound to, as the walker needs it before and during the walk."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from . import exprs as ex

if TYPE_CHECKING:
    from .scopes import Function


def module_functions(body: Sequence[cst.CSTNode]) -> set[str]:
    """Names the module binds by ``def`` or ``import`` (also under top-level ``if``/``try``), known
    before the walk so that a call above the ``def`` is judged the same."""
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            out.add(stmt.name.value)
        elif isinstance(stmt, (cst.If, cst.Try)):
            out |= module_functions(stmt.body.body)
            orelse = stmt.orelse if isinstance(stmt, cst.If) else None
            if isinstance(orelse, cst.Else):
                out |= module_functions(orelse.body.body)
            for handler in getattr(stmt, "handlers", ()):
                out |= module_functions(handler.body.body)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    out |= imported_names(small)
    return out


def imported_names(node: cst.Import | cst.ImportFrom) -> set[str]:
    """The plain names an import binds (``y`` of ``from m import x as y``); none for ``import *`` or a dotted
    ``import a.b``."""
    if isinstance(node.names, cst.ImportStar):
        return set()
    bound = (alias.asname.name if alias.asname else alias.name for alias in node.names)
    return {name.value for name in bound if isinstance(name, cst.Name)}


def keeps_old(value: cst.BaseExpression, name: str) -> bool:
    """Whether rebinding ``name`` to ``value`` may keep its old value (``acc + x``, ``f(acc)``); a
    comprehension that only iterates the old one (``{k: 0 for k in acc}``) builds it afresh."""
    if isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        kept = [value.key, value.value] if isinstance(value, cst.DictComp) else [value.elt]
        return any(name in ex.loaded_names(part) for part in kept)
    return name in ex.loaded_names(value)


def assigned_choices(stmt: cst.CSTNode | None) -> list[cst.BaseExpression] | None:
    """What a plain ``x = value`` binds ``x`` to: ``[value]``, or both branches of ``x = a if c else b``; None
    for any other binding (several targets, an unpacking, a loop, a ``def``)."""
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name)):
        return None
    value = stmt.value
    return [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]


def bound_locally(fn: Function, name: str) -> bool:
    """``name`` is bound in a function scope (a local model), not only at module level."""
    scope: Function | None = fn
    while scope is not None and not scope.is_module:
        if name in scope.env:
            return True
        scope = scope.parent
    return False


def aliased_attrs(fn: Function, name: str) -> list[str] | None:
    """The attribute names a local was last bound to (``f = obj.items`` or ``f = a.x if c else b.y``),
    when that binding is a plain alias of attributes; else None."""
    scope: Function | None = fn
    while scope is not None and not scope.is_module and name not in scope.bindings:
        scope = scope.parent
    binding = scope.bindings.get(name) if scope is not None and not scope.is_module else None
    parts = assigned_choices(binding.stmt if binding is not None else None)
    if parts is None or not all(isinstance(p, cst.Attribute) for p in parts):
        return None
    return [p.attr.value for p in parts]
