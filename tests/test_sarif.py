"""SARIF output validated against the official 2.1.0 schema from ../shared (skipped where absent)."""
import json

import pytest

from cyclelint.findings import RULES

from .conftest import FIXTURES, SHARED

pytestmark = pytest.mark.lintpath

SCHEMA = SHARED / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator():
    if not SCHEMA.exists():
        pytest.skip("../shared/data/sarif-schema-2.1.0.json is not beside the project")
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def test_sarif_is_valid_and_complete(tmp_path, cyclelint, validator):
    (tmp_path / "broken.py").write_text("def f(:\n")
    proc = cyclelint("--format", "sarif", str(FIXTURES / "cyc1"), "broken.py", cwd=tmp_path)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    errors = sorted(validator.iter_errors(doc), key=str)
    assert not errors, [e.message for e in errors[:5]]
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    assert all(r["shortDescription"]["text"] and "## What it does" in r["help"]["markdown"] for r in rules)
    results = run["results"]
    assert results and all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1 and region["startColumn"] >= 1
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert run["invocations"][0]["executionSuccessful"] is False and "syntax error" in notes[0]["message"]["text"]


def test_empty_sarif_is_valid(tmp_path, cyclelint, validator):
    (tmp_path / "ok.py").write_text("x = 1\n")
    doc = json.loads(cyclelint("--format", "sarif", "ok.py", cwd=tmp_path).stdout)
    assert not list(validator.iter_errors(doc))
    assert doc["runs"][0]["results"] == []
