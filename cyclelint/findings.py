"""Findings, errors and the table of rule codes (the public contract)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    default: bool = True
    observed: str | None = "cycle"  # how --confirm observes a finding: a key of OBSERVED, or None
    fixable: bool = False  # --fix has a safe rewrite for some of its findings


# How --confirm observes a rule's findings (confirm/plan.py builds the watch plan from it).
OBSERVED = {
    "cycle": "a cycle the collector frees matches the finding",
    "loop": "the accumulator grows across passes of the flagged loop",
    "state": "the attribute grows across calls of the flagged method",
    "survivor": "instances of the flagged class are still alive at exit (outside a class: the registry grows "
                "across calls of the flagged function)",
    "body": "as survivor, and the flagged line is a decorator: the method's body must run",
    "runtime": "a cycle with tensors that no static finding explains",
}


RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule("CYC001", "unused-noqa", "noqa code of cyclelint that suppresses nothing or names no rule", default=False,
             observed=None, fixable=True),
        Rule("CYC101", "self-lambda-stored", "lambda capturing the instance stored on the instance"),
        Rule("CYC102", "self-closure-stored", "nested function capturing the instance stored on the instance"),
        Rule("CYC103", "bound-method-stored", "bound method or partial over the instance stored on the instance"),
        Rule("CYC104", "self-capturing-hook", "hook that captures the instance registered on an object it reaches"),
        Rule("CYC201", "mutual-link", "two objects linked to each other in one scope"),
        Rule("CYC202", "back-pointer", "object owned by the instance given a strong reference back to it"),
        Rule("CYC203", "self-reference", "instance stored in its own attributes or containers"),
        Rule("CYC301", "graph-accumulated", "accumulator augmented with a graph-attached tensor in a loop", observed="loop",
             fixable=True),
        Rule("CYC302", "graph-collected", "outer container collects graph-attached tensors in a loop", observed="loop",
             fixable=True),
        Rule("CYC303", "graph-concatenated", "graph-attached tensor grown by concatenation in a loop", observed="loop"),
        Rule("CYC304", "device-tensors-collected", "device tensors collected without graph in an outer container",
             default=False, observed="loop"),
        Rule("CYC305", "graph-accumulated-state",
             "instance state, or a container a module hook or a training-step function fills, grown with "
             "graph-attached values across calls",
             observed="state"),
        Rule("CYC401", "exception-or-frame-kept", "exception, traceback or frame kept beyond its handler"),
        Rule("CYC402", "cache-on-method", "functools cache on an instance method", observed="body"),
        Rule("CYC403", "recursive-closure", "nested function that refers to itself"),
        Rule("CYC404", "global-registry", "instance registered in a class-level or module-level container",
             observed="survivor"),
        Rule("CYC405", "class-in-function", "class statement inside a function body", default=False),
        Rule("CYC900", "runtime-only-cycle", "cycle holding tensors that only --confirm saw", default=False,
             observed="runtime"),
    )
}

DEFAULT_CODES = frozenset(code for code, rule in RULES.items() if rule.default)


@dataclass
class Finding:
    """One finding; line and column are 1-based."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    message: str
    confirmation: dict | None = None
    fixable: bool = False  # --fix has a safe rewrite for it
    cell: int | None = None  # in a notebook: the code cell (1-based), whose own lines line and column count

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code, self.message)

    def where(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
        return f"{self.path}:{'' if self.cell is None else f'cell {self.cell}:'}{self.line}:{self.column}"

    def shown_message(self) -> str:
        """The message with the ``--confirm`` verdict appended, for the line-based formats."""
        c = self.confirmation
        if not c:
            return self.message
        if c["status"] == "confirmed":
            return (f"{self.message} [confirmed: {human_bytes(c['bytes'])} of {c['device']} tensors held, "
                    f"seen {c['count']}x]")
        return f"{self.message} [{c['status'].replace('-', ' ')}]"

    def to_dict(self) -> dict:
        data = asdict(self)
        for optional in ("confirmation", "cell"):
            if data[optional] is None:
                data.pop(optional)
        return data


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


@dataclass
class FileWarning:
    """Something in a file that does not stop it being linted (a ``noqa`` naming no rule)."""

    path: str
    line: int
    message: str
    cell: int | None = None  # in a notebook, as in Finding

    def where(self) -> str:
        return f"{self.path}:{'' if self.cell is None else f'cell {self.cell}:'}{self.line}"


@dataclass
class FileError:
    """A file that could not be read or parsed."""

    path: str
    message: str

    def to_dict(self) -> dict:
        return {"path": self.path, "message": self.message}
