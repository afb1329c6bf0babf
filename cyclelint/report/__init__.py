"""Output formats, each imported only when chosen (the one-file pre-commit path stays light)."""
from __future__ import annotations

import importlib
from collections.abc import Sequence

from ..findings import FileError, Finding

FORMATS = {"text": "text", "json": "json_format", "sarif": "sarif", "github": "github"}


def render(fmt: str, findings: Sequence[Finding], errors: Sequence[FileError]) -> str:
    return importlib.import_module(f".{FORMATS[fmt]}", __name__).render(findings, errors)
