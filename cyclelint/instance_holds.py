"""What a class's instances hold, read off ``ast`` for the class table: whether the stores of its own methods show
something of size (a tensor, a module, an optimizer, a state dict), which classes of objects they keep, and which
``__init__`` parameters they keep that nothing says anything about (the project asks the constructor calls).

A cycle through an instance that holds nothing of size (settings, names, locks, its own bound methods) costs
nothing when the collector frees it late: the project withdraws such CYC1xx, CYC202, CYC203 and CYC404 findings
(``project/sizes.py`` follows bases, subclasses, the kept objects' classes and the constructor calls across files;
a class nothing constructs may be given anything). Judged from what the values are: torch calls, tensor and module
methods, annotations, the inputs of a module's forward, what the class's own methods return, the classes
constructed, what a lambda or nested function the instance keeps is given (anything, as a hook is); a name only
where nothing else says (``self.model = model``).
"""
from __future__ import annotations

import ast
import re
from typing import NamedTuple

from .astutil import dotted, function_statements, parameter_names, parameters, statements, stores
from .prefilter.shapes import annotation_words
from .vocabulary import (
    FORWARD_METHODS,
    MODULE_TYPES,
    SIZELESS_MODULES,
    STORE_METHODS,
    TENSOR_TYPES,
    TORCH_NOT_TENSORS,
    TYPING_NAMES,
    VERBS,
    name_holds,
    name_tokens,
)

# calls on the instance that give it a parameter, a buffer or a submodule
SIZED_CALLS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})
# what these methods return holds what they are called on: a tensor's or a module's
HOLDING_METHODS = frozenset({"to", "cuda", "detach", "clone", "half", "float", "double", "bfloat16", "contiguous",
                             "requires_grad_", "parameters", "named_parameters", "buffers", "state_dict"})
# torch values that hold no tensor storage
TORCH_SMALL = TORCH_NOT_TENSORS | {"Size", "dtype", "Generator", "Event", "Stream", "is_available", "device_count",
                                   "current_device", "get_rank", "get_world_size", "is_initialized"}
# things named so hold tensors whatever the code calls them: an optimizer keeps its moments, a buffer its data
SIZE_NOUNS = frozenset({"optimizer", "optimizers", "optim", "weight", "weights", "embedding", "embeddings", "buffer",
                        "buffers", "params", "parameters", "activations", "grads", "gradients", "logits", "features"})
# annotations of values that hold tensors: an optimizer keeps its state, a scheduler its optimizer
SIZED_TYPES = TENSOR_TYPES | MODULE_TYPES | {"Optimizer", "LRScheduler", "_LRScheduler"}
_DEPTH = 3  # how far own methods' returns and locals' bindings are followed
_CALLED_CLASS = re.compile(rb"\b(_*[A-Z]\w*)\(")

Function = ast.FunctionDef | ast.AsyncFunctionDef


class Holds(NamedTuple):
    why: str  # why its instances hold something of size; "" when its own stores show nothing
    classes: tuple[str, ...]  # classes of the objects it keeps, which hold what their classes do
    params: tuple[str, ...]  # ``__init__`` parameters it keeps that nothing says anything about: its callers may
    own_init: bool  # it defines an ``__init__`` that runs no base's: a base's ``__init__`` never runs for it
    storing: tuple[str, ...]  # its methods but ``__init__`` that store something on the instance

    def summary_fields(self) -> dict:
        """The fields of the class's ``ClassSummary`` (project/records.py) that say it."""
        return {"bare": not self.why, "held_classes": self.classes, "passed_in": self.params,
                "own_init": self.own_init, "storing": self.storing}


def named_size(name: str) -> str | None:
    """The last resort: ``model``, ``state_dict``, ``optimizer``, ``class_weights`` (a verb first is dropped:
    ``get_model``)."""
    why = name_holds(name)
    if why:
        return why
    tokens = name_tokens(name)
    if tokens[:1] and tokens[0] in VERBS:
        return name_holds("_".join(tokens[1:]))
    if set(tokens) & SIZE_NOUNS:
        return f"named like {'an optimizer' if tokens[-1].startswith('optim') else 'tensors'}"
    return None


