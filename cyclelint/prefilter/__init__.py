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

from .evidence import fed_methods
from .scan import Scan


def may_have_findings(tree: ast.Module, enabled: Iterable[str]) -> bool:
    """False only when no enabled rule can report anything in this file."""
    return scan_file(tree, enabled)[0]


def scan_file(tree: ast.Module, enabled: Iterable[str]) -> tuple[bool, set[tuple[str, str]]]:
    """Whether the file may have findings, and, when it may not, the (class, method) pairs it may
    feed graph-attached values: another file's CYC305 candidate of that method makes this file
    worth a full analysis after all (see api.lint_paths)."""
    scan = Scan(set(enabled))
    if scan.run(tree):
        return True, set()
    return False, fed_methods(scan.built, scan.attr_calls or [])
