"""``# noqa`` / ``# noqa: CYC101,CYC2`` on a flagged line, ``# cyclelint: skip-file`` anywhere."""
from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
SKIP_FILE = b"cyclelint: skip-file"
_MAY_NAME_OURS = re.compile(rb"(?i)noqa\s*:[^\r\n]*cyc")  # most files have none: no tokenizing then


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


def unknown_codes(source: bytes, known: Iterable[str]) -> list[tuple[int, str]]:
    """(line, code) for each CYC code a ``# noqa`` comment names that no rule in ``known`` has:
    a typo there silences nothing, and the user believes it does. Only comments count (a string
    that spells ``# noqa`` is no suppression); codes of other tools are theirs to judge."""
    if not _MAY_NAME_OURS.search(source):
        return []
    known = tuple(known)
    found = []
    try:
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type == tokenize.COMMENT:
                for code in noqa_codes(tok.string) or ():
                    if code.startswith("CYC") and not any(k.startswith(code) for k in known):
                        found.append((tok.start[0], code))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError):
        pass  # the file's parse error is reported on its own; what was found so far stands
    return found
