"""``[tool.cyclelint]`` in pyproject.toml; command-line flags win. Checked by config_check.py.

Each file has the configuration of the nearest pyproject.toml with such a table at or above its
folder (a subproject may have its own), and ``extend = "../pyproject.toml"`` inherits another
file's: a key the extending file sets replaces the inherited value, except ``extend-select`` and
``extend-exclude``, which add to it, and ``per-file-ignores``, merged glob by glob. Globs stay
relative to the folder of the file that wrote them."""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field

from .config_check import TABLE, ConfigError, check_table, cyclelint_table
from .files import read_source


@dataclass
class Config:
    base: str = "."  # directory that relative patterns are taken from
    path: str | None = None
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    confirm_command: list[str] | None = None


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.cyclelint] table. One that
    cannot be read or parsed on the way is an error: it might be the one meant."""
    cur = os.path.abspath(start)
    while True:
        if _has_table(cur):
            return os.path.join(cur, "pyproject.toml")
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _has_table(folder: str) -> bool:
    candidate = os.path.join(folder, "pyproject.toml")
    return os.path.isfile(candidate) and cyclelint_table(_document(candidate), candidate) is not None


def load(path: str | None) -> Config:
    if path is None:
        return Config(base=os.getcwd())
    return _load(path, ())


def _load(path: str, chain: tuple[str, ...]) -> Config:
    real = os.path.realpath(path)
    if real in chain:
        raise ConfigError(path, f"{TABLE}.extend", "extends itself (through " + " -> ".join(chain + (real,)) + ")")
    table = dict(cyclelint_table(_document(path), path) or {})
    parent = table.pop("extend", None)
    cfg = Config(base=os.path.dirname(os.path.abspath(path)), path=path, **check_table(table, path))
    if parent is None:
        return cfg
    if not isinstance(parent, str) or not parent.strip():
        raise ConfigError(path, f"{TABLE}.extend", "must be the path of a pyproject.toml")
    parent_path = os.path.join(cfg.base, os.path.expanduser(parent))
    if not os.path.isfile(parent_path):
        raise ConfigError(path, f"{TABLE}.extend", f"no such file: {parent_path}")
    return _merged(_load(parent_path, chain + (real,)), cfg, table)


def _merged(parent: Config, child: Config, table: dict) -> Config:
    """``child`` over ``parent`` (see the module's docstring); the parent's globs rebased to the child's folder."""
    def rebased(glob: str) -> str:
        if "/" not in glob.rstrip("/"):  # a name: matched anywhere, whatever the folder
            return glob
        return os.path.relpath(os.path.join(parent.base, glob), child.base).replace(os.sep, "/")

    inherited = {rebased(glob): codes for glob, codes in parent.per_file_ignores.items()}
    return Config(
        base=child.base, path=child.path,
        select=child.select if "select" in table else parent.select,
        extend_select=parent.extend_select + child.extend_select,
        ignore=child.ignore if "ignore" in table else parent.ignore,
        # child.exclude holds its exclude and extend-exclude: without an exclude of its own, it extends
        exclude=child.exclude if "exclude" in table else [rebased(g) for g in parent.exclude] + child.exclude,
        per_file_ignores={**inherited, **child.per_file_ignores},
        confirm_command=child.confirm_command if "confirm-command" in table else parent.confirm_command,
    )


class Configs:
    """The configuration of each file: ``--config``'s for every file when given, else the nearest
    pyproject.toml with a [tool.cyclelint] table at or above the file's folder. Looked up once per
    folder and loaded once per file; an error in one is a UsageError when a file first needs it."""

    def __init__(self, fixed: str | None = None):
        self._fixed = load(fixed) if fixed else None
        self._nearest: dict[str, str | None] = {}
        self._loaded: dict[str | None, Config] = {}

    def for_path(self, path: str) -> Config:
        """The configuration of the file (or folder) ``path``: that of the folder it is in."""
        if self._fixed is not None:
            return self._fixed
        found = self._find(os.path.dirname(os.path.abspath(path)))
        if found not in self._loaded:
            self._loaded[found] = load(found)
        return self._loaded[found]

    def _find(self, folder: str) -> str | None:
        if folder not in self._nearest:
            parent = os.path.dirname(folder)
            self._nearest[folder] = (os.path.join(folder, "pyproject.toml") if _has_table(folder)
                                     else None if parent == folder else self._find(parent))
        return self._nearest[folder]


def _document(path: str) -> dict:
    """The parsed file: regular files only (a FIFO would hang the run), UTF-8 as TOML requires."""
    try:
        data = read_source(path)
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read config: {exc.strerror or exc}") from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(path, None, f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                                      "TOML files are UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, None, f"invalid TOML: {exc}") from exc
