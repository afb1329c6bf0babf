"""The arguments a method keeps nothing of, read off ``ast`` for every class of a file (the class table's
``ClassSummary.drops``): a hook handed to a method of the project that keeps only its name holds nothing
(agilerl's ``register_mutation_hook(hook)`` hands it to ``self.registry.register_hook``, which appends
``hook.__name__``). Judged by every use of the parameter, never by names: any use this module cannot read
keeps the argument."""
from __future__ import annotations

import ast

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
    uses: dict[str, list[tuple[str, str, int | str]] | None] = {p: [] for p in params}
    for parent in _own_nodes(f):
        for child in child_nodes(parent):
            if isinstance(child, ast.Name) and child.id in uses and uses[child.id] is not None:
                hand_off = _hand_off(parent, child, names[0], objects)
                uses[child.id] = None if hand_off is None else uses[child.id] + hand_off
    for nested in _nested_scopes(f):  # a closure or class body that names the argument may keep it
        for node in walk(nested):
            if isinstance(node, ast.Name) and node.id in uses:
                uses[node.id] = None
    dropped = {p: hands for p, hands in uses.items() if hands is not None}
    return ArgumentDrops(params, dropped) if dropped else None


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
    func = parent.func
    path = dotted(func.value) if isinstance(func, ast.Attribute) else None
    kind = objects.sole_class(path) if path and path.startswith(this + ".") else None
    if kind is None:
        return None
    slot = next((i for i, a in enumerate(parent.args) if a is name), None)
    slot = slot if slot is not None else next((k.arg for k in parent.keywords if k.value is name and k.arg), None)
    return None if slot is None else [(kind, func.attr, slot)]


def _own_nodes(f: ast.FunctionDef | ast.AsyncFunctionDef):
    """Every node of ``f``'s body outside the functions, lambdas and classes nested in it."""
    stack: list[ast.AST] = list(f.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in child_nodes(node) if not isinstance(c, _SCOPES))


def _nested_scopes(f: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    return [c for node in _own_nodes(f) for c in child_nodes(node) if isinstance(c, _SCOPES)]
