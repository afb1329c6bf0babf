"""``[tool.cyclelint]`` in pyproject.toml; command-line flags win."""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field

from .selection import UsageError

KEYS = {"select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores", "confirm-command"}


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
    """The nearest pyproject.toml at or above ``start`` that has a [tool.cyclelint] table."""
    cur = os.path.abspath(start)
    while True:
        candidate = os.path.join(cur, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as fh:
                    if "cyclelint" in tomllib.load(fh).get("tool", {}):
                        return candidate
            except (OSError, tomllib.TOMLDecodeError):
                pass
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def load(path: str | None) -> Config:
    if path is None:
        return Config(base=os.getcwd())
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh).get("tool", {}).get("cyclelint", {})
    except OSError as exc:
        raise UsageError(f"cannot read config {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"invalid TOML in {path}: {exc}") from exc
    unknown = set(table) - KEYS
    if unknown:
        raise UsageError(f"unknown key(s) in [tool.cyclelint] of {path}: {', '.join(sorted(unknown))}")
    cfg = Config(base=os.path.dirname(os.path.abspath(path)), path=path)
    cfg.select = _codes(table, "select", path) if "select" in table else None
    cfg.extend_select = _codes(table, "extend-select", path)
    cfg.ignore = _codes(table, "ignore", path)
    cfg.exclude = _codes(table, "exclude", path) + _codes(table, "extend-exclude", path)
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise UsageError(f"per-file-ignores in {path} must be a table of glob = [codes]")
    cfg.per_file_ignores = {glob: _as_list(codes, f"per-file-ignores.{glob}", path) for glob, codes in pfi.items()}
    command = table.get("confirm-command")
    if command is not None:
        cfg.confirm_command = command.split() if isinstance(command, str) else _as_list(command, "confirm-command", path)
    return cfg


def _codes(table: dict, key: str, path: str) -> list[str]:
    return _as_list(table.get(key, []), key, path)


def _as_list(value, key: str, path: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{key} in {path} must be a list of strings")
    return value
