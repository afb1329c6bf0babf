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

from .evidence import fed_methods, with_copies
from .scan import Scan


def may_have_findings(tree: ast.Module, enabled: Iterable[str]) -> bool:
    """False only when no enabled rule can report anything in this file."""
    return scan_file(tree, enabled)[0]


def scan_file(tree: ast.Module, enabled: Iterable[str], defer: bool = False) -> tuple[bool, set[tuple[str, str]], list[str]]:
    """Whether the file may have findings, and, when it may not, the (class, method) pairs it may
    feed graph-attached values: another file's CYC305 candidate of that method makes this file
    worth a full analysis after all (see api.lint_paths). With ``defer``, the names of the methods
    whose CYC305 candidates wait for a caller elsewhere (no graph of their own, no caller in the file
    that may feed them): the project analyses the file in full once some file names one of them
    (``project.resolve.deferred_to_analyse``)."""
    scan = Scan(set(enabled), defer)
    if scan.run(tree):
        return True, set(), []
    feeds = fed_methods(with_copies(scan.built, scan.copies), scan.attr_calls or [])
    if scan.deferred & {method for _, method in feeds}:
        return True, set(), []  # a caller in the file may feed one: judged here, as without ``defer``
    return False, feeds, sorted(scan.deferred)
