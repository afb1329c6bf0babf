"""Lint the corpus and the recall releases with cyclelint's default rules, match the findings to the labels and
the recall rows, and add the figures up per family.

A finding is keyed by (path relative to the linted folder, line, code): two findings of one code on one line are
one finding here, and one label covers them.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from cyclelint.api import lint_paths

from .fetch import Release, fetch
from .load import FAMILIES, UNLABELLED, Entry, Label, Place, RecallRow

Key = tuple[str, int, str]


@dataclass(frozen=True)
class Found:
    path: str  # relative to the linted folder
    line: int
    code: str
    message: str

    @property
    def key(self) -> Key:
        return (self.path, self.line, self.code)


class Workspace:
    """Fetches releases into ``data`` and lints folders of them, each folder once per run."""

    def __init__(self, data: Path, jobs: int | None = None):
        self.data = data
        self.jobs = jobs
        self._linted: dict[Path, tuple[list[Found], list[str]]] = {}

    def root(self, release: Release) -> Path:
        return fetch(release, self.data)

    def lint(self, folder: Path) -> tuple[list[Found], list[str]]:
        """Findings of the default rules with ``folder`` linted as one project (no config, no cache), and one
        line per file that could not be linted."""
        if folder not in self._linted:
            start = time.perf_counter()
            print(f"linting {folder.relative_to(self.data)} ...", end=" ", file=sys.stderr, flush=True)
            findings, errors = lint_paths([str(folder)], base=str(folder), jobs=self.jobs, cache=None)
            print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
            unique: dict[Key, Found] = {}
            for f in findings:
                found = Found(_rel(f.path, folder), f.line, f.code, f.message)
                unique.setdefault(found.key, found)
            self._linted[folder] = (list(unique.values()), [f"{_rel(e.path, folder)}: {e.message}" for e in errors])
        return self._linted[folder]


def _rel(path: str, folder: Path) -> str:
    return Path(os.path.relpath(path, folder)).as_posix()


# ---- labelled corpus ---------------------------------------------------------------------------------------

@dataclass
class EntryResult:
    entry: Entry
    findings: list[Found]
    labels: dict[Key, Label]
    errors: list[str] = field(default_factory=list)  # files of the entry that could not be linted

    def label(self, found: Found) -> str:
        """TRUE, HARMLESS, FALSE or ? (no label, or a placeholder)."""
        lab = self.labels.get(found.key)
        return lab.label if lab else UNLABELLED

    @property
    def unlabelled(self) -> list[Found]:
        return [f for f in self.findings if self.label(f) == UNLABELLED]

    @property
    def stale(self) -> list[Label]:
        """Labels that match no finding of today's analyzer."""
        keys = {f.key for f in self.findings}
        return [lab for key, lab in self.labels.items() if key not in keys]


def score_entry(ws: Workspace, entry: Entry, labels: dict[Key, Label]) -> EntryResult:
    folder = ws.root(entry.release) / entry.subdir
    if not folder.is_dir():
        raise ValueError(f"{entry.subdir} is not a folder of {entry.release.spec}")
    findings, errors = ws.lint(folder)
    return EntryResult(entry, findings, labels, errors)


# ---- recall rows -------------------------------------------------------------------------------------------

@dataclass
class RecallResult:
    row: RecallRow
    flagged: bool | None = None  # None: the place could not be checked (see problem)
    clean: bool | None = None
    seen: list[str] = field(default_factory=list)  # what was reported on the buggy line, any family
    problem: str | None = None


def project_folder(root: Path, path: str) -> str:
    """The top-level import package holding ``path``: the first folder on its way down that has an
    ``__init__.py`` (``src/pkg`` in a src layout); else its first folder; the root for a top-level module."""
    parts = Path(path).parts[:-1]
    for i in range(len(parts)):
        if (root.joinpath(*parts[: i + 1]) / "__init__.py").is_file():
            return "/".join(parts[: i + 1])
    return parts[0] if parts else ""


def _reported(ws: Workspace, place: Place) -> list[Found]:
    """Findings on ``place``'s line, its release's project folder linted; raises ValueError for a place that is
    not in the release."""
    root = ws.root(place.release)
    subdir = project_folder(root, place.path)
    file = root / place.path
    if not file.is_file():
        raise ValueError(f"{place.path} is not a file of {place.release.spec} ({place.release.source})")
    if place.line > len(file.read_bytes().splitlines()):
        raise ValueError(f"{place.path} of {place.release.spec} has fewer than {place.line} lines")
    findings, _ = ws.lint(root / subdir)
    rel = place.path[len(subdir) + 1:] if subdir else place.path
    return [f for f in findings if f.path == rel and f.line == place.line]


def check_row(ws: Workspace, row: RecallRow) -> RecallResult:
    """Flagged: a finding of the row's family on the buggy line. Clean: none on the fixed line."""
    result = RecallResult(row)
    try:
        seen = _reported(ws, row.buggy)
        result.seen = sorted(f.code for f in seen)
        result.flagged = any(f.code.startswith(row.family) for f in seen)
        result.clean = not any(f.code.startswith(row.family) for f in _reported(ws, row.fixed))
    except ValueError as exc:
        result.problem = f"{row.where}: {exc}"
    return result


# ---- figures -----------------------------------------------------------------------------------------------

def figures(entries: list[EntryResult], recall: list[RecallResult]) -> dict[str, dict]:
    """Per family and "all": findings, labelled, TRUE/HARMLESS/FALSE counts, the two precisions (over the
    labelled findings), recall rows flagged, clean rows held."""
    out = {}
    for family in FAMILIES + ("all",):
        prefix = "" if family == "all" else family
        labels = Counter(r.label(f) for r in entries for f in r.findings if f.code.startswith(prefix))
        rows = [r for r in recall if r.row.family.startswith(prefix) and r.problem is None]
        labelled = labels["TRUE"] + labels["HARMLESS"] + labels["FALSE"]
        out[family] = {
            "findings": sum(labels.values()),
            "labelled": labelled,
            "TRUE": labels["TRUE"], "HARMLESS": labels["HARMLESS"], "FALSE": labels["FALSE"],
            "true_ratio": labels["TRUE"] / labelled if labelled else None,
            "true_or_harmless_ratio": (labels["TRUE"] + labels["HARMLESS"]) / labelled if labelled else None,
            "recall_rows": len(rows),
            "flagged": sum(bool(r.flagged) for r in rows),
            "recall": sum(bool(r.flagged) for r in rows) / len(rows) if rows else None,
            "clean_held": sum(bool(r.clean) for r in rows),
        }
    return out
