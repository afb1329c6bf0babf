"""Methods a class runs with autograd off by wrapping them itself (read from the ``ast``, so that
files the pre-filter answers describe their classes too).

A framework base class may rebind a method on every instance to a wrapper that calls it under
``torch.no_grad()`` (torchmetrics' ``Metric.__init__`` does ``self.update = self._wrap_update(self.update)``,
and ``_wrap_update`` runs it in ``with torch.set_grad_enabled(self._enable_grad)``, a flag ``__init__``
sets to False). State a subclass grows in that method then holds no graph, whatever its callers pass.
When the tree does not hold that base (a user's metric deriving from an installed torchmetrics), what the
library is known to wrap stands in for reading it (:data:`LIBRARY_GRAD_OFF`).
"""
from __future__ import annotations

import ast

from .astutil import class_defs, dotted, statements
from .project.imports import import_origins
from .vocabulary import EVAL_STEPS, NO_GRAD_CONTEXTS, called_unnamed

GRAD_OFF_WORDS = (*sorted(NO_GRAD_CONTEXTS), "set_grad_enabled")
# (top-level package, class) -> the methods that class runs with grad off for every subclass: torchmetrics' Metric
# wraps ``update`` as above since 0.7.3 (the release that fixed the leak of 0.7.2's MeanMetric)
LIBRARY_GRAD_OFF = {("torchmetrics", "Metric"): ("update",)}
# Lightning's evaluation and prediction loops run under ``no_grad``/``inference_mode`` (``_no_grad_context`` on
# their ``run()``; in 1.x the trainer's evaluation context): each step, each hook of a module or a callback they call
LIGHTNING_EVAL = tuple(sorted({
    *EVAL_STEPS,
    *(f"{kind}_epoch_end" for kind in ("validation", "test")),  # 1.x
    *(f"on_{kind}_{when}" for kind in ("validation", "test", "predict")
      for when in ("start", "end", "epoch_start", "epoch_end", "batch_start", "batch_end")),
}))
# (top-level package, class) -> the methods a library's own loop calls with grad off on every subclass, whoever
# defines the class (unlike a wrapper, nothing in the class itself says so: linting the library changes nothing)
LOOP_GRAD_OFF = {(package, cls): LIGHTNING_EVAL for package in ("lightning", "pytorch_lightning")
                 for cls in ("LightningModule", "Callback")}


def may_turn_grad_off(text: str | bytes) -> bool:
    """Can some wrapper of this file turn grad off? Only then are its classes read for one (a walk of
    every method of every class costs a fifth of a cold run otherwise). A wrapper names one of these
    words in its own file, aliased or not."""
    words = GRAD_OFF_WORDS if isinstance(text, str) else tuple(w.encode() for w in GRAD_OFF_WORDS)
    return any(w in text for w in words)


def grad_off_methods(cls: ast.ClassDef) -> list[str]:
    """Names M for which some method of ``cls`` does ``self.M = self.W(self.M)`` with W a wrapper that
    calls its argument only with grad off."""
    methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    rebound: set[tuple[str, str]] = set()  # (M, W) of ``self.M = self.W(self.M)``: one walk per method
    for f in methods.values():
        this = _self_name(f)
        for node in statements(f.body):  # an assignment is a statement: expressions need no walk
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []
            if len(targets) != 1 or not isinstance(node.value, ast.Call):
                continue
            path, call, func = dotted(targets[0]), node.value, dotted(node.value.func) or ""
            if (path and path.startswith(f"{this}.") and func.startswith(f"{this}.") and len(call.args) == 1
                    and dotted(call.args[0]) == path):
                rebound.add((path.split(".", 1)[1], func.split(".", 1)[1]))
    if not rebound:  # the wrappers are read only for classes that rebind a method through one
        return []
    off_flags = _flags_false_in_init(methods.get("__init__"))
    return sorted({m for m, w in rebound if w in methods and _wraps_without_grad(methods[w], off_flags)})


