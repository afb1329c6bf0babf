"""``cyclelint - --stdin-filename PATH``: what an editor or a pipe holds, judged as the file at PATH
(its configuration, per-file-ignores, exclude and noqa), through the installed command."""
import json
import subprocess

import pytest

from .conftest import FIXTURES, tool

pytestmark = pytest.mark.lintpath

LEAKY = (
    "import torch\n\n\nclass Model(torch.nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.me = self\n\n"
    "    def fit(self, loader, crit):\n        total = 0\n        for x, y in loader:\n"
    "            loss = crit(self(x), y)\n            loss.backward()\n            total += loss\n"
    "        return total\n"
)


def piped(text, *args, cwd):
    data = text if isinstance(text, bytes) else text.encode()
    return subprocess.run([tool("cyclelint"), "--no-cache", *args], input=data, cwd=cwd, capture_output=True,
                          timeout=600)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cyclelint]\nexclude = ["generated"]\nper-file-ignores = {"tests/*" = ["CYC2"]}\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text("# on disk: not what is linted\n")
    return tmp_path


def codes(proc):
    return [line.split()[1] for line in proc.stdout.decode().splitlines() if ": CYC" in line]


def test_stdin_is_judged_as_the_file_it_names(project):
    proc = piped(LEAKY, "-", "--stdin-filename", "pkg/model.py", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines()[0].startswith("pkg/model.py:7:9: CYC203 ")
    assert codes(proc) == ["CYC203", "CYC301"]
    # per-file-ignores, exclude and noqa of that path
    assert codes(piped(LEAKY, "-", "--stdin-filename", "tests/test_model.py", cwd=project)) == ["CYC301"]
    excluded = piped(LEAKY, "-", "--stdin-filename", "generated/model.py", cwd=project)
    assert excluded.returncode == 0 and excluded.stdout == b""
    quiet = LEAKY.replace("self.me = self", "self.me = self  # noqa: CYC203")
    assert codes(piped(quiet, "--stdin-filename", "pkg/model.py", cwd=project)) == ["CYC301"]
    # the configuration is found from the named file's folder, wherever the command runs
    elsewhere = piped(LEAKY, "-", "--stdin-filename", str(project / "tests" / "test_model.py"), cwd=project.parent)
    assert codes(elsewhere) == ["CYC301"]


def test_stdin_without_a_name_and_json(project):
    proc = piped(LEAKY, "-", "--format", "json", cwd=project)
    doc = json.loads(proc.stdout)
    assert {f["path"] for f in doc["findings"]} == {"-"} and len(doc["findings"]) == 2
    bad = piped("def f(:\n", "-", "--stdin-filename", "pkg/model.py", cwd=project)
    assert bad.returncode == 2 and b"cyclelint: error: pkg/model.py: syntax error at line 1" in bad.stderr


def test_fix_on_stdin_writes_the_fixed_text_to_stdout(project):
    proc = piped(LEAKY, "-", "--stdin-filename", "pkg/model.py", "--fix", cwd=project)
    (project / "expected.py").write_text(LEAKY)
    subprocess.run([tool("cyclelint"), "--no-cache", "--fix", "expected.py"], cwd=project, capture_output=True)
    assert proc.stdout == (project / "expected.py").read_bytes() != LEAKY.encode()
    assert proc.returncode == 1 and b"pkg/model.py:7:9: CYC203" in proc.stderr and b"CYC301" not in proc.stderr
    assert (project / "pkg" / "model.py").read_text() == "# on disk: not what is linted\n"
    diff = piped(LEAKY, "-", "--stdin-filename", "pkg/model.py", "--diff", cwd=project)
    assert diff.returncode == 1 and diff.stdout.startswith(b"--- a/pkg/model.py\n+++ b/pkg/model.py\n")
    clean = piped("x = 1\n", "-", "--fix", cwd=project)
    assert clean.returncode == 0 and clean.stdout == b"x = 1\n"


def test_a_notebook_on_stdin(project):
    proc = piped((FIXTURES / "notebooks" / "train.ipynb").read_bytes(), "-", "--stdin-filename", "nb/train.ipynb",
                 cwd=project)
    assert proc.returncode == 1 and b"nb/train.ipynb:cell 4:10:9: CYC301" in proc.stdout


def test_stdin_usage_errors(project):
    for args in (["-", "pkg"], ["-", "--add-noqa"]):
        proc = piped(LEAKY, *args, cwd=project)
        assert proc.returncode == 2 and b"stdin" in proc.stderr and b"Traceback" not in proc.stderr
