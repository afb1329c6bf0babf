"""Validation of ``[tool.cyclelint]``: every value has the type and the codes it must, or the run stops
with one line naming the file and the key (a mistyped setting silently ignored would lint with rules
the user turned off, or none at all)."""
from __future__ import annotations

from collections.abc import Callable

from .selection import UsageError, expand

KEYS = ("extend", "select", "extend-select", "ignore", "exclude", "extend-exclude", "per-file-ignores",
        "confirm-command")
TABLE = "tool.cyclelint"


class ConfigError(UsageError):
    def __init__(self, path: str, key: str | None, problem: str):
        super().__init__(f"{path}: {key}: {problem}" if key else f"{path}: {problem}")


def cyclelint_table(doc: dict, path: str) -> dict | None:
    """``[tool.cyclelint]`` of a parsed pyproject.toml, None when there is none."""
    tool = doc.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(path, "tool", f"must be a table, not {_kind(tool)}")
    table = tool.get("cyclelint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(path, TABLE, f"must be a table, not {_kind(table)}")
    return table


def check_table(table: dict, path: str) -> dict:
    """The settings of ``table`` as plain values, keyed as Config's fields; raises ConfigError."""
    for key in table:
        if key not in KEYS:
            import difflib  # imported here, not at startup: only a misspelt key needs it

            near = difflib.get_close_matches(key.replace("_", "-").lower(), KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]}?)" if near else f" (known keys: {', '.join(KEYS)})"
            raise ConfigError(path, f"{TABLE}.{key}", "unknown key" + hint)
    out: dict = {}
    if "select" in table:
        out["select"] = _codes(table["select"], "select", path, selecting=True)
        if not out["select"]:
            raise ConfigError(path, f"{TABLE}.select", "selects no rule (leave it out for the default rules)")
    out["extend_select"] = _codes(table.get("extend-select", []), "extend-select", path, selecting=True)
    out["ignore"] = _codes(table.get("ignore", []), "ignore", path, selecting=False)
    out["exclude"] = (_strings(table.get("exclude", []), "exclude", path)
                      + _strings(table.get("extend-exclude", []), "extend-exclude", path))
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(path, f"{TABLE}.per-file-ignores", f"must be a table of glob = [codes], not {_kind(pfi)}")
    out["per_file_ignores"] = {glob: _codes(codes, f'per-file-ignores."{glob}"', path, selecting=False)
                               for glob, codes in pfi.items()}
    command = table.get("confirm-command")
    if command is not None:
        out["confirm_command"] = (command.split() if isinstance(command, str)
                                  else _strings(command, "confirm-command", path))
        if not out["confirm_command"]:
            raise ConfigError(path, f"{TABLE}.confirm-command", "is empty")
    return out


def _strings(value, key: str, path: str, check: Callable[[str], str | None] | None = None) -> list[str]:
    """A list of non-empty strings (one string is a list of one)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ConfigError(path, f"{TABLE}.{key}", f"must be a list of strings, not {_kind(value)}")
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(path, f"{TABLE}.{key}", f"must be a list of strings, but holds {_kind(item)}")
        if not item.strip():
            raise ConfigError(path, f"{TABLE}.{key}", "holds an empty string")
        problem = check(item) if check else None
        if problem:
            raise ConfigError(path, f"{TABLE}.{key}", problem)
    return items


def _codes(value, key: str, path: str, *, selecting: bool) -> list[str]:
    def known(code: str) -> str | None:
        try:
            expand([code], selecting=selecting)
        except UsageError as exc:
            return str(exc)
        return None
    return _strings(value, key, path, known)


def _kind(value) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "a table"}
    return kinds.get(type(value), type(value).__name__)
