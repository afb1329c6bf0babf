"""What CYC301-CYC305 say: the messages, worded for the value kept and where it came from."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.bindings import assigned_choices
from ..analysis.scopes import Function
from ..vocabulary import HOLDING_CALLS
from .candidates import Candidate

MESSAGES = {
    "CYC301": "{acc} accumulates graph-attached values across loop iterations: every step's autograd graph stays "
    "alive until {acc} dies; accumulate {val}.detach() (or float({val}.detach()) for a Python number)",
    "CYC302": "{acc} collects graph-attached tensors in a loop and is not cleared there: each keeps its whole "
    "autograd graph alive; store {val}.detach() (and .cpu() if it must leave the device)",
    "CYC303": "{acc} is grown by concatenating graph-attached tensors across iterations: every step's graph stays "
    "alive and each step copies all previous ones; collect detached pieces in a list and concatenate once",
    "CYC304": "{acc} collects device tensors in a loop: accelerator memory grows with the data; "
    "move them off the device ({val}.cpu()) or reduce them ({val}.item())",
    "CYC305": "{acc} grows with graph-attached values on every call: the instance keeps the autograd graph of "
    "every call alive; update it from {val}.detach() or under torch.no_grad()",
}
DISPATCH_MESSAGE = ("self.{method}(...) passes {passed} to {method}(), and its override {{override}} grows "
                    "instance state with them: each instance keeps the autograd graph of every call alive; make the "
                    "call under torch.no_grad() or detach what the override keeps")


def message(code: str, c: Candidate) -> str:
    return worded(MESSAGES[code], c)


def worded(template: str, c: Candidate, **extra: str) -> str:
    val = _short(c.expr)
    text = template.format(acc=c.acc, val=val, **extra)
    if _container(c.expr, c.fn):  # a dict or list holds the tensors: they are what to detach, not the container
        text = text.replace(f"{val}.detach()", f"{val} with each tensor in it detached")
    return f"{text} ({c.why})" if c.why else text


def _container(expr: cst.BaseExpression, fn: Function | None) -> bool:
    """A dict or list display, or a local name whose last binding is a plain ``stats = {...}``."""
    binding = fn.bindings.get(expr.value) if fn is not None and isinstance(expr, cst.Name) else None
    return all(isinstance(e, (cst.Dict, cst.List, cst.Tuple, cst.DictComp, cst.ListComp)) or (
        isinstance(e, cst.Call) and ex.callee(e) in HOLDING_CALLS)
        for e in assigned_choices(binding.stmt if binding else None) or [expr])


def _short(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Call) and ex.method_name(expr) == "cpu" and not expr.args:
        return _short(expr.func.value)  # ``x.cpu()`` keeps x's graph: the advice is to detach x, not ``x.cpu(...)``
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return ex.dotted(expr) or "value"
    if isinstance(expr, cst.Call) and ex.dotted(expr.func):
        return (ex.dotted(expr.func) or "") + "(...)"
    return "value"
