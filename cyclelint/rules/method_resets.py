"""What a method empties itself: ``self.X = []`` (any rebinding of ``self.X`` from scratch) or ``self.X.clear()``.
What it then appends to ``self.X`` is bounded by what one call adds, not kept across calls. nni's distillation
target keeps only the latest hidden state: ``self._buffer.clear()`` and then ``self._buffer.append(val)``. Like a
rebinding, a ``clear()`` anywhere in the method counts; emptying in another method (at epoch end) does not.

And what a forward pass empties: a function that runs a module and empties a container (``self.hidden.clear()``,
``self.save_output.outputs.clear()``, or a method of the container's class that empties it,
``self.save_output.clear(device)``) takes what a hook put there during that pass, one pass at a time: vit-pytorch's
``NetWrapper.get_embedding`` around ``self.net(x)``, pyiqa's feature extractors around ``self.vit(x)``. What a module
hook keeps in that container (``Class.X``) is then one pass's, not every step's. Emptying it elsewhere (a ``reset()``
at epoch end) keeps the finding."""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function, Store
from ..analysis.tensors import Value

EMPTY = (cst.List, cst.Dict, cst.Tuple)


class MethodResets:
    def __init__(self):
        self.paths: dict[int, set[str]] = {}  # per function: the self.X it empties
        self.emptied: dict[int, set[tuple[str, str]]] = {}  # per function: (class, X) it empties, itself or by a call
        self.forwards: set[int] = set()  # functions that run a module
        self.by_methods: dict[tuple[str, str], set[str]] = {}  # (class, method) -> the X of self it empties
        self.passes: list[tuple[str, str]] = []  # (class, X) of containers a function running a module empties, or
        # (class, "method()") of methods of theirs it calls, resolved when the file ends

    def note(self, path: str | None, fn: Function) -> None:
        """``path`` (``self.X``) rebound from scratch in ``fn``; a branch that tested it to be None sets it up."""
        if fn.instance and path and path.startswith(fn.instance + ".") and path not in fn.unset:
            self.paths.setdefault(id(fn), set()).add(path)
            self._own(path, fn)

    def note_item(self, store: Store, fn: Function) -> None:
        """``self.X[k] = []``: an item emptied, which a hook that appends to ``self.X[k]`` fills afresh."""
        if store.kind == "item" and isinstance(store.value, EMPTY) and not _elements(store.value) and store.owner:
            self._own(store.owner, fn)

    def note_call(self, call: cst.Call, fn: Function, value: Callable[[cst.BaseExpression], Value]) -> None:
        if _runs_module(call, fn, value):
            self.forwards.add(id(fn))
        recv = ex.receiver(call)
        if recv is None:
            return
        if ex.method_name(call) == "clear" and not call.args:
            self.note(ex.dotted(recv), fn)
            if isinstance(recv, cst.Attribute) and (kind := value(recv.value).cls):  # self.save_output.outputs
                self.emptied.setdefault(id(fn), set()).add((kind, recv.attr.value))
        elif (kind := value(recv).cls) is not None:  # self.save_output.clear(device): judged once its class is read
            self.emptied.setdefault(id(fn), set()).add((kind, f"{ex.method_name(call)}()"))

    def _own(self, path: str, fn: Function) -> None:
        """``self.X`` of ``fn``'s class emptied by ``fn``."""
        owner, _, attr = path.rpartition(".")
        method = fn.enclosing_method()
        if owner == fn.instance and method is not None and method.cls is not None:
            self.by_methods.setdefault((method.cls.name, method.name), set()).add(attr)
            self.emptied.setdefault(id(fn), set()).add((method.cls.name, attr))

    def leave(self, fn: Function) -> set[str]:
        emptied = self.emptied.pop(id(fn), set())
        if id(fn) in self.forwards:
            self.forwards.discard(id(fn))
            self.passes += emptied
        return self.paths.pop(id(fn), set())

    def per_pass(self) -> set[tuple[str, str]]:
        """(class, X): containers some function empties around the module it runs."""
        out = {(kind, attr) for kind, attr in self.passes if not attr.endswith("()")}
        for kind, called in self.passes:
            if called.endswith("()"):
                out |= {(kind, attr) for attr in self.by_methods.get((kind, called[:-2]), ())}
        return out


def _elements(display: cst.BaseExpression) -> bool:
    return bool(display.elements)  # type: ignore[attr-defined]


def _runs_module(call: cst.Call, fn: Function, value: Callable[[cst.BaseExpression], Value]) -> bool:
    """A forward pass: a module called (``self.net(x)``), or, in a method of a module class, an attribute of the
    instance that is none of its methods (``self.vit(x)``, a submodule whatever built it)."""
    if isinstance(call.func, (cst.Name, cst.Attribute)) and value(call.func).module:
        return True
    method = fn.enclosing_method()
    head, _, attr = (ex.dotted(call.func) or "").partition(".")
    return (method is not None and method.cls is not None and method.cls.is_module and head == fn.instance
            and bool(attr) and "." not in attr and attr not in method.cls.methods)
