"""IPython syntax in notebook cells, neutralised so that a cell parses as Python: line magics
(``%time f()``), shell escapes (``!pip install x``), help (``obj?``), their assigned forms
(``files = !ls``) and cell magics (``%%time``). Such a line becomes ``pass`` (``name = None`` when
assigned) at its own indentation, so every other line keeps its number and its columns. A cell
magic whose body is another language (``%%bash``, ``%%writefile``) blanks the whole cell.

A line counts as IPython syntax only where a statement starts (not inside brackets, a string or
after a backslash), as IPython itself reads it: ``(a\\n % b)`` is Python."""
from __future__ import annotations

import re

from .parsing import quiet_parse

# Cell magics whose body is Python run in the kernel; any other cell magic's body is not Python.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_ASSIGNED = re.compile(r"(?P<target>[A-Za-z_]\w*)\s*=\s*[%!]")
_CELL_MAGIC = re.compile(r"%%(?P<name>\w+)")


def neutralise(lines: list[str]) -> list[str]:
    """The cell's lines (each with its line ending) with IPython syntax replaced; as given when
    the cell already parses (the common case, and then nothing can be misread)."""
    if _parses("".join(lines)):
        return lines
    out = list(lines)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        m = _CELL_MAGIC.match(lines[first].lstrip())
        if m and m.group("name") not in PYTHON_CELL_MAGICS:
            return [_ending(line) for line in lines]
    scan = _Scanner()
    continued_magic = False
    for i, line in enumerate(lines):
        if continued_magic:  # a magic continued with a trailing backslash
            out[i] = _ending(line)
            continued_magic = _body(line).endswith("\\")
            continue
        if scan.at_statement_start() and _is_ipython(line):
            out[i] = _replacement(line)
            continued_magic = _body(line).endswith("\\")
            continue
        scan.feed(line)
    return out


def _parses(text: str) -> bool:
    try:
        quiet_parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def _ending(line: str) -> str:
    return line[len(_body(line)):]


def _is_ipython(line: str) -> bool:
    code = line.strip()
    if not code:
        return False
    if code[0] in "%!?":
        return True
    if _ASSIGNED.match(code):
        return True
    return code.endswith("?") and "#" not in code  # obj? / obj??


def _replacement(line: str) -> str:
    body = _body(line)
    indent = body[: len(body) - len(body.lstrip())]
    m = _ASSIGNED.match(body.lstrip())
    return indent + (f"{m.group('target')} = None" if m else "pass") + _ending(line)


class _Scanner:
    """Just enough of Python's tokenizer to know where a statement may start: open brackets,
    strings (triple-quoted ones span lines), comments and backslash continuations."""

    def __init__(self):
        self.depth = 0
        self.quote: str | None = None  # the closing delimiter of the string we are in
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        text, i, n = _body(line), 0, len(_body(line))
        comment = False
        while i < n:
            c = text[i]
            if self.quote is not None:
                if c == "\\":
                    i += 2
                    continue
                if text.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c in "'\"":
                self.quote = c * 3 if text.startswith(c * 3, i) else c
                i += len(self.quote)
                continue
            i += 1
        ends_in_backslash = not comment and text.endswith("\\")
        if self.quote is not None and len(self.quote) == 1 and not ends_in_backslash:
            self.quote = None  # an unterminated one-line string: a syntax error Python reports itself
        self.continued = ends_in_backslash and self.quote is None
