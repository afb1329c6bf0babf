"""Definitions that never run: a ``def`` that a later ``def`` of the same name in the same block replaces, with
nothing reading the name in between. d2l 1.0.3's generated ``Trainer`` defines ``prepare_model`` twice in one class
body; only the second is the class's method. A property's setter (``@name.setter``) and any use of the name between
the two keep the first."""
from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from . import exprs as ex


def live_statements(body: Sequence[cst.CSTNode]) -> Sequence[cst.CSTNode]:
    """``body`` without the function definitions a later one replaces before anything reads them."""
    names = [s.name.value if isinstance(s, cst.FunctionDef) else None for s in body]
    defined = [n for n in names if n is not None]
    if len(defined) == len(set(defined)):
        return body  # the common case: no name defined twice
    replaced: set[int] = set()
    for i, name in enumerate(names):
        later = next((j for j in range(i + 1, len(body)) if names[j] == name), None) if name else None
        if later is not None and not any(name in ex.loaded_names(body[k]) for k in range(i + 1, later)) and not any(
                name in ex.loaded_names(d) for d in body[later].decorators):  # ``self.name`` is looked up when it runs
            replaced.add(i)
    return [s for i, s in enumerate(body) if i not in replaced]

