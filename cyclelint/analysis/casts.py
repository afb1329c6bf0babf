"""Conversions that say what a tensor becomes: ``x.to("cpu")`` leaves the device (and keeps its graph), while
``x.to(torch.int64)`` or ``x.type(torch.long)`` makes an integer tensor, which cannot require grad: unsloth's MFU
counter sums ``lengths.to(torch.int64)`` of every batch into the instance, and holds no graph."""
from __future__ import annotations

import libcst as cst

from ..vocabulary import INTEGER_DTYPES
from . import exprs as ex


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
    return any((a.keyword is None or a.keyword.value == "dtype")
               and ex.last_part(ex.dotted(a.value) or "") in INTEGER_DTYPES for a in call.args)
