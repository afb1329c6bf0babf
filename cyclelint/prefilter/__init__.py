"""A cheap ``ast`` pass that decides whether a file can hold any finding at all.

libcst parses about 10x slower than CPython's own parser, and most files of a
large tree hold nothing any rule reports. For each enabled family this module
checks a *necessary* condition of its rules (a stored lambda or closure, a store of
``self``, an accumulation inside a loop over data, ...); only files that meet one
go on to the full libcst analysis. Files skipped here still describe their classes
(classtable.py), which the project-wide CYC202 resolution needs. Tests keep this
filter conservative: findings are the same with and without it.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import NamedTuple

from .evidence import fed_methods, graph_returns, with_copies
from .scan import Scan


def may_have_findings(tree: ast.Module, enabled: Iterable[str]) -> bool:
    """False only when no enabled rule can report anything in this file."""
    return scan_file(tree, enabled)[0]


class Verdict(NamedTuple):
    """Whether the file may have findings, and, when it may not, what the project may still ask of it."""

    found: bool
    may_feed: set[tuple[str, str]] = set()
    deferred: list[str] = []
    imports_asked: list[str] = []
    own_graphs: list[str] = []  # module-level functions that may return a graph of their own
    helper_imports: dict[str, list[str]] = {}  # other module-level functions: the imported functions they call


def scan_file(tree: ast.Module, enabled: Iterable[str], defer: bool = False) -> Verdict:
    """Whether the file may have findings, and, when it may not, the (class, method) pairs it may
    feed graph-attached values: another file's CYC305 candidate of that method makes this file
    worth a full analysis after all (see api.lint_paths). With ``defer``, the names of the methods
    whose CYC305 candidates wait for a caller elsewhere (no graph of their own, no caller in the file
    that may feed them): the project analyses the file in full once some file names one of them
    (``project.resolve.deferred_to_analyse``); and the imported functions whose result its loops keep,
    with no graph of the file's own: the project analyses it in full if one is a function of the linted
    tree that may return a graph of its own (``project.summaries.importers_to_analyse``), which the module-level
    functions' ``own_graphs`` and ``helper_imports`` of each pre-filtered file tell."""
    scan = Scan(set(enabled), defer)
    if scan.run(tree):
        return Verdict(True)
    feeds = fed_methods(with_copies(scan.built, scan.copies), scan.attr_calls or [])
    if scan.deferred & {method for _, method in feeds}:
        return Verdict(True)  # a caller in the file may feed one: judged here, as without ``defer``
    if not defer:
        return Verdict(False, feeds)
    if not scan.questions:
        scan.stores.finish()  # else finished already, to answer them
    return Verdict(False, feeds, sorted(scan.deferred), sorted(scan.imports_asked), *_helper_graphs(scan, tree))


def _helper_graphs(scan: Scan, tree: ast.Module) -> tuple[list[str], dict[str, list[str]]]:
    """What a pre-filtered file's module-level functions may return, for importers in other files: those that may
    return a graph of their own (``graph_returns``: over them alone, unless the questions asked it of them all),
    and, for the others that return a value, the imported functions they call (whose own graph the project looks
    up in their files)."""
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    helpers = [f for f in scan.functions if f.name in top and f.returns]
    if not helpers:
        return [], {}
    own = scan.returning & top if scan.returning is not None else graph_returns(helpers, scan.outside, scan.stores)
    calls = {f.name: sorted({c.func.id for c in f.calls if isinstance(c.func, ast.Name)} & scan.module.imports.keys())
             for f in helpers if f.name not in own}
    return sorted(own), {name: called for name, called in calls.items() if called}
