"""``# noqa`` / ``# noqa: CYC101,CYC2`` on a flagged line, ``# cyclelint: skip-file`` anywhere."""
from __future__ import annotations

import re

NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
SKIP_FILE = b"cyclelint: skip-file"


def noqa_codes(line: str) -> tuple[str, ...] | None:
    """None: no noqa; (): bare noqa (everything); else the code prefixes it names."""
    m = NOQA_RE.search(line)
    if m is None:
        return None
    codes = m.group("codes")
    return tuple(c.upper() for c in re.split(r"[,\s]+", codes) if c) if codes else ()


def suppressed(code: str, noqa: tuple[str, ...] | None) -> bool:
    if noqa is None:
        return False
    return not noqa or any(code.startswith(prefix) for prefix in noqa)
