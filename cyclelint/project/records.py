"""The records a file hands to project-wide resolution, as the cache stores them (record_codec.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..analysis.returns import Summary
from ..findings import FileWarning, Finding


@dataclass
class MethodKeeps:
    """A method that stores some of its arguments on its instance (``self.x = arg``, ``self.items.append(arg)``),
    or hands them to a method of an object of a class another file defines (``hands``: (class, method, slot)),
    which keeps them or not as the project says."""

    params: list[str]  # after the instance
    kept: list[str]
    hands: dict[str, list[tuple[str, str, int | str]]] = field(default_factory=dict)


@dataclass
class ArgumentDrops:
    """A method that keeps nothing itself of some of its arguments (argument_drops.py): each with the methods of
    objects the instance holds that it hands the argument to, as (class, method, slot), which must keep nothing
    of it either."""

    params: list[str]  # after the instance
    dropped: dict[str, list[tuple[str, str, int | str]]]


@dataclass
class StateGrowth:
    """A method that grows instance state from some of its arguments (a CYC305 candidate left to the project)."""

    params: list[str]  # after the instance
    deps: list[str]  # the parameters the grown value comes from
    line: int
    decorators: list[str] = field(default_factory=list)  # of the method, defined elsewhere: one may turn grad off
    slots: list[str] = field(default_factory=list)  # X of each ``self.X`` it grows


@dataclass
class ClassSummary:
    """What other files need to know about a class: which ``__init__`` parameters it keeps, and which
    arguments its other methods keep."""

    params: list[str]
    kept: list[str]
    bases: list[str]
    is_module: bool
    has_init: bool
    grad_off: list[str] = field(default_factory=list)  # methods the class itself runs with grad off (grad_wrappers)
    no_grad_defs: list[str] = field(default_factory=list)  # methods it defines under no_grad/inference_mode
    methods: list[str] = field(default_factory=list)  # the methods it defines, ``__init__`` aside
    keeps: dict[str, MethodKeeps] = field(default_factory=dict)  # those that store an argument on the instance
    drops: dict[str, ArgumentDrops] = field(default_factory=dict)  # those that keep nothing of some argument
    unbound: list[str] = field(default_factory=list)  # its static and class methods
    grows: dict[str, StateGrowth] = field(default_factory=dict)  # those that grow instance state from arguments
    weak_slots: list[str] = field(default_factory=list)  # attributes ``obj.X = v`` sets keeping nothing of v
    weak_containers: list[str] = field(default_factory=list)  # attributes it binds only to weak containers
    # base -> the methods it runs with grad off, known of a library (grad_wrappers.LIBRARY_GRAD_OFF)
    library_grad_off: dict[str, list[str]] = field(default_factory=dict)
    loop_grad_off: list[str] = field(default_factory=list)  # methods a library's loop runs with grad off (LOOP_GRAD_OFF)
    # helper -> the methods of the class that call it on the instance, for a class Lightning evaluates (eval_callers)
    eval_callers: dict[str, list[str]] = field(default_factory=dict)
    # method -> (slots it binds afresh, its own methods it calls) before anything else (restarts.method_starts)
    starts: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    # method -> the positions of its returned tuples (-1: the whole) that hold no graph nor anything of its arguments
    clean_returns: dict[str, list[int]] = field(default_factory=dict)
    # its own stores show nothing of size (instance_holds.py): the other classes it asks about say. False, the common
    # case, is what a cache entry leaves out: most classes of a tree hold tensors or modules
    bare: bool = False
    # tuples, not lists: a tree's thousands of summaries then cost the cycle collector nothing (untracked)
    held_classes: tuple[str, ...] = ()  # classes of the objects it keeps, when ``bare``
    passed_in: tuple[str, ...] = ()  # ``__init__`` parameters it keeps that its callers decide
    own_init: bool = False  # its ``__init__`` runs no base's ``__init__``
    storing: tuple[str, ...] = ()  # its methods but ``__init__`` that store on the instance
    # X of the ``self.X`` its methods remove hook handles from (``for h in self.X: h.remove()``); known only of a class
    # analysed in full (the engine), as ``clean_returns``
    removes: tuple[str, ...] = ()


@dataclass(kw_only=True)
class Placed:
    """Where in its file a rule made a record: filled by the engine once the file's positions are known."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0


@dataclass
class PendingCtor(Placed):
    """``Cls(self, ...)`` kept by the instance: a CYC202 once ``Cls`` is known to keep that argument
    (CYC103: the instance's own bound method handed to a base ``__init__`` that keeps it); with
    ``method``, ``self.x.method(self)`` where ``self.x`` is a ``Cls`` whose ``method`` keeps it. With
    ``via``, the instance keeps the new object only through a call of its own method
    (``self.add_callback(cb)``): a finding when ``via`` resolves too."""

    cls_name: str
    index: int | None
    keyword: str | None
    obj: str
    owner_is_module: bool
    code: str = "CYC202"
    message: str = ""  # with {param} for the parameter that keeps obj
    module_note: str = ""  # added when the class called is an nn.Module
    noqa: tuple[str, ...] | None = None  # the codes a noqa comment on its line names, judged when resolved
    method: str = "__init__"
    via: PendingCtor | None = None


