"""Where the names a file imports come from: ``from M import n as name`` read off CPython's tree, and the file
of the linted tree that ``M`` names, found by its path (no import system, no ``sys.path``)."""
from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Iterator
from functools import cache, cached_property, lru_cache

Imported = tuple[int, str, str]  # (level, module, the name there)


def from_imports(tree: ast.Module, names: set[str] | None = None) -> dict[str, Imported]:
    """The names module-level ``from ... import`` statements bind (in ``if`` and ``try`` blocks too; the
    last binding wins), star imports aside; only ``names`` when given."""
    out: dict[str, Imported] = {}
    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.name != "*" and (names is None or bound in names):
                    out[bound] = (node.level, node.module or "", alias.name)
    return out


def import_origins(tree: ast.Module) -> dict[str, str]:
    """What each name the module's imports bind stands for, dotted: ``import a.b as c`` binds ``c`` to ``a.b``,
    ``import a.b`` binds ``a`` to ``a``, ``from m import n as x`` binds ``x`` to ``m.n`` (``.m.n`` when
    relative). Module level, in ``if`` and ``try`` blocks too; the last binding wins; star imports aside."""
    out: dict[str, str] = {}
    for node in _module_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                out[bound] = alias.name if alias.asname else bound
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{module}.{alias.name}" if node.module else module + alias.name
    return out


def kept_imports(tree: ast.Module, path: str, names: set[str]) -> dict[str, Imported]:
    """The imports a file's record keeps, for the project to follow: those of ``names``, or all of a package's
    ``__init__.py`` (its re-exports)."""
    if os.path.basename(path) == "__init__.py":
        return from_imports(tree)
    return from_imports(tree, names) if names else {}


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _module_level(node.body + [s for h in node.handlers for s in h.body] + node.orelse
                                     + node.finalbody)


class Modules:
    """The linted files by the dotted names they may be imported as: ``a/b/c.py`` is ``c``, ``b.c`` and
    ``a.b.c``; ``a/b/__init__.py`` is ``b`` and ``a.b``. An absolute import names a file by such a tail,
    and only a tail one file has counts; a relative one is a path from the importing file. Paths are absolute:
    a file named alone and the rest of its project are named from different places."""

    def __init__(self, paths: Iterable[str]):
        self.paths = frozenset(paths)  # absolute

    @cached_property
    def by_name(self) -> dict[str, list[str]]:
        """Built on the first absolute import asked about."""
        out: dict[str, list[str]] = {}
        for path in self.paths:
            parts = os.path.splitext(path)[0].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            for start in range(len(parts)):
                out.setdefault(".".join(parts[start:]), []).append(path)
        return out

    def find(self, importer: str, level: int, module: str) -> str | None:
        """The file ``from <level dots><module> import ...`` in ``importer`` reads, if it is linted."""
        if not level:
            found = self.by_name.get(module, [])
            return found[0] if len(found) == 1 else None
        folder = os.path.dirname(absolute(importer))
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        base = os.path.join(folder, *module.split(".")) if module else folder
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            if path in self.paths:
                return path
        return None


@lru_cache(maxsize=1)
def modules_of(paths: frozenset[str]) -> Modules:
    """One index for a run's rounds of resolution, which ask about the same files."""
    return Modules(paths)


def absolute(path: str) -> str:
    """``os.path.abspath``, once per path and working folder: each round of resolution asks again of every file."""
    return _absolute(os.getcwd(), path)


@cache
def _absolute(cwd: str, path: str) -> str:
    return os.path.normpath(os.path.join(cwd, path))
