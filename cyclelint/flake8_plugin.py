"""flake8 entry point: a thin adapter over the same engine (no rule is implemented twice).

flake8 adds 1 to the column a plugin yields, so columns are yielded 0-based; flake8
itself handles ``# noqa``, selection and per-file-ignores. It sees one file at a
time, so a ``Child(self)`` whose class lives in another file is not resolved here.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import __version__
from .engine import lint_source, resolve_project
from .findings import DEFAULT_CODES, RULES

OFF_BY_DEFAULT = [code for code, rule in RULES.items() if not rule.default]


class CycleLintPlugin:
    name = "cyclelint"
    version = __version__

    def __init__(self, tree: Any, lines: list[str], filename: str = "stdin"):
        self.lines = lines
        self.filename = filename

    enabled: frozenset[str] = DEFAULT_CODES

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.extend_default_ignore(OFF_BY_DEFAULT)

    @classmethod
    def parse_options(cls, options: Any) -> None:
        # As in cyclelint itself, an off-by-default rule runs only when named in full
        # (flake8 would let a bare ``--select CYC`` override its default ignore).
        named = {c.strip().upper() for opt in ("select", "extend_select") for c in getattr(options, opt, None) or ()}
        cls.enabled = DEFAULT_CODES | (named & set(OFF_BY_DEFAULT))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        result = lint_source("".join(self.lines), self.filename, self.enabled, apply_noqa=False)
        if result.error:
            return  # flake8 reports the syntax error itself (E999)
        resolve_project([result])
        for f in sorted(result.findings, key=lambda f: f.sort_key()):
            yield f.line, f.column - 1, f"{f.code} {f.message}", type(self)
