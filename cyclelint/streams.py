"""Writing reports and messages to stdout and stderr. A file name that is not UTF-8 reaches Python
as escapes (surrogateescape); it is written back as its own bytes, as ``ls`` and ``grep`` print it,
instead of failing with UnicodeEncodeError."""
from __future__ import annotations

import sys
from typing import TextIO


def write(stream: TextIO, text: str | bytes) -> None:
    if isinstance(text, str):
        encoding = stream.encoding or "utf-8"
        try:
            text = text.encode(encoding, "surrogateescape")
        except UnicodeEncodeError:  # a character the terminal's encoding lacks
            text = text.encode(encoding, "backslashreplace")
    stream.flush()
    stream.buffer.write(text)
    stream.buffer.flush()


def say(line: str) -> None:
    """One line on stderr."""
    write(sys.stderr, line + "\n")
