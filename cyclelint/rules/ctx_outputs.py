"""What the ``forward`` of a ``torch.autograd.Function`` returns, for CYC201: the names its outputs are, what
is an alias or view of them, and what holds no tensor at all (a shape), so that ``ctx`` keeping it closes no cycle."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function
from ..vocabulary import CONSTANT_NAMES, SHAPE_READS, VIEW_METHODS, ZERO_COPY


def function_ctx(fn: Function) -> str | None:
    """The ctx parameter of a ``torch.autograd.Function`` subclass's static ``forward``."""
    cls = fn.cls
    if not (fn.is_method and fn.name == "forward" and fn.instance is None and fn.params and cls is not None):
        return None
    if cls.methods.get("forward") != "staticmethod":
        return None
    return fn.params[0] if cls.autograd_function else None


def tensorless(value: cst.BaseExpression) -> bool:
    """What holds no tensor, so no grad_fn: forward returning it and ``ctx`` keeping it make no cycle. A shape
    (``x.shape``, ``x.size(0)``, or an element of one: torchao's ``padded_input_shape``), and a flag or a number:
    a constant, a comparison, ``isinstance(...)`` (torchopt's ``output_is_tensor = True``)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.Comparison)) or (
            isinstance(value, cst.Name) and value.value in CONSTANT_NAMES):
        return True
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
        return True
    if isinstance(value, cst.Call) and ex.callee(value) in ("isinstance", "issubclass", "callable", "len"):
        return True
    while isinstance(value, cst.Subscript):
        value = value.value
    if isinstance(value, cst.Call):
        value = value.func
    return isinstance(value, cst.Attribute) and value.attr.value in SHAPE_READS


def closure(names: set[str], views: dict[str, set[str]]) -> set[str]:
    """``names`` and every name they are, transitively, an alias or view of."""
    out, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo.extend(views.get(name, ()))
    return out


def views_of(value: cst.BaseExpression, helpers: dict[str, int]) -> set[str]:
    """The names ``value`` is, or is a view of: ``n``, ``n[...]``, ``n.view(...)``, ``a if t else b[-1]``,
    a zero-copy handle (``from_dlpack(to_dlpack(n))``), or ``f(n)`` where ``helpers`` says the file's
    function ``f`` returns a view of that argument."""
    out, stack = set(), [value]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Name) and cur.value not in CONSTANT_NAMES:  # ``x if t else None``: None is no view
            out.add(cur.value)
        elif isinstance(cur, cst.Subscript):
            stack.append(cur.value)
        elif isinstance(cur, cst.Call) and ex.method_name(cur) in VIEW_METHODS:
            stack.append(cur.func.value)  # type: ignore[union-attr]
        elif isinstance(cur, cst.Call):
            name = ex.last_part(ex.callee(cur))
            if name in ZERO_COPY:
                index = 0
            elif isinstance(cur.func, cst.Name):
                index = helpers.get(name)
            else:
                continue
            args = ex.positional_args(cur)
            if index is not None and index < len(args):
                stack.append(args[index])
        elif isinstance(cur, cst.IfExp):
            stack.extend((cur.body, cur.orelse))
    return out


def view_helpers(module: cst.Module) -> dict[str, int]:
    """The file's module-level functions that return a view of one of their parameters, and its index
    (DGL's ``def zerocopy_to_dgl_ndarray(input): return nd.from_dlpack(dlpack.to_dlpack(input.contiguous()))``):
    every ``return`` of the function is a view of that parameter. Helpers are read in file order, so a
    helper may build on one defined above it."""
    helpers: dict[str, int] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        params = [p.name.value for p in (*stmt.params.posonly_params, *stmt.params.params)]  # the positional slots
        returns = [r.value for r in ex.iter_returns(stmt)]
        if not returns or None in returns:
            continue
        shared = set(params).intersection(*(views_of(r, helpers) for r in returns))
        if shared:
            helpers[stmt.name.value] = min(params.index(p) for p in shared)
    return helpers