@dataclass
class PendingState(Placed):
    """A CYC305 candidate of ``cls.method`` that needs a caller passing a graph-attached argument."""

    code: ClassVar[str] = "CYC305"
    cls: str
    method: str
    params: list[str]
    deps: list[str]  # the parameters the grown value comes from
    message: str
    attached: bool = False  # judged attached in its file: reported unless a base class runs the method with grad off
    decorators: list[str] = field(default_factory=list)  # of the method, defined elsewhere: one may turn grad off
    # attached only through calls of these "Class.method": quiet if the project defines each under no_grad
    unless_no_grad: list[str] = field(default_factory=list)
    # attached only because the method's signature takes a tensor: quiet when a base class the tree does not hold
    # may run the method for its callers (torchmetrics' ``Metric`` runs ``update`` with grad off)
    by_signature: bool = False
    # folded into state kept across calls (graph_inputs.folds_across_calls): the inputs of a forward() count only then
    folds: bool = True
    # kept by ``self.x.append(v)`` on an object of this class of another file: quiet when the tree defines it as no
    # container (its method keeps ``v`` or not, judged in its own file from this call's evidence)
    object_of: str = ""
    slot: str = ""  # X of the ``self.X`` it grows: quiet when each method calling it starts that anew (restarted.py)


@dataclass
class PendingDispatch(Placed):
    """``self.method(...)`` in a method of ``cls`` passing graph-attached values (``slots``): a CYC305 at
    the call once a subclass somewhere in the project overrides ``method`` to grow its state from them
    (Lightning 1.0's ``Metric.forward`` calling ``self.update(*args)``). ``message`` has ``{override}``."""

    code: ClassVar[str] = "CYC305"
    cls: str
    method: str
    slots: list[int | str]
    message: str
    caller: str = ""  # the method making the call: an override's growth of what it starts anew is no leak


@dataclass
class PendingCache(Placed):
    """A cached method: a CYC402 once some file of the project defines ``decorator`` as a function
    that builds an lru_cache ("": functools' own) and ``cls`` is an nn.Module through its bases
    ("": the class was judged to hold tensors or modules in its own file)."""

    code: ClassVar[str] = "CYC402"
    decorator: str
    cls: str
    message: str


@dataclass
class PendingGraph(Placed):
    """A value a loop keeps (CYC301-CYC303) that is graph-attached only if a function another file defines
    returns a graph, or hands back an argument that is: ``deps`` are its questions (analysis/returns.py),
    answered with that file's summaries. ``message`` is the finding's, less why. ``object_of``: the class of the
    object the loop's ``metrics.add(v)`` keeps ``v`` in, when the file does not define it (``PendingStore``)."""

    code: str
    message: str
    deps: list[str]
    object_of: str = ""


@dataclass
class PendingStore(Placed):
    """``metrics.add(v)`` in a loop, keeping a graph-attached ``v``, with ``metrics`` an object of ``cls``, a class
    the file does not define: a CYC302 unless the tree defines ``cls`` as no container, down to every base. Its
    method then keeps ``v`` or not as it says: judged in its own file (CYC305), from this call's evidence. ``code``:
    CYC305 where ``v`` is kept across calls (``self.chat.append(v)``), not across a loop's iterations."""

    cls: str
    message: str
    code: str = "CYC302"


@dataclass
class PendingWithdrawal(Placed):
    """A finding the project may withdraw, once it shows what methods of classes it defines do. A loop's finding
    (CYC301-CYC303) whose kept value is graph-attached only through calls of ``via`` (``Class.method`` or
    ``Class.method#i``, a position of the tuples it returns): withdrawn when every one returns that position clean
    (``ClassSummary.clean_returns``) or runs the method with grad off. A hook (CYC104) registered through a
    method of the instance's own class: withdrawn when every definition of each of ``drops`` (class, method,
    slot) keeps nothing of that argument (``ClassSummary.drops``). A hook whose captures are all ``self.attr``
    inherited from classes of other files: withdrawn when none of ``unbound`` ("Class.attr") is a regular method
    there (``ClassSummary.unbound``: mmpretrain's static ``Flamingo._load_adapter_hook``). A loop's finding in a
    function that ``callers`` names: withdrawn when every call of it in the project runs with grad off, or from
    functions themselves only called so (project/callers.py). A cycle made in ``small``'s methods through their
    instances (or an unbounded cache on one, CYC402): withdrawn when none may hold anything of size
    (project/sizes.py), and, for a hook, when no definition of each of ``hooks`` stores anything on the instance
    (what a hook is given is a module's inputs and outputs). A hook whose handle the instance keeps in ``self.X``:
    withdrawn when a class of the instance's chain, its own or a base, removes the handles of ``removed``
    ("Class.X"; ``ClassSummary.removes``), as torchcam's base ``_CAM.remove_hooks()`` does for its subclasses.
    A loop's finding that is one only because counts (``range(self.n_hop)``) in methods of ``modules`` were taken
    for steps, their file not showing the classes are nn.Modules: withdrawn when the project shows each is one
    (recbole's ``RippleNet(KnowledgeRecommender)`` summing one forward pass's hops).
    Each record withdraws its finding on its own."""

    code: str
    via: list[str]
    drops: list[tuple[str, str, int | str]] = field(default_factory=list)
    unbound: list[str] = field(default_factory=list)  # "Class.attr" of ``self.attr``: withdrawn if none is bound
    callers: list[str] = field(default_factory=list)  # the loop's function: withdrawn if the project calls it grad off
    fed: bool = False  # ... a method's state grown from an argument: a call passing only graph-free values counts too
    # "Class.method" of the instances a cycle holds, made in that method: withdrawn if none holds anything of size
    small: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)  # "Class.method" registered as a hook: withdrawn if it stores nothing
    removed: list[str] = field(default_factory=list)  # "Class.X" keeping the hook's handle: withdrawn if one removes it
    modules: list[str] = field(default_factory=list)  # classes whose loops make it a step: withdrawn if nn.Modules


