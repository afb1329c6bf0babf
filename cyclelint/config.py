"""``[tool.cyclelint]`` in pyproject.toml; command-line flags win. Checked by config_check.py."""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field

from .config_check import ConfigError, check_table, cyclelint_table
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
        candidate = os.path.join(cur, "pyproject.toml")
        if os.path.isfile(candidate) and cyclelint_table(_document(candidate), candidate) is not None:
            return candidate
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def load(path: str | None) -> Config:
    if path is None:
        return Config(base=os.getcwd())
    table = cyclelint_table(_document(path), path) or {}
    return Config(base=os.path.dirname(os.path.abspath(path)), path=path, **check_table(table, path))


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