def torch_bound(origins: dict[str, str]) -> set[str]:
    """The names a file's imports bind to torch or anything of it (``nn``, ``F``, ``Linear``)."""
    return {name for name, origin in origins.items() if origin.split(".", 1)[0] == "torch"}


class Values:
    """Judges values in one file: why a value may hold something of size, or None when nothing shows it; the
    classes of the objects it may be (constructed, or named by an annotation) are collected in ``classes``, and,
    seen in a class's ``__init__``, the parameters it is made of that nothing says anything about in ``unknown``."""

    def __init__(self, torch_names: set[str], methods: dict[str, Function] | None = None, is_module: bool = False):
        self.torch_names = torch_names | {"torch", "nn", "F", "th"}
        self.methods = methods or {}  # the class's own, when the values are seen in its methods
        self.is_module = is_module
        self.classes: dict[str, None] = {}
        self.unknown: dict[str, None] = {}  # parameters of ``__init__`` a value is, that nothing says anything about
        self.depth = 0
        self._locals: dict[int, dict[str, list[ast.AST]]] = {}
        self._params: dict[int, dict[str, ast.arg]] = {}

    def value(self, v: ast.AST, f: Function | None) -> str | None:
        """Why ``v``, seen in function ``f`` (None: at a module's or class's top level), may hold something of size."""
        if isinstance(v, ast.Name):
            return self._name(v.id, f)
        if isinstance(v, ast.Attribute):
            root = v
            while isinstance(root, ast.Attribute):
                root = root.value
            own = f is not None and isinstance(root, ast.Name) and parameter_names(f)[:1] == [root.id]
            why = None if own and self.methods else named_size(v.attr)
            return why and f"{dotted(v) or v.attr}, {why}"
        if isinstance(v, ast.Call):
            return self._call(v, f)
        if isinstance(v, (ast.Subscript, ast.Starred, ast.Await)):
            return self.value(v.value, f)
        return next((why for part in _parts(v) if (why := self.value(part, f))), None)

    def _name(self, name: str, f: Function | None) -> str | None:
        params = self._params.get(id(f)) if f else {}
        if params is None:
            params = self._params[id(f)] = {p.arg: p for p in parameters(f)}
        if name in params:
            ann = params[name].annotation
            if ann is not None:
                why = self.annotation(ann, name)
                if why or annotation_words(ann):
                    return why  # the annotation says what it is, more than the name
            if self.is_module and f.name in FORWARD_METHODS and name != parameter_names(f)[0]:
                return f"{name}, an input of {f.name}"
            why = named_size(name)
            if not why and f.name == "__init__" and self.methods:
                self.unknown.setdefault(name)
            return why and f"{name}, {why}"
        for bound in self._bindings(f).get(name, ()) if f else ():
            why = self._deeper(bound, f)
            if why:
                return f"{name} = {why}"
        why = named_size(name)
        return why and f"{name}, {why}"

    def annotation(self, ann: ast.AST, what: str) -> str | None:
        """Why what an annotation names holds something of size (a tensor, module or optimizer type, a class named
        like a model); the other classes it names are collected."""
        words = annotation_words(ann)
        named = sorted(words - TYPING_NAMES)
        if words & SIZED_TYPES or any(word[:1].isupper() and name_holds(word) for word in named):
            return f"{what}, annotated {ast.unparse(ann)}"
        for word in named:
            if word[:1].isupper():
                self.classes.setdefault(word)
        return None

    def _call(self, call: ast.Call, f: Function | None) -> str | None:
        path = dotted(call.func) or ""
        head = path.partition(".")[0]
        last = path.rpartition(".")[2]
        if head in self.torch_names and last in TORCH_SMALL:
            return None  # a device, a dtype, a shape: whatever it is made from
        if head in self.torch_names and last not in SIZELESS_MODULES:
            return f"{path}(...)"
        if isinstance(call.func, ast.Attribute) and call.func.attr in HOLDING_METHODS:
            return f".{call.func.attr}()"
        if f is not None and isinstance(call.func, ast.Attribute) and self.methods and last in self.methods \
                and [dotted(call.func.value)] == parameter_names(f)[:1]:
            method = self.methods[last]
            for ret in (n for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None):
                why = self._deeper(ret.value, method)
                if why:
                    return f"{path}(), which returns {why}"
            return None
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            why = self.value(arg, f)
            if why:
                return f"{last}({why})"
        if head in self.torch_names:
            return None
        owner = path.rpartition(".")[0].rpartition(".")[2]
        made = last if last[:1].isupper() else owner if owner[:1].isupper() else ""  # Cls(...), Cls.from_config(...)
        if made:
            self.classes.setdefault(made)
            return f"a {made}" if name_holds(made) else None
        why = named_size(last)
        return why and f"{last}(), {why}"

    def _deeper(self, v: ast.AST, f: Function) -> str | None:
        if self.depth >= _DEPTH:
            return None
        self.depth += 1
        try:
            return self.value(v, f)
        finally:
            self.depth -= 1

    def _bindings(self, f: Function) -> dict[str, list[ast.AST]]:
        """The values each local name of ``f`` is bound to by a plain assignment."""
        found = self._locals.get(id(f))
        if found is None:
            found = self._locals[id(f)] = {}
            for stmt in statements(f.body, into_defs=False):
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                    for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                        if isinstance(target, ast.Name):
                            found.setdefault(target.id, []).append(stmt.value)
        return found


