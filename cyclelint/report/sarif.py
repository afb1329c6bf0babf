"""SARIF 2.1.0: one run, every rule described in tool.driver, one result per finding."""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..findings import RULES, FileError, Finding
from ..rule_docs import rule_page


def _uri(path: str) -> str:
    """Percent-encoded bytes, so a file name that is not UTF-8 keeps its own bytes."""
    rel = os.path.relpath(os.path.abspath(path))
    return quote(os.fsencode(Path(rel).as_posix()))


def _location(path: str, f: Finding | None = None) -> dict:
    loc: dict = {"artifactLocation": {"uri": _uri(path), "uriBaseId": "SRCROOT"}}
    if f is not None:
        loc["region"] = {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line, "endColumn": f.end_column}
    return {"physicalLocation": loc}


def render(findings: Sequence[Finding], errors: Sequence[FileError]) -> str:
    codes = sorted(RULES)
    index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        rule = RULES[code]
        page = rule_page(code)
        rules.append({
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "help": {"text": rule.summary, "markdown": page or rule.summary},
            "defaultConfiguration": {"level": "warning", "enabled": rule.default},
            "properties": {"tags": ["memory", "pytorch"]},
        })
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "warning",
            "message": {"text": f.message},
            "locations": [_location(f.path, f)],
        }
        properties = {"confirmation": f.confirmation, "cell": f.cell}  # a notebook's lines are its cell's
        if any(v is not None for v in properties.values()):
            result["properties"] = {k: v for k, v in properties.items() if v is not None}
        results.append(result)
    run = {
        "tool": {"driver": {"name": "cyclelint", "version": __version__, "semanticVersion": __version__, "rules": rules}},
        "originalUriBaseIds": {"SRCROOT": {"uri": Path(os.getcwd()).as_uri() + "/"}},
        "results": results,
        "invocations": [{
            "executionSuccessful": not errors,
            "toolExecutionNotifications": [
                {"level": "error", "message": {"text": e.message}, "locations": [_location(e.path)]} for e in errors
            ],
        }],
    }
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2) + "\n"
