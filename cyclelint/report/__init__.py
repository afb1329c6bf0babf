"""Output formats, each imported only when chosen (the one-file pre-commit path stays light).
A format takes the options it names in ``OPTIONS`` (the text report: statistics, quiet, colour)."""
from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Sequence

from ..findings import FileError, Finding

FORMATS = {"text": "text", "json": "json_format", "sarif": "sarif", "github": "github"}


def render(fmt: str, findings: Sequence[Finding], errors: Sequence[FileError], **options) -> str:
    module = importlib.import_module(f".{FORMATS[fmt]}", __name__)
    return module.render(findings, errors, **{k: v for k, v in options.items() if k in getattr(module, "OPTIONS", ())})


def statistics(findings: Sequence[Finding]) -> list[tuple[str, int, int]]:
    """(code, findings, fixable ones) per code, the most frequent first."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fixable)
    return [(code, n, fixable[code]) for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
