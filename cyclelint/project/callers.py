"""Loops in functions that the project only calls with grad off (``PendingWithdrawal.callers``): an evaluation helper
that collects each batch's embeddings keeps no graph when a ``@torch.no_grad()`` method of another file is where it
runs from, directly or through functions themselves only called so. State a method grows from an argument only its
annotation calls a tensor (``PendingWithdrawal.fed``) keeps none either when no call passes one a graph: a call may also
pass only graph-free values (``add_batch(inp[0].data)``; ``FileResult.graph_calls``).

Calls are known by name, as in one file (rules/accumulation.py): every call of the function's name anywhere in the
project counts (``x.evaluate()`` on an object of any class), so one call with grad on keeps the finding. Each file
whose text names the function is analysed in full for its calls and their grad mode (``FileResult.grad_calls``). A
file that reads the name other than as a call (a callback handed on, a decorator) keeps the finding, as does a name
that too many files mention to follow, a call at a file's top level with grad on, and calls only around a cycle."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from ..files import read_source
from ..parsing import quiet_parse
from .records import FileResult

MAX_CALLER_ROUNDS = 4  # callers of callers followed this deep
MAX_MENTIONS = 32  # files that name one function: beyond that it is too common a name (``update``) to follow

Sites = dict[str, list[tuple[bool, str]]]  # a function's name -> (grad on, its caller's qualified name) of each call


def _last(name: str) -> str:
    return name.rpartition(".")[2]


def _asked(results: Iterable[FileResult]) -> set[str]:
    return {_last(name) for res in results for w in res.withdrawals for name in w.callers}


def _call_sites(results: Iterable[FileResult], graphs: bool = False) -> Sites:
    """Every call the files analysed in full record, by the called function's own name, with its grad mode (or, with
    ``graphs``, whether it may pass a graph); made by ``""`` where a module's or a class's body makes it, as the file
    is imported."""
    sites: Sites = {}
    for res in results:
        top = {"<module>", *res.classes}
        for called, calls in ((res.graph_calls if graphs else res.grad_calls) or {}).items():
            sites.setdefault(_last(called), []).extend((on, "" if caller in top else caller) for on, caller in calls)
    return sites


def _followed(asked: set[str], sites: Sites) -> set[str]:
    """``asked``, and the callers of each call with grad on, and theirs: what may run the asked functions with grad."""
    names, todo = set(asked), list(asked)
    while todo:
        for on, caller in sites.get(todo.pop(), ()):
            if on and caller and _last(caller) not in names:
                names.add(_last(caller))
                todo.append(_last(caller))
    return names


class Mentions:
    """The files whose text names each function, and the names some file reads other than as a call."""

    def __init__(self, results: Sequence[FileResult], names: set[str]):
        self.files: dict[str, list[int]] = {}
        self.read: set[str] = set()
        if not names:
            return
        word = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
        for i, res in enumerate(results):
            try:
                data = read_source(res.path)
            except OSError:  # not on disk (an editor's buffer): what it calls is not known
                self.read |= names
                continue
            found = {m.decode() for m in word.findall(data)}
            for name in found:
                self.files.setdefault(name, []).append(i)
            if found - self.read:
                self.read |= _read_not_called(data, found)

    def followable(self, name: str) -> list[int] | None:
        """The files that name ``name``, None when it cannot be followed."""
        files = self.files.get(name)
        return files if files and len(files) <= MAX_MENTIONS and name not in self.read else None


def _read_not_called(data: bytes, names: set[str]) -> set[str]:
    """Those of ``names`` the module reads other than as what a call calls (``submit(evaluate)``, ``@evaluate``)."""
    try:
        tree = quiet_parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(names)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return {name for node in ast.walk(tree)
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and id(node) not in called
            and (name := node.id if isinstance(node, ast.Name) else node.attr) in names}


def callers_to_analyse(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the files not yet analysed for their calls that name a function a withdrawal asks about, or a caller
    of one with grad on: analysed in full, they say with what grad mode they call it."""
    asked = _asked(results)
    if not asked:
        return []
    names = _followed(asked, _call_sites(results))
    mentions = Mentions(results, names)
    return sorted({i for name in names for i in mentions.followable(name) or () if results[i].grad_calls is None})


def called_without_grad(results: Sequence[FileResult]) -> tuple[set[str], set[str]]:
    """The names of the asked functions (and their callers) that every call in the project runs with grad off; and
    of those asked for a method's state (``PendingWithdrawal.fed``), the ones no call passes a graph: each runs with
    grad off, passes only graph-free values, or comes from a function itself only called with grad off (what such a
    function computes and passes on may be a graph of its own)."""
    asked = _asked(results)
    if not asked:
        return set(), set()
    sites = _call_sites(results)
    names = _followed(asked, sites)
    mentions = Mentions(results, names)
    read = {name for name in names if (files := mentions.followable(name)) is not None
            and all(results[i].grad_calls is not None for i in files)}  # every call of the name is known
    off = _grad_off(names, read, sites)
    graphs = _call_sites(results, graphs=True)
    fed = {_last(name) for res in results for w in res.withdrawals if w.fed for name in w.callers}
    return off, off | {name for name in fed & read if graphs.get(name) and all(
        not may or _last(caller) in off for may, caller in graphs[name])}


def _grad_off(names: set[str], read: set[str], sites: Sites) -> set[str]:
    """Of ``names``, those every call of which runs with grad off, directly or from functions only called so."""
    # not known to run with grad off: calls not all read, none, or one with grad on at a file's top level
    unknown = {name for name in names if name not in read
               or not sites.get(name) or any(on and not caller for on, caller in sites[name])}
    # some chain of calls must end in one made with grad off (a cycle of calls alone proves nothing): the functions
    # called so, then, round by round, the functions they call with grad on
    off = {name for name in names - unknown if any(not on for on, _ in sites[name])}
    while grown := {name for name in names - unknown - off
                    if any(on and _last(caller) in off for on, caller in sites[name])}:
        off |= grown
    # and every call with grad on must come from a function itself only called so
    while True:
        kept = {name for name in off if all(not on or _last(caller) in off for on, caller in sites[name])}
        if kept == off:
            return off
        off = kept
