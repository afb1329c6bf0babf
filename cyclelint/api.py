"""The library entry points behind the command line and the flake8 plugin."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .engine import FileResult, default_workers, feeding_candidates, lint_file, resolve_project, run_jobs
from .file_rules import FileRules
from .files import discover
from .findings import FileError, FileWarning, Finding
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
    (then exclude, per_file_ignores and base come from the configurations)."""
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
    redo = feeding_candidates(results)  # callers that another file's CYC305 candidates need in full
    for i, res in zip(redo, run_jobs([work[i] for i in redo], workers, cache, full=True)):
        results[i] = res
    resolve_project(results)
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
              warn: Callable[[FileWarning], None] | None = None) -> tuple[list[Finding], list[FileError]]:
    """Lint what a pipe or an editor holds for ``path`` (which need not exist on disk): the
    configuration's exclude, per-file-ignores and ``noqa`` apply as for a file at that path."""
    rules = FileRules(select, extend_select, ignore, exclude, per_file_ignores, base)
    if rules.excluded(path):
        return [], []
    result = lint_file(source, path, rules.codes(path))
    resolve_project([result])
    place_cells([result])
    _warn([result], warn)
    errors = [FileError(path, result.error)] if result.error else []
    return sorted(result.findings, key=Finding.sort_key), errors
