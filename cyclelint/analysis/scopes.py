"""What the walker knows about the class, function and loop it is in, the stores it hands to the
rules, and what the file tells the rest of the run."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from ..vocabulary import FORWARD_METHODS, loss_like, model_like, no_module_class
from .class_facts import number_attrs
from .narrowing import plain
from .tensors import Value


@dataclass
class Loop:
    node: cst.For | cst.While
    data_iter: bool  # iterates a loader/batches/steps or is a ``while``
    targets: frozenset[str] = frozenset()
    has_step: bool = False  # body calls backward()/step()/zero_grad()
    updates: bool = False  # ... step() or zero_grad(): what each iteration computes with changes between them
    weak: bool = False  # a data loop only by a weak name (chunks, prompts): a local list built there is one call's
    one_pass: bool = False  # walks the parts of one forward pass (LoopKinds.one_pass), even when it runs backward()
    # a count or a weak name in a method of this class, data only because its file does not show the class is an
    # nn.Module (its bases are another file's): a repeated step of its forward pass if the project shows it is
    unless_module: str = ""
    capped: frozenset[str] = frozenset()  # ``while True`` left once len(X) reaches a bound: X cannot grow past it
    resets: set[str] = field(default_factory=set)  # names rebound or cleared inside

    @property
    def is_step(self) -> bool:
        """Iterations are independent steps whose autograd graphs should die."""
        return self.data_iter or self.has_step


@dataclass
class Binding:
    """Where a local name was last bound."""

    index: int
    loops: tuple[Loop, ...]  # loops enclosing the binding
    stmt: cst.CSTNode | None = None  # the statement that bound it (a loop, an assignment, an unpacking)


@dataclass
class ClassInfo:
    node: cst.ClassDef
    name: str
    bases: list[str]
    is_module: bool
    methods: dict[str, str] = field(default_factory=dict)  # name -> method|static|class|property
    data_attrs: set[str] = field(default_factory=set)  # self.X assigned somewhere
    module_attrs: set[str] = field(default_factory=set)  # self.X = nn.Linear(...) and the like
    attr_types: dict[str, str] = field(default_factory=dict)  # self.X = SomeClass(...)
    weak_attrs: dict[str, bool] = field(default_factory=dict)  # X -> every store of self.X is a weak container
    # self.X = torch.zeros(n, dtype=...): whether each such store builds an integer (or bool) tensor
    tensor_dtypes: dict[str, set[bool]] = field(default_factory=dict)
    class_attrs: dict[str, cst.BaseExpression] = field(default_factory=dict)
    init_params: list[str] = field(default_factory=list)
    kept_params: dict[str, str] = field(default_factory=dict)  # __init__ params stored on self -> the attribute
    removed_attrs: set[str] = field(default_factory=set)  # handles .remove()d somewhere
    # X of self.X, or a keyed item of a container it does not bind -> the methods but __init__ that drop it
    released: dict[str, set[str]] = field(default_factory=dict)
    grad_off: set[str] = field(default_factory=set)  # methods defined to run with grad off (``@torch.no_grad()``)
    numbers: frozenset[str] | None = None  # the attributes only ever set to numbers: number_attrs(), once asked

    def number_attrs(self) -> frozenset[str]:
        if self.numbers is None:
            self.numbers = number_attrs(self.node)
        return self.numbers

    @property
    def autograd_function(self) -> bool:
        """A ``torch.autograd.Function``: torch runs its static ``forward``, and its ``backward`` unless asked to
        make a graph of the gradients (``create_graph=True``), with grad off."""
        return any(b.rsplit(".", 1)[-1] == "Function" for b in self.bases)

    @property
    def has_bases(self) -> bool:
        """It names a base class other than ``object``, whose methods may be another file's."""
        return any(b not in ("object", "") for b in self.bases)

    def forward_pass(self, method: str) -> bool:
        """``self.method(x)``, a method of this class, is a forward pass by its name (``encode``, ``compute_loss``, and
        ``actor`` in a class known to be a module): in a module, whose parameters make a graph the evaluator does not
        follow, unless it runs with grad off. A class that is none (a wrapper's ``predict``, run under no_grad to
        numpy) is judged by what it returns."""
        named = method in FORWARD_METHODS or loss_like(method) or (model_like(method) and self.is_module)
        return (named and method not in self.grad_off
                and not no_module_class(self.bases, self.is_module))


