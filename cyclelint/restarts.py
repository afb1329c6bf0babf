"""State a method starts afresh before it does anything else (read from the ``ast``, for every class the project
describes): a spiking neuron's ``forward`` binds ``self.v = torch.full_like(x[0], 0)``, or calls
``self.init_tensor(x[0])`` which does, and only then runs its time steps, each growing ``self.v`` through
``self.neuronal_charge(x[t])``. What the steps grow holds one call's graph, the output's own, never the graphs of
earlier calls: the project judges a CYC305 candidate that only such methods run (project/restarted.py)."""
from __future__ import annotations

import ast

from .astutil import dotted


def method_starts(func: ast.FunctionDef | ast.AsyncFunctionDef, methods: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The slots ``X`` that the statements before ``func``'s first compound statement (a loop, a branch, a ``with``,
    a ``try``: what may run the state's growth) bind as ``self.X = value`` with ``value`` not reading ``self.X``, and
    the methods of ``methods`` they call on the instance (``self.init_tensor(x)``), in order."""
    args = func.args.posonlyargs + func.args.args
    this = args[0].arg if args else None
    slots: list[str] = []
    calls: list[str] = []
    for stmt in func.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = dotted(stmt.targets[0]) or ""
            head, _, attr = target.partition(".")
            if head == this and attr and "." not in attr and not _reads(stmt.value, target):
                slots.append(attr)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            callee = dotted(stmt.value.func) or ""
            head, _, name = callee.partition(".")
            if head == this and name in methods:
                calls.append(name)
        elif isinstance(stmt, (ast.Return, ast.Raise)) or _compound(stmt):
            break
    return tuple(slots), tuple(calls)


def _compound(stmt: ast.stmt) -> bool:
    return any(isinstance(getattr(stmt, field, None), list) for field in ("body", "handlers", "cases"))


def _reads(value: ast.expr, target: str) -> bool:
    return any(isinstance(node, ast.Attribute) and dotted(node) == target for node in ast.walk(value))


def class_starts(functions: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """:func:`method_starts` of each method of a class (``functions``) but ``__init__`` (which runs once) that
    starts something."""
    names = {f.name for f in functions}
    found = {f.name: method_starts(f, names) for f in functions if f.name != "__init__"}
    return {name: start for name, start in found.items() if start[0] or start[1]}
