"""The classes of the linted tree by name, the chain of bases a class name means in one file, and the classes deriving
from each base."""
from __future__ import annotations

from collections.abc import Sequence

from .records import FileResult


def class_index(results: Sequence[FileResult]) -> tuple[dict[str, FileResult], dict[str, list[str]]]:
    files = {res.path: res for res in results}
    homes: dict[str, list[str]] = {}  # class name -> files that define one
    for res in results:
        for name in res.classes:
            homes.setdefault(name, []).append(res.path)
    return files, homes


def with_bases(name: str, seen_from: str, files: dict[str, FileResult],
                homes: dict[str, list[str]]) -> set[tuple[str, str]]:
    """(file, class) for the class ``name`` means in file ``seen_from`` and for its bases: the
    file's own class of that name first, else every class of that name in the tree."""
    found: set[tuple[str, str]] = set()
    todo = [(name, seen_from)]
    while todo:
        cur, where = todo.pop()
        for home in [where] if cur in files[where].classes else homes.get(cur, []):
            if (home, cur) not in found:
                found.add((home, cur))
                todo += [(b.rsplit(".", 1)[-1], home) for b in files[home].classes[cur].bases]
    return found


def subclass_index(files: dict[str, FileResult]) -> dict[str, list[tuple[str, str]]]:
    """A base's last name -> (file, class) of each class of the tree deriving from it directly."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path, res in files.items():
        for name, summary in res.classes.items():
            for base in summary.bases:
                out.setdefault(base.rpartition(".")[2], []).append((path, name))
    return out
