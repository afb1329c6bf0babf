"""flake8 entry point: a thin adapter over the same engine (no rule is implemented twice).

flake8 adds 1 to the column a plugin yields, so columns are yielded 0-based; flake8
itself handles ``# noqa``, its own selection and per-file-ignores. It hands the plugin one
file at a time: a ``Child(self)`` whose class lives in another file is judged against the rest
of the file's project (project_context.py), as the command judges it.

The plugin reads the same ``[tool.cyclelint]`` as the command (found from each file's folder):
its codes, per-file-ignores and exclude decide what the plugin reports. flake8's own options win
where given: a code named in full by flake8's select or extend-select is reported whatever the
configuration says (a prefix such as ``--select CYC`` only picks the plugin), and flake8 filters
what it ignores.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

from . import __version__
from .cache import Cache
from .config import Configs
from .engine import lint_source
from .file_rules import FileRules
from .findings import DEFAULT_CODES, RULES
from .project_context import Project
from .selection import UsageError


class CycleLintPlugin:
    name = "cyclelint"
    version = __version__
    explicit: frozenset[str] = frozenset()  # codes flake8's own options name in full
    rules: FileRules | None = None
    project: Project | None = None  # the rest of the projects asked about, in this flake8 process
    _reported: set[str] = set()  # configuration errors already said, once each

    def __init__(self, tree: Any, lines: list[str], filename: str = "stdin"):
        self.lines = lines
        self.filename = filename

    @classmethod
    def parse_options(cls, options: Any) -> None:
        named = {c.strip().upper() for opt in ("select", "extend_select") for c in getattr(options, opt, None) or ()}
        cls.explicit = frozenset(named & set(RULES))
        cls.rules = FileRules(configs=Configs())
        try:  # the configuration of the folder flake8 runs in: a mistake there stops the run, in one line
            cls.rules.codes(os.path.join(os.getcwd(), "-"))
            cls.project = Project(cls.rules, Cache.open(Configs().for_path(os.path.join(os.getcwd(), "-")).base))
        except UsageError as exc:
            print(f"cyclelint: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    def _codes(self) -> frozenset[str] | None:
        """The codes this file is linted with; None when [tool.cyclelint] excludes it."""
        path = self.filename if self.filename not in ("stdin", "-") else os.path.join(os.getcwd(), "-")
        rules = type(self).rules or FileRules(configs=Configs())
        try:
            if rules.excluded(path):
                return None
            return rules.codes(path) | self.explicit
        except UsageError as exc:  # a subproject's configuration: said once, and the defaults used
            if str(exc) not in self._reported:
                self._reported.add(str(exc))
                print(f"cyclelint: error: {exc} (linting with the default rules)", file=sys.stderr)
            return DEFAULT_CODES | self.explicit

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        codes = self._codes()
        if codes is None:
            return
        results = [lint_source("".join(self.lines), self.filename, codes, apply_noqa=False)]
        if results[0].error:
            return  # flake8 reports the syntax error itself (E999)
        project = type(self).project or Project(type(self).rules or FileRules(configs=Configs()))
        project.add_around(results)
        project.resolve(results)
        for f in sorted(results[0].findings, key=lambda f: f.sort_key()):
            yield f.line, f.column - 1, f"{f.code} {f.message}", type(self)
