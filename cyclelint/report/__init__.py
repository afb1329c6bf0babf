"""Output formats."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..findings import FileError, Finding
from . import github, json_format, sarif, text

FORMATS: dict[str, Callable[[Sequence[Finding], Sequence[FileError]], str]] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
