"""What the pre-filter's scan reads of the whole module, each on the first question that needs it: most files
never ask."""
from __future__ import annotations

import ast
from functools import cached_property

from ..astutil import dotted
from ..project.imports import Imported, from_imports, import_origins
from ..vocabulary import cache_decorator
from .shapes import module_level_names


class ModuleReads:
    def __init__(self, tree: ast.Module):
        self.tree = tree

    @cached_property
    def names(self) -> set[str]:
        """Asked only of a container store or call fed a sized argument."""
        return module_level_names(self.tree)

    @cached_property
    def imports(self) -> dict[str, Imported]:
        """Asked by the questions, or by what the project asks."""
        return from_imports(self.tree)

    @cached_property
    def origins(self) -> dict[str, str]:
        """Asked by the first decorated function that may be a cached method."""
        return import_origins(self.tree)

    def cached(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A decorator of ``node`` is functools' cache, by the names the file's imports bind."""
        return any(cache_decorator(dotted(d.func if isinstance(d, ast.Call) else d) or "", self.origins)
                   for d in node.decorator_list)