@dataclass
class PendingBackPointer(Placed):
    """``owner.attr = obj`` giving an object the instance reaches a strong reference back to it: a CYC202 unless
    a class of the project sets ``attr`` keeping nothing of what it is given (classtable.weak_slots: a property
    setter that keeps ``weakref.ref(value)``, torchrl's ``WeightSyncScheme.context``; a ``__setattr__`` branch,
    torch_geometric's storages). The owner's class is rarely known where the store is, so the name decides."""

    attr: str
    message: str
    code: str = "CYC202"
    # ``owner.attr[k] = obj``, ``owner.attr.append(obj)``: quiet when a class of the project binds ``attr`` only to a
    # weak container (``WeakValueDictionary()``), which keeps nothing of what is put into it
    container: bool = False


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    ctors: list[PendingCtor] = field(default_factory=list)
    states: list[PendingState] = field(default_factory=list)
    evidence: list[tuple[str, str, int | str]] = field(default_factory=list)  # (class, method, slot) fed a graph
    input_evidence: list[tuple[str, str, int | str]] = field(default_factory=list)  # ... fed a forward()'s inputs
    may_feed: list[tuple[str, str]] = field(default_factory=list)  # pre-filtered: (class, method) it may feed a graph
    deferred: list[str] = field(default_factory=list)  # pre-filtered: methods whose CYC305 candidates need a caller
    imports_asked: list[str] = field(default_factory=list)  # pre-filtered: imported calls its loops keep, unjudged
    own_graphs: list[str] = field(default_factory=list)  # pre-filtered: module-level functions that may return a graph
    helper_imports: dict[str, list[str]] = field(default_factory=dict)  # pre-filtered: the others' imported calls
    warnings: list[FileWarning] = field(default_factory=list)
    cells: list[int] | None = None  # a notebook: the first line of each code cell (notebook.place)
    cache_factories: list[str] = field(default_factory=list)  # module-level functions that build an lru_cache
    grad_off_decorators: list[str] = field(default_factory=list)  # module-level functions: decoratee runs grad off
    caches: list[PendingCache] = field(default_factory=list)
    dispatches: list[PendingDispatch] = field(default_factory=list)
    graphs: list[PendingGraph] = field(default_factory=list)
    back_pointers: list[PendingBackPointer] = field(default_factory=list)
    stores: list[PendingStore] = field(default_factory=list)
    withdrawals: list[PendingWithdrawal] = field(default_factory=list)
    # what its functions return (methods too where ``graphs`` ask), once analysed in full; None: pre-filtered
    summaries: dict[str, Summary] | None = None
    imports: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # name: (level, module, its name there)
    constructs: tuple[str, ...] = ()  # the capitalised names its text calls (instance_holds.py)
    # analysed in full at the project's request: each call's name -> (grad on, caller) (analysis.scopes.FileFacts)
    grad_calls: dict[str, set[tuple[bool, str]]] | None = None
    graph_calls: dict[str, set[tuple[bool, str]]] | None = None  # ... -> (may pass a graph: grad on, an argument not
    # known graph-free; the caller)
    # of those, kept for every file analysed in full: the calls of a method a class of the file defines, on the
    # instance (``Class.method``) or not (``method``); None: pre-filtered (project/restarted.py)
    own_calls: dict[str, tuple[tuple[bool, str], ...]] | None = None


def slot_params(slots, params: list[str]) -> set[str]:
    """The parameter names that call slots (an index after ``self``, or a keyword) land in. ``"*2"``
    (``*args`` as the third argument) stands for every parameter from the third on, ``"**"``
    (``**kwargs``) for every parameter."""
    out = set()
    for slot in slots:
        if isinstance(slot, int) and slot < len(params):
            out.add(params[slot])
        elif slot == "**":
            out.update(params)
        elif isinstance(slot, str) and slot.startswith("*"):
            out.update(params[int(slot[1:]):])
        elif slot in params:
            out.add(slot)
    return out
