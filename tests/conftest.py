import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

# The property tests draw the same examples on every run and machine, so that a red CI run means a
# change of code, not a new draw. ``--hypothesis-profile=explore`` draws fresh ones: run it when
# changing the pre-filter or the rules, and turn what it finds into a named test.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("repeatable")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    """The console script installed beside this interpreter (what a user runs)."""
    path = BIN / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def run(args, cwd=None, env=None) -> subprocess.CompletedProcess:
    env = dict(env or os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(args, check=False, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def lint_tree(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """Writes ``files`` (name -> text) into ``tmp_path``, lints it as one project: (file name, line, code), sorted."""
    from cyclelint.api import lint_paths

    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    return sorted((Path(f.path).name, f.line, f.code) for f in findings)


def reports(source: str, code: str, path: str = "example.py") -> bool:
    """Whether one file's source, linted alone with the default rules, has a finding of ``code``."""
    from cyclelint.engine import lint_source
    from cyclelint.findings import DEFAULT_CODES

    return any(f.code == code for f in lint_source(source, path, DEFAULT_CODES).findings)


@pytest.fixture
def cyclelint():
    def call(*args, cwd=None):
        return run([tool("cyclelint"), *map(str, args)], cwd=cwd)
    return call
