"""CYC001 (off by default): a ``noqa`` code of ours that suppresses nothing on its line, or that
names no rule. A stale one (the leak was fixed) hides the next leak written on that line; a typo
(``CYC2O3``) silences nothing while its author believes it does. Judged from the findings the file
has before suppression; only CYC codes (the others belong to other tools), and only codes of rules
that ran (a rule that is off cannot tell whether its ``noqa`` is needed). ``--fix`` removes them."""
from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from .findings import RULES, Finding
from .noqa import directive_codes, may_name_ours, without_codes
from .source_text import comments, edit_lines

CODE = "CYC001"


def may_apply(source: bytes | str) -> bool:
    """Cheap: most files name none of our codes in a ``noqa``, and need no judging."""
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    return may_name_ours(raw)


def unused_noqa(path: str, text: str, found: Iterable[tuple[int, str]], enabled: frozenset[str]) -> list[Finding]:
    """A CYC001 finding for each such code; ``found``: (line, code) of every finding of the file
    before suppression, the ones another file must confirm (CYC202, CYC305) included."""
    found = set(found)
    out = []
    for line, column, comment in comments(text):
        codes = directive_codes(comment)
        if any(CODE.startswith(code.upper()) for _, _, code in codes):
            continue  # the line asks not to be judged
        for start, end, code in codes:
            code = code.upper()
            if not code.startswith("CYC"):
                continue
            rules = [r for r in RULES if r.startswith(code)]
            if not rules:
                why = "names no rule of cyclelint: it silences nothing; correct it or remove it"
            elif not set(rules) & enabled or any(at == line and c.startswith(code) for at, c in found):
                continue
            else:
                why = f"suppresses nothing: no {code} finding on this line; remove it"
            out.append(Finding(path, line, column + start + 1, line, column + end + 1, CODE,
                               f"noqa code {code} {why}", fixable=True))
    return out


def remove_unused(source: bytes | str, where: Iterable[Finding], starts: list[int] | None) -> bytes | str:
    """``source`` without the codes of these CYC001 findings (a notebook's by cell: ``starts``)."""
    from .notebook import source_line

    columns: dict[int, set[int]] = {}
    for f in where:
        line = source_line(starts, f.cell, f.line) if f.cell is not None else f.line
        columns.setdefault(line, set()).add(f.column - 1)
    return edit_lines(source, {line: partial(without_codes, columns=cols) for line, cols in columns.items()})
