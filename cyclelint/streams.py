"""Writing reports and messages to stdout and stderr. A file name that is not UTF-8 reaches Python
as escapes (surrogateescape); it is written back as its own bytes, as ``ls`` and ``grep`` print it,
instead of failing with UnicodeEncodeError."""
from __future__ import annotations

import sys
from typing import TextIO


def write(stream: TextIO, text: str | bytes) -> None:
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a stream with no bytes beneath (a StringIO standing in for stdout)
        stream.write(text if isinstance(text, str) else text.decode("utf-8", "surrogateescape"))
        return
    if isinstance(text, str):
        encoding = stream.encoding or "utf-8"
        try:
            text = text.encode(encoding, "surrogateescape")
        except UnicodeEncodeError:  # a character the terminal's encoding lacks
            text = text.encode(encoding, "backslashreplace")
    stream.flush()
    view = memoryview(text)
    while view:  # a write cut short (the reader went away) must end in BrokenPipeError, not in silence
        view = view[buffer.write(view):]
    buffer.flush()


def say(line: str) -> None:
    """One line on stderr."""
    write(sys.stderr, line + "\n")
