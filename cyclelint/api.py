"""The library entry points behind the command line and the flake8 plugin."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .engine import default_workers, feeding_candidates, resolve_project, run_jobs
from .engine import lint_source as _lint_source
from .files import discover, matches
from .findings import FileError, FileWarning, Finding
from .selection import enabled_codes, expand


def lint_source(source: str | bytes, path: str = "<string>", *, select: Iterable[str] | None = None,
                extend_select: Iterable[str] = (), ignore: Iterable[str] = (), noqa: bool = True) -> list[Finding]:
    """Findings for one module's source; a file that cannot be parsed raises ``SyntaxError``."""
    result = _lint_source(source, path, enabled_codes(select, extend_select, ignore), apply_noqa=noqa)
    if result.error:
        raise SyntaxError(f"{path}: {result.error}")
    resolve_project([result])
    return sorted(result.findings, key=Finding.sort_key)


def lint_paths(paths: Iterable[str], *, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
               ignore: Iterable[str] = (), exclude: Iterable[str] = (),
               per_file_ignores: Mapping[str, Iterable[str]] | None = None, base: str = ".",
               jobs: int | None = None, cache=None,
               warn: Callable[[FileWarning], None] | None = None) -> tuple[list[Finding], list[FileError]]:
    """Lint files and folders; returns sorted findings and the files that could not be linted.
    ``warn`` receives what does not stop a file being linted (a ``noqa`` naming no rule)."""
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
    findings = sorted((f for r in results for f in r.findings), key=Finding.sort_key)
    errors += [FileError(r.path, r.error) for r in results if r.error]
    if warn is not None:
        for w in sorted((w for r in results for w in r.warnings), key=lambda w: (w.path, w.line)):
            warn(w)
    errors.sort(key=lambda e: e.path)
    return findings, errors