def no_grad_defs(cls: ast.ClassDef) -> list[str]:
    """Methods ``cls`` defines under ``@torch.no_grad()``/``@torch.inference_mode()`` (the last definition of a
    name is the method: ``@overload`` stubs come first). Unlike :func:`grad_off_methods` an override in a
    subclass runs as it is written, so this holds for calls on instances of ``cls`` itself."""
    last_defs = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return sorted(name for name, f in last_defs.items() if any(
        _grad_off(d, None, set()) or (dotted(d) or "").rsplit(".", 1)[-1] in NO_GRAD_CONTEXTS for d in f.decorator_list))


def grad_off_decorators(tree: ast.Module) -> list[str]:
    """Module-level functions that apply ``no_grad()``/``inference_mode()`` to a function they are given,
    themselves or through an inner decorator (ultralytics' ``smart_inference_mode()`` returns ``decorate(fn)``,
    which returns ``(torch.inference_mode if new else torch.no_grad)()(fn)``): what they decorate runs with
    autograd off."""
    return sorted(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and _applies_grad_off(node))


def _applies_grad_off(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    params: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params |= {p.arg for p in node.args.posonlyargs + node.args.args}
    for node in ast.walk(func):
        if (isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Name)
                and node.args[0].id in params and isinstance(node.func, ast.Call)
                and all(_grad_off(ast.Call(f, node.func.args, node.func.keywords), None, set())
                        for f in _alternatives(node.func.func))):
            return True
    return False


def _alternatives(expr: ast.expr) -> list[ast.expr]:
    """``a if c else b``: either may be what is called."""
    return _alternatives(expr.body) + _alternatives(expr.orelse) if isinstance(expr, ast.IfExp) else [expr]


def library_grad_off(node: ast.ClassDef, origins: dict[str, str],
                     known: dict[tuple[str, str], tuple[str, ...]] = LIBRARY_GRAD_OFF) -> dict[str, list[str]]:
    """Base (as the class names it) -> the methods ``known`` (:data:`LIBRARY_GRAD_OFF` by default) says it runs with
    grad off, for the bases that name its class through the file's imports (``from torchmetrics import Metric``,
    ``torchmetrics.Metric``, ``pl.LightningModule`` with ``import pytorch_lightning as pl``). ``origins``:
    :func:`project.imports.import_origins`. The project drops those of a base the tree defines: then it reads the
    wrapper itself."""
    out = {}
    for base in node.bases:
        path = dotted(base) or ""
        head, _, rest = path.partition(".")
        origin = ".".join(part for part in (origins.get(head, head), rest) if part)
        methods = None if origin.startswith(".") else known.get((origin.split(".")[0], origin.rsplit(".", 1)[-1]))
        if methods:
            out[path] = list(methods)
    return out


def loop_grad_off(node: ast.ClassDef, origins: dict[str, str]) -> list[str]:
    """The methods of ``node`` a library's loop runs with grad off through one of its bases (:data:`LOOP_GRAD_OFF`)."""
    return sorted({m for methods in library_grad_off(node, origins, LOOP_GRAD_OFF).values() for m in methods})


def may_name_library(text: str | bytes) -> bool:
    """Can the file name a base of :data:`LIBRARY_GRAD_OFF` or :data:`LOOP_GRAD_OFF`? Only then are its bases read."""
    words = {package for package, _ in (*LIBRARY_GRAD_OFF, *LOOP_GRAD_OFF)}
    return any((w if isinstance(text, str) else w.encode()) in text for w in words)


def library_imports(tree: ast.Module, text: str | bytes) -> dict[str, str] | None:
    """What the file's imports bind (:func:`project.imports.import_origins`) when it may name such a base, else None."""
    return import_origins(tree) if may_name_library(text) else None


def library_grad_off_by_class(tree: ast.Module, origins: dict[str, str] | None) -> dict[str, dict[str, list[str]]]:
    """:func:`library_grad_off` of every class of the module that has some."""
    found = ((node.name, library_grad_off(node, origins)) for node in class_defs(tree)) if origins is not None else ()
    return {name: bases for name, bases in found if bases}


def loop_grad_off_by_class(tree: ast.Module, origins: dict[str, str] | None) -> dict[str, list[str]]:
    """:func:`loop_grad_off` of every class of the module that has some."""
    found = ((node.name, loop_grad_off(node, origins)) for node in class_defs(tree)) if origins is not None else ()
    return {name: methods for name, methods in found if methods}


