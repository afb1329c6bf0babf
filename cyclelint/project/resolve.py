"""Findings that need the whole project: resolved over every file's records once all are linted."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..findings import Finding
from ..noqa import suppressed
from ..vocabulary import EVAL_STEPS, OBJECT_BASES, PLAIN_BASES, object_class, registers
from .classes import class_index, subclass_index, with_bases
from .records import ClassSummary, FileResult, PendingCtor, StateGrowth, slot_params
from .restarted import own_calls, restarted, started
from .summaries import resolve_graphs
from .withdrawals import MAX_HAND_OFFS, method_of, resolve_withdrawals


def resolve_project(results: Iterable[FileResult]) -> None:
    """Judge what each file handed on to the project, then withdraw what the project shows harmless."""
    results = list(results)
    project: dict[str, list[ClassSummary]] = {}
    for res in results:
        for name, summary in res.classes.items():
            project.setdefault(name, []).append(summary)
    _resolve_states(results)
    _resolve_dispatches(results)
    _resolve_caches(results)
    _resolve_back_pointers(results)
    resolve_graphs(results)  # before the stores: a graph kept by an object of another file's class is one
    _resolve_stores(results)
    _resolve_ctors(results, project)
    resolve_withdrawals(results)  # last: a finding resolved above may be one withdrawn


def _resolve_ctors(results: list[FileResult], project: dict[str, list[ClassSummary]]) -> None:
    """Turn pending ``Cls(self)`` and ``self.x.method(self)`` calls into CYC202 findings: the class of
    the same file first, else every class of that name in the linted tree must keep the argument."""
    for res in (res for res in results if res.ctors):
        for call in res.ctors:
            local = res.classes.get(call.cls_name)
            candidates = [local] if local else project.get(call.cls_name, [])
            params = [_kept_param(c, call, project) for c in candidates]
            if not params or None in params or suppressed(call.code, call.noqa):
                continue
            kept = _kept_through(call.via, res, project) if call.via else ""
            if kept is None:
                continue
            is_mod = any(c.is_module for c in candidates)
            message = (call.message.replace("{param}", params[0]).replace("{kept}", kept)
                       + (call.module_note if is_mod else ""))
            res.findings.append(Finding(res.path, call.line, call.column, call.end_line, call.end_column, call.code,
                                        message))
        res.ctors = []


def feeding_candidates(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the pre-filtered files that may feed a graph to a CYC305 candidate of another
    file: they are analysed in full before the project is resolved. Most trees have few candidates
    and fewer such callers, so most files keep the cheap answer."""
    wanted = {(st.cls, st.method) for res in results for st in res.states}
    if not wanted:
        return []
    methods = {method for _, method in wanted}  # the cheap test first: bases are looked up for these only
    files, homes = class_index(results)
    # a base class calling self.method(...) feeds its subclasses' overrides
    wanted |= {(name, st.method) for res in results for st in res.states
               for _, name in with_bases(st.cls, res.path, files, homes)}
    return [i for i, res in enumerate(results)
            if any((name, method) in wanted for cls, method in res.may_feed if method in methods
                   for _, name in with_bases(cls, res.path, files, homes))]


