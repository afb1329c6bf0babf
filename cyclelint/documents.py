"""What a file gives the linter: a Python file its bytes as they are, a notebook the module its
code cells make (notebook.py). Either can take a rewrite of that source back into the file."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .notebook import Notebook

NOTEBOOK_SUFFIX = ".ipynb"


class NotebookError(ValueError):
    """A file named ``*.ipynb`` that is no notebook we can read, or a rewrite that cannot go back."""


class PythonFile:
    starts = None  # no cells

    def __init__(self, data: bytes | str):
        self.source = data

    def rebuild(self, source: bytes) -> bytes:
        return source


def open_document(path: str, data: bytes | str) -> PythonFile | Notebook:
    """Raises NotebookError for a file named ``*.ipynb`` that is not a notebook."""
    if not path.endswith(NOTEBOOK_SUFFIX):
        return PythonFile(data)
    from .notebook import read_notebook  # json and IPython's syntax: for notebooks only

    return read_notebook(data.encode("utf-8") if isinstance(data, str) else data)
