"""The library entry points behind the command line and the flake8 plugin."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping

from .engine import default_workers, lint_file, run_jobs
from .file_rules import FileRules
from .files import discover
from .findings import FileError, FileWarning, Finding
from .project.records import FileResult
from .project.resolve import resolve_project
from .project_context import Project
from .selection import enabled_codes


def lint_source(source: str | bytes, path: str = "<string>", *, select: Iterable[str] | None = None,
                extend_select: Iterable[str] = (), ignore: Iterable[str] = (), noqa: bool = True) -> list[Finding]:
    """Findings for one module's source (a notebook's JSON when ``path`` ends in ``.ipynb``);
    a file that cannot be parsed raises ``SyntaxError``."""
    result = lint_file(source, path, enabled_codes(select, extend_select, ignore), apply_noqa=noqa)
    if result.error:
        raise SyntaxError(f"{path}: {result.error}")
    resolve_project([result])
    place_cells([result])
    return sorted(result.findings, key=Finding.sort_key)


def place_cells(results: Iterable[FileResult]) -> None:
    """Once the project is resolved, a notebook's findings move into their cells."""
    from .notebook import place

    for res in results:
        if res.cells:
            place(res.findings, res.warnings, res.cells)


def lint_paths(paths: Iterable[str], *, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
               ignore: Iterable[str] = (), exclude: Iterable[str] = (),
               per_file_ignores: Mapping[str, Iterable[str]] | None = None, base: str = ".",
               jobs: int | None = None, cache=None,
               warn: Callable[[FileWarning], None] | None = None,
               respect_gitignore: bool = True, configs=None) -> tuple[list[Finding], list[FileError]]:
    """Lint files and folders; returns sorted findings and the files that could not be linted.
    ``warn`` receives what does not stop a file being linted (a ``noqa`` naming no rule). In
    folders, files that git ignores are skipped unless ``respect_gitignore`` is false. ``configs``
    (config.Configs): each file's own configuration, under ``select``/``extend_select``/``ignore``
    (then exclude, per_file_ignores and base come from the configurations). A file named on its own
    is judged against the rest of its project (project_context.py)."""
    paths = list(paths)
    rules = FileRules(select, extend_select, ignore, exclude, per_file_ignores, base, configs)
    work: list[tuple[str, frozenset[str]]] = []
    errors: list[FileError] = []
    for path, problem in discover(paths, respect_gitignore=respect_gitignore, excluded=rules.excluded):
        if problem:
            errors.append(FileError(path, problem))
            continue
        work.append((path, rules.codes(path)))
    workers = jobs or default_workers()
    results = run_jobs(work, workers, cache)
    project = Project(rules, cache, workers, respect_gitignore)
    alone = {p for p in paths if not os.path.isdir(p)}
    project.add_around(r for r in results if r.path in alone)
    project.resolve(results, work)
    place_cells(results)
    findings = sorted((f for r in results for f in r.findings), key=Finding.sort_key)
    errors += [FileError(r.path, r.error) for r in results if r.error]
    _warn(results, warn)
    errors.sort(key=lambda e: e.path)
    return findings, errors


def _warn(results: Iterable[FileResult], warn: Callable[[FileWarning], None] | None) -> None:
    if warn is not None:
        for w in sorted((w for r in results for w in r.warnings), key=lambda w: (w.path, w.line)):
            warn(w)


def lint_text(source: str | bytes, path: str, *, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
              ignore: Iterable[str] = (), exclude: Iterable[str] = (),
              per_file_ignores: Mapping[str, Iterable[str]] | None = None, base: str = ".",
              warn: Callable[[FileWarning], None] | None = None,
              project: Project | None = None) -> tuple[list[Finding], list[FileError]]:
    """Lint what a pipe or an editor holds for ``path`` (which need not exist on disk): the
    configuration's exclude, per-file-ignores and ``noqa`` apply as for a file at that path.
    ``project``: judge it against the rest of its project (project_context.py)."""
    rules = FileRules(select, extend_select, ignore, exclude, per_file_ignores, base)
    if rules.excluded(path):
        return [], []
    results = [lint_file(source, path, rules.codes(path))]
    if project is None:
        resolve_project(results)
    else:
        project.add_around(results)
        project.resolve(results)
    result = results[0]
    place_cells([result])
    _warn([result], warn)
    errors = [FileError(path, result.error)] if result.error else []
    return sorted(result.findings, key=Finding.sort_key), errors