def deferred_to_analyse(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the files whose CYC305 candidates the pre-filter left to the project
    (``FileResult.deferred``) and that some file may now feed: it may call a method of that name
    with a value (``may_feed``), feeds one a graph (``evidence``) or runs one from a base class
    (``dispatches``, which need the overrides' ``grows``). Names alone: a superset, cheap, and in most
    trees no file is named. Analysed in full, they leave their candidates for ``feeding_candidates``."""
    if not any(res.deferred for res in results):
        return []
    named = {method for res in results for _, method in res.may_feed}
    named |= {method for res in results for _, method, _ in (*res.evidence, *res.input_evidence)}
    named |= {call.method for res in results for call in res.dispatches}
    return [i for i, res in enumerate(results) if named.intersection(res.deferred)]


def _resolve_states(results: list[FileResult]) -> None:
    """CYC305 for state grown from a parameter that a caller in another file feeds a graph-attached
    value (``meter.update(loss)`` in train.py, ``class Meter`` in metrics.py). A caller's class name
    means the class of its own file when it has one, else the classes of that name in the tree,
    and their bases: a subclass instance runs the inherited method. Candidates a caller in their own
    file fed were reported there; the ones left here had no such caller."""
    if not any(res.states for res in results):
        return
    files, homes = class_index(results)
    grad_off_decorators = {name for res in results for name in res.grad_off_decorators}
    fed: dict[tuple[str, str, str], set] = {}  # (file, class, method) -> slots some caller feeds a graph
    fed_inputs: dict[tuple[str, str, str], set] = {}  # ... or only the inputs of its forward()
    for res in results:
        for kept, evidence in ((fed, res.evidence), (fed_inputs, res.input_evidence)):
            for cls, method, slot in evidence:
                for home, name in with_bases(cls, res.path, files, homes):
                    kept.setdefault((home, name, method), set()).add(slot)
    calls = own_calls(results)
    constructed = {name for res in results for name in res.constructs}
    subclasses = subclass_index(files)
    for res in results:
        for st in res.states:
            if st.object_of and _no_container(st.object_of, res.path, files, homes):
                continue  # ``self.chat.append(v)``: the class's own method keeps ``v`` or not, judged in its file
            chain = with_bases(st.cls, res.path, files, homes)
            if _runs_without_grad(st.method, chain, files, homes) or _mixed_in_without_grad(
                    st.method, st.cls, res.path, files, homes, constructed, subclasses):
                continue  # a wrapper of the class or of a library base, or a library's loop, runs it with grad off
            if grad_off_decorators.intersection(st.decorators):
                continue  # decorated with a function of the project that runs it under no_grad/inference_mode
            if restarted(st.slot, st.method, st.cls, res.path, files, homes, calls):
                continue  # run only by methods that start the state anew: it holds one call's graph at most
            if st.by_signature and _unread_bases(chain, files, homes):
                continue
            # forward() of a module (its base being a module class of another file) receives graphs
            forward = st.method == "forward" and any(files[home].classes[name].is_module for home, name in chain)
            key = (res.path, st.cls, st.method)
            slots = fed.get(key, set()) | (fed_inputs.get(key, set()) if st.folds else set())
            fed_here = set(st.deps) & slot_params(slots, st.params)
            attached = st.attached and not (st.unless_no_grad and all(
                _defined_without_grad(source, res.path, files, homes) for source in st.unless_no_grad))
            if attached or forward or fed_here:
                why = "" if attached or fed_here else " (forward() of a module: its inputs carry the caller's graph)"
                res.findings.append(Finding(res.path, st.line, st.column, st.end_line, st.end_column, "CYC305",
                                            st.message + why))
        res.states = []


def _resolve_dispatches(results: list[FileResult]) -> None:
    """CYC305 at ``self.method(...)`` in a class whose subclass, anywhere in the project, overrides
    ``method`` to grow its state from what the call passes it, unless the subclass runs the method with
    grad off (a wrapper of its class chain, or a decorator of the project)."""
    if not any(res.dispatches for res in results):
        return
    files, homes = class_index(results)
    grad_off_decorators = {name for res in results for name in res.grad_off_decorators}
    # (base's file, base, method) -> (where the override grows state, how, the overriding class and its file)
    overrides: dict[tuple[str, str, str], list[tuple[str, StateGrowth, str, str]]] = {}
    for res in results:
        for name, summary in res.classes.items():
            for method, growth in summary.grows.items():
                chain = with_bases(name, res.path, files, homes)
                if grad_off_decorators.intersection(growth.decorators) or _runs_without_grad(method, chain, files, homes):
                    continue
                for home, base in chain - {(res.path, name)}:
                    overrides.setdefault((home, base, method), []).append(
                        (f"{name}.{method} ({res.path}:{growth.line}", growth, name, res.path))
    for res in results:
        for call in res.dispatches:
            # the calling method starting the grown state anew, as the overriding class runs it: one call's graph
            found = sorted(where for where, growth, sub, home in overrides.get((res.path, call.cls, call.method), [])
                           if slot_params(call.slots, growth.params) & set(growth.deps) and not (
                               call.caller and set(growth.slots) <= started(call.caller, sub, home, files, homes)))
            if found:
                more = f"; {len(found) - 1} more overrides do too" if len(found) > 1 else ""
                res.findings.append(Finding(res.path, call.line, call.column, call.end_line, call.end_column,
                                            call.code, call.message.replace("{override}", found[0] + more + ")")))
        res.dispatches = []


def _resolve_back_pointers(results: list[FileResult]) -> None:
    """CYC202 for ``owner.attr = obj``, unless some class of the project sets ``attr`` keeping nothing of it; a link
    through ``owner.attr[k] = obj`` (CYC201, CYC202) unless one binds ``attr`` only to weak containers."""
    if not any(res.back_pointers for res in results):
        return
    weak = {attr for res in results for summary in res.classes.values() for attr in summary.weak_slots}
    containers = {attr for res in results for summary in res.classes.values() for attr in summary.weak_containers}
    for res in results:
        res.findings += [Finding(res.path, bp.line, bp.column, bp.end_line, bp.end_column, bp.code, bp.message)
                         for bp in res.back_pointers if bp.attr not in (containers if bp.container else weak)]
        res.back_pointers = []


def _defined_without_grad(source: str, seen_from: str, files: dict[str, FileResult],
                          homes: dict[str, list[str]]) -> bool:
    """``Class.method`` is defined under no_grad/inference_mode by the class itself: the file's own class of
    that name, else every class of that name in the tree (a method it inherits is not followed)."""
    cls, method = method_of(source)
    where = [seen_from] if cls in files[seen_from].classes else homes.get(cls, [])
    return bool(where) and all(method in files[home].classes[cls].no_grad_defs for home in where)


def _resolve_caches(results: list[FileResult]) -> None:
    """CYC402 for methods decorated with a helper of the project that wraps lru_cache (transformers'
    ``compile_compatible_method_lru_cache`` in pytorch_utils.py, used across the model files), and
    for cached methods of classes that are nn.Modules through bases defined in other files."""
    if not any(res.caches for res in results):
        return
    factories = {name for res in results for name in res.cache_factories}
    files, homes = class_index(results)
    for res in results:
        for c in res.caches:
            if c.decorator and c.decorator not in factories:
                continue
            message = c.message
            if c.cls:
                base = next((name for home, name in sorted(with_bases(c.cls, res.path, files, homes))
                             if files[home].classes[name].is_module), None)
                if base is None:
                    continue
                message = message.replace("{why}", f"an nn.Module through {base}")
            res.findings.append(Finding(res.path, c.line, c.column, c.end_line, c.end_column, "CYC402", message))
        res.caches = []


def _resolve_stores(results: list[FileResult]) -> None:
    """CYC302 for ``metrics.add(v)`` on an object of a class of another file, unless the tree defines that class
    and every class it derives from as no container (``object_class``; a base the tree does not define, such as
    ``MutableMapping``, may be one): its method then keeps ``v`` or not (agilerl's ``MicroBatchMetrics.add``
    detaches), judged in its own file from this call's evidence."""
    if not any(res.stores for res in results):
        return
    files, homes = class_index(results)
    for res in results:
        for st in res.stores:
            if not _no_container(st.cls, res.path, files, homes):
                res.findings.append(Finding(res.path, st.line, st.column, st.end_line, st.end_column, st.code,
                                            st.message))
        res.stores = []


def _no_container(cls: str, path: str, files: dict[str, FileResult], homes: dict[str, list[str]]) -> bool:
    """The tree defines ``cls``, seen from ``path``, and every class it derives from, and none is a container."""
    chain = with_bases(cls, path, files, homes)
    names = {name for _, name in chain} | {b.rsplit(".", 1)[-1] for b in PLAIN_BASES}
    return bool(chain) and all(object_class(name, files[home].classes[name].bases)
                               and all(b.rsplit(".", 1)[-1] in names for b in files[home].classes[name].bases)
                               for home, name in chain)


def _runs_without_grad(method: str, chain: set[tuple[str, str]], files: dict[str, FileResult],
                       homes: dict[str, list[str]], seen: frozenset[str] = frozenset()) -> bool:
    """``method`` of the classes of ``chain`` (a class and its bases) always runs with grad off: a class's own
    wrapper runs it so (``grad_off``), a library base's (:func:`_library_grad_off`) or a library's loop
    (``loop_grad_off``: Lightning's evaluation), it is an evaluation step of a module (as in one file), or it is a
    helper that each of its callers in those classes, on the instance, calls with grad off (``eval_callers``)."""
    summaries = [files[home].classes[name] for home, name in chain]
    if any(method in c.grad_off or method in c.loop_grad_off for c in summaries) or _library_grad_off(
            method, chain, files, homes) or (method in EVAL_STEPS and any(c.is_module for c in summaries)):
        return True
    callers = [by for c in summaries if (by := c.eval_callers.get(method))]
    return bool(callers) and method not in seen and all(
        _runs_without_grad(caller, chain, files, homes, seen | {method}) for by in callers for caller in by)


def _mixed_in_without_grad(method: str, cls: str, seen_from: str, files: dict[str, FileResult],
                           homes: dict[str, list[str]], constructed: set[str],
                           subclasses: dict[str, list[tuple[str, str]]]) -> bool:
    """``cls`` is a mixin: it derives from nothing, no file of the project calls it, and classes of the project
    derive from it directly, each of which runs ``method`` with grad off (torch-uncertainty 0.13.0's
    ``_SCODRiskCoverageMixin.update``, mixed into torchmetrics metrics, whose base runs ``update`` so). Its
    ``method`` runs only as theirs."""
    if cls in constructed or any(b not in OBJECT_BASES for b in files[seen_from].classes[cls].bases):
        return False
    users = subclasses.get(cls, [])
    return bool(users) and all(_runs_without_grad(method, with_bases(name, home, files, homes), files, homes)
                               for home, name in users)


def _library_grad_off(method: str, chain: set[tuple[str, str]], files: dict[str, FileResult],
                      homes: dict[str, list[str]]) -> bool:
    """A class of ``chain`` derives from a library class known to run ``method`` with grad off, which the tree does
    not define (linting torchmetrics itself, its own ``Metric`` is read instead)."""
    return any(method in methods and (last := base.rsplit(".", 1)[-1]) not in files[home].classes and last not in homes
               for home, name in chain for base, methods in files[home].classes[name].library_grad_off.items())


def _unread_bases(chain: set[tuple[str, str]], files: dict[str, FileResult], homes: dict[str, list[str]]) -> bool:
    """Some class of ``chain`` derives from a class the tree does not hold, which may wrap its methods (not
    ``object``, ``ABC`` or ``nn.Module``, which run none of them for their callers)."""
    return any(base not in PLAIN_BASES and (last := base.rsplit(".", 1)[-1]) not in PLAIN_BASES
               and last not in files[home].classes and last not in homes
               for home, name in chain for base in files[home].classes[name].bases)


def _kept_param(cls: ClassSummary, call: PendingCtor, project: dict[str, list[ClassSummary]],
                depth: int = 0) -> str | None:
    """The parameter of the method called (``__init__`` for a constructor) that receives the instance, if
    the class keeps it. A class that does not define the method inherits it: its bases are searched depth
    first, each class once (a big tree holds many classes of one name; searching all paths would be
    exponential)."""
    stack, seen = [cls], set()
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur.has_init if call.method == "__init__" else call.method in cur.methods:
            found = _receiving_param(cur, call, project, depth)
            if found:
                return found
            continue
        for base in reversed(cur.bases):
            stack.extend(reversed(project.get(base.rsplit(".", 1)[-1], [])))
    return None


def _kept_through(via: PendingCtor, res: FileResult, project: dict[str, list[ClassSummary]]) -> str | None:
    """How the instance keeps what it hands to its own method ``via.method``: the parameter that keeps it,
    where the project defines the method; for a method only a base outside the project defines
    (transformers' ``Trainer.add_callback`` in a subclass), its name when it says it registers what it
    is given; None when neither says it is kept."""
    local = res.classes.get(via.cls_name)
    candidates = [local] if local else project.get(via.cls_name, [])
    params = [_kept_param(c, via, project) for c in candidates]
    if params and None not in params:
        return f" in {via.cls_name}.{via.method} ({params[0]})"
    if (candidates and registers(via.method)
            and all(_inherited_from_outside(c, via.method, project) for c in candidates)):
        return " (a method of a base class outside the linted code, named as one that keeps what it is given)"
    return None


def _inherited_from_outside(cls: ClassSummary, method: str, project: dict[str, list[ClassSummary]]) -> bool:
    """No class of the project in ``cls``'s bases defines ``method``, and one base is not in the project."""
    stack, seen, outside = [cls], set(), False
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if method in cur.methods:
            return False
        for base in cur.bases:
            found = project.get(base.rsplit(".", 1)[-1], [])
            outside = outside or not found
            stack.extend(found)
    return outside


def _receiving_param(cls: ClassSummary, call: PendingCtor, project: dict[str, list[ClassSummary]],
                     depth: int) -> str | None:
    """The parameter the call passes the instance to, when the method keeps it: stores it, or hands it to a
    method of another object that keeps it (followed ``MAX_HAND_OFFS`` deep), or of a class the tree does not
    define or defines as a container."""
    keeps = None
    if call.method == "__init__":
        params, kept = cls.params, cls.kept
    else:
        keeps = cls.keeps.get(call.method)
        params, kept = (keeps.params, keeps.kept) if keeps else ([], [])
    if call.keyword is not None:
        param = call.keyword
    elif call.index is not None and call.index < len(params):
        param = params[call.index]
    else:
        return None
    hands = keeps.hands.get(param, []) if keeps else []
    return param if param in kept or any(_hand_keeps(hand, call, project, depth) for hand in hands) else None


def _hand_keeps(hand: tuple[str, str, int | str], call: PendingCtor, project: dict[str, list[ClassSummary]],
                depth: int) -> bool:
    """``(class, method, slot)`` keeps the argument it is handed: as its summaries say, unless the tree does not
    define the class, defines it as a container (``class History(list)``) or not the method."""
    cls, method, slot = hand
    found = project.get(cls, [])
    if not found or depth >= MAX_HAND_OFFS or any(
            not object_class(cls, c.bases) or _inherited_from_outside(c, method, project) for c in found):
        return True
    at = replace(call, method=method, index=slot if isinstance(slot, int) else None,
                 keyword=slot if isinstance(slot, str) else None)
    return any(_kept_param(c, at, project, depth + 1) is not None for c in found)
