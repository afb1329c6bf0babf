"""Small helpers over CPython's ``ast`` shared by the pre-filter and its class table."""
from __future__ import annotations

import ast
from functools import lru_cache

from .vocabulary import STORE_METHODS

_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "conversion", "format_spec"})
# ASDL's builtin types: fields of these never hold a node (``Name.id``, ``Constant.value``, ``Global.names``)
_LEAF_TYPES = frozenset({"identifier", "string", "constant", "int"})


class _PerClass(dict):
    """A fact about node classes, worked out the first time a class is met: hot loops then pay one lookup."""

    def __init__(self, work_out):
        super().__init__()
        self.work_out = work_out

    def __missing__(self, cls: type):
        value = self[cls] = self.work_out(cls)
        return value


def _shape(cls: type) -> tuple[tuple[str, bool | None], ...]:
    """(field, holds a list) for each field of ``cls`` that may hold nodes, in field order, read from the
    signature CPython gives each node class as its docstring (``Dict(expr* keys, expr* values)``). None
    for "holds a list" where the docstring does not read so: the field is then tested as it is walked."""
    doc = (cls.__doc__ or "").strip()
    declared: dict[str, str | None] = {}
    if doc.startswith(cls.__name__ + "(") and doc.endswith(")"):
        for part in filter(None, (p.strip() for p in doc[len(cls.__name__) + 1:-1].split(","))):
            kind, _, name = part.rpartition(" ")
            declared[name] = kind
    if set(declared) != set(cls._fields):
        declared = dict.fromkeys(cls._fields)
    return tuple((name, None if kind is None else kind.endswith("*")) for name, kind in declared.items()
                 if name not in _SKIP_FIELDS and (kind is None or kind.rstrip("*?") not in _LEAF_TYPES))


_SHAPES = _PerClass(_shape)


def _nodes_in(value) -> list[ast.AST]:
    if isinstance(value, ast.AST):
        return [value]
    return [v for v in value if isinstance(v, ast.AST)] if isinstance(value, list) else []


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without the context, operator and annotation-comment leaves."""
    out: list[ast.AST] = []
    for name, _ in _SHAPES[type(node)]:
        out += _nodes_in(getattr(node, name, None))
    return out


def walk(node: ast.AST):
    """``ast.walk`` without the context, operator and annotation-comment leaves (a third of all nodes)."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        cur = pop()
        if cur is None:  # an absent optional field, or the key of ``**d`` in a dict display
            continue
        yield cur
        # the pre-filter's hottest loop: what each field holds is known per class, so nothing is tested
        for name, many in _SHAPES[type(cur)]:
            if many:
                extend(getattr(cur, name, ()))
            elif many is None:
                extend(_nodes_in(getattr(cur, name, None)))
            else:
                push(getattr(cur, name, None))


def dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def base_path(node: ast.AST) -> str:
    """The class a ``class`` statement's base names, ``""`` if none: ``Base[T]`` (a generic) names ``Base``."""
    return dotted(node.value if isinstance(node, ast.Subscript) else node) or ""


def strip_items(node: ast.AST) -> ast.AST:
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("setdefault", "get"):
            node = node.func.value
        else:
            return node


def last(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def stores(node: ast.AST, calls: list[ast.Call]):
    """(owner path, value, slot) for each store a simple statement (with these calls) makes."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            subs = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
            values = node.value.elts if (isinstance(node.value, (ast.Tuple, ast.List)) and len(node.value.elts) == len(subs)
                                         and len(subs) > 1) else [node.value] * len(subs)
            for sub, value in zip(subs, values):
                if isinstance(sub, ast.Attribute):
                    yield dotted(sub.value), value, sub.attr
                elif isinstance(sub, ast.Subscript):
                    yield dotted(strip_items(sub)), value, None
    for call in calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr in STORE_METHODS and call.args:
            for arg in call.args:
                yield dotted(strip_items(call.func.value)), arg, None
        elif last(call.func) == "setattr" and len(call.args) >= 3:
            slot = call.args[1].value if isinstance(call.args[1], ast.Constant) else None
            yield dotted(call.args[0]), call.args[2], slot if isinstance(slot, str) else None


def attribute_stores(stmt):
    """(owner, value) of ``o.attr = value`` (tuple targets paired with a tuple of the same length, as
    the full analysis does: ``o.a, o.b = pair`` keeps the items of ``pair``, not ``pair``) and
    ``setattr(o, "attr", value)``."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            yield from _attribute_pairs(target, stmt.value)
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and last(stmt.value.func) == "setattr":
        args = stmt.value.args
        if len(args) >= 3 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
            yield dotted(args[0]), args[2]


def _attribute_pairs(target: ast.AST, value: ast.AST):
    if isinstance(target, ast.Attribute):
        yield dotted(target.value), value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                and not any(isinstance(v, ast.Starred) for v in value.elts)):
            for t, v in zip(target.elts, value.elts):
                yield from _attribute_pairs(t, v)


