"""Every fixture carries its expected findings (``# expect: CODE`` on the flagged line);
one parametrized test checks them all with every rule switched on."""
import re
import sys
from pathlib import Path

import pytest

from cyclelint.api import lint_paths
from cyclelint.findings import RULES

from .conftest import FIXTURES, run

EXPECT = re.compile(r"#\s*expect:\s*((?:CYC\d{3}[,\s]*)+)")
CASES = sorted(p for p in FIXTURES.rglob("*.py"))


def expected(path):
    out = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, code) for code in re.findall(r"CYC\d{3}", m.group(1))}
    return out


# Linted as one tree: their findings need evidence from the other files of the folder.
PROJECTS = {FIXTURES / "cyc3" / "crossfile", FIXTURES / "cyc3" / "imported", FIXTURES / "cyc4" / "crossfile"}


@pytest.mark.lintpath
@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_findings(path):
    target = path.parent if path.parent in PROJECTS else path
    findings, errors = lint_paths([str(target)], select=list(RULES), jobs=1)
    assert errors == []
    assert {(f.line, f.code) for f in findings if Path(f.path) == path} == expected(path)


@pytest.mark.lintpath
@pytest.mark.parametrize("project", sorted(PROJECTS), ids=lambda p: p.name)
def test_cross_file_findings_need_the_callers(project, tmp_path):
    """The findings above come from the other files: a file alone outside any project (no
    pyproject.toml or .git above it) has no evidence; in its project (this repository), a file
    named alone is judged as the folder's run judges it."""
    tree, _ = lint_paths([str(project)], select=list(RULES), jobs=1)
    assert tree
    for path in project.glob("*.py"):
        alone = tmp_path / path.name
        alone.write_bytes(path.read_bytes())
        assert lint_paths([str(alone)], select=list(RULES), jobs=1)[0] == []
        findings, _ = lint_paths([str(path)], select=list(RULES), jobs=1)
        assert findings == [f for f in tree if f.path == str(path)]


@pytest.mark.lintpath
def test_every_rule_has_a_leaky_fixture():
    covered = {code for p in CASES for _, code in expected(p)}
    assert covered == set(RULES) - {"CYC900"}  # the runtime-only code has its --confirm test


@pytest.mark.lintpath
def test_clean_fixtures_are_clean():
    clean = [p for p in CASES if p.name.endswith("_clean.py")]
    assert len(clean) >= 8
    assert all(not expected(p) for p in clean)


@pytest.mark.parametrize("path", [p for p in CASES if not p.name.startswith("_")], ids=lambda p: p.name)
def test_fixture_runs(path):
    """Fixtures are real programs: each one runs to completion with real torch."""
    pytest.importorskip("torch")
    proc = run([sys.executable, path.name], cwd=path.parent)
    assert proc.returncode == (1 if path.name == "raises.py" else 0), proc.stderr[-2000:]
