"""The class table entries of a file read off ``ast`` (for files the pre-filter answers alone):
the same ``project.records.ClassSummary`` fields the full analysis records."""
from __future__ import annotations

import ast
from typing import NamedTuple

from .argument_drops import ObjectAttributes, dropped_arguments
from .ast_reading import AST, held_paths
from .astutil import (
    attribute_stores,
    base_path,
    class_defs,
    class_functions,
    dotted,
    last,
    parameter_names,
    statements,
    stores,
)
from .grad_wrappers import eval_callers, grad_off_methods, library_grad_off, loop_grad_off, no_grad_defs
from .instance_holds import Holds, class_holds, torch_bound
from .judgements import is_weak
from .project.imports import import_origins
from .project.records import ArgumentDrops, MethodKeeps
from .restarts import class_starts
from .vocabulary import (
    CACHES,
    HOOK_RE,
    binds_instance,
    cache_decorator,
    is_module_class,
    method_kind,
)


class MethodFacts(NamedTuple):
    """What the class table says of a class's methods (:func:`method_summaries`)."""

    methods: list[str]
    keeps: dict[str, MethodKeeps]
    weak_slots: list[str]
    drops: dict[str, ArgumentDrops]
    unbound: list[str]  # its static and class methods
    starts: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # restarts.class_starts
    weak_containers: list[str]


def class_summaries(tree: ast.Module, grad_wrappers: bool = True, imports: dict[str, str] | None = None,
                    weak: bool = True, evaluated: bool = True) -> dict:
    """Per class: the ``__init__`` parameters and which of them ``__init__`` stores on ``self``;
    ``grad_wrappers``: whether the file may wrap methods with grad off (:func:`may_turn_grad_off`); ``imports``:
    what the file's imports bind, when it may name a library base that does (:func:`grad_wrappers.library_imports`);
    ``weak``: whether it may name a weak container (:func:`may_name_weak`); ``evaluated``: whether it may define a
    method Lightning evaluates with (:func:`grad_wrappers.may_evaluate`)."""
    out: dict[str, dict] = {}
    module_classes: set[str] = set()
    file_classes = _file_classes(tree)
    torch_names = torch_bound(import_origins(tree)) if file_classes else set()
    for node in class_defs(tree):
        bases = [base_path(b) for b in node.bases]
        is_module = is_module_class(bases, module_classes)
        if is_module:
            module_classes.add(node.name)
        functions = class_functions(node.body)
        holds = class_holds(functions, is_module, torch_names)
        # As the full analysis records it: the parameters of the last ``__init__`` (overloads come
        # first), the parameters any of them stores on ``self``.
        inits = [f for f in functions if f.name == "__init__"]
        params: list[str] = []
        kept: set[str] = set()
        for init in inits:
            a = init.args
            names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs] + [
                p.arg for p in (a.vararg, a.kwarg) if p is not None]
            params = names[1:]
            decos = {last(d.func if isinstance(d, ast.Call) else d) for d in init.decorator_list}
            this = names[0] if names and not decos & {"staticmethod", "classmethod"} else None  # as Walker.function
            for stmt in statements(init.body, into_defs=False):
                for owner, value in attribute_stores(stmt):
                    if owner == this:
                        kept |= {p for p in held_paths(value) if "." not in p} & set(params)
        generated = None if inits else generated_init(node)
        if generated is not None:
            params, kept = generated[0], set(generated[1])
        facts = method_summaries(node, file_classes, weak)
        out[node.name] = {"params": params, "kept": sorted(kept), "bases": bases, "is_module": is_module,
                          "has_init": bool(inits) or generated is not None, "grad_off": grad_off_methods(node) if grad_wrappers else [],
                          "no_grad_defs": no_grad_defs(node) if grad_wrappers else [], **facts._asdict(),
                          "library_grad_off": library_grad_off(node, imports) if imports is not None else {},
                          "loop_grad_off": loop_grad_off(node, imports) if imports is not None else [],
                          "eval_callers": eval_callers(node) if evaluated else {},
                          **holds.summary_fields()}
    return out


def class_holdings(tree: ast.Module, module_classes: set[str], origins: dict[str, str]) -> dict[str, Holds]:
    """:func:`instance_holds.class_holds` of every class of the module (for files the full analysis reads, which
    knows its module classes and import origins already)."""
    torch_names = torch_bound(origins)
    return {node.name: class_holds(class_functions(node.body), node.name in module_classes, torch_names)
            for node in class_defs(tree)}


def generated_inits(tree: ast.Module) -> dict[str, tuple[list[str], list[str]]]:
    """:func:`generated_init` of every class of the module that has one (for files the full analysis reads)."""
    return {node.name: found for node in class_defs(tree) if (found := generated_init(node)) is not None}


