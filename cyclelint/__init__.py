"""cyclelint: find the code that keeps PyTorch tensors alive too long.

Public API: :func:`lint_paths`, :func:`lint_source`, :class:`Finding`.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .api import lint_paths, lint_source
from .findings import FileError, Finding

__all__ = ["FileError", "Finding", "__version__", "lint_paths", "lint_source"]
