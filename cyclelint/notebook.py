"""Jupyter notebooks: the code cells, in order, as one Python module (one namespace, as a kernel
runs them after Run All), IPython syntax neutralised (magics.py). Findings are placed back in their
cell: ``cell N`` is the Nth code cell, lines and columns are the cell's own. A rewrite goes back into
the cells' sources only, the rest of the file (outputs, metadata, its JSON layout) kept byte for byte
(notebook_json.py)."""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

from .documents import NotebookError
from .magics import neutralise
from .source_text import lines_with_ends


@dataclass
class Cell:
    index: int  # in the notebook's "cells" list
    lines: list[str]  # the source as written, each line with its "\n" (the last one may lack it)
    python: list[str]  # what is linted: IPython syntax neutralised, every line ended


@dataclass
class Notebook:
    data: bytes
    cells: list[Cell]  # the code cells

    @property
    def source(self) -> str:
        """The module that is linted."""
        return "".join(line for cell in self.cells for line in cell.python)

    @property
    def starts(self) -> list[int]:
        """The first line of each code cell in :attr:`source` (1-based)."""
        out, line = [], 1
        for cell in self.cells:
            out.append(line)
            line += len(cell.python)
        return out

    def rebuild(self, source: str | bytes) -> bytes:
        """The file with the cells' sources replaced by the lines of ``source`` (a rewrite of
        :attr:`source` that keeps its lines); the neutralised IPython lines are put back as written."""
        from .notebook_json import replace_sources

        new = lines_with_ends(source.decode("utf-8") if isinstance(source, bytes) else source)
        if len(new) != sum(len(c.python) for c in self.cells):
            raise NotebookError("the rewrite would change the number of lines of a cell")
        changed: dict[int, list[str]] = {}
        pos = 0
        for cell in self.cells:
            lines = []
            for old, linted, now in zip(cell.lines, cell.python, new[pos:pos + len(cell.python)]):
                if linted != _ended(old):  # an IPython line: the rewrite must leave it alone
                    if now != linted:
                        raise NotebookError("the rewrite would change an IPython line")
                    now = old
                lines.append(now if _ended(old) == old else now.rstrip("\r\n"))
            pos += len(cell.python)
            if lines != cell.lines:
                changed[cell.index] = lines
        return replace_sources(self.data, changed) if changed else self.data


def read_notebook(data: bytes) -> Notebook:
    """The notebook in ``data``; raises NotebookError with the reason it is not one. A notebook
    of another language (an R or Julia kernel) has no code cells to lint."""
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not a notebook: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}") from None
    except RecursionError:
        raise NotebookError("not a notebook: JSON nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError('not a notebook: no "cells" list (nbformat 4 is read)')
    if _language(doc) not in ("python", None):
        return Notebook(data, [])
    cells = []
    for i, cell in enumerate(doc["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _text(cell.get("source", ""), i)
        lines = lines_with_ends(text)
        cells.append(Cell(i, lines, neutralise([_ended(line) for line in lines])))
    return Notebook(data, cells)


def _ended(line: str) -> str:
    return line if line.endswith(("\n", "\r")) else line + "\n"


def _language(doc: dict) -> str | None:
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        return None
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        table = meta.get(key)
        if isinstance(table, dict) and isinstance(table.get(field), str):
            return table[field].lower()
    return None


def _text(source, index: int) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    raise NotebookError(f"not a notebook: the source of cell {index + 1} is not text")


def place(findings, warnings, starts: list[int]) -> None:
    """Turn lines of the linted module into (cell, line in the cell), in place."""
    for f in findings:
        f.cell, f.line = _cell_line(starts, f.line)
        f.end_line = f.line + f.end_line - source_line(starts, f.cell, f.line)
    for w in warnings:
        w.cell, w.line = _cell_line(starts, w.line)


def _cell_line(starts: list[int], line: int) -> tuple[int, int]:
    n = max(bisect.bisect_right(starts, line) - 1, 0)
    return n + 1, line - starts[n] + 1


def source_line(starts: list[int], cell: int, line: int) -> int:
    """The line of the linted module for ``line`` of code cell ``cell`` (both 1-based)."""
    return starts[cell - 1] + line - 1


_LINE = re.compile(r"\bline (\d+)")


def place_error(message: str, starts: list[int]) -> str:
    """A parse error's ``line N`` of the linted module as ``cell C, line L``."""
    def cell_line(m: re.Match) -> str:
        return "cell {}, line {}".format(*_cell_line(starts, int(m.group(1)))) if starts else m.group(0)
    return _LINE.sub(cell_line, message, count=1)