def generated_init(node: ast.ClassDef) -> tuple[list[str], list[str]] | None:
    """The parameters of the ``__init__`` that ``@dataclass`` or ``NamedTuple`` writes for a class, and those it
    stores on the instance (all but ``InitVar``s): the annotated names of the class body, less ``ClassVar``s, the
    ``KW_ONLY`` marker and ``field(init=False)``. A class with other bases may inherit fields that come first, so
    its parameters are ``[]``: only keywords are matched. None for any other class, one that writes its own
    ``__init__``, and ``@dataclass(init=False)``."""
    named_tuple = any(last(b) == "NamedTuple" for b in node.bases)
    decorator = next((d for d in node.decorator_list if last(d.func if isinstance(d, ast.Call) else d) == "dataclass"),
                     None)
    if (decorator is None and not named_tuple) or _sets_init_false(decorator) or any(
            f.name == "__init__" for f in class_functions(node.body)):
        return None
    params: list[str] = []
    kept: list[str] = []
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        kind = last(stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation)
        if kind in ("ClassVar", "KW_ONLY") or _sets_init_false(stmt.value):
            continue
        params.append(stmt.target.id)
        if kind != "InitVar":
            kept.append(stmt.target.id)
    return (params if named_tuple or not node.bases else []), kept


def _sets_init_false(node: ast.AST | None) -> bool:
    """``dataclass(init=False)``, ``field(init=False)``."""
    return isinstance(node, ast.Call) and any(
        k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords)


def class_methods(tree: ast.Module, weak: bool = True) -> dict[str, MethodFacts]:
    """:func:`method_summaries` of every class of the module (for files the full analysis reads)."""
    file_classes = _file_classes(tree)
    return {node.name: method_summaries(node, file_classes, weak) for node in class_defs(tree)}


def _file_classes(tree: ast.Module) -> dict[str, list[str]]:
    """The classes the module defines, with their bases' names."""
    return {node.name: [base_path(b) for b in node.bases] for node in class_defs(tree)}


def method_summaries(cls: ast.ClassDef, file_classes: dict[str, list[str]] | None = None,
                     weak: bool = True) -> MethodFacts:
    """The class's methods other than ``__init__`` (static and class methods, properties aside), and
    those that store an argument on the instance: as an attribute, in a container it holds, or through
    a property whose setter keeps what it is given (a setter that keeps ``weakref.ref(value)`` does not);
    the attributes that ``obj.X = value`` sets without keeping ``value`` (:func:`weak_slots`); the
    arguments a method named like a hook registration keeps nothing of (argument_drops.py); its static and
    class methods; what each method starts anew (restarts.py); and, where the file may name one (``weak``), the
    attributes it binds only to weak containers (:func:`weak_containers`)."""
    functions = class_functions(cls.body)
    decorators = {id(f): {last(d.func if isinstance(d, ast.Call) else d) for d in f.decorator_list} for f in functions}
    kinds = {id(f): method_kind(f.name, decorators[id(f)]) for f in functions}
    properties = {f.name for f in functions if kinds[id(f)] in ("property", "cached_property")}
    setters = {f.name: _kept_arguments(f, set()) for f in functions if "setter" in decorators[id(f)]}
    through = {name for name, kept in setters.items() if kept}
    methods: list[str] = []
    keeps: dict[str, MethodKeeps] = {}
    drops: dict[str, ArgumentDrops] = {}
    objects = ObjectAttributes(functions, file_classes or {})
    for f in functions:
        if f.name == "__init__" or f.name in properties or not binds_instance(kinds[id(f)]):
            continue
        methods.append(f.name)
        hands: dict[str, list[tuple[str, str, int | str]]] = {}
        kept = _kept_arguments(f, properties - through, objects, hands)
        if kept or hands:
            params = parameter_names(f)[1:]
            keeps[f.name] = MethodKeeps(params, [p for p in params if p in kept], hands)
        if HOOK_RE.match(f.name) and (dropped := dropped_arguments(f, objects)) is not None:
            drops[f.name] = dropped
    unbound = sorted({f.name for f in functions if not binds_instance(kinds[id(f)])})
    return MethodFacts(list(dict.fromkeys(methods)), keeps, weak_slots(functions, setters), drops, unbound,
                       class_starts(functions), weak_containers(functions) if weak else [])


def weak_containers(functions: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> list[str]:
    """The attributes ``X`` that every ``self.X = value`` of the class's methods binds to a weak container
    (``WeakValueDictionary()``, ``WeakSet()``): what is put into ``obj.X[k]`` is not kept by it."""
    weak: dict[str, bool] = {}
    for f in functions:
        names = parameter_names(f)
        for stmt in statements(f.body, into_defs=False) if names else ():
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
                stmt, ast.AnnAssign) and stmt.value is not None else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and (
                        target.value.id == names[0]):
                    weak[target.attr] = weak.get(target.attr, True) and is_weak(AST, stmt.value)
    return sorted(attr for attr, only_weak in weak.items() if only_weak)


