"""Whether ``self.step(...)`` steps a training loop. ``step``, ``backward`` and ``zero_grad`` are the optimizer's
and the loss's, unless the class of the method defines a method of that name itself: an environment's
``step(action)`` (torchrl's ``EnvBase.rollout`` collecting one trajectory), a simulator's or a sampler's, or a base
class of the same file does (DI-engine's ``DreamWorldModel.rollout`` calling the abstract ``WorldModel.step``). Such a
method steps a training loop only when it, or a method of its class that it calls on its instance, calls one of
them (a trainer's own ``step(batch)`` that runs ``loss.backward()`` and ``self.opt.step()``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..vocabulary import STEP_METHODS
from . import exprs as ex

if TYPE_CHECKING:
    from .scopes import ClassInfo, Function

GRADIENT_CALLS = ("autograd.backward", "autograd.grad")


def steps_training(call: cst.Call, fn: Function, classes: dict[str, ClassInfo]) -> bool:
    """``call`` (a step, backward or zero_grad by its name, or ``torch.autograd.backward``/``grad``) steps the
    loops around it: it is not ``self.X(...)`` of a method ``X`` that the class, or a base of it that the file
    (``classes``) defines, defines without stepping."""
    recv, method = ex.receiver(call), fn.enclosing_method()
    if not (isinstance(recv, cst.Name) and recv.value == fn.instance and method and method.cls):
        return True
    defs = _methods(method.cls, classes, set())
    return ex.method_name(call) not in defs or _steps(defs, ex.method_name(call) or "", set())


def _methods(cls: ClassInfo, classes: dict[str, ClassInfo], seen: set[str]) -> dict[str, cst.FunctionDef]:
    """The functions ``cls`` defines or inherits from the bases the file defines, the first base's over a later
    one's and the class's own over all of theirs, as Python looks them up."""
    seen.add(cls.name)
    defs: dict[str, cst.FunctionDef] = {}
    for base in reversed(cls.bases):
        found = classes.get(ex.last_part(base))
        if found is not None and found.name not in seen:
            defs.update(_methods(found, classes, seen))
    defs.update({s.name.value: s for s in cls.node.body.body if isinstance(s, cst.FunctionDef)})
    return defs


def _steps(defs: dict[str, cst.FunctionDef], name: str, seen: set[str]) -> bool:
    seen.add(name)
    params = ex.all_params(defs[name].params)
    this = params[0].name.value if params else None
    for call in ex.iter_calls(defs[name].body):
        called, recv = ex.method_name(call), ex.receiver(call)
        own = isinstance(recv, cst.Name) and recv.value == this and called in defs
        if own and called not in seen and _steps(defs, called, seen):
            return True
        if not own and (called in STEP_METHODS or (ex.callee(call) or "").endswith(GRADIENT_CALLS)):
            return True
    return False
