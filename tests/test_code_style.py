"""The project's own code passes the ruff rule set chosen in pyproject.toml (pinned in the test extra), in
modules of a size one can read."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_rule_set_is_clean():
    ruff = Path(sys.executable).parent / "ruff"
    proc = subprocess.run([str(ruff), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_module_is_over_about_400_lines():
    """A module that grows past this holds more than one job: split it by job before adding more."""
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in (ROOT / "cyclelint").rglob("*.py")}
    assert {path: n for path, n in sizes.items() if n > 410} == {}