def class_functions(body) -> list:
    """The functions a class body defines, those under its ``if``/``try``/``with`` blocks included (the
    walker makes them methods too), not those nested in other functions or classes."""
    out, stack = [], list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
        elif not isinstance(node, ast.ClassDef):
            stack.extend(reversed(_inner_statements(node)))
    return out


def statements(body, into_defs: bool = True):
    """Every statement under ``body`` in source order; ``into_defs=False`` stays out of nested
    functions and classes."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if not into_defs and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        stack.extend(reversed(_inner_statements(node)))


def function_statements(f: ast.FunctionDef | ast.AsyncFunctionDef):
    """(function, statement) for every statement under ``f`` in source order, each with the innermost function
    holding it (``f`` or one nested in it); nested classes are left out."""
    stack: list[tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef]] = [(s, f) for s in reversed(f.body)]
    while stack:
        node, owner = stack.pop()
        if isinstance(node, ast.ClassDef):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend((s, node) for s in reversed(node.body))
            continue
        yield owner, node
        stack.extend((s, owner) for s in reversed(_inner_statements(node)))


@lru_cache(maxsize=1)
def module_statements(tree: ast.Module) -> tuple[ast.stmt, ...]:
    """``statements(tree.body)``, remembered for the file at hand: the pre-filter's module names and every
    table of the file's classes ask, and the answer walks every statement."""
    return tuple(statements(tree.body))


@lru_cache(maxsize=1)
def class_defs(tree: ast.Module) -> tuple[ast.ClassDef, ...]:
    """Every class of the module in source order, under ``if``/``with`` blocks and in functions too:
    one reading of "the file's classes" for every table that describes them."""
    return tuple(node for node in module_statements(tree) if isinstance(node, ast.ClassDef))


# the fields of a statement class that hold statements, and those whose items (handlers, cases) hold them: none for
# a simple statement, the most common by far
_INNER = _PerClass(lambda cls: (tuple(f for f in ("body", "orelse", "finalbody") if f in cls._fields),
                                tuple(f for f in ("handlers", "cases") if f in cls._fields)))


def _inner_statements(node: ast.stmt) -> list[ast.stmt]:
    """The statements directly under a compound statement: its blocks, then its handlers' and cases'."""
    blocks, holders = _INNER[type(node)]
    inner: list[ast.stmt] = []
    for field in blocks:
        inner += getattr(node, field, None) or ()
    for field in holders:
        for item in getattr(node, field, None) or ():
            inner += item.body
    return inner


def parameters(f: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    """The named parameters, the instance first (``*args`` and ``**kwargs`` aside)."""
    return f.args.posonlyargs + f.args.args + f.args.kwonlyargs


def parameter_names(f: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """The names of :func:`parameters`."""
    return [p.arg for p in parameters(f)]


def instance_handed_to(call: ast.Call, instance: str | None) -> str | None:
    """``x`` of ``self.x.method(..., self, ...)`` (``self`` being ``instance``, positional or keyword): the
    instance handed to a method of an object it holds (CYC202 when that method keeps it)."""
    held = call.func.value if isinstance(call.func, ast.Attribute) else None
    if not (instance and isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name)
            and held.value.id == instance):
        return None
    values = call.args + [k.value for k in call.keywords]
    return held.attr if any(isinstance(v, ast.Name) and v.id == instance for v in values) else None


def reaches(owner: str, path: str) -> bool:
    """True when ``path`` is ``owner`` or an attribute chain below it."""
    return path == owner or path.startswith(owner + ".")
