"""``# noqa`` / ``# noqa: CYC101,CYC2`` on a flagged line, ``# cyclelint: skip-file`` anywhere."""
from __future__ import annotations

import re
from collections.abc import Iterable

from .source_text import comments

NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
SKIP_FILE = b"cyclelint: skip-file"
_NAMES_OURS = re.compile(rb"(?i)noqa\s*:[^\r\n]*cyc")


def may_name_ours(source: bytes) -> bool:
    """Whether a ``noqa`` of ``source`` may name a code of ours: most files have none, and need no tokenizing. A
    lowered copy's ``in`` first: a case-insensitive search costs three times as much, and most files hold no noqa."""
    return b"noqa" in source.lower() and _NAMES_OURS.search(source) is not None


def noqa_codes(line: str) -> tuple[str, ...] | None:
    """None: no noqa; (): bare noqa (everything); else the code prefixes it names."""
    m = NOQA_RE.search(line)
    if m is None:
        return None
    if m.group("codes") is None:
        return ()
    codes, _ = _codes_at(m)  # a mistyped CYC2O3 is one code that names no rule, not the prefix CYC2
    return tuple(code.upper() for _, _, code in codes) or (m.group("codes").upper(),)


def suppressed(code: str, noqa: tuple[str, ...] | None) -> bool:
    if noqa is None:
        return False
    return not noqa or any(code.startswith(prefix) for prefix in noqa)


_CODE = re.compile(r"[A-Z]+[0-9]+|CYC\w*", re.IGNORECASE)  # CYC2O3 is one (mistyped) code, not CYC2


def _codes_at(m: re.Match) -> tuple[list[tuple[int, int, str]], int]:
    """The codes a directive names, (start, end, code) in its line, and where the words after them
    start (``# noqa: CYC203 kept on purpose``)."""
    if m.group("codes") is None:
        return [], m.end()
    codes = []
    for word in re.compile(r"[^,\s]+").finditer(m.string, m.start("codes")):
        if not _CODE.fullmatch(word.group()):
            return codes, word.start()
        codes.append((word.start(), word.end(), word.group()))
    return codes, len(m.string)


def directive_codes(comment: str) -> list[tuple[int, int, str]]:
    """(start, end, code) of each code the ``noqa`` directive of ``comment`` names."""
    m = NOQA_RE.search(comment)
    return _codes_at(m)[0] if m else []


def with_codes(line: str, comment_at: int | None, codes: list[str]) -> str:
    """``line`` (without its ending) whose comment at ``comment_at`` also names ``codes``:
    appended to its ``noqa`` directive, or a directive added at the end of the line."""
    m = NOQA_RE.search(line, comment_at) if comment_at is not None else None
    if m is None:
        return f"{line.rstrip()}  # noqa: {', '.join(codes)}"
    found, _ = _codes_at(m)
    if not found:
        return line  # a bare noqa already silences every code
    end = found[-1][1]
    return f"{line[:end]}, {', '.join(codes)}{line[end:]}"


def without_codes(line: str, columns: set[int]) -> str:
    """``line`` with the directive codes that start at ``columns`` (0-based) removed; a directive
    left with no code goes, and words after it stay a comment."""
    for m in NOQA_RE.finditer(line):
        found, words_at = _codes_at(m)
        if not any(start in columns for start, _, _ in found):
            continue
        kept = [code for start, _, code in found if start not in columns]
        if kept:
            return f"{line[:m.start('codes')]}{', '.join(kept)}{line[found[-1][1]:]}"
        words = line[words_at:].strip()
        head = line[:m.start()].rstrip()
        return f"{line[:m.start()]}# {words}" if words else head
    return line


def unknown_codes(source: bytes, known: Iterable[str]) -> list[tuple[int, str]]:
    """(line, code) for each CYC code a ``# noqa`` comment names that no rule in ``known`` has:
    a typo there silences nothing, and the user believes it does. Only comments count (a string
    that spells ``# noqa`` is no suppression); codes of other tools are theirs to judge."""
    if not may_name_ours(source):
        return []
    known = tuple(known)
    return [(line, code) for line, _, comment in comments(source) for code in noqa_codes(comment) or ()
            if code.startswith("CYC") and not any(k.startswith(code) for k in known)]
