"""One reading of an expression, whichever tree it comes from.

cyclelint parses a file twice over: CPython's ``ast`` for the pre-filter and the project index, libcst for
the rules. A judgement both need (``judgements.py``) is written once against this reading, and each tree
supplies its own (``analysis.cst_reading.CST``, ``ast_reading.AST``), so the pre-filter's test cannot drift
from the rule's. A reading only reports what the syntax says; it decides nothing.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

# What kind of expression a node is, as far as the judgements care; everything else is OTHER.
NAME = "name"            # x, None, True, False (names to libcst), and a lambda's parameter
ATTRIBUTE = "attribute"  # x.y
CALL = "call"            # f(...)
LAMBDA = "lambda"
BINARY = "binary"        # a + b, a @ b, ...
UNARY = "unary"          # -a, not a, ~a
CONDITIONAL = "conditional"  # a if c else b
LIST = "list"
TUPLE = "tuple"
SET = "set"
DICT = "dict"
COMPREHENSION = "comprehension"  # [e for ...], {e for ...}, (e for ...), {k: v for ...}
STRING = "string"        # a string or bytes literal without interpolation
INTEGER = "integer"
OTHER = "other"


class Reading(Protocol):
    def kind(self, node: Any) -> str:
        """One of the kinds above."""

    def dotted(self, node: Any) -> str | None:
        """``"a.b.c"`` for a name or attribute chain, else None."""

    def identifier(self, node: Any) -> str:
        """A NAME's identifier, or an ATTRIBUTE's last part."""

    def base(self, node: Any) -> Any:
        """What an ATTRIBUTE is taken from (``x`` of ``x.y``)."""

    def func(self, node: Any) -> Any:
        """What a CALL calls."""

    def arguments(self, node: Any) -> Sequence[Any]:
        """A CALL's argument values, positional then keyword, in source order, ``*``/``**`` unwrapped."""

    def positional(self, node: Any) -> Sequence[Any]:
        """A CALL's positional argument values, ``*args`` left out."""

    def operands(self, node: Any) -> Sequence[Any]:
        """The sub-expressions of BINARY (left, right), UNARY (the operand) and CONDITIONAL (body, orelse)."""

    def elements(self, node: Any) -> Sequence[Any]:
        """The element values of a LIST, TUPLE or SET, ``*`` unwrapped; a DICT's values (``**d`` gives ``d``)."""

    def entries(self, node: Any) -> Sequence[Any]:
        """A DICT's values and keys, each value before its key (a ``**`` entry gives its value alone)."""

    def produced(self, node: Any) -> Any:
        """What a COMPREHENSION makes of each item (a dict comprehension's value)."""

    def adds(self, node: Any) -> bool:
        """Whether a BINARY is ``+``."""

    def single_index(self, node: Any) -> Any | None:
        """The index of ``x[i]`` when it is one plain expression (not a slice, not ``x[i, j]``), else None."""

    def children(self, node: Any) -> Iterable[Any]:
        """Every child node that may hold an expression."""


def last_part(name: str | None) -> str:
    """``"cat"`` of ``"torch.cat"``; ``""`` for None."""
    return name.rsplit(".", 1)[-1] if name else ""
