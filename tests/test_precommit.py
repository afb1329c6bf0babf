"""The real pre-commit, installing this repository's hook into a throw-away git repository.

pre-commit builds the hook's environment from the package registry: deselect with
``-m 'not network'`` where it cannot be reached.
"""
import os

import pytest

from .conftest import FIXTURES, ROOT, run, tool

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if not (ROOT / ".git").exists():
        pytest.skip("the project is not a git checkout")
    path = tmp_path_factory.mktemp("precommit-repo")
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        assert run(["git", *args], cwd=path).returncode == 0
    (path / "leaky.py").write_text("class A:\n    def __init__(self):\n        self.me = self\n")
    (path / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    (path / "notes.txt").write_text("not python\n")
    (path / "train.ipynb").write_bytes((FIXTURES / "notebooks" / "train.ipynb").read_bytes())
    (path / "pkg").mkdir()
    (path / "pkg" / "child.py").write_text("class Child:\n    def __init__(self, owner):\n        self.owner = owner\n")
    (path / "pkg" / "model.py").write_text(
        "from .child import Child\n\n\nclass Model:\n    def __init__(self):\n        self.child = Child(self)\n")
    assert run(["git", "add", "."], cwd=path).returncode == 0
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One hook environment for the module's runs (pre-commit builds it from the registry once)."""
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(repo, *files, home):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home))
    return run([tool("pre-commit"), "try-repo", str(ROOT), "cyclelint", "--files", *files], cwd=repo, env=env)


def test_precommit_hook(repo, home):
    leaky = try_repo(repo, "leaky.py", home=home)
    assert leaky.returncode == 1, leaky.stdout + leaky.stderr
    assert "leaky.py:3:9: CYC203" in leaky.stdout
    clean = try_repo(repo, "clean.py", home=home)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    no_python = try_repo(repo, "notes.txt", home=home)
    assert no_python.returncode == 0, no_python.stdout + no_python.stderr
    assert "(no files to check)" in no_python.stdout


def test_precommit_hook_on_a_notebook(repo, home):
    proc = try_repo(repo, "train.ipynb", home=home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "train.ipynb:cell 4:10:9: CYC301" in proc.stdout and "train.ipynb:cell 6:3:9: CYC203" in proc.stdout


def test_precommit_hook_on_one_staged_file_judges_it_with_its_project(repo, home):
    """Only pkg/model.py is handed to the hook; Child, which keeps its owner, is in pkg/child.py."""
    proc = try_repo(repo, "pkg/model.py", home=home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pkg/model.py:6:9: CYC202" in proc.stdout
