"""Weak references and weak containers on libcst's tree: ``judgements.is_weak``, the one predicate every
rule asks (a registry, a back-pointer or a stored callback made weak is no cycle and no leak)."""
from __future__ import annotations

import libcst as cst

from .. import judgements
from .cst_reading import CST


def is_weak(expr: cst.CSTNode | None) -> bool:
    """``weakref.ref(x)``, ``WeakMethod(m)``, ``WeakSet()``, ``weakref.finalize(...)``, and
    ``torch.__dict__.setdefault("registry", weakref.WeakValueDictionary())``."""
    return judgements.is_weak(CST, expr)
