"""Which rule codes are on: --select/--extend-select/--ignore with prefixes."""
from __future__ import annotations

from collections.abc import Iterable

from .findings import DEFAULT_CODES, RULES


class UsageError(Exception):
    """Bad command-line or configuration input (exit status 2)."""


def expand(prefixes: Iterable[str], *, selecting: bool) -> set[str]:
    """The codes named by ``prefixes``. When selecting, a rule that is off by
    default is turned on only by its full code (flake8 resolves it the same way)."""
    out: set[str] = set()
    for prefix in prefixes:
        prefix = prefix.strip().upper()
        if not prefix:
            continue
        matched = {code for code in RULES if code.startswith(prefix)}
        if not matched:
            raise UsageError(f"unknown rule code or prefix: {prefix}")
        out |= {c for c in matched if not selecting or RULES[c].default or c == prefix}
    return out


def enabled_codes(select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
                  ignore: Iterable[str] = ()) -> frozenset[str]:
    base = expand(select, selecting=True) if select else set(DEFAULT_CODES)
    return frozenset((base | expand(extend_select, selecting=True)) - expand(ignore, selecting=False))
