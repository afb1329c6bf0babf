"""Module hooks that keep what the module gives them (CYC305 across the hook's calls).

``module.register_forward_hook(hook)`` calls ``hook(module, args, output)`` on every forward pass. A hook that
puts ``output`` (a pre-hook: its input; a backward hook: its gradients) into a container that outlives the call,
one of the module or of an enclosing function, grows it on every step, and each entry keeps the autograd graph
of its forward pass: the feature-extraction leak. The hook is a ``def`` named at the registration, the function
a factory of the file returns (``register_forward_hook(save("fc"))``), a ``partial`` of one, or a lambda.
A method registered as a hook is judged with the instance's state (``self.features.append(output)``).

Quiet when the file runs no backward pass (features extracted for inference, where the forward passes can run
under ``no_grad`` anywhere), when the hook is registered with grad off (calibration: register, run the model
under ``no_grad``, remove), when the container is emptied somewhere in the file (``clear``, ``pop``, ``del``)
or rebound in a loop, and for an item store whose key does not change between calls (``acts[name] = output``
with ``name`` the factory's argument: one entry per module, overwritten by the next forward pass).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function
from ..analysis.tensors import Evaluator, Value
from ..vocabulary import APPENDS, MODULE_HOOK_SLOTS, PARTIALS, STORE_METHODS
from .candidates import Candidate
from .pack_hooks import visible
from .store_shapes import item_targets

MESSAGE = ("{acc} grows on every call of {hook}, a module hook: each {val} it keeps holds the autograd graph of its "
           "forward pass; store {val}.detach(), or empty {acc} after each step")


@dataclass(frozen=True)
class Registration:
    scope: Function  # where ``register_forward_hook(...)`` is called
    hook: str  # the function registered, or the factory that returns it
    slot: int  # the parameter that receives what the module computed
    factory: bool = False


class ModuleHooks:
    """Registrations with grad on, lambdas that store what they are given, and what factories return,
    collected over the file and judged at its end."""

    def __init__(self):
        self.registered: list[Registration] = []
        self.lambda_stores: list[tuple[Candidate, str]] = []  # with the lambda's parameter that must be kept
        self.returned: set[tuple[int, str]] = set()  # (function, name it returns)
        self.trains = False  # the file runs a backward pass somewhere

    def note_call(self, call: cst.Call, stmt: cst.CSTNode, fn: Function, evaluator: Evaluator) -> None:
        name = ex.method_name(call)
        slot = MODULE_HOOK_SLOTS.get(name or "")
        hook = ex.arg(call, 0, "hook")
        if slot is None or hook is None or not fn.grad_enabled:
            return
        kwargs = ex.keyword_arg(call, "with_kwargs")
        if name == "register_forward_hook" and isinstance(kwargs, cst.Name) and kwargs.value == "True":
            slot += 1  # hook(module, args, kwargs, output)
        factory = False
        if isinstance(hook, cst.Call) and ex.last_part(ex.callee(hook) or "") in PARTIALS:
            bound = ex.positional_args(hook)  # partial(record, "fc"): the hook's own parameters come after
            hook, slot = (bound[0] if bound else None), slot + len(bound) - 1
        elif isinstance(hook, cst.Call) and isinstance(hook.func, cst.Name):
            hook, factory = hook.func, True
        if isinstance(hook, cst.Name):
            self.registered.append(Registration(fn, hook.value, slot, factory))
        elif isinstance(hook, cst.Lambda):
            self._note_lambda(hook, slot, stmt, fn, evaluator)

    def _note_lambda(self, hook: cst.Lambda, slot: int, stmt: cst.CSTNode, fn: Function,
                     evaluator: Evaluator) -> None:
        """``lambda m, i, o: feats.append(o)``: the value is read with the lambda's parameters bound as a
        function's are, shadowing the scope's names for the time of the reading."""
        params = [p.name.value for p in ex.all_params(hook.params)]
        body = hook.body
        method = ex.method_name(body) if isinstance(body, cst.Call) else None
        if slot >= len(params) or method not in APPENDS or not ex.container_call(body, method, None):
            return
        owner = ex.dotted(ex.strip_items(ex.receiver(body)))
        value = ex.arg(body, STORE_METHODS[method], "value")
        if not owner or owner.split(".")[0] in params or value is None:
            return
        saved = {p: fn.env.get(p) for p in params}
        fn.env.update({p: Value(deps=frozenset((p,))) for p in params})
        try:
            val = evaluator.value(value, fn)
        finally:
            for p, held in saved.items():
                if held is None:
                    fn.env.pop(p, None)
                else:
                    fn.env[p] = held
        self.lambda_stores.append((Candidate(stmt, "CYC305", owner, value, val, (), fn=fn), params[slot]))

    def note_return(self, node: cst.Return, fn: Function) -> None:
        if isinstance(node.value, cst.Name):
            self.returned.add((id(fn), node.value.value))

    def keeping(self, stores: list[Candidate], taken_out: list[tuple[Function, str]]
                ) -> Iterator[tuple[Candidate, str]]:
        """Each store of a module hook that keeps what the module gives it, with the hook's name."""
        if not self.trains:
            return
        emptied = {path for _, path in taken_out}
        for c, param in self.lambda_stores:
            if param in c.value.deps and not _emptied(c, c.fn, emptied):
                yield c, "the lambda"
        for c in stores:
            fn = c.fn
            if c.state or fn is None or _emptied(c, fn.parent, emptied) or _overwrites(c, fn):
                continue
            for reg in self.registered:
                if self._is_hook(fn, reg) and reg.slot < len(fn.params) and fn.params[reg.slot] in c.value.deps:
                    yield c, f"{fn.name}()"
                    break

    def _is_hook(self, fn: Function, reg: Registration) -> bool:
        if not reg.factory:
            return fn.name == reg.hook and visible(fn, reg.scope)
        factory = fn.parent
        return (factory is not None and factory.name == reg.hook and visible(factory, reg.scope)
                and (id(factory), fn.name) in self.returned)


def _emptied(c: Candidate, scope: Function | None, emptied: set[str]) -> bool:
    """The container is cleared, popped or deleted from somewhere in the file, or rebound in a loop of the
    scope that owns it (each step then starts a new one)."""
    if c.acc in emptied:
        return True
    root = c.acc.split(".")[0]
    while scope is not None:
        binding = scope.bindings.get(root)
        if binding is not None:
            return bool(binding.loops)
        scope = scope.parent
    return False


def _overwrites(c: Candidate, fn: Function) -> bool:
    """``d[k] = v`` with k read from the hook's parameters or the names it closes over: the same entry on every
    call for one module; only a key the hook computes itself (``key = len(d)``) grows ``d``."""
    keys = item_targets(c.stmt)
    own = set(fn.bindings) - set(fn.params)
    return bool(keys) and not any(ex.loaded_names(element) & own for k in keys for element in k.slice)