def _parts(v: ast.AST) -> list[ast.AST]:
    """The sub-expressions whose values an expression holds or is made of."""
    if isinstance(v, ast.BinOp):
        return [v.left, v.right]
    if isinstance(v, ast.BoolOp):
        return v.values
    if isinstance(v, ast.IfExp):
        return [v.body, v.orelse]
    if isinstance(v, (ast.List, ast.Tuple, ast.Set)):
        return v.elts
    if isinstance(v, ast.Dict):
        return v.values
    # a comprehension may keep its iterables' items (``[layer for layer in layers]``, ``{key: [] for key in keys}``)
    if isinstance(v, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return [v.elt, *(g.iter for g in v.generators)]
    if isinstance(v, ast.DictComp):
        return [v.key, v.value, *(g.iter for g in v.generators)]
    return []


def class_holds(functions: list[Function], is_module: bool, torch_names: set[str]) -> Holds:
    """:class:`Holds` of one class; ``functions``: its methods (astutil.class_functions); ``torch_names``: the
    names the file binds to torch and its modules (:func:`torch_bound`). Once a store shows something of size the
    rest is not read: no question about the class can be answered "small" then (``storing`` is left empty)."""
    values = Values(torch_names, {f.name: f for f in functions}, is_module)
    own_init = any(f.name == "__init__" for f in functions) and not any(
        _calls_init(stmt) for f in functions if f.name == "__init__" for stmt in statements(f.body))
    storing: dict[str, None] = {}
    for f in functions:
        names = parameter_names(f)
        if not names or any(dotted(d) in ("staticmethod", "classmethod") for d in f.decorator_list):
            continue
        for owner, stmt in function_statements(f):  # closures in a method store on the instance too
            if not isinstance(stmt, _STORING):
                continue
            stored, why = _statement(stmt, names[0], owner, values, nested=owner is not f)
            if why:
                return Holds(why, (), (), own_init, ())
            if stored and f.name != "__init__":
                storing.setdefault(f.name)
    return Holds("", tuple(values.classes), tuple(values.unknown), own_init, tuple(storing))


_STORING = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)  # the statements that may store on the instance


