"""One JSON object: version, findings, errors."""
from __future__ import annotations

import json
from collections.abc import Sequence

from .. import __version__
from ..findings import FileError, Finding


def render(findings: Sequence[Finding], errors: Sequence[FileError]) -> str:
    doc = {
        "version": __version__,
        "findings": [f.to_dict() for f in findings],
        "errors": [e.to_dict() for e in errors],
    }
    return json.dumps(doc, indent=2) + "\n"
