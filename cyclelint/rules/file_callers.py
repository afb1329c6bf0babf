"""The calls of one file with the grad mode each runs in: whether a function of the file is only called with grad
off there, and, for the project, every call (``FileFacts.grad_calls``, read by project/callers.py), and whether it
may pass a graph (``FileFacts.graph_calls``): a call with grad off, or one whose every argument is graph-free
(``inp[0].data``, ``x.detach()``, ``loss.item()``, or what holds no tensor: a constant, a flag, a shape), passes
none."""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..analysis.scopes import Function
from ..analysis.tensors import Value
from .ctx_outputs import tensorless


def passes_graph_free(call: cst.Call, value: Callable[[cst.BaseExpression], Value]) -> bool:
    """Every argument of ``call`` is known to hold no graph; a call without arguments passes nothing at all."""
    return bool(call.args) and all(not a.star and (tensorless(a.value) or (
        (v := value(a.value)).detached and not v.attached)) for a in call.args)


class FileCallers:
    """Function name, "Class.method" for ``self.method()`` of a method the class defines, or "super().method" ->
    (grad mode, the caller's own such key) of each call in the file; and (whether it may pass a graph, the caller)."""

    def __init__(self):
        self.calls: dict[str, set[tuple[bool, str]]] = {}
        self.graphs: dict[str, set[tuple[bool, str]]] = {}

    def note(self, called: str, fn: Function, graph_free: bool | None = None) -> None:
        """``graph_free``: None for a call of a bare name (``add_batch(name)``), which runs a function, never a
        method, and so says nothing of what a method is passed."""
        self.calls.setdefault(called, set()).add((fn.grad_enabled, fn.qualified_name))
        if graph_free is not None:
            self.graphs.setdefault(called, set()).add((fn.grad_enabled and not graph_free, fn.qualified_name))

    def only_without_grad(self, fn: Function | None) -> bool:
        """Every call of this function in the file runs under no_grad (``_sample`` called by ``generate``),
        directly or from functions themselves only called so (``encode_prompt`` by a ``@no_grad`` ``__call__``)."""
        return fn is not None and self._grad_off(fn.qualified_name, set())

    def _grad_off(self, name: str, seen: set[str]) -> bool:
        # a method is also called as ``obj.method()`` on an object of its class, which the plain name holds, and as
        # ``super().method()`` by an override
        last = name.rpartition(".")[2]
        calls = self.calls.get(name, set()) | self.calls.get(last, set()) | self.calls.get(f"super().{last}", set())
        if not calls or name in seen:
            return False  # never called here, or called around a cycle: nothing shows grad is off
        return all(not mode or self._grad_off(caller, seen | {name}) for mode, caller in calls)
