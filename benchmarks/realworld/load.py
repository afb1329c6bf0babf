"""The benchmark's inputs, read and checked: the corpus, the label files and the recall rows.

Every problem is a :class:`DataError` naming the file (and line or row) in one line; the command reports them
all and goes on with what is valid.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cyclelint.findings import RULES

from .fetch import Release

HERE = Path(__file__).resolve().parent
FAMILIES = ("CYC1", "CYC2", "CYC3", "CYC4")
VERDICTS = ("TRUE", "HARMLESS", "FALSE")
UNLABELLED = "?"
_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")
_LABEL = re.compile(r"^(?P<path>\S+):(?P<line>[0-9]+)\s+(?P<code>\S+)\s+(?P<label>\S+)(?:\s+(?P<reason>.*))?$")


class DataError(Exception):
    """A bad corpus entry, label line or recall row."""


@dataclass(frozen=True)
class Entry:
    """One corpus entry: a released package (or a folder of it) linted as one project."""

    name: str
    release: Release
    subdir: str  # "" for the release's root
    kind: str  # "library" or "scripts"
    why: str


@dataclass(frozen=True)
class Label:
    path: str
    line: int
    code: str
    label: str  # one of VERDICTS, or UNLABELLED for a placeholder
    reason: str
    where: str  # file:line of the label, for messages

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.path, self.line, self.code)


@dataclass(frozen=True)
class Place:
    """Where a recall row points in one release: the project linted and the line that must (or must not) be
    reported."""

    release: Release
    path: str  # relative to the release root; the top-level import package holding it is linted
    line: int


@dataclass(frozen=True)
class RecallRow:
    id: str
    family: str
    code: str
    what: str
    fix: str
    crossfile: bool
    buggy: Place
    fixed: Place
    where: str  # file and id, for messages


# ---- corpus ------------------------------------------------------------------------------------------------

def load_wheels(path: Path = HERE / "wheels.toml") -> dict[str, dict]:
    """Which wheel to take of the packages with native code: ``[NAME]`` with ``platforms`` and
    ``python-versions`` (lists of strings)."""
    table = _toml(path)
    for name, opts in table.items():
        where = f"{path.name}: [{name}]"
        if not isinstance(opts, dict):
            raise DataError(f"{where} must be a table")
        _keys(opts, {"platforms", "python-versions"}, {"platforms", "python-versions"}, where)
        for key, value in opts.items():
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise DataError(f"{where}: {key} must be a list of strings")
    return {_normal(name): opts for name, opts in table.items()}


def load_corpus(options: dict[str, dict], path: Path = HERE / "corpus.toml") -> list[Entry]:
    """The corpus entries; ``options`` from :func:`load_wheels`."""
    table = _toml(path)
    _keys(table, {"entry"}, {"entry"}, path.name)
    entries: list[Entry] = []
    for i, raw in enumerate(table.get("entry", []), 1):
        where = f"{path.name}: entry {raw.get('name', i)!s}"
        _keys(raw, {"name", "package", "source", "subdir", "kind", "why"}, {"name", "package", "kind", "why"}, where)
        name = _str(raw, "name", where)
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
            raise DataError(f"{where}: name must be lower-case letters, digits and dashes")
        if raw["kind"] not in ("library", "scripts"):
            raise DataError(f"{where}: kind must be \"library\" or \"scripts\"")
        release = _release(raw, "package", raw.get("source", "wheel"), options, where)
        entries.append(Entry(name, release, _relpath(raw.get("subdir", ""), where, allow_empty=True),
                             raw["kind"], _str(raw, "why", where)))
    _unique([e.name for e in entries], f"{path.name}: entry name")
    return entries


# ---- labels ------------------------------------------------------------------------------------------------

def load_labels(path: Path) -> tuple[dict[tuple[str, int, str], Label], list[str]]:
    """The labels of one file by (path, line, code), and one error line per bad label line (skipped)."""
    labels: dict[tuple[str, int, str], Label] = {}
    errors: list[str] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{path.name}: cannot read: {exc}"]
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name}:{n}"
        try:
            label = parse_label(line, where)
        except DataError as exc:
            errors.append(str(exc))
            continue
        if label.key in labels:
            errors.append(f"{where}: {label.path}:{label.line} {label.code} is labelled twice "
                          f"(first at {labels[label.key].where})")
            continue
        labels[label.key] = label
    return labels, errors


def parse_label(line: str, where: str) -> Label:
    m = _LABEL.match(line)
    if not m:
        raise DataError(f"{where}: expected `path:line CODE LABEL reason`, got {line!r}")
    code, label, reason = m["code"], m["label"], (m["reason"] or "").strip()
    if code not in RULES:
        raise DataError(f"{where}: unknown rule code {code}")
    if label not in VERDICTS + (UNLABELLED,):
        raise DataError(f"{where}: label must be one of {', '.join(VERDICTS)} (or {UNLABELLED} for not yet "
                        f"labelled), got {label}")
    if label != UNLABELLED and not reason:
        raise DataError(f"{where}: {label} needs a reason naming what was checked")
    return Label(_relpath(m["path"], where), int(m["line"]), code, label, reason, where)


# ---- recall rows -------------------------------------------------------------------------------------------

_ROW_KEYS = {"id", "family", "code", "what", "fix", "report", "crossfile", "package", "source", "path", "line",
             "fixed_package", "fixed_path", "fixed_line", "notes"}
_ROW_REQUIRED = _ROW_KEYS - {"source", "report", "notes"}


def load_recall(folder: Path, options: dict[str, dict]) -> tuple[list[RecallRow], list[str]]:
    """Every valid ``[[leak]]`` row of ``folder/*.toml``, and one error line per bad row or file."""
    rows: list[RecallRow] = []
    errors: list[str] = []
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            table = _toml(path)
        except DataError as exc:
            errors.append(str(exc))
            continue
        for i, raw in enumerate(table.get("leak", []), 1):
            where = f"{path.name}: leak {raw.get('id', f'#{i}')!s}"
            try:
                row = _row(raw, options, where)
            except DataError as exc:
                errors.append(str(exc))
                continue
            if row.id in seen:
                errors.append(f"{where}: id {row.id} already used in {seen[row.id]}")
                continue
            seen[row.id] = path.name
            rows.append(row)
    return rows, errors


def _row(raw: dict, options: dict[str, dict], where: str) -> RecallRow:
    _keys(raw, _ROW_KEYS, _ROW_REQUIRED, where)
    family, code = _str(raw, "family", where), _str(raw, "code", where)
    if family not in FAMILIES:
        raise DataError(f"{where}: family must be one of {', '.join(FAMILIES)}, got {family}")
    if code not in RULES or not code.startswith(family):
        raise DataError(f"{where}: code {code} is not a rule of family {family}")
    if not isinstance(raw["crossfile"], bool):
        raise DataError(f"{where}: crossfile must be true or false")
    source = raw.get("source", "wheel")
    buggy = Place(_release(raw, "package", source, options, where), _relpath(_str(raw, "path", where), where),
                  _line(raw, "line", where))
    fixed = Place(_release(raw, "fixed_package", source, options, where),
                  _relpath(_str(raw, "fixed_path", where), where), _line(raw, "fixed_line", where))
    for place in (buggy, fixed):
        if not place.path.endswith(".py"):
            raise DataError(f"{where}: {place.path} is not a Python file")
    for key in ("what", "fix", "report", "notes"):
        if key in raw and not isinstance(raw[key], str):
            raise DataError(f"{where}: {key} must be a string")
    if not raw["fix"].startswith("https://"):
        raise DataError(f"{where}: fix must be the link to the fixing PR or commit")
    return RecallRow(_str(raw, "id", where), family, code, _str(raw, "what", where), raw["fix"], raw["crossfile"],
                     buggy, fixed, where)


# ---- helpers -----------------------------------------------------------------------------------------------

def _toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise DataError(f"{path.name}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path.name}: invalid TOML: {exc}") from exc


def _keys(raw: dict, allowed: set[str], required: set[str], where: str) -> None:
    unknown, missing = sorted(set(raw) - allowed), sorted(required - set(raw))
    if unknown:
        raise DataError(f"{where}: unknown key(s): {', '.join(unknown)}")
    if missing:
        raise DataError(f"{where}: missing key(s): {', '.join(missing)}")


def _str(raw: dict, key: str, where: str) -> str:
    value = raw[key]
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}: {key} must be a non-empty string")
    return value


def _line(raw: dict, key: str, where: str) -> int:
    value = raw[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise DataError(f"{where}: {key} must be a line number (1 or more)")
    return value


def _relpath(value, where: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise DataError(f"{where}: a path must be a string")
    if value == "" and allow_empty:
        return ""
    p = PurePosixPath(value)
    if not value or p.is_absolute() or ".." in p.parts or "\\" in value or str(p) != value.rstrip("/"):
        raise DataError(f"{where}: {value!r} must be a plain relative path with / separators")
    return str(p)


def _release(raw: dict, key: str, source, options: dict[str, dict], where: str) -> Release:
    m = _SPEC.match(raw[key]) if isinstance(raw[key], str) else None
    if not m:
        raise DataError(f"{where}: {key} must be NAME==VERSION, got {raw[key]!r}")
    if source not in ("wheel", "sdist"):
        raise DataError(f"{where}: source must be \"wheel\" or \"sdist\", got {source!r}")
    name = _normal(m[1])
    wheel = options.get(name, {}) if source == "wheel" else {}
    return Release(name, m[2], source, tuple(wheel.get("platforms", ())), tuple(wheel.get("python-versions", ())))


def _normal(name: str) -> str:
    """A package name as the registry compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _unique(names: list[str], what: str) -> None:
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise DataError(f"{what} used twice: {', '.join(dupes)}")
