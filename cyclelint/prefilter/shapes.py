"""Shapes of statements and expressions the pre-filter tests (each the necessary part of a rule's test)."""
from __future__ import annotations

import ast

from ..ast_reading import AST, held_paths
from ..astutil import (
    class_defs,
    class_functions,
    dotted,
    last,
    module_statements,
    reaches,
    statements,
    strip_items,
    walk,
)
from ..judgements import capture_walk, is_weak, slot_wrapper
from ..reading import ATTRIBUTE, LAMBDA, NAME
from ..vocabulary import GRAD_TENSOR_TYPES, MODULE_TYPES, PARTIALS, STORE_METHODS, TENSOR_TYPES, method_kind, name_holds


def mentions(value: ast.AST, path: str) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and dotted(n) == path for n in walk(value))


def may_depend(values: list[ast.AST], instance: str | None) -> bool:
    """Whether the evaluator may find these attached or fed by a parameter: only through a call
    or a name other than the instance (``self.n = self.n + 1`` and ``self.d = self.d or {}`` are not)."""
    return any(isinstance(n, ast.Call) or (isinstance(n, ast.Name) and n.id != instance)
               for value in values for n in walk(value))


def may_carry_graph(value: ast.AST) -> bool:
    """False for values the evaluator never finds attached: constants and ``Cls(...)`` instances."""
    if isinstance(value, (ast.Constant, ast.Lambda, ast.JoinedStr)):
        return False
    return not (isinstance(value, ast.Call) and last(value.func)[:1].isupper())


def is_name(node: ast.AST, name: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def is_attr_of(node: ast.AST, root: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == root


def ctor_with(value: ast.AST, instance: str) -> bool:
    """``Cls(..., self, ...)`` anywhere in ``value``."""
    return any(
        isinstance(n, ast.Call) and last(n.func)[:1].isupper()
        and any(isinstance(a, ast.Name) and a.id == instance for a in n.args + [k.value for k in n.keywords])
        for n in walk(value)
    )


def regular_methods(tree: ast.Module) -> set[str]:
    """Names of the plain methods of every class in the file (what a bound-method store needs)."""
    out = set()
    for node in class_defs(tree):
        for f in class_functions(node.body):
            if method_kind(f.name, {last(d.func if isinstance(d, ast.Call) else d) for d in f.decorator_list}) == "method":
                out.add(f.name)
    return out


def module_level_names(tree: ast.Module) -> set[str]:
    """Every name the module's top level binds, and every class and function name: a superset of what
    CYC404 accepts as a registry (storage._is_registry: a module-level binding, or a class's attribute)."""
    out = {node.name for node in module_statements(tree)
           if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in statements(tree.body, into_defs=False):
        for sub in walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
            elif isinstance(sub, ast.alias):
                out.add((sub.asname or sub.name).split(".")[0])
    return out


def target_root(target: ast.AST) -> str:
    return (dotted(strip_items(target)) or "").split(".")[0]


def annotation_words(ann: ast.AST) -> set[str]:
    """The names an annotation mentions, quoted ones included (``"nn.Module"``)."""
    words = {n.id if isinstance(n, ast.Name) else n.attr for n in walk(ann) if isinstance(n, (ast.Name, ast.Attribute))}
    for n in walk(ann):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            words |= set(n.value.replace("[", " ").replace("]", " ").replace(".", " ").replace(",", " ").split())
    return words


def sized_params(args: ast.arguments, module_classes: set[str]) -> set[str]:
    """The parameters that may hold a tensor or a module, ``*args`` and ``**kwargs`` included: a superset
    of holds.variable_holds for parameters (the annotation, else the name)."""
    every = args.posonlyargs + args.args + args.kwonlyargs + [p for p in (args.vararg, args.kwarg) if p is not None]
    return {p.arg for p in every if name_holds(p.arg) or (p.annotation is not None and annotation_words(
        p.annotation) & (TENSOR_TYPES | MODULE_TYPES | module_classes))}


def tensor_typed(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A public method with a parameter annotated as a tensor: any caller may pass one with its graph (a superset
    of rules/graph_inputs.caller_tensors)."""
    args = node.args
    return not node.name.startswith("_") and any(
        p.annotation is not None and annotation_words(p.annotation) & GRAD_TENSOR_TYPES
        for p in args.posonlyargs + args.args + args.kwonlyargs)


def keeps_name(body, name) -> bool:
    """``except E as e:`` whose block binds, stores or returns ``e``."""
    for node in (n for stmt in body for n in walk(stmt)):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and node.value is not None:
            if name in held_paths(node.value):
                return True
            if isinstance(node, ast.Return) and any(name in held_paths(a) for call in ast.walk(node.value)
                                                    if isinstance(call, ast.Call) for a in AST.arguments(call)):
                return True  # return False, Missing(error=e): an object of this file may keep it
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STORE_METHODS:
            if any(name in held_paths(a) for a in node.args):
                return True
    return False


def pairs(links: list[tuple[str, str]]) -> bool:
    """Two stores that point at each other (first.value reaches second.owner and back)."""
    for i, (o2, v2) in enumerate(links):
        for o1, v1 in links[:i]:
            if o1 != o2 and reaches(v1, o2) and reaches(v2, o1):
                return True
    return False


def captures(value: ast.AST, owner: str, slot: str | None, instance: str | None, aliases: set[str],
             methods: set[str]) -> bool:
    """The necessary part of CYC1's capture test (self_capture.SelfCaptureRule.captures), over the same walk
    (judgements.capture_walk): ``value``, stored on ``owner``'s ``slot``, may keep ``owner``'s root. ``aliases``: locals
    bound to bound methods, wrappers or ``Cls(self)``; ``methods``: the regular methods of the file's classes.
    Looser than the rule where it needs the walker's facts: any lambda."""
    found = False
    root = owner.split(".")[0]

    def visit(cur: ast.AST, kind: str) -> bool:
        nonlocal found
        if kind == LAMBDA:
            found = True
        elif kind == NAME:
            found = found or AST.identifier(cur) in aliases
        elif kind == ATTRIBUTE:
            found = found or (root == instance and is_attr_of(cur, root) and cur.attr in methods)  # self.f = self._g
        else:
            found = found or _call_captures(cur, owner, slot, instance, aliases, methods)
        return found

    capture_walk(AST, value, visit, _weak)
    return found


def _weak(call: ast.Call) -> bool:
    return is_weak(AST, call)


def _call_captures(call: ast.Call, owner: str, slot: str | None, instance: str | None, aliases: set[str],
                   methods: set[str]) -> bool:
    """As SelfCaptureRule._call_capture: ``partial(f, self)``, or a wrapper of the very attribute it replaces."""
    if _weak(call):
        return False
    name = last(call.func)
    args = AST.arguments(call)
    root = owner.split(".")[0]
    if name in PARTIALS:
        # partial(f, self), MethodType(f, m), partial(w, module.forward), partial(lambda: ..., x), partial(alias)
        return any(is_name(a, root) or is_attr_of(a, root) or isinstance(a, ast.Lambda)
                   or (isinstance(a, ast.Name) and a.id in aliases) for a in args)
    wrapping = slot_wrapper(AST, call, {root, owner}, slot) if slot is not None else None
    if wrapping is None:
        return False
    kept, wrapped = wrapping
    return kept is not None or (instance in wrapped and root == instance and slot in methods)
