"""Find the Python files and notebooks to lint."""
from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePosixPath

from .gitignore import ignored_under

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "build", "dist", "__pycache__",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cyclelint_cache", "node_modules", ".eggs",
     ".ipynb_checkpoints"}
)
SUFFIXES = (".py", ".pyi", ".ipynb")  # what a folder is searched for


def matches(path: str, patterns: Iterable[str], base: str) -> bool:
    """``path`` (or its name) matches one of the glob ``patterns``, taken relative to ``base``."""
    if not patterns:
        return False  # most runs exclude nothing: no path arithmetic per file
    rel = os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")
    name = os.path.basename(path)
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(name, pat) or PurePosixPath(rel).match(pat):
            return True
        if rel.startswith(pat + "/"):
            return True
    return False


def read_source(path: str) -> bytes:
    """The file's bytes. Raises OSError, also for what is not a regular file: a FIFO or a device
    named ``*.py`` would block or never end (opened non-blocking, so the check cannot hang)."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    with open(path, "rb", opener=lambda name, flags: os.open(name, flags | nonblocking)) as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(0, "not a regular file")
        return fh.read()


def unreadable(exc: OSError) -> str:
    """The error line for a file :func:`read_source` could not read."""
    return f"cannot read: {exc.strerror or exc}"


def discover(paths: Iterable[str], exclude: Iterable[str] = (), base: str = ".", respect_gitignore: bool = True,
             excluded: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str | None]]:
    """Yield (path, problem) for each file to lint; problem is set for a path that does not exist
    or a folder that cannot be listed. In folders, what git ignores is skipped (gitignore.py).
    ``excluded`` decides instead of ``exclude`` (globs relative to ``base``) when given."""
    if excluded is None:
        patterns, root = list(exclude), os.path.abspath(base)
        excluded = lambda path: matches(path, patterns, root)  # noqa: E731
    seen: set[str] = set()
    for top in paths:
        if not os.path.lexists(top):
            yield top, "no such file or directory"
            continue
        if os.path.isfile(top) or not os.path.isdir(top):
            if not excluded(top):
                yield from _once(top, seen)
            continue
        unlistable: list[OSError] = []
        ignored = ignored_under(top) if respect_gitignore else set()
        for dirpath, dirnames, filenames in os.walk(top, onerror=unlistable.append):
            yield from _unlistable(unlistable)
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIP_DIRS
                and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
                and not excluded(os.path.join(dirpath, d))
                and os.path.normpath(os.path.join(dirpath, d)) not in ignored
            )
            real_dir = None
            for name in sorted(filenames):
                if name.endswith(SUFFIXES):
                    path = os.path.join(dirpath, name)
                    if not excluded(path) and os.path.normpath(path) not in ignored:
                        # the folder's real path once, not one per file: realpath walks every component
                        real_dir = real_dir or os.path.realpath(dirpath)
                        yield from _once(path, seen, real_dir)
        yield from _unlistable(unlistable)  # the top folder itself, or the last one listed


def _unlistable(errors: list[OSError]) -> Iterator[tuple[str, str]]:
    """The folders ``os.walk`` reported it could not list, once each."""
    while errors:
        err = errors.pop(0)
        yield err.filename, f"cannot list folder: {err.strerror}"


def _once(path: str, seen: set[str], real_dir: str | None = None) -> Iterator[tuple[str, None]]:
    """``path`` unless its real path was yielded already (``real_dir``: its folder's real path)."""
    if real_dir is None or os.path.islink(path):
        key = os.path.realpath(path)
    else:
        key = os.path.join(real_dir, os.path.basename(path))
    if key not in seen:
        seen.add(key)
        yield path, None
