"""Small, allocation-light helpers over libcst expressions.

Traversals use an explicit stack so that deeply nested input cannot exhaust
the interpreter's recursion limit.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from ..reading import last_part as last_part  # one definition for both trees; the rules say ex.last_part
from ..vocabulary import APPENDS, INDEXED_REDUCTIONS, STORE_METHODS

# Fields that never hold an expression worth descending into.
_NON_EXPR_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "colon", "equal", "dot", "star",
        "operator", "asynchronous", "leading_lines", "lines_after_decorators",
        "header", "footer", "keyword", "whitespace_after_star", "whitespace_after_arg",
        "whitespace_before", "whitespace_after", "whitespace_before_args",
        "whitespace_after_func", "whitespace_before_colon", "whitespace_after_colon",
        "whitespace_after_lambda", "whitespace_before_in", "whitespace_after_in",
        "whitespace_before_from", "whitespace_after_for", "whitespace_before_for",
        "whitespace_after_if", "whitespace_before_if", "whitespace_after_await",
        "whitespace_before_else", "whitespace_after_else",
        "whitespace_after_equal", "whitespace_before_equal", "whitespace_before_value",
        "whitespace_before_indicator", "whitespace_after_indicator",
        "whitespace_after_not", "whitespace_after_walrus", "whitespace_before_walrus",
        "first_whitespace", "trailing_whitespace", "whitespace_after_exec",
        "whitespace_after_def", "whitespace_after_name", "whitespace_before_params",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Children of ``node`` that can hold expressions (no whitespace, no punctuation)."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _NON_EXPR_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[cls] = names
    for name in names:
        value = getattr(node, name)
        if _is_node(type(value)):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if _is_node(type(item)):
                    yield item


_NODE_TYPES: dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    """``issubclass(kind, cst.CSTNode)``, remembered: an ``isinstance`` against libcst's abstract base class
    goes through ``ABCMeta`` each time, and this runs for every field of every node the rules look into."""
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


def dotted(expr: cst.CSTNode | None) -> str | None:
    """``"a.b.c"`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while type(expr) is cst.Attribute:  # libcst's node classes are final: ``type`` spares ABCMeta's check
        parts.append(expr.attr.value)
        expr = expr.value
    if type(expr) is cst.Name:
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def base_path(arg: cst.Arg) -> str:
    """The class a ``class`` statement's base names, ``""`` if none: ``Base[T]`` (a generic) names ``Base``."""
    return dotted(arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value) or ""


def callee(call: cst.Call) -> str | None:
    return dotted(call.func)


def indices_of(expr: cst.BaseExpression) -> cst.Call | None:
    """The call whose indices ``expr`` reads (``out.max(1)[1]``, ``torch.topk(x, 3).indices``), or None."""
    named = isinstance(expr, cst.Attribute) and expr.attr.value == "indices"
    second = constant_index(expr) == "1"
    return expr.value if (named or second) and indexed_reduction(expr.value) else None  # type: ignore[union-attr]


def constant_index(expr: cst.BaseExpression) -> str | None:
    """N of ``x[N]`` with N an integer literal."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(index := expr.slice[0].slice, cst.Index):
        return index.value.value if isinstance(index.value, cst.Integer) else None
    return None


def indexed_reduction(expr: cst.BaseExpression) -> bool:
    """``out.max(1)`` or ``torch.sort(x)``: a tensor's method or torch's function that returns (values, indices);
    not the builtin ``max(a, b)``."""
    return (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in INDEXED_REDUCTIONS)


def method_name(call: cst.Call) -> str | None:
    """``"append"`` for ``x.append(...)``."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def strip_items(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``d`` for ``d[k]``, ``d.setdefault(k, [])`` or ``d.get(k)``: the container that owns the item."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and method_name(expr) in ("setdefault", "get", "__getitem__"):
            expr = expr.func.value  # type: ignore[union-attr]
        else:
            return expr


def root(expr: cst.BaseExpression) -> str | None:
    """The variable at the root of an attribute/subscript/call chain."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            return None


def positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def keyword_arg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def deleted(node: cst.Del) -> list[cst.BaseExpression]:
    """What ``del a, b[k]`` (or ``del [a, b[k]]``) deletes, one expression each."""
    target = node.target
    if isinstance(target, (cst.Tuple, cst.List)):
        return [e.value for e in target.elements]
    return [target]


def arg(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """The argument passed at ``index`` or as keyword ``name``."""
    pos = positional_args(call)
    return pos[index] if index < len(pos) else keyword_arg(call, name)


def loaded_names(node: cst.CSTNode) -> set[str]:
    """Names read anywhere inside ``node`` (attribute names and keywords excluded).

    Lambda parameters shadow outer names inside the lambda body.
    """
    out: set[str] = set()
    stack: list[tuple[cst.CSTNode, frozenset[str]]] = [(node, frozenset())]
    while stack:
        cur, shadow = stack.pop()
        kind = type(cur)  # see dotted
        if kind is cst.Name:
            if cur.value not in shadow:
                out.add(cur.value)
        elif kind is cst.Attribute:
            stack.append((cur.value, shadow))
        elif kind is cst.Lambda:
            params = lambda_params(cur)
            for p in all_params(cur.params):
                if p.default is not None:
                    stack.append((p.default, shadow))
            stack.append((cur.body, shadow | params))
        else:
            for child in child_nodes(cur):
                stack.append((child, shadow))
    return out


def all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            out.append(extra)
    return out


def lambda_params(node: cst.Lambda) -> frozenset[str]:
    return frozenset(p.name.value for p in all_params(node.params))


def iter_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Every call inside ``node``, outermost first; lambda bodies excluded (they run later)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Call):
            yield cur
        if isinstance(cur, cst.Lambda):
            continue
        stack.extend(reversed(list(child_nodes(cur))))


def iter_returns(fn: cst.FunctionDef) -> Iterator[cst.Return]:
    """The ``return`` statements of ``fn`` itself, not of the functions, lambdas and classes inside it."""
    stack: list[cst.CSTNode] = [fn.body]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Return):
            yield cur
        elif not isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            stack.extend(child_nodes(cur))


def is_none(expr: cst.CSTNode | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def decorator_names(node: cst.FunctionDef | cst.ClassDef) -> list[str]:
    out = []
    for d in node.decorators:
        expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        out.append(dotted(expr) or "")
    return out


def dotted_paths(node: cst.CSTNode) -> set[str]:
    """Every dotted Name/Attribute chain (and each of its prefixes) read inside ``node``."""
    out: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        path = dotted(cur)
        if path is not None:
            parts = path.split(".")
            out.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        elif isinstance(cur, cst.Lambda):
            continue
        else:
            stack.extend(child_nodes(cur))
    return out


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def never_raised(handler: cst.ExceptHandler | cst.ExceptStarHandler, body: cst.BaseSuite) -> bool:
    """``except ImportError`` around a body that only binds names and attributes to plain values
    (``Cls.available = True``, ``self.size = size``): only import machinery raises ImportError, and
    nothing there imports, calls or raises, so the handler never runs."""
    kind = handler.type
    types = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind] if kind is not None else []
    if not types or any(last_part(dotted(t)) not in IMPORT_ERRORS for t in types):
        return False
    for line in body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        for small in line.body:
            if isinstance(small, cst.Pass):
                continue
            if not isinstance(small, cst.Assign) or not _plain(small.value) or not all(
                    isinstance(t.target, cst.Name) or (isinstance(t.target, cst.Attribute)
                                                       and isinstance(t.target.value, cst.Name))
                    for t in small.targets):
                return False
    return True


def only_imports(body: cst.BaseSuite) -> bool:
    """A ``try`` body that imports, binds names to plain values and unbinds names, nothing else (``import av``,
    ``AVAILABLE = True``, ``ERROR: Optional[ImportError] = None``, ``tcnn = tinycudann; del tinycudann``): what fails
    there fails in the import machinery."""
    return all(isinstance(line, cst.SimpleStatementLine) and all(map(_binds_only, line.body)) for line in body.body)


def _binds_only(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)):
        return True
    if isinstance(small, cst.Assign):
        return _plain(small.value) and all(isinstance(t.target, cst.Name) for t in small.targets)
    if isinstance(small, cst.AnnAssign):
        return isinstance(small.target, cst.Name) and (small.value is None or _plain(small.value))
    return isinstance(small, cst.Del) and isinstance(small.target, cst.Name)


def _plain(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString))


def container_call(call: cst.Call, name: str, instance: str | None) -> bool:
    """``items.append(x)`` rather than ``self.add(a, b)``, ``ops.add(x, y)`` (FloatFunctional) or a method that takes
    keywords, which no list, set or deque method does: lhotse's ``cut.append(padding, preserve_id="left")`` mixes two
    cuts into a new one."""
    recv = receiver(call)
    if isinstance(recv, cst.Name) and recv.value == instance and name not in ("add_module", "register_module"):
        return False
    if name in APPENDS and any(a.keyword is not None for a in call.args):
        return False
    positional = len(positional_args(call))
    return positional == STORE_METHODS[name] + 1 or (name in ("setdefault", "update") and positional <= 2)
