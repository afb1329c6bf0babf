"""Module hooks that keep what the module gives them (CYC305 across the hook's calls).

``module.register_forward_hook(hook)`` calls ``hook(module, args, output)`` on every forward pass. A hook that
puts ``output`` (a pre-hook: its input; a backward hook: its gradients) into a container that outlives the call,
one of the module or of an enclosing function, grows it on every step, and each entry keeps the autograd graph
of its forward pass: the feature-extraction leak. The hook is a ``def`` named at the registration, the function
a factory of the file returns (``register_forward_hook(save("fc"))``), a ``partial`` of one, or a lambda.
A method registered as a hook is judged with the instance's state (``self.features.append(output)``).

Quiet when the file runs no backward pass (features extracted for inference, where the forward passes can run
under ``no_grad`` anywhere), when the hook is registered with grad off (calibration: register, run the model
under ``no_grad``, remove), when the container is emptied in a loop over steps (``clear``, ``pop``, ``del``) or
rebound in one, when the function that registers the hook removes it and owns the container, and for an item store whose key does not change between calls (``acts[name] = output``
with ``name`` the factory's argument: one entry per module, overwritten by the next forward pass).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function, Loop
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
    handle: str | None = None  # ``h = m.register_...(...)``, or the list that holds it: ``handles.append(...)``


class ModuleHooks:
    """Registrations with grad on, lambdas that store what they are given, and what factories return,
    collected over the file and judged at its end."""

    def __init__(self):
        self.registered: list[Registration] = []
        # with the lambda's parameter that must be kept, and its registration
        self.lambda_stores: list[tuple[Candidate, str, Registration]] = []
        self.returned: set[tuple[int, str]] = set()  # (function, name it returns)
        self.trains = False  # the file runs a backward pass somewhere
        self.removed: set[int] = set()  # registrations whose scope removes their handle later on

    def note_call(self, call: cst.Call, stmt: cst.CSTNode, fn: Function, evaluator: Evaluator) -> None:
        name = ex.method_name(call)
        if name == "remove" and isinstance(recv := ex.receiver(call), cst.Name):
            self._note_removal(recv.value, fn)
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
            self.registered.append(Registration(fn, hook.value, slot, factory, _handle(call, stmt)))
        elif isinstance(hook, cst.Lambda):
            self._note_lambda(hook, Registration(fn, "lambda", slot, handle=_handle(call, stmt)), stmt, evaluator)

    def _note_removal(self, handle: str, fn: Function) -> None:
        """``h.remove()``, or ``for h in handles: h.remove()``, after the registration in the same function."""
        names = {handle} | {loop.node.iter.value for loop in fn.loops if handle in loop.targets
                            and isinstance(loop.node, cst.For) and isinstance(loop.node.iter, cst.Name)}
        for reg in self.registered + [reg for _, _, reg in self.lambda_stores]:
            if reg.scope is fn and reg.handle in names:
                self.removed.add(id(reg))

    def _note_lambda(self, hook: cst.Lambda, reg: Registration, stmt: cst.CSTNode, evaluator: Evaluator) -> None:
        """``lambda m, i, o: feats.append(o)``: the value is read with the lambda's parameters bound as a
        function's are, shadowing the scope's names for the time of the reading."""
        fn, slot = reg.scope, reg.slot
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
        self.lambda_stores.append((Candidate(stmt, "CYC305", owner, value, val, (), fn=fn), params[slot], reg))

    def note_return(self, node: cst.Return, fn: Function) -> None:
        if isinstance(node.value, cst.Name):
            self.returned.add((id(fn), node.value.value))

    def keeping(self, stores: list[Candidate], taken_out: list[tuple[Function, str, tuple[Loop, ...]]]
                ) -> Iterator[tuple[Candidate, str]]:
        """Each store of a module hook that keeps what the module gives it, with the hook's name."""
        if not self.trains:
            return
        for c, param, reg in self.lambda_stores:
            if param in c.value.deps and not emptied_in_steps(c, c.fn, taken_out) and not self._scoped(reg, c):
                yield c, "the lambda"
        for c in stores:
            fn = c.fn
            if c.state or fn is None or emptied_in_steps(c, fn.parent, taken_out) or _overwrites(c, fn):
                continue
            for reg in self.registered:
                if self._is_hook(fn, reg) and reg.slot < len(fn.params) and fn.params[reg.slot] in c.value.deps:
                    if not self._scoped(reg, c):
                        yield c, f"{fn.name}()"
                    break

    def _scoped(self, reg: Registration, c: Candidate) -> bool:
        """The registering function removes the hook and owns the container: what the hook keeps lives only as
        long as that call (ultralytics' LayerCAM: hooks on the head for one forward pass, removed in ``finally``)."""
        return id(reg) in self.removed and c.acc.split(".")[0] in reg.scope.bindings

    def _is_hook(self, fn: Function, reg: Registration) -> bool:
        if not reg.factory:
            return fn.name == reg.hook and visible(fn, reg.scope)
        factory = fn.parent
        return (factory is not None and factory.name == reg.hook and visible(factory, reg.scope)
                and (id(factory), fn.name) in self.returned)


def emptied_in_steps(c: Candidate, scope: Function | None, taken_out: list[tuple[Function, str, tuple[Loop, ...]]]
                     ) -> bool:
    """The container is cleared, popped or deleted from in a loop over steps somewhere in the file (``taken_out``),
    or rebound in such a loop of ``scope`` or a scope around it that owns it: each step then starts afresh (emptied
    once an epoch, an epoch of graphs is still kept, as for CYC305's other cases)."""
    if any(path == c.acc and any(loop.is_step for loop in loops) for _, path, loops in taken_out):
        return True
    root = c.acc.split(".")[0]
    while scope is not None:
        binding = scope.bindings.get(root)
        if binding is not None:
            return any(loop.is_step for loop in binding.loops)
        scope = scope.parent
    return False


def _overwrites(c: Candidate, fn: Function) -> bool:
    """``d[k] = v`` with k read from the hook's parameters or the names it closes over: the same entry on every
    call for one module; only a key the hook computes itself (``key = len(d)``) grows ``d``."""
    keys = item_targets(c.stmt)
    own = set(fn.bindings) - set(fn.params)
    return bool(keys) and not any(ex.loaded_names(element) & own for k in keys for element in k.slice)


def _handle(call: cst.Call, stmt: cst.CSTNode) -> str | None:
    """Where the registration's handle goes: ``h = call``, ``handles = [call, ...]`` or ``handles.append(call)``."""
    smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    for small in smalls:
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            value = small.value
            if value is call or (isinstance(value, cst.List) and any(e.value is call for e in value.elements)):
                return small.targets[0].target.value
        value = small.value if isinstance(small, cst.Expr) else None
        if (isinstance(value, cst.Call) and ex.method_name(value) == "append" and value.args
                and value.args[0].value is call and isinstance(ex.receiver(value), cst.Name)):
            return ex.receiver(value).value
    return None
