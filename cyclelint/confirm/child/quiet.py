"""Silence warnings raised while the detector reads the program's objects, without touching its own.

``warnings.catch_warnings()`` bumps the filters' version on entry and exit, which empties every
module's ``__warningregistry__``: a warning the program was shown once is then shown again. An
"ignore" filter put first on the list and taken off again, without that bump, stores nothing in any
registry and leaves the program's warnings as they were.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager

_IGNORE_ALL = ("ignore", None, Warning, None, 0)


@contextmanager
def quiet():
    filters = warnings.filters
    filters.insert(0, _IGNORE_ALL)
    try:
        yield
    finally:
        for i, item in enumerate(filters):
            if item is _IGNORE_ALL:
                del filters[i]
                break
