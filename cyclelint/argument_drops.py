"""The arguments a method keeps nothing of, read off ``ast`` for every class of a file (the class table's
``ClassSummary.drops``): a hook handed to a method of the project that keeps only its name holds nothing
(agilerl's ``register_mutation_hook(hook)`` hands it to ``self.registry.register_hook``, which appends
``hook.__name__``). Judged by every use of the parameter: any use this module cannot read keeps the argument.
Read only for methods named like a hook registration (``register_*hook``, as CYC104 finds registrations): reading
every method added a third to the class table's time on transformers, and a method that hands a hook on is
named like one."""
from __future__ import annotations

import ast

from .ast_reading import held_paths
from .astutil import child_nodes, dotted, parameter_names, statements, stores, walk
from .project.records import ArgumentDrops
from .vocabulary import constructed_class, object_class

# reading one of these gives a string: nothing of the object is kept
NAME_ATTRIBUTES = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
# a builtin asked about its argument answers a plain value
PLAIN_QUESTIONS = frozenset({"isinstance", "callable", "id", "repr", "str"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class ObjectAttributes:
    """What the class's methods set the instance's attributes to (``self.registry = MutationRegistry(cfg)``):
    ``self.X.method(...)`` calls a method of that class. Read only when a method makes such a call."""

    def __init__(self, functions: list[ast.FunctionDef | ast.AsyncFunctionDef], file_classes: dict[str, list[str]]):
        self.functions, self.file_classes = functions, file_classes
        self._kinds: dict[str, set[str | None]] | None = None

    def kinds(self) -> dict[str, set[str | None]]:
        """``self.X`` -> the classes its stores construct (None: a store of anything else)."""
        if self._kinds is None:
            self._kinds = {}
            for f in self.functions:
                this = parameter_names(f)[:1]
                for stmt in statements(f.body, into_defs=False):
                    for owner, value, slot in stores(stmt, []):
                        if [owner] == this and slot:
                            kind = constructed_class(dotted(value.func)) if isinstance(value, ast.Call) else None
                            self._kinds.setdefault(f"{owner}.{slot}", set()).add(kind)
        return self._kinds

    def __contains__(self, path: str) -> bool:
        """Some store sets ``path`` to an object of a class of the same file that is no container
        (vocabulary.object_class): its methods keep what they are given, or not, as that class says."""
        return any(kind in self.file_classes and object_class(kind, self.file_classes[kind])
                   for kind in self.kinds().get(path, ()))

    def receiver_class(self, call: ast.Call, this: str) -> str | None:
        """The class of ``self.X`` in a call ``self.X.method(...)`` (``this``: the instance), when every store of
        ``self.X`` builds one and the call's argument positions are known (no ``*args``)."""
        path = dotted(call.func.value) if isinstance(call.func, ast.Attribute) else None
        if not path or not path.startswith(this + ".") or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        return self.sole_class(path)

    def handed_on(self, call: ast.Call, this: str, params: set[str]) -> list[tuple[str, tuple[str, str, int | str]]]:
        """``self.X.method(..., param, ...)`` where ``self.X`` is an object of a class that is no container and that
        the file does not define (:meth:`receiver_class`): each parameter passed and (class, method, slot).
        Nothing when a parameter is passed inside another value or as ``**``."""
        kind = self.receiver_class(call, this)
        if kind is None or kind in self.file_classes or not object_class(kind):
            return []
        passed = _passed(call)
        named = [(a.id, (kind, call.func.attr, slot)) for slot, a in passed if isinstance(a, ast.Name) and a.id in params]
        holding = [k.value for k in call.keywords if k.arg is None] + [a for _, a in passed]
        holding = [a for a in holding if {p for p in held_paths(a) if "." not in p} & params]
        return named if len(named) == len(holding) else []  # ``(arg, x)`` or ``**kw`` may be kept as they are

    def sole_class(self, path: str) -> str | None:
        """The class every store of ``path`` constructs, if there is one."""
        found = self.kinds().get(path, set())
        return next(iter(found)) if len(found) == 1 else None


def dropped_arguments(f: ast.FunctionDef | ast.AsyncFunctionDef, objects: ObjectAttributes) -> ArgumentDrops | None:
    """Of method ``f``'s parameters after the instance, those it keeps nothing of itself: each use reads a name
    attribute, asks a plain question (``isinstance(hook, ...)``) or hands the argument to a method of an object
    the instance holds (``objects``), which the project judges in turn."""
    names = parameter_names(f)
    params = names[1:]
    if not params:
        return None
    uses: dict[str, list[tuple[str, str, int | str]]] = {p: [] for p in params}  # a kept one leaves
    nested: list[ast.AST] = []
    stack: list[ast.AST] = list(f.body)
    while stack and uses:
        parent = stack.pop()
        if isinstance(parent, ast.keyword):
            continue  # its value is read with the call's arguments
        keywords = [k.value for k in parent.keywords] if isinstance(parent, ast.Call) else []
        for child in child_nodes(parent) + keywords:
            if isinstance(child, _SCOPES):
                nested.append(child)  # a closure or class body that names the argument may keep it
            elif isinstance(child, ast.Name) and child.id in uses:
                hand_off = _hand_off(parent, child, names[0], objects)
                if hand_off is None:
                    del uses[child.id]
                else:
                    uses[child.id] += hand_off
            else:
                stack.append(child)
    for node in (n for scope in nested if uses for n in walk(scope)):
        if isinstance(node, ast.Name):
            uses.pop(node.id, None)
    return ArgumentDrops(params, uses) if uses else None


def _hand_off(parent: ast.AST, name: ast.Name, this: str,
              objects: ObjectAttributes) -> list[tuple[str, str, int | str]] | None:
    """What one use of a parameter does with it: ``[]`` keeps nothing, ``[(cls, method, slot)]`` hands it to that
    method, None may keep it."""
    if isinstance(parent, ast.Attribute) and parent.attr in NAME_ATTRIBUTES:
        return []
    if not isinstance(parent, ast.Call) or parent.func is name:
        return None
    if isinstance(parent.func, ast.Name) and parent.func.id in PLAIN_QUESTIONS and parent.args[:1] == [name]:
        return []
    kind = objects.receiver_class(parent, this)
    slot = next((slot for slot, a in _passed(parent) if a is name), None)
    return None if kind is None or slot is None else [(kind, parent.func.attr, slot)]


def _passed(call: ast.Call) -> list[tuple[int | str, ast.expr]]:
    """(slot, value) of each argument: its position, or its keyword (``**kw`` aside)."""
    return [*enumerate(call.args), *((k.arg, k.value) for k in call.keywords if k.arg)]
