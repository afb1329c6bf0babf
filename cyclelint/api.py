"""The library entry points behind the command line and the flake8 plugin."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .engine import FileResult, default_workers, feeding_candidates, lint_file, resolve_project, run_jobs
from .files import discover, matches
from .findings import FileError, FileWarning, Finding
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
            place(res.findings, res.warnings, res.cells)


def lint_paths(paths: Iterable[str], *, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
               ignore: Iterable[str] = (), exclude: Iterable[str] = (),
               per_file_ignores: Mapping[str, Iterable[str]] | None = None, base: str = ".",
               jobs: int | None = None, cache=None,
               warn: Callable[[FileWarning], None] | None = None,
               respect_gitignore: bool = True) -> tuple[list[Finding], list[FileError]]:
    """Lint files and folders; returns sorted findings and the files that could not be linted.
    ``warn`` receives what does not stop a file being linted (a ``noqa`` naming no rule). In
    folders, files that git ignores are skipped unless ``respect_gitignore`` is false."""
    enabled = enabled_codes(select, extend_select, ignore)
    ignores = _ignores(per_file_ignores)
    work: list[tuple[str, frozenset[str]]] = []
    errors: list[FileError] = []
    for path, problem in discover(paths, exclude, base, respect_gitignore):
        if problem:
            errors.append(FileError(path, problem))
            continue
        work.append((path, _file_codes(path, enabled, ignores, base)))
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
    if matches(path, exclude, base):
        return [], []
    codes = _file_codes(path, enabled_codes(select, extend_select, ignore), _ignores(per_file_ignores), base)
    result = lint_file(source, path, codes)
    resolve_project([result])
    place_cells([result])
    _warn([result], warn)
    errors = [FileError(path, result.error)] if result.error else []
    return sorted(result.findings, key=Finding.sort_key), errors


def _ignores(per_file_ignores: Mapping[str, Iterable[str]] | None) -> list[tuple[str, set[str]]]:
    return [(glob, expand(codes, selecting=False)) for glob, codes in (per_file_ignores or {}).items()]


def _file_codes(path: str, enabled: frozenset[str], ignores: list[tuple[str, set[str]]], base: str) -> frozenset[str]:
    """The codes on for ``path``: ``per-file-ignores`` turn some off."""
    codes = enabled
    for glob, off in ignores:
        if matches(path, [glob], base):
            codes = codes - off
    return frozenset(codes)


def config_options(cfg, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
                   ignore: Iterable[str] = ()) -> dict:
    """The keyword arguments of :func:`lint_paths` and :func:`lint_text` for a configuration
    (config.py), command-line codes winning: ``select`` replaces the configured selection,
    ``extend_select`` and ``ignore`` add to theirs."""
    return dict(select=select or cfg.select, extend_select=[*extend_select, *cfg.extend_select],
                ignore=[*ignore, *cfg.ignore], exclude=cfg.exclude, per_file_ignores=cfg.per_file_ignores,
                base=cfg.base)