def may_name_weak(text: str | bytes) -> bool:
    """Can the file bind a weak container? Only then are its classes' stores read for one."""
    words = ("weak", "Weak") if isinstance(text, str) else (b"weak", b"Weak")
    return any(w in text for w in words)


def weak_slots(functions: list[ast.FunctionDef | ast.AsyncFunctionDef], setters: dict[str, set[str]]) -> list[str]:
    """The attributes ``obj.X = value`` sets without keeping ``value`` on the instance: a property setter that
    keeps nothing of it (``self._ref = weakref.ref(value)``), or a branch of ``__setattr__`` for that name that
    does not (``elif key == "_parent": self.__dict__[key] = weakref.ref(value)``, torch_geometric's storages)."""
    found = {name for name, kept in setters.items() if not kept}
    for f in functions:
        names = parameter_names(f)
        if f.name != "__setattr__" or len(names) != 3:
            continue
        for node in ast.walk(f):
            test = node.test if isinstance(node, ast.If) else None
            if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == names[1]
                    and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                    and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str)
                    and names[2] not in _kept_in(node.body, names[0], {names[2]})):
                found.add(test.comparators[0].value)
    return sorted(found)


def _kept_arguments(f: ast.FunctionDef | ast.AsyncFunctionDef, not_kept: set[str],
                    objects: ObjectAttributes | None = None,
                    hands: dict[str, list[tuple[str, str, int | str]]] | None = None) -> set[str]:
    """The parameters of method ``f`` it stores on its instance; a store to an attribute in ``not_kept``
    (a property whose setter keeps nothing) keeps nothing, nor does a call of an object's method (``objects``).
    ``hands``: filled with the arguments handed to a method of an object of a class another file defines, which
    keeps them or not as the project says (``self.storage.update(strategy)``, ``storage`` a ``Reservoir``)."""
    names = parameter_names(f)
    return _kept_in(f.body, names[0], set(names[1:]), not_kept, objects, hands) if len(names) >= 2 else set()


def _kept_in(body: list[ast.stmt], this: str, params: set[str], not_kept: set[str] | frozenset[str] = frozenset(),
             objects: ObjectAttributes | None = None,
             hands: dict[str, list[tuple[str, str, int | str]]] | None = None) -> set[str]:
    """Of ``params``, those the statements ``body`` store on the instance ``this`` (see :func:`_kept_arguments`)."""
    kept: set[str] = set()
    for stmt in statements(body, into_defs=False):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            calls = [stmt.value]  # self.items.append(arg), setattr(self, "x", arg)
            receiver = dotted(stmt.value.func.value) if isinstance(stmt.value.func, ast.Attribute) else None
            if objects is not None and receiver in objects:
                continue
            if objects is not None and hands is not None and (handed := objects.handed_on(stmt.value, this, params)):
                for param, hand in handed:
                    hands.setdefault(param, []).append(hand)
                continue
        elif not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        else:
            calls = []
        for owner, value, slot in stores(stmt, calls):
            if owner and owner.split(".")[0] == this and not (owner == this and slot in not_kept):
                kept |= {p for p in held_paths(value) if "." not in p} & params
    return kept


def cache_factories(tree: ast.Module, text: str | bytes, origins: dict[str, str] | None = None) -> list[str]:
    """Module-level functions that build an ``lru_cache``/``cache`` inside (``def method_cache(**kw):
    ... lru_cache(**kw)(func)``): decorating a method with one caches its instances, as lru_cache does.
    A file whose text names none of ``CACHES`` calls none (two thirds of transformers): not walked."""
    if not any((name if isinstance(text, str) else name.encode()) in text for name in CACHES):
        return []
    origins = import_origins(tree) if origins is None else origins  # the full analysis has read them already
    return sorted(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and _builds_shared_cache(node, origins))


def _builds_shared_cache(func: ast.FunctionDef | ast.AsyncFunctionDef, origins: dict[str, str]) -> bool:
    """An lru_cache built in ``func`` outside any inner function that takes ``self``: one built per instance
    (``def create_cache(self, ...): lru_cache(...)(f).__get__(self)``, flair's fix) keeps no other instance."""
    stack: list[ast.AST] = [func]
    while stack:
        node = stack.pop()
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not func
                and node.args.args and node.args.args[0].arg == "self"):
            continue
        if isinstance(node, ast.Call) and cache_decorator(dotted(node.func) or "", origins):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False