def eval_callers_by_class(tree: ast.Module) -> dict[str, dict[str, list[str]]]:
    """:func:`eval_callers` of every class of the module that has some."""
    return {node.name: found for node in class_defs(tree) if (found := eval_callers(node))}


def grad_off_by_class(tree: ast.Module) -> dict[str, tuple[list[str], list[str]]]:
    """:func:`grad_off_methods` and :func:`no_grad_defs` of every class of the module that has some: the
    classes classtable.py describes (under ``if``/``with`` blocks and in functions too)."""
    out = {}
    for node in class_defs(tree):
        found = grad_off_methods(node), no_grad_defs(node)
        if found[0] or found[1]:
            out[node.name] = found
    return out


def may_evaluate(text: str | bytes) -> bool:
    """Can the file define a method of :data:`LIGHTNING_EVAL`? Only then are its classes' calls read
    (:func:`eval_callers`): each such name holds one of these words."""
    words = ("_step", "_epoch_end", "on_validation", "on_test", "on_predict")
    return any((w if isinstance(text, str) else w.encode()) in text for w in words)


def eval_callers(cls: ast.ClassDef) -> dict[str, list[str]]:
    """For a class with a method Lightning evaluates with (:data:`LIGHTNING_EVAL`): its helper methods -> the
    methods of the class that call each on their instance (``validation_step`` and ``test_step`` both calling
    ``self.evaluation_step(batch)``). The project lets a helper whose every caller runs with grad off run so too.
    Left out: a method read other than by such a call (a callback handed on), ``forward`` (``self(x)`` calls
    it), dunders and hooks (``on_*``, ``training_step``: the framework calls those itself)."""
    methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not methods.keys() & set(LIGHTNING_EVAL):
        return {}
    callers: dict[str, set[str]] = {}
    read: set[str] = set()
    for name, f in methods.items():
        this = _self_name(f)
        nodes = list(ast.walk(f))
        calls = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        for node in nodes:
            if isinstance(node, ast.Attribute) and node.attr in methods:
                on_self = isinstance(node.value, ast.Name) and node.value.id == this
                (callers.setdefault(node.attr, set()).add(name) if on_self and id(node) in calls
                 else read.add(node.attr))
    return {m: sorted(by) for m, by in callers.items() if m not in read and not called_unnamed(m)}


def _self_name(f: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    args = f.args.posonlyargs + f.args.args
    return args[0].arg if args else None


def _flags_false_in_init(init) -> set[str]:
    """``self.X = False`` in ``__init__``: the flag's value for every instance until changed."""
    this = _self_name(init) if init is not None else None
    if this is None:
        return set()
    out = set()
    for node in ast.walk(init):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                and node.value.value is False:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                path = dotted(t)
                if path and path.startswith(f"{this}.") and path.count(".") == 1:
                    out.add(path.split(".", 1)[1])
    return out


def _wraps_without_grad(f, off_flags: set[str]) -> bool:
    """``def W(self, fn)`` that returns an inner function calling ``fn`` inside a grad-off ``with``."""
    this = _self_name(f)
    args = f.args.posonlyargs + f.args.args
    if len(args) < 2:
        return False
    wrapped = args[1].arg
    inner = {d.name: d for d in f.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    returned = {r.value.id for r in f.body if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)}
    for name in returned & set(inner):
        for node in ast.walk(inner[name]):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    _grad_off(item.context_expr, this, off_flags) for item in node.items):
                if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == wrapped
                       for stmt in node.body for c in ast.walk(stmt)):
                    return True
    return False


def _grad_off(expr: ast.expr, this: str | None, off_flags: set[str]) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = (dotted(expr.func) or "").rsplit(".", 1)[-1]
    if name in NO_GRAD_CONTEXTS:
        return not expr.args or (isinstance(expr.args[0], ast.Constant) and expr.args[0].value is not False)
    if name == "set_grad_enabled" and expr.args:
        flag = expr.args[0]
        if isinstance(flag, ast.Constant):
            return flag.value is False
        path = dotted(flag)
        return bool(this and path and path.startswith(f"{this}.") and path.split(".", 1)[1] in off_flags)
    return False
