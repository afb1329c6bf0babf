"""Conversions that say what a tensor becomes: ``x.to("cpu")`` leaves the device (and keeps its graph), while
``x.to(torch.int64)`` or ``x.type(torch.long)`` makes an integer tensor, which cannot require grad: unsloth's MFU
counter sums ``lengths.to(torch.int64)`` of every batch into the instance, and holds no graph."""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..vocabulary import INTEGER_DTYPES, torch_rooted
from . import exprs as ex

if TYPE_CHECKING:
    from .scopes import Function


def mentions_cpu(call: cst.Call) -> bool:
    for a in call.args:
        v = a.value
        if isinstance(v, cst.SimpleString) and "cpu" in v.value:
            return True
        if isinstance(v, cst.Call) and v.args and isinstance(v.args[0].value, cst.SimpleString) and "cpu" in v.args[0].value.value:
            return True
    return False


def to_integer(call: cst.Call) -> bool:
    """``.to(torch.int64)``, ``.to(x.device, dtype=torch.long)``, ``.type(torch.int32)``: the dtype given, by
    position or keyword, is an integer one."""
    return any((a.keyword is None or a.keyword.value == "dtype") and _integer_dtype(a.value) for a in call.args)


def integer_tensor(expr: cst.BaseExpression | None) -> bool:
    """``torch.zeros([], dtype=torch.int)``: a torch call building a tensor of an integer dtype."""
    dtype = ex.keyword_arg(expr, "dtype") if isinstance(expr, cst.Call) and torch_rooted(ex.callee(expr)) else None
    return dtype is not None and _integer_dtype(dtype)


def integer_accumulator(target: cst.BaseExpression, fn: Function) -> bool:
    """``total += n`` into a local last bound to an integer tensor (Megatron's token count, ``torch.zeros([],
    dtype=torch.int)``): added in place, the sum stays an integer tensor, which holds no graph."""
    binding = fn.bindings.get(target.value) if isinstance(target, cst.Name) else None
    bound = binding.stmt if binding is not None else None
    return isinstance(bound, (cst.Assign, cst.AnnAssign)) and integer_tensor(bound.value)


def _integer_dtype(expr: cst.BaseExpression) -> bool:
    """``torch.int64``, ``torch.long``, ``torch.bool``...: a dtype whose tensors cannot require grad."""
    return ex.last_part(ex.dotted(expr) or "") in INTEGER_DTYPES
