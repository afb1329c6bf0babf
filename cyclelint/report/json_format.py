"""One JSON object: version, findings, errors (and, with ``--statistics``, the count per code)."""
from __future__ import annotations

import json
from collections.abc import Sequence

from .. import __version__
from ..findings import RULES, FileError, Finding
from . import statistics as rule_counts

OPTIONS = ("statistics",)


def render(findings: Sequence[Finding], errors: Sequence[FileError], statistics: bool = False) -> str:
    doc = {
        "version": __version__,
        "findings": [f.to_dict() for f in findings],
        "errors": [e.to_dict() for e in errors],
    }
    if statistics:
        doc["statistics"] = [{"code": code, "name": RULES[code].name, "count": n, "fixable": fixable}
                             for code, n, fixable in rule_counts(findings)]
    return json.dumps(doc, indent=2) + "\n"
