"""The library entry points behind the command line and the flake8 plugin."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .engine import FileResult, default_workers, feeding_candidates, lint_file, resolve_project, run_jobs
from .files import discover, matches
from .findings import FileError, Finding
from .selection import enabled_codes, expand


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
            place(res.findings, res.cells)


def lint_paths(paths: Iterable[str], *, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
               ignore: Iterable[str] = (), exclude: Iterable[str] = (),
               per_file_ignores: Mapping[str, Iterable[str]] | None = None, base: str = ".",
               jobs: int | None = None, cache=None) -> tuple[list[Finding], list[FileError]]:
    """Lint files and folders; returns sorted findings and the files that could not be linted."""
    enabled = enabled_codes(select, extend_select, ignore)
    ignores = [(glob, expand(codes, selecting=False)) for glob, codes in (per_file_ignores or {}).items()]
    work: list[tuple[str, frozenset[str]]] = []
    errors: list[FileError] = []
    for path, problem in discover(paths, exclude, base):
        if problem:
            errors.append(FileError(path, problem))
            continue
        codes = enabled
        for glob, off in ignores:
            if matches(path, [glob], base):
                codes = codes - off
        work.append((path, frozenset(codes)))
    workers = jobs or default_workers()
    results = run_jobs(work, workers, cache)
    redo = feeding_candidates(results)  # callers that another file's CYC305 candidates need in full
    for i, res in zip(redo, run_jobs([work[i] for i in redo], workers, cache, full=True)):
        results[i] = res
    resolve_project(results)
    place_cells(results)
    findings = sorted((f for r in results for f in r.findings), key=Finding.sort_key)
    errors += [FileError(r.path, r.error) for r in results if r.error]
    errors.sort(key=lambda e: e.path)
    return findings, errors
