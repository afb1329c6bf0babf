import os
import shutil
import subprocess
import sys
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


@pytest.fixture
def cyclelint():
    def call(*args, cwd=None):
        return run([tool("cyclelint"), *map(str, args)], cwd=cwd)
    return call
