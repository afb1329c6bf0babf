"""Write new cell sources into a notebook's JSON text without re-serialising the rest: every
string is parsed with where it stands in the text, and only the strings of a changed source are
replaced, so outputs, metadata, key order, indentation and escapes stay byte for byte."""
from __future__ import annotations

import json
import json.decoder
import json.scanner

from .documents import NotebookError


class _Spanned(str):
    """A JSON string value that knows the slice of the text it was read from."""

    start: int
    end: int


def _scan_string(text: str, end: int, strict: bool = True):
    value, stop = json.decoder.scanstring(text, end, strict)
    out = _Spanned(value)
    out.start, out.end = end - 1, stop  # the opening and past the closing quote
    return out, stop


def _spanned_document(text: str) -> dict:
    decoder = json.JSONDecoder()
    decoder.parse_string = _scan_string
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # the pure-Python scanner calls parse_string
    return decoder.decode(text)


def replace_sources(data: bytes, changed: dict[int, list[str]]) -> bytes:
    """``data`` with the source of each cell ``index`` in ``changed`` replaced by its lines."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8-sig")
    doc = _spanned_document(text)
    ascii_only = data.isascii()  # a file written with \\u escapes keeps writing them
    edits: list[tuple[int, int, str]] = []
    for index, lines in changed.items():
        edits += _source_edits(text, doc["cells"][index]["source"], lines, ascii_only)
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    _check(text, out, changed)
    return (b"\xef\xbb\xbf" if bom else b"") + out.encode("utf-8")


def _source_edits(text: str, source, lines: list[str], ascii_only: bool) -> list[tuple[int, int, str]]:
    def dump(s: str) -> str:
        return json.dumps(s, ensure_ascii=ascii_only)

    if isinstance(source, str):
        return [(source.start, source.end, dump("".join(lines)))]
    if len(source) == len(lines) and all(_one_line(s) for s in source):
        return [(old.start, old.end, dump(new)) for old, new in zip(source, lines) if old != new]
    if not source:
        raise NotebookError("an empty cell cannot have changed")
    # Lines split otherwise than one per string: the strings are written again, one per line,
    # separated as the first two were (or as nbformat does).
    sep = text[source[0].end:source[1].start] if len(source) > 1 else ",\n"
    return [(source[0].start, source[-1].end, sep.join(dump(line) for line in lines))]


def _one_line(s: str) -> bool:
    return "\n" not in s[:-1]


def _check(before: str, after: str, changed: dict[int, list[str]]) -> None:
    """The result must be the same document with only those sources changed."""
    expected = _joined(json.loads(before))
    for index, lines in changed.items():
        expected["cells"][index]["source"] = "".join(lines)
    if _joined(json.loads(after)) != expected:
        raise NotebookError("the rewritten notebook would differ beyond the changed sources (please report it)")


def _joined(doc: dict) -> dict:
    """Sources as one string each: how a source is split into strings is no difference."""
    for cell in doc["cells"]:
        if isinstance(cell, dict) and isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    return doc
