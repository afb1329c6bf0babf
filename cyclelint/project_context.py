"""A file linted on its own (pre-commit's one staged file, stdin, an editor, flake8) is judged against
the project it belongs to, as a run over the whole project judges it: ``self.child = Child(self)``
where ``Child`` lives in another file, a meter fed a graph by a training loop in another file, a
method cached by a helper of another file that wraps lru_cache.

The project is the folder of the nearest pyproject.toml or .git above the file. Its other files are
read only when a file asks such a question (a constructor call or a CYC305 candidate left open), each
with its own configuration, and come from the result cache (keyed by each file's bytes): after the
first run, only what changed is analysed again. A folder named on the command line is its own scope,
as before. (The project-wide resolution itself is project/resolve.py.)"""
from __future__ import annotations

import os
from collections.abc import Iterable

from .engine import run_jobs
from .file_rules import FileRules
from .files import discover
from .project.callers import MAX_CALLER_ROUNDS, callers_to_analyse
from .project.imports import absolute
from .project.records import FileResult
from .project.resolve import deferred_to_analyse, feeding_candidates, resolve_project
from .project.summaries import importers_to_analyse, summaries_to_analyse
from .project.withdrawals import withdrawals_to_analyse

ROOT_MARKERS = ("pyproject.toml", ".git")
MAX_SUMMARY_ROUNDS = 3  # calls from file to file to file: deeper chains are left unanswered


def project_root(path: str) -> str | None:
    """The folder of the nearest pyproject.toml or .git at or above the file's folder."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def asks_the_project(result: FileResult, root: str) -> bool:
    return bool(result.ctors or result.states or result.caches or result.dispatches or result.deferred
                or result.withdrawals or _imports_its_project(result, root))


def _imports_its_project(result: FileResult, root: str) -> bool:
    """A value kept from an imported function (or, pre-filtered, a call of one in a loop) that the project may
    define: a relative import, or an absolute one whose top package or module lies beside the file, at the root
    or under its ``src/`` (``from torch.nn.functional import softmax`` asks nothing)."""
    # a kept value may ask through the file's own functions (``self.train_step(x)`` returning ``flatten(stats)``):
    # the imports its summaries name, which are those the record keeps
    names = set(result.imports_asked) | (set(result.imports) if result.graphs else set())
    for level, module, _ in filter(None, map(result.imports.get, names)):
        top = module.split(".")[0]
        if level or any(os.path.exists(os.path.join(folder, top)) or os.path.exists(os.path.join(folder, top + ".py"))
                        for folder in (os.path.dirname(absolute(result.path)), root, os.path.join(root, "src"))):
            return True
    return False


class Project:
    """The rest of the projects that files linted on their own belong to, linted once and kept
    (flake8 and the language server ask again for each file)."""

    def __init__(self, rules: FileRules, cache=None, workers: int = 1, respect_gitignore: bool = True):
        self.rules, self.cache, self.workers, self.respect_gitignore = rules, cache, workers, respect_gitignore
        self.work: list[tuple[str, frozenset[str]]] = []  # the other files, and the codes they were linted with
        self.results: list[FileResult] = []
        self._roots: set[str] = set()
        self._known: set[str] = set()

    def add_around(self, results: Iterable[FileResult]) -> None:
        """Lint the rest of each project that one of ``results`` asks about."""
        results = list(results)
        asking = {root for r in results if (root := project_root(r.path)) and asks_the_project(r, root)}
        for root in sorted(asking - self._roots):
            self._roots.add(root)
            # named as a run from there names them, so that its cache entries serve
            rel = os.path.relpath(root)
            start = root if rel.startswith(os.pardir) else rel
            for path, problem in discover([start], respect_gitignore=self.respect_gitignore,
                                          excluded=self.rules.excluded):
                real = os.path.realpath(path)
                if problem is None and real not in self._known:
                    self._known.add(real)
                    self.work.append((path, self.rules.codes(path)))
        for res in run_jobs(self.work[len(self.results):], self.workers, self.cache):
            self.results.append(_unasked(res))

    def resolve(self, results: list[FileResult], work: list[tuple[str, frozenset[str]]] | None = None) -> None:
        """Resolve ``results`` with the rest of their projects. ``work``: how ``results`` were linted,
        for the ones that must be analysed again in full (None: they are not on disk)."""
        linted = {os.path.realpath(r.path) for r in results} if self.results else set()
        others = [i for i, r in enumerate(self.results) if os.path.realpath(r.path) not in linted]
        everything = results + [self.results[i] for i in others]
        jobs = (work or [None] * len(results)) + [self.work[i] for i in others]
        # the classes a withdrawal asks about and the candidates left to the project first: analysed in full, they
        # may want feeders analysed too; then the files whose summaries a kept value needs, round by round (each may
        # call functions of further files); last, the files that call the function of a loop's finding, caller by caller
        finders = ((withdrawals_to_analyse, 1), (deferred_to_analyse, 1), (feeding_candidates, 1),
                   (importers_to_analyse, 1), (summaries_to_analyse, MAX_SUMMARY_ROUNDS),
                   (callers_to_analyse, MAX_CALLER_ROUNDS))
        for find, rounds in finders:
            for _ in range(rounds):  # until a round finds nothing more to analyse
                redo = [i for i in find(everything) if jobs[i] is not None]
                if not redo:
                    break
                for i, res in zip(redo, run_jobs([jobs[i] for i in redo], self.workers, self.cache, full=True)):
                    everything[i] = res if i < len(results) else _unasked(res)
        results[:] = everything[:len(results)]
        for i, res in zip(others, everything[len(results):]):
            self.results[i] = res
        resolve_project(everything)


def _unasked(res: FileResult) -> FileResult:
    """One of the other files: its own questions are not asked, as its findings are not reported; only what it
    tells the linted files counts."""
    res.ctors, res.states, res.caches, res.dispatches, res.graphs, res.withdrawals = [], [], [], [], [], []
    return res