def _calls_init(stmt: ast.stmt) -> bool:
    """``super().__init__(...)``, ``Base.__init__(self, ...)``: a base's ``__init__`` runs."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"


def _statement(stmt: ast.stmt, this: str, f: Function, values: Values, nested: bool) -> tuple[bool, str | None]:
    """Whether a statement of a method ``f`` (or of a function ``f`` ``nested`` in one) stores something on its
    instance ``this``, and why that shows the instance holds something of size."""
    calls = []
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        callee = call.func
        if isinstance(callee, ast.Attribute) and callee.attr in SIZED_CALLS and dotted(callee.value) == this:
            return True, f"it calls {this}.{callee.attr}(...)"
        if isinstance(callee, ast.Attribute) and callee.attr == "__init__":  # super().__init__(model): a base keeps it
            handed = next((why for arg in [*call.args, *(k.value for k in call.keywords)]
                           if (why := values.value(arg, f))), None)
            return False, handed and f"it hands {handed} to a base's __init__"
        calls = [call]
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Attribute) and dotted(stmt.target.value) == this:
        why = values.annotation(stmt.annotation, f"{this}.{stmt.target.attr}")
        if why:
            return True, why
    elif not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return False, None
    stored = False
    for owner, value, slot in stores(stmt, calls):
        if owner is None or owner.split(".", 1)[0] != this:
            continue
        stored = True
        where = f"{owner}.{slot}" if slot else owner
        why = values.value(value, f) or (nested and _given(value, f)) or _kept_by_lambda(value, this)
        if why:
            return True, f"{where} = {why}"
    return stored, None


def _given(value: ast.AST, f: Function) -> str | None:
    """A function nested in a method stores what it is given: a callable the instance keeps is called with whatever
    its callers have (a handler given tensors), as a hook is."""
    params = set(parameter_names(f)) | {p.arg for p in (f.args.vararg, f.args.kwarg) if p is not None}
    given = sorted({n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & params)
    return given and f"{given[0]}, which {f.name} is given"


def _kept_by_lambda(value: ast.AST, this: str) -> str | None:
    """A lambda stored on the instance that stores on the instance what it is given (``lambda t:
    self.store.setdefault("mean", t.mean())``): whatever its callers pass it."""
    for node in ast.walk(value):
        if not isinstance(node, ast.Lambda):
            continue
        params = set(parameter_names(node))
        for call in (n for n in ast.walk(node.body) if isinstance(n, ast.Call)):
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in STORE_METHODS \
                    and (dotted(func.value) or "").split(".", 1)[0] == this \
                    and any(isinstance(n, ast.Name) and n.id in params for a in call.args for n in ast.walk(a)):
                return "a lambda keeping what it is given"
    return None


def constructor_holds(tree: ast.Module, cls: str, init_params: list[str], asked: list[str],
                      torch_names: set[str]) -> tuple[str | None, list[str], int]:
    """What the calls ``cls(...)`` in one module pass for the ``__init__`` parameters ``asked`` (``init_params``: all
    of them in order, after the instance): why one may hold something of size, or None and the classes of the
    objects passed; and how many calls there are. ``*args`` and ``**kwargs`` may land anywhere: they count."""
    values = Values(torch_names)
    calls = 0
    for f, call in _calls_of(tree, cls):
        calls += 1
        passed = [a.value if isinstance(a, ast.Starred) else a for i, a in enumerate(call.args)
                  if isinstance(a, ast.Starred) or (i < len(init_params) and init_params[i] in asked)]
        passed += [k.value for k in call.keywords if k.arg is None or k.arg in asked]
        for arg in passed:
            why = values.value(arg, f)
            if why:
                return f"{cls}({why})", [], calls
    return None, list(values.classes), calls


def _calls_of(tree: ast.Module, cls: str):
    """(enclosing function or None, call) of every call of a name or attribute ending in ``cls``."""
    stack: list[tuple[ast.AST, Function | None]] = [(tree, None)]
    while stack:
        node, f = stack.pop()
        if isinstance(node, ast.Call) and (dotted(node.func) or "").rpartition(".")[2] == cls:
            yield f, node
        inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else f
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def called_classes(text: str | bytes) -> tuple[str, ...]:
    """The capitalised names a file's text calls, private ones too (``Tracker(``, ``_Tracker(``): the classes it may
    construct, which the project reads it for when it asks what their constructors are passed (project/sizes.py)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
    return tuple(sorted({name.decode() for name in _CALLED_CLASS.findall(data)}))
