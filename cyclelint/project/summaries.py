"""Values a loop keeps that a function of another file makes graph-attached (``loss = compute_loss(model, batch)``
with ``compute_loss`` imported from the project): each file's summaries of what its functions return
(analysis/returns.py), linked through its ``from ... import`` names to the files of the tree that define them."""
from __future__ import annotations

from collections.abc import Sequence

from ..analysis.returns import NAMED, RETURNS_OF, Key, Returns
from ..findings import Finding
from ..vocabulary import object_class
from .imports import absolute, modules_of
from .records import FileResult, PendingStore

MAX_REEXPORTS = 3  # ``from .core import f`` in a package's __init__, imported from the package: followed this far


class Linker:
    """Every file's returns, each linked to the files its imports name. Drop it with :meth:`unlink`: each
    link refers back to the linker."""

    def __init__(self, results: Sequence[FileResult]):
        self.files = {absolute(r.path): r for r in results}
        self.modules = modules_of(frozenset(self.files))
        self.returns: dict[str, Returns] = {}

    def returns_of(self, res: FileResult) -> Returns:
        path = absolute(res.path)
        found = self.returns.get(path)
        if found is None:
            found = self.returns[path] = Returns.of_summaries(res.summaries or {})
            found.link, found.origin = (lambda key: self._linked(res, key)), path
        return found

    def unlink(self) -> None:
        for returns in self.returns.values():
            returns.link = None
        self.returns.clear()

    def defining(self, res: FileResult, name: str) -> tuple[FileResult, str] | None:
        """The linted file that defines what ``name`` imports in ``res``, and its name there, through re-exports
        (a name the file imports and does not define). A file the pre-filter answered may be that file: the
        project asks what its pre-filter says, or analyses it in full."""
        for _ in range(MAX_REEXPORTS + 1):
            imported = res.imports.get(name)
            path = self.modules.find(res.path, imported[0], imported[1]) if imported else None
            target = self.files.get(path) if path else None
            if target is None or target.error:
                return None
            res, name = target, imported[2]
            if name not in res.imports or (res.summaries is not None and "." + name in res.summaries):
                return res, name
        return None

    def _linked(self, res: FileResult, key: Key) -> tuple[Returns, Key] | None:
        found = self.defining(res, key[1]) if not key[0] else None
        if found is None or found[0].summaries is None:
            return None
        return self.returns_of(found[0]), ("", found[1])


def resolve_graphs(results: Sequence[FileResult]) -> None:
    """Each value handed on (``PendingGraph``) becomes a finding once the files it asks about say it is attached (a
    store into an object of another file's class, once the project says that class is a container)."""
    pending = [res for res in results if res.graphs]
    if not pending:
        return
    linker = Linker(results)
    try:
        for res in pending:
            returns = linker.returns_of(res)
            for graph in res.graphs:
                why = returns.source(frozenset(graph.deps))
                if why and object_class(graph.object_of):  # kept by an object: a finding if it is a container
                    res.stores.append(PendingStore(graph.object_of, f"{graph.message} ({why})", line=graph.line,
                                                   column=graph.column, end_line=graph.end_line,
                                                   end_column=graph.end_column))
                elif why:
                    res.findings.append(Finding(res.path, graph.line, graph.column, graph.end_line, graph.end_column,
                                                graph.code, f"{graph.message} ({why})"))
            res.graphs = []
    finally:
        linker.unlink()


def importers_to_analyse(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the pre-filtered files whose loops keep what a function they import returns, with no graph of
    their own (``imports_asked``), where that function may return a graph of its own (``may_give_graph``): nothing
    the file passes it can carry one. Analysed in full, they hand on what they keep."""
    asking = [i for i, res in enumerate(results) if res.imports_asked]
    if not asking:
        return []
    linker = Linker(results)
    try:
        return [i for i in asking if any(may_give_graph(linker, results[i], name, set())
                                         for name in results[i].imports_asked)]
    finally:
        linker.unlink()


def may_give_graph(linker: Linker, res: FileResult, name: str, seen: set[tuple[str, str]]) -> bool:
    """What ``name`` imports in ``res`` may return a graph of its own: as its file's summary says when the file was
    analysed in full, else as its pre-filter says (``own_graphs``), following the imported functions either calls."""
    found = linker.defining(res, name)
    if found is None or (found[0].path, found[1]) in seen:
        return False
    seen.add((found[0].path, found[1]))
    target, there = found
    if target.summaries is None:
        further = target.helper_imports.get(there, [])
        return there in target.own_graphs or any(may_give_graph(linker, target, n, seen) for n in further)
    if linker.returns_of(target).source(frozenset((f"{RETURNS_OF}.{there}",))):
        return True
    summary = target.summaries.get("." + there)
    parts = (summary.whole, *(summary.parts or ())) if summary else ()
    return any(may_give_graph(linker, target, n, seen) for part in parts for dep in part.deps
               for n in NAMED.findall(dep))


def summaries_to_analyse(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the pre-filtered files that define a function a kept value asks about, directly or through the
    summaries of other files it reaches: analysed in full, they say what it returns. Asked again once they are
    (their own functions may call further files)."""
    # a kept value asks through its own file's functions too (``self.train_step(x)`` returning ``flatten(stats)``)
    asks = [(res, dep) for res in results if res.graphs
            for dep in (*(d for graph in res.graphs for d in graph.deps), *_summary_deps(res))]
    if not asks:
        return []
    linker = Linker(results)
    wanted: set[str] = set()
    seen: set[tuple[str, str]] = set()
    while asks:
        res, dep = asks.pop()
        for name in NAMED.findall(dep):
            found = linker.defining(res, name)
            if found is None or (found[0].path, found[1]) in seen:
                continue
            seen.add((found[0].path, found[1]))
            target, there = found
            if target.summaries is None:
                wanted.add(absolute(target.path))
            elif "." + there in target.summaries:
                asks += [(target, d) for d in _summary_deps(target, "." + there)]
    return [i for i, res in enumerate(results) if absolute(res.path) in wanted]


def _summary_deps(res: FileResult, key: str | None = None) -> list[str]:
    """The dependencies of what ``key`` (every function, when None) of ``res`` returns."""
    summaries = [res.summaries[key]] if key is not None else list((res.summaries or {}).values())
    return [d for summary in summaries for part in (summary.whole, *(summary.parts or ())) for d in part.deps]
