"""A source's text as Python reads it (its encoding, its lines), changed a whole line at a time:
what adding and removing ``noqa`` comments needs, for a Python file's bytes as for the module a
notebook's cells make."""
from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines_with_ends(text: str) -> list[str]:
    """The lines with their endings, broken where Python breaks them (not at form feeds)."""
    return _LINE.findall(text)


def decode(source: bytes | str) -> tuple[str, str | None]:
    """(text, encoding): bytes in the encoding Python would read them with; a text has none."""
    if isinstance(source, str):
        return source, None
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return source.decode(encoding), encoding


def edit_lines(source: bytes | str, edits: dict[int, Callable[[str], str]]) -> bytes | str:
    """``source`` with line N (1-based) replaced by ``edits[N](line)``, the line given and taken
    without its ending; the rest, encoding and endings included, as it was."""
    text, encoding = decode(source)
    lines = lines_with_ends(text)
    for n, edit in edits.items():
        line = lines[n - 1]
        body = line.rstrip("\r\n")
        lines[n - 1] = edit(body) + line[len(body):]
    out = "".join(lines)
    return out if encoding is None else out.encode(encoding)


def comments(source: bytes | str) -> list[tuple[int, int, str]]:
    """(line, column, text) of each comment (bytes in the encoding Python reads them with);
    stops quietly where the file stops being Python: its parse error is reported on its own."""
    out = []
    tokens = (tokenize.tokenize(io.BytesIO(source).readline) if isinstance(source, bytes)
              else tokenize.generate_tokens(io.StringIO(source).readline))
    try:
        for tok in tokens:
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1], tok.string))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError):
        pass
    return out


def line_ends(text: str) -> set[int]:
    """The lines whose end is the end of a line of code, where a comment may be added: not inside
    a string that goes on, nor before a backslash continuation."""
    out = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                out.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def encode(text: str) -> bytes:
    """What an editor's text would be on disk: in the encoding its coding cookie names (UTF-8 by
    default), so that it is read back as the same text."""
    head = text.encode("utf-8", "surrogateescape")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
        return head if encoding in ("utf-8", "utf-8-sig") else text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeError):
        return head  # an unknown cookie or text it cannot hold: the parser reports it
