"""Saved-tensor pack hooks that keep what autograd gives them (CYC302 across the hook's calls).

``torch.autograd.graph.saved_tensors_hooks(pack, unpack)`` calls ``pack`` with every tensor autograd saves,
``grad_fn`` and all. Put in a container the hook reaches (a dict of the enclosing function, the hooks object's
own), each such tensor keeps its graph, whose saved tensors keep the hook and so the container: a cycle through
autograd's C++ that the collector cannot free (PyTorch's documentation asks for ``x.detach()``). The entry is
harmless when the paired unpack hook takes it out (``del``, ``pop``, ``clear``, ``remove``): it then lives as long as autograd
keeps the saved tensor anyway; so is a window the pack hook itself trims.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.bindings import assigned_choices
from ..analysis.scopes import Function, Loop
from ..vocabulary import CLEAR_METHODS, PACK_HOOK_REGISTRARS

if TYPE_CHECKING:
    from ..analysis.tensors import Evaluator
    from .candidates import Candidate

MESSAGE = ("{acc} keeps the tensors that pack hook {hook} is given: each keeps its autograd graph, whose saved "
           "tensors keep {hook} and so {acc}, a cycle through autograd's C++ that no collector frees; store "
           "{val}.detach(), or take the entry out in the unpack hook")


@dataclass(frozen=True)
class Registration:
    scope: Function  # where ``saved_tensors_hooks(pack, unpack)`` is called
    pack: str
    unpack: str | None


class PackHooks:
    """Registrations, stores into containers a function does not bind, and what functions take out of
    containers, collected over the file and judged at its end."""

    def __init__(self):
        self.registered: list[Registration] = []
        self.stores: list[Candidate] = []  # each with its function
        # (function, container path it deletes from, the loops around the deletion)
        self.taken_out: list[tuple[Function, str, tuple[Loop, ...]]] = []

    def note_call(self, call: cst.Call, fn: Function) -> None:
        name, recv = ex.method_name(call), ex.receiver(call)
        if name in CLEAR_METHODS and recv is not None and (path := ex.dotted(ex.strip_items(recv))):
            self.taken_out.append((fn, path, tuple(fn.loops)))
        if ex.last_part(ex.callee(call) or "") in PACK_HOOK_REGISTRARS or (name == "__init__" and _hooks_base(call, fn)):
            pack, unpack = ex.arg(call, 0, "pack_hook"), ex.arg(call, 1, "unpack_hook")
            if isinstance(pack, cst.Name):
                self.registered.append(Registration(fn, pack.value, unpack.value if isinstance(unpack, cst.Name)
                                                    else None))

    def note_del(self, node: cst.Del, fn: Function) -> None:
        for t in ex.deleted(node):
            if isinstance(t, cst.Subscript) and (path := ex.dotted(ex.strip_items(t))):
                self.taken_out.append((fn, path, tuple(fn.loops)))

    def keeping(self, evaluator: Evaluator) -> Iterator[tuple[Candidate, str]]:
        """Each store of a pack hook that keeps the tensor it is given, with the hook's name."""
        for c in self.stores:
            fn = c.fn
            for reg in self.registered:
                if (fn.name == reg.pack and visible(fn, reg.scope) and fn.params
                        and _holds_input(evaluator, c, fn) and not self._taken_out(reg, c.acc)):
                    yield c, reg.pack
                    break

    def _taken_out(self, reg: Registration, path: str) -> bool:
        """The pack hook itself deletes from ``path`` (a window of recent entries), or every function the unpack
        hook may be (a def, or a local bound to one of several) does."""
        def deletes(name: str) -> bool:
            return any(f.name == name and visible(f, reg.scope) and p == path for f, p, _ in self.taken_out)

        unpacks = _aliases(reg.scope, reg.unpack) if reg.unpack else set()
        return deletes(reg.pack) or (bool(unpacks) and all(map(deletes, unpacks)))


def _hooks_base(call: cst.Call, fn: Function) -> bool:
    """``super().__init__(pack, unpack)`` in a subclass of ``saved_tensors_hooks``."""
    recv = ex.receiver(call)
    method = fn.enclosing_method()
    return (isinstance(recv, cst.Call) and ex.callee(recv) == "super" and method is not None
            and method.cls is not None and any(ex.last_part(b) in PACK_HOOK_REGISTRARS for b in method.cls.bases))


def visible(fn: Function, scope: Function) -> bool:
    """``fn`` is defined where a name used in ``scope`` can see it: in it or in a scope around it."""
    outer: Function | None = scope
    while outer is not None:
        if fn.parent is outer:
            return True
        outer = outer.parent
    return False


def _aliases(scope: Function, name: str) -> set[str]:
    """``name``, or the functions it names when ``scope`` binds it to one of them
    (``unpack = unpack_streams if streams else unpack_single``)."""
    binding = scope.bindings.get(name)
    parts = assigned_choices(binding.stmt if binding is not None else None)
    if parts and all(isinstance(p, cst.Name) for p in parts):
        return {p.value for p in parts}
    return {name}


def _holds_input(evaluator: Evaluator, c: Candidate, fn: Function) -> bool:
    """The stored value holds the tensor the hook is given, read as the hook runs: with grad off, so that
    ``x * 2`` or ``x.float()`` is a new tensor without a graph, while ``x``, ``(x, n)`` and ``x.cpu()`` (``x``
    itself on a CPU) hold ``x``."""
    saved = fn.no_grad, fn.grad_stack
    fn.no_grad, fn.grad_stack = True, []
    try:
        return fn.params[0] in evaluator.value(c.expr, fn).deps
    finally:
        fn.no_grad, fn.grad_stack = saved
