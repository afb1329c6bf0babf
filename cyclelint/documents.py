"""What a file gives the linter: a Python file its bytes as they are, a notebook the module its
code cells make (notebook.py). Either can take a rewrite of that source back into the file."""
from __future__ import annotations

from dataclasses import dataclass

from .notebook import Notebook, NotebookError, is_notebook, read_notebook

__all__ = ["NotebookError", "PythonFile", "open_document"]


@dataclass
class PythonFile:
    data: bytes | str
    starts = None  # no cells

    @property
    def source(self) -> bytes | str:
        return self.data

    def rebuild(self, source: bytes) -> bytes:
        return source


def open_document(path: str, data: bytes | str) -> PythonFile | Notebook:
    """Raises NotebookError for a file named ``*.ipynb`` that is not a notebook."""
    if not is_notebook(path):
        return PythonFile(data)
    return read_notebook(data.encode("utf-8") if isinstance(data, str) else data)
