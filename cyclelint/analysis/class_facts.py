"""What a method's stores on its instance tell about the instance's class (``ClassInfo``): the attributes it
sets, which hold modules and of which class, the ``__init__`` parameters it keeps, and the attributes some
method drops again (a teardown)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import libcst as cst

from ..vocabulary import object_class, torch_rooted
from . import exprs as ex
from .casts import integer_tensor
from .held import held_names
from .holds import annotation_of, code_class
from .weak import is_weak

if TYPE_CHECKING:
    from .scopes import ClassInfo, Function, Store
    from .tensors import Value


def note_attr_store(store: Store, fn: Function, value_of: Callable[[cst.BaseExpression], Value]) -> None:
    """``self.X = value`` in a method of a class (``value_of``: what an expression is there)."""
    method = fn.enclosing_method()
    attr = own_attr(store.target, fn.instance)
    if store.kind != "attr" or method is None or method.cls is None or attr is None:
        return
    cls = method.cls
    cls.data_attrs.add(attr)
    val = value_of(store.value)
    if val.module:
        cls.module_attrs.add(attr)
    # the class: from the value's constructor, the annotation of the parameter stored, or the store's own
    param = store.value.value if isinstance(store.value, cst.Name) and fn is method else None
    kind = val.cls or (code_class(annotation_of(param, method)) if param in method.params[1:] else None) or (
        code_class(store.stmt.annotation.annotation) if isinstance(store.stmt, cst.AnnAssign) else None)
    if kind:
        cls.attr_types[attr] = kind
    cls.weak_attrs[attr] = cls.weak_attrs.get(attr, True) and is_weak(store.value)  # ``self.refs = WeakSet()``
    if isinstance(store.value, cst.Call) and torch_rooted(ex.callee(store.value)):
        cls.tensor_dtypes.setdefault(attr, set()).add(integer_tensor(store.value))
    if method.name == "__init__" and fn is method:
        for param in sorted(held_names(store.value) & set(fn.params[1:])):
            cls.kept_params.setdefault(param, attr)
    if ex.is_none(store.value):
        note_release(attr, fn)


def note_release(slot: str | None, fn: Function) -> None:
    """``slot`` dropped in a method's own body (a nested function may never run), other than ``__init__``: the
    class drops what it held, as a teardown does (``ClassInfo.released``). ``slot``: ``X`` of ``self.X = None``
    or ``del self.X``, a keyed item of a container the method does not bind, ``_context["current"] = None``,
    ``del registry[self.name]``, or an attribute of another object, ``SCOPE.current = None``."""
    container, keyed, _ = (slot or "").partition("[")
    local = bool(keyed) and container.partition(".")[0] in {*fn.params, *fn.stored}
    if slot and fn.is_method and fn.cls is not None and fn.name != "__init__" and not local:
        fn.cls.released.setdefault(slot, set()).add(fn.name)


def note_clear(call: cst.Call, name: str, recv: cst.BaseExpression, fn: Function) -> None:
    """``items.clear()``, ``registry.pop(self.name, None)``...: the enclosing loops reset the container, and a method
    drops a slot of its class: the keyed item, or what ``__enter__`` pushed where ``__exit__`` pops the last item
    (``STACK.pop()``) or removes the instance (``STACK.remove(self)``)."""
    path = ex.dotted(ex.strip_items(recv))
    if path:
        for loop in fn.loops:
            loop.resets.add(path)
    first = call.args[0].value if call.args else None
    key = key_text(first) if name == "pop" and path and first is not None else None
    pushed = path and ((name == "pop" and first is None) or (
        name in ("remove", "discard") and isinstance(first, cst.Name) and first.value == fn.instance))
    note_release(f"{path}[{key}]" if key else f"{path}[]" if pushed else None, fn)


def object_receiver(kind: str | None, classes: dict[str, ClassInfo]) -> bool:
    """``self.buffer.update(self)`` with ``self.buffer = Buffer()``, a class of this file: a method of the buffer's
    class, no store. A class of another file may derive from ``dict`` (torchbearer's ``State``): a container."""
    return kind in classes and object_class(kind, classes[kind].bases)


def judged_in_file(cls: ClassInfo, classes: dict[str, ClassInfo]) -> bool:
    """``cls`` derives from nothing and no class of its file derives from it: what its methods do is all in the
    file. A class with bases, or a mixin (torch-uncertainty's ``_SCODRiskCoverageMixin``, mixed into torchmetrics
    metrics by ``class SCODAURC(_SCODRiskCoverageMixin, AURC)``), runs its methods as other classes' too."""
    return not cls.bases and not any(ex.last_part(b) == cls.name for other in classes.values() for b in other.bases)


def own_attr(path: str | None, instance: str | None, nested: bool = False) -> str | None:
    """X of ``instance.X``; with ``nested``, also of ``instance.X.y`` (``self.X`` holds what is stored deeper)."""
    head, _, rest = (path or "").partition(".")
    attr, _, deeper = rest.partition(".")
    return attr if instance and head == instance and attr and (nested or not deeper) else None


def deleted_slot(target: cst.BaseExpression, fn: Function) -> str | None:
    """The slot ``del target`` drops: ``X`` of ``self.X``, a keyed item (``item_slot``), or an attribute of
    another object (``del SCOPE.current``)."""
    path = ex.dotted(target)
    return own_attr(path, fn.instance) or item_slot(target) or (path if isinstance(target, cst.Attribute) else None)


def item_slot(target: cst.BaseExpression) -> str | None:
    """``registry["current"]``, ``registry[self.name]``: an item whose key is a constant or a dotted name, the
    same slot wherever the code writes it; None for any other key."""
    if not isinstance(target, cst.Subscript) or len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return None
    owner, key = ex.dotted(target.value), key_text(target.slice[0].slice.value)
    return f"{owner}[{key}]" if owner and key else None


def key_text(key: cst.BaseExpression) -> str | None:
    if isinstance(key, cst.SimpleString):
        return repr(key.evaluated_value)
    if isinstance(key, cst.Integer):
        return key.value
    return ex.dotted(key)


def torn_down(cls: ClassInfo, slot: str, method: Function) -> bool:
    """What ``method`` stores in ``slot`` (``X`` of ``self.X``, or a keyed item: ``note_release``) is dropped
    again by another method of the class (:func:`undoing`)."""
    return bool(undoing(cls.released.get(slot, ()), method))


def undoing(methods: Iterable[str], method: Function) -> set[str]:
    """Of ``methods`` of its class, those that may undo what ``method`` did: the others, which ``method`` does not
    call itself (a ``self._reset()`` before the store is no teardown)."""
    return set(methods) - {method.name} - method.self_loads


NUMBER_CALLS = frozenset({"int", "float", "len", "bool"})  # builtins whose result is a Python number, whatever given


def number_attrs(node: cst.ClassDef) -> frozenset[str]:
    """X of each ``self.X`` that the methods of the class store, every store a number: a literal, ``int(...)``,
    ``float(...)``, ``len(...)`` or arithmetic of these (nemo's ``self.per_overlap_min_len = 0``, later ``int(...)``).
    Such an attribute holds no tensor, so no graph. One the class body binds too is left out (read from there until
    set), as is one that a ``for``, a ``with`` or an unpacking binds."""
    numbers: dict[str, bool] = {}
    at_class = {name for line in node.body.body if isinstance(line, cst.SimpleStatementLine) for small in line.body
                if isinstance(small, (cst.Assign, cst.AnnAssign)) for name in ex.loaded_names(
                    small.targets[0].target if isinstance(small, cst.Assign) else small.target)}
    stack: list[tuple[cst.CSTNode, str | None]] = [(s, None) for s in node.body.body]
    while stack:
        cur, instance = stack.pop()
        if isinstance(cur, cst.FunctionDef) and instance is None:  # a nested function shares its method's instance
            instance = cur.params.params[0].name.value if cur.params.params else None
        stores: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = []
        if isinstance(cur, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and cur.value is not None:
            targets = [t.target for t in cur.targets] if isinstance(cur, cst.Assign) else [cur.target]
            stores = [(t, cur.value if isinstance(t, cst.Attribute) else None) for t in targets]
        elif isinstance(cur, cst.For) or isinstance(cur, cst.WithItem) and cur.asname is not None:
            stores = [(cur.target if isinstance(cur, cst.For) else cur.asname.name, None)]
        for target, value in stores:
            for path in _target_paths(target):
                if (attr := own_attr(path, instance)) is not None:
                    numbers[attr] = numbers.get(attr, True) and value is not None and _number(value)
        if not isinstance(cur, (cst.ClassDef, cst.BaseExpression)):
            stack.extend((child, instance) for child in ex.child_nodes(cur))
    return frozenset(attr for attr, number in numbers.items() if number and attr not in at_class)


def _target_paths(target: cst.BaseExpression) -> list[str]:
    """The dotted paths a store target binds: itself, or the elements of a tuple or list it unpacks into."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [p for el in target.elements for p in _target_paths(el.value)]
    path = ex.dotted(target) if isinstance(target, cst.Attribute) else None
    return [path] if path else []


def _number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _number(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _number(expr.left) and _number(expr.right)
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in NUMBER_CALLS
