"""File names that are not UTF-8 in every output, through the installed command: text, github and the
error lines carry the name's own bytes (as ls and grep print it), JSON its lossless \\udcXX escapes,
SARIF a percent-encoded URI; ``-o`` writes the same bytes as stdout; --diff headers name the file."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import tool

pytestmark = pytest.mark.lintpath

LEAKY_NAME = b"r\xe9sum\xe9.py"  # latin-1 bytes: no UTF-8 decoder reads them
BROKEN_NAME = b"b\xffd.py"
SOURCE = (Path(__file__).parent / "fix_cases" / "accumulate.in.py").read_bytes()


@pytest.fixture
def tree(tmp_path):
    root = os.fsencode(tmp_path)
    with open(os.path.join(root, LEAKY_NAME), "wb") as fh:
        fh.write(SOURCE)
    with open(os.path.join(root, BROKEN_NAME), "wb") as fh:
        fh.write(b"def oops(:\n")
    return tmp_path


def lint(*args, cwd):
    return subprocess.run([tool("cyclelint"), "--no-cache", *args], cwd=cwd, capture_output=True, timeout=120)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_every_format_carries_the_names(tree, fmt):
    proc = lint("--format", fmt, ".", cwd=tree)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    written = lint("--format", fmt, ".", "-o", "report.out", cwd=tree)
    assert written.returncode == 1 and (tree / "report.out").read_bytes() == proc.stdout
    out = proc.stdout
    if fmt == "text":
        assert out.count(b"./" + LEAKY_NAME + b":") == 7
        assert proc.stderr == b"cyclelint: error: ./" + BROKEN_NAME + b": syntax error at line 1, column 10: invalid " \
                               b"syntax\n"
    elif fmt == "github":
        assert out.count(b"::warning file=./" + LEAKY_NAME + b",") == 7
        assert b"::error file=./" + BROKEN_NAME + b",title=cyclelint::syntax error" in out
    elif fmt == "json":
        doc = json.loads(out)
        assert {os.fsencode(f["path"]) for f in doc["findings"]} == {b"./" + LEAKY_NAME}
        assert [os.fsencode(e["path"]) for e in doc["errors"]] == [b"./" + BROKEN_NAME]
    else:
        doc = json.loads(out)
        run = doc["runs"][0]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
        assert uris == {"r%E9sum%E9.py"}
        errors = run["invocations"][0]["toolExecutionNotifications"]
        assert [e["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for e in errors] == ["b%FFd.py"]


def test_diff_and_fix_of_such_a_file(tree):
    proc = lint("--diff", LEAKY_NAME, cwd=tree)  # the name as bytes in argv, as a shell passes it
    assert proc.returncode == 1
    assert proc.stdout.startswith(b"--- a/" + LEAKY_NAME + b"\n+++ b/" + LEAKY_NAME + b"\n")
    check = subprocess.run(["git", "apply", "--check", "-"], input=proc.stdout, cwd=tree, capture_output=True)
    assert check.returncode == 0, check.stderr
    fixed = lint("--fix", LEAKY_NAME, cwd=tree)
    assert fixed.stderr == b"Fixed 7 findings in 1 file.\n"
