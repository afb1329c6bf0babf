"""The shared labelled cases, scored with the project's scorer (skipped without ../shared)."""
import re
import sys

import pytest

from .conftest import ROOT, SHARED, run, tool

pytestmark = pytest.mark.lintpath

SCORE = SHARED / "eval" / "score.py"


@pytest.mark.skipif(not SCORE.exists(), reason="../shared/eval is not beside the project")
def test_shared_cases_score():
    proc = run([sys.executable, str(SCORE), "--cmd", tool("cyclelint")], cwd=ROOT)
    m = re.search(r"score: recall=([\d.]+) precision=([\d.]+)", proc.stdout)
    assert m, proc.stdout + proc.stderr
    assert float(m.group(1)) >= 0.9 and float(m.group(2)) >= 0.9, proc.stdout
