"""Whether the instances of a class of the linted tree may hold something of size, across its files: the class's
own stores (``ClassSummary.bare``, instance_holds.py), its bases, the objects it keeps (``held_classes``), what its
constructor calls pass for the ``__init__`` parameters it keeps (``passed_in``: a class no file of the tree constructs
may be given anything), and, since ``self`` in a method may be an instance of any subclass, its subclasses in the
tree."""
from __future__ import annotations

import ast
from functools import cached_property

from ..files import read_source
from ..instance_holds import constructor_holds, torch_bound
from ..parsing import quiet_parse
from ..vocabulary import torch_rooted
from .classes import subclass_index, with_bases
from .imports import import_origins
from .records import FileResult

# bases of other packages that add nothing of size to an instance: a class deriving from one holds what it stores
EMPTY_BASES = frozenset({"", "object", "ABC", "Generic", "Protocol", "Module", "Enum", "IntEnum", "StrEnum", "Flag",
                         "IntFlag", "NamedTuple", "TypedDict"})


class Sizes:
    """Answers :meth:`holds` for the classes of one project's files."""

    def __init__(self, files: dict[str, FileResult], homes: dict[str, list[str]]):
        self.files = files
        self.homes = homes
        self._memo: dict[tuple[str, str, bool], bool] = {}
        self._trees: dict[str, tuple[ast.Module, set[str]] | None] = {}

    @cached_property
    def subclasses(self) -> dict[str, list[tuple[str, str]]]:
        return subclass_index(self.files)

    @cached_property
    def callers(self) -> dict[str, list[str]]:
        """A class name -> the files whose text calls it (``FileResult.constructs``)."""
        out: dict[str, list[str]] = {}
        for path, res in self.files.items():
            for name in res.constructs:
                out.setdefault(name, []).append(path)
        return out

    def holds(self, name: str, method: str, seen_from: str) -> bool:
        """Whether an instance of the class ``name`` means in file ``seen_from`` that runs its ``method`` may hold
        something of size: False only when the tree defines it, and it, its bases, its subclasses, the classes it
        keeps and what its callers pass it show nothing. A subclass whose ``__init__`` runs no base's never runs the
        class's ``__init__``."""
        return self._holds(name, seen_from, set(), method)

    def _holds(self, name: str, seen_from: str, seen: set[tuple[str, str, bool]], method: str = "") -> bool:
        key = (name, seen_from, method == "__init__")
        if key in self._memo:
            return self._memo[key]
        if key in seen:
            return False  # met again on the way: what it holds is what the first meeting finds
        seen.add(key)
        chain = with_bases(name, seen_from, self.files, self.homes)
        small = bool(chain) and not any(self._shows(home, cls, seen) for home, cls in chain) and not any(
            self._shows(home, sub, seen) for home, sub in self._below(name, method == "__init__"))
        self._memo[key] = not small
        return not small

    def _shows(self, home: str, cls: str, seen: set[tuple[str, str, bool]]) -> bool:
        """The class itself shows something of size: its stores, a base the tree does not define (what it stores is
        not seen), an object it keeps whose class does, or what a constructor call passes for what it keeps."""
        summary = self.files[home].classes[cls]
        if not summary.bare or any(self._foreign(base, home, cls) for base in summary.bases):
            return True
        kept = list(summary.held_classes)
        if summary.passed_in:
            calls = 0
            # the files whose text names a call of it; one defining a class of that name calls its own
            for caller in (c for c in self.callers.get(cls, ()) if c == home or cls not in self.files[c].classes):
                read = self._tree(caller)
                if read is None:
                    return True  # a caller that cannot be read may pass anything
                why, classes, found = constructor_holds(read[0], cls, summary.params, summary.passed_in, read[1])
                if why:
                    return True
                kept += classes
                calls += found
            if not calls:  # none in the tree (the text named it in its own class statement): given anything
                return True
        return any(self._known(other, home) and self._holds(other, home, seen) for other in dict.fromkeys(kept))

    def stores(self, name: str, method: str, seen_from: str) -> bool:
        """Whether a definition of ``method`` in the class ``name`` means in ``seen_from``, its bases or its subclasses
        may store something on the instance (``ClassSummary.storing``): a hook keeping what a module gives it."""
        chain = with_bases(name, seen_from, self.files, self.homes) | set(self._below(name, False))
        summaries = [self.files[home].classes[cls] for home, cls in chain]
        # a class shown to hold something of size was not read further: it may store anywhere
        return not chain or any(not s.bare or method in s.storing for s in summaries)

    def _tree(self, path: str) -> tuple[ast.Module, set[str]] | None:
        """A calling file's tree and the names it binds to torch, read once."""
        if path not in self._trees:
            try:
                tree = quiet_parse(read_source(path))
                self._trees[path] = (tree, torch_bound(import_origins(tree)))
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[path] = None
        return self._trees[path]

    def _below(self, cls: str, init: bool) -> list[tuple[str, str]]:
        """(file, class) of every class of the tree deriving from ``cls``, however deep; with ``init``, those that run
        its ``__init__``: not below one whose own ``__init__`` runs no base's."""
        out: dict[tuple[str, str], None] = {}
        todo, done = [cls], {cls}
        while todo:
            for sub_home, sub in self.subclasses.get(todo.pop(), ()):
                if (init and self.files[sub_home].classes[sub].own_init) or (sub_home, sub) in out:
                    continue
                out[(sub_home, sub)] = None
                if sub not in done:
                    done.add(sub)
                    todo.append(sub)
        return list(out)

    def _known(self, name: str, seen_from: str) -> bool:
        return name in self.files[seen_from].classes or name in self.homes

    def _foreign(self, base: str, home: str, cls: str) -> bool:
        """A base whose stores are not seen: of another package (a torch class other than ``nn.Module`` keeps
        parameters; one named as the class itself is not the class), not one known to add nothing."""
        last = base.rpartition(".")[2]
        if last in EMPTY_BASES:
            return False
        if last == cls:
            return torch_rooted(base) or not any(other != home for other in self.homes.get(last, ()))
        return torch_rooted(base) or not self._known(last, home)