@dataclass
class Function:
    node: cst.FunctionDef | None  # None: module level
    name: str
    parent: Function | None
    cls: ClassInfo | None  # the class whose body defines this function
    instance: str | None  # the method's instance parameter, inherited by closures
    params: list[str]
    no_grad: bool = False
    loops: list[Loop] = field(default_factory=list)
    grad_stack: list[bool] = field(default_factory=list)  # with no_grad()/enable_grad()
    handlers: list[str | None] = field(default_factory=list)  # ``except E as name``; None: unnamed, or ``finally``
    counter: int = 0
    env: dict[str, Value] = field(default_factory=dict)
    bindings: dict[str, Binding] = field(default_factory=dict)
    callables: dict[str, tuple[str, cst.CSTNode]] = field(default_factory=dict)
    loads: set[str] = field(default_factory=set)
    stored: set[str] = field(default_factory=set)  # names bound locally
    imported: set[str] = field(default_factory=set)  # ... by an import: modules and what they define, kept for good
    backward_names: set[str] = field(default_factory=set)
    pieces: set[str] = field(default_factory=set)  # locals bound to the pieces of one tensor (x.split(4))
    extents: set[str] = field(default_factory=set)  # locals read from one tensor's shape (h = z.shape[2])
    # local lists this call made: the number of loops around where, and what fills them (loops.PIECES, ...)
    lists: dict[str, tuple[int, str]] = field(default_factory=dict)
    self_loads: set[str] = field(default_factory=set)  # X of self.X read here
    unset: frozenset[str] = frozenset()  # names and attributes the enclosing branches tested to be None (unset.py)
    non_root: frozenset[str] = frozenset()  # loop names tested not to be a module's own item (root_item.py)
    ruled_out: frozenset[str] = frozenset()  # ``name:kind`` the enclosing isinstance tests ruled out (narrowing.py)
    calls_remove: bool = False
    is_method: bool = False
    is_class_body: bool = False
    is_module: bool = False

    @property
    def grad_enabled(self) -> bool:
        return self.grad_stack[-1] if self.grad_stack else not self.no_grad

    @contextmanager
    def handling(self, name: str | None) -> Iterator[None]:
        """Within an except block, or a ``finally`` (``name`` None): there sys.exc_info() is the exception on its way,
        whose traceback holds this frame."""
        self.handlers.append(name)
        try:
            yield
        finally:
            self.handlers.pop()

    def own_deps(self, deps: frozenset[str]) -> set[str]:
        """Of ``deps``, those that give a caller nothing: locals the function binds (what they hold is among ``deps``
        already; the name only asks whether a ``backward()`` runs through it, and none of the function's does so far),
        and attributes of the instance that its class only ever sets to numbers (``ClassInfo.number_attrs``)."""
        method = self.enclosing_method()
        numbers = method.cls.number_attrs() if method is not None and method.cls is not None else frozenset()
        return {d for d in deps if (d in self.stored and d not in self.params and d not in self.backward_names)
                or (d.partition(".")[0] == self.instance and d.partition(".")[2] in numbers)}

    @property
    def qualified_name(self) -> str:
        """``Class.method`` for a method, else the function's name."""
        return f"{self.cls.name}.{self.name}" if self.is_method and self.cls else self.name

    def known_plain(self, name: str) -> bool:
        """The enclosing ``isinstance`` tests ruled the parameter ``name`` out as a tensor or a container of one
        (narrowing.py), and nothing rebound it since."""
        return name in self.params and name not in self.stored and plain(name, self.ruled_out)

    def enclosing_method(self) -> Function | None:
        fn: Function | None = self
        while fn is not None and not fn.is_method:
            fn = fn.parent
        return fn


@dataclass
class Store:
    """A value placed where an object keeps it: ``o.x = v``, ``o[k] = v``, ``o.items.append(v)``."""

    stmt: cst.CSTNode
    owner: str | None  # dotted path of the object that holds the value afterwards
    target: str | None  # dotted text of the slot, for matching a later ``= None`` or ``del``
    value: cst.BaseExpression
    kind: str  # "attr", "item" or "call"
    call: cst.Call | None = None
    augmented: bool = False  # ``o.x += v``: grows the slot rather than replacing it


@dataclass
class FileFacts:
    """What one file tells the rest of the run (used across files)."""

    path: str
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    module_classes: set[str] = field(default_factory=set)
    globals: dict[str, cst.BaseExpression] = field(default_factory=dict)
    evidence: list = field(default_factory=list)  # (class, method, slot): calls here that pass graph-attached values
    input_evidence: list = field(default_factory=list)  # ... that pass only the inputs of their forward()
    grad_off_decorators: set[str] = field(default_factory=set)  # functions of this file whose decoratee runs without grad
    loop_grad_off: dict[str, set[str]] = field(default_factory=dict)  # class -> methods a library's loop runs so
    # classes whose ``__init__`` a ``@dataclass`` or ``NamedTuple`` writes: (parameters, those kept on the instance)
    generated_inits: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    imported: dict[str, str] = field(default_factory=dict)  # what the names its imports bind stand for, dotted
    # each call's name -> (grad on, the caller) (rules/file_callers.py): None where the CYC3 rules did not run
    grad_calls: dict[str, set[tuple[bool, str]]] | None = None
    graph_calls: dict[str, set[tuple[bool, str]]] | None = None  # ... -> (may pass a graph, the caller)
