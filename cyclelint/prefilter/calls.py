"""What one call of a statement tells the pre-filter: the rules it may trigger on its own (a hook
registered, ``atexit`` in a function, a frame taken, ...) and the accumulation it may be."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ast_reading import held_paths
from ..astutil import dotted, instance_handed_to, last, strip_items
from ..vocabulary import (
    APPENDS,
    FRAME_CALLS,
    HOOK_RE,
    INPLACE,
    MODULE_HOOK_SLOTS,
    PACK_HOOK_REGISTRARS,
    STEP_METHODS,
    STORE_METHODS,
)
from .shapes import ctor_with, is_attr_of, is_name, may_carry_graph, target_root

if TYPE_CHECKING:
    from .scan import Scan

KEPT_CALLS = FRAME_CALLS | {"exc_info"}


def check_call(scan: Scan, call: ast.Call, instance: str | None) -> bool:
    """Notes what ``call`` tells ``scan``; True when the walk over the statement can stop there
    (the file goes on to the full analysis)."""
    name = last(call.func)
    args = call.args + [k.value for k in call.keywords]
    if name == "setattr" and len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(
            call.args[1].value, str):
        scan.stores.attrs.add(call.args[1].value)
    if scan.attr_calls is not None and isinstance(call.func, ast.Attribute):
        scan.attr_calls.append((scan.fn_class if instance else None, instance, call))
    if name in STEP_METHODS or name == "grad":
        scan.fn_step = True
    reason = _trigger(scan, call, name, args, instance)
    if reason:
        scan.send_on(reason)
        return True
    if not (isinstance(call.func, ast.Attribute) and (name in APPENDS or name in INPLACE)):
        return False
    if name in APPENDS and len(call.args) != STORE_METHODS[name] + 1:
        return False  # ops.add(a, b) is no container
    scan.accumulate()
    if scan.found:
        return True
    base = call.func.value
    while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
        base = base.func.value
    # an in-place op's operands may be keywords (add_(other=...)), as the full analysis reads them
    grown = args if name in INPLACE else [call.args[STORE_METHODS[name]]]
    if instance and any(map(may_carry_graph, grown)) and (dotted(strip_items(base)) or "").split(".")[0] == instance:
        scan.state_growth("CYC305: self container append / in-place", grown)
        return scan.found
    return False


def _trigger(scan: Scan, call: ast.Call, name: str, args: list[ast.expr], instance: str | None) -> str | None:
    """Why ``call`` alone may be a finding of an enabled rule, if it may."""
    families, fn = scan.families, scan.fn
    if "CYC2" in families and instance_handed_to(call, instance):
        return "CYC202: the instance handed to a method of an object it holds (self.x.method(self))"
    if "CYC2" in families and instance and is_name(getattr(call.func, "value", None), instance) and any(
            (isinstance(a, ast.Name) and a.id in scan.built_with_instance) or ctor_with(a, instance) for a in args):
        return "CYC202: an object built with the instance handed to the instance's own method"
    if "CYC3" in families and name in PACK_HOOK_REGISTRARS:
        return "CYC302: saved-tensor hooks registered (the pack hook may keep what it is given)"
    if "CYC3" in families and name in MODULE_HOOK_SLOTS:
        return "CYC305: a module hook registered (it may keep what the module gives it)"
    if "CYC1" in families and HOOK_RE.match(name):
        return "CYC104: register_*hook"
    if "CYC4" in families and call.args and fn is not scan.module_fn and dotted(call.func) == "atexit.register":
        return "CYC404: atexit.register in a function"
    if "CYC1" in families and name == "__init__" and scan.fn_instance and any(
            is_attr_of(a, scan.fn_instance) and a.attr in scan.methods for a in args):
        return "CYC103: own bound method handed to a base __init__"
    if "CYC4" in families and name in KEPT_CALLS:
        root = (dotted(call.func) or "").split(".")[0]
        if root in ("inspect", "sys") or (root == name and not call.args):
            return "CYC401: exc_info/frame call"
    if ("CYC4" in families and fn.sized and name in STORE_METHODS and isinstance(call.func, ast.Attribute)
            and target_root(call.func.value) in scan.module.names
            and {p for a in args for p in held_paths(a)} & fn.sized):
        return "CYC404: a module or tensor argument stored in a module-level container"
    return None
