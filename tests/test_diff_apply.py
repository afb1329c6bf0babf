"""``--diff`` output applies: ``git apply --check`` and ``patch -p1 --dry-run`` accept it from the current
folder, and applying it gives byte for byte what ``--fix`` writes, for latin-1, CRLF, CR-only and
form-feed files, files in subfolders and files named by absolute paths. --fix keeps every such byte."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import tool

pytestmark = pytest.mark.lintpath

SOURCE = (Path(__file__).parent / "fix_cases" / "accumulate.in.py").read_text()
FILES = {
    "plain.py": SOURCE.encode(),
    "crlf.py": SOURCE.replace("\n", "\r\n").encode(),
    "cr_only.py": SOURCE.replace("\n", "\r").encode(),
    "form_feed.py": ("\x0c\n" + SOURCE.replace("\ndef tensor_total", "\n\x0cdef tensor_total")).encode(),
    "latin1.py": ("# -*- coding: latin-1 -*-\n# r\xe9sum\xe9 des pertes\n" + SOURCE.replace(
        "def in_place", "# d\xe9j\xe0 vu\ndef in_place")).encode("latin-1"),
    "pkg/sub/deep.py": SOURCE.encode(),
}


def lint(*args, cwd):
    return subprocess.run([tool("cyclelint"), "--no-cache", *map(str, args)], cwd=cwd, capture_output=True,
                          timeout=120)


def make_tree(root: Path) -> None:
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


def test_the_diff_applies_with_git_and_patch_and_equals_the_fix(tmp_path):
    tree, fixed = tmp_path / "tree", tmp_path / "fixed"
    make_tree(tree)
    diff = lint("--diff", ".", cwd=tree)
    assert diff.returncode == 1
    assert diff.stderr == b"Would fix 42 findings in 6 files.\n"
    headers = [line for line in diff.stdout.split(b"\n") if line.startswith((b"--- ", b"+++ "))]
    assert headers == [h for name in sorted(FILES) for h in (b"--- a/" + name.encode(), b"+++ b/" + name.encode())]
    for name, data in FILES.items():  # --diff changes nothing
        assert (tree / name).read_bytes() == data
    check = subprocess.run(["git", "apply", "--check", "-"], input=diff.stdout, cwd=tree, capture_output=True)
    assert check.returncode == 0, check.stderr
    dry = subprocess.run(["patch", "-p1", "--dry-run"], input=diff.stdout, cwd=tree, capture_output=True)
    assert dry.returncode == 0 and b"FAILED" not in dry.stdout, dry.stdout

    shutil.copytree(tree, fixed)
    assert lint("--fix", ".", cwd=fixed).stderr == b"Fixed 42 findings in 6 files.\n"
    applied = subprocess.run(["git", "apply", "-"], input=diff.stdout, cwd=tree, capture_output=True)
    assert applied.returncode == 0, applied.stderr
    for name in FILES:
        assert (tree / name).read_bytes() == (fixed / name).read_bytes(), name


def test_fix_keeps_line_endings_form_feeds_and_encoding(tmp_path):
    make_tree(tmp_path)
    lint("--fix", ".", cwd=tmp_path)
    cr_only = (tmp_path / "cr_only.py").read_bytes()
    assert b"\n" not in cr_only and cr_only.endswith(b"    return total\r")  # the last CR stays
    assert cr_only.count(b"\r") == FILES["cr_only.py"].count(b"\r")
    crlf = (tmp_path / "crlf.py").read_bytes()
    assert crlf.count(b"\r\n") == crlf.count(b"\n") == FILES["crlf.py"].count(b"\n")
    form_feed = (tmp_path / "form_feed.py").read_bytes()
    assert form_feed.startswith(b"\x0c\n") and b"\n\x0cdef tensor_total" in form_feed
    latin1 = (tmp_path / "latin1.py").read_bytes()
    assert b"r\xe9sum\xe9" in latin1 and b"d\xe9j\xe0 vu" in latin1
    # every file was rewritten line for line: the same lines, only the accumulations changed
    for name, data in FILES.items():
        now = (tmp_path / name).read_bytes()
        changed = [(a, b) for a, b in zip(data.splitlines(), now.splitlines()) if a != b]
        assert len(data.splitlines()) == len(now.splitlines()) and len(changed) == 7, name
        assert all(b".detach()" in b for _, b in changed), name


def test_paths_are_relative_to_the_current_folder(tmp_path):
    make_tree(tmp_path)
    absolute = lint("--diff", tmp_path / "plain.py", cwd=tmp_path / "pkg")
    assert absolute.stdout == b"" and absolute.stderr == (
        f"cyclelint: {tmp_path / 'plain.py'}: left out of --diff: outside the current folder, which the diff's "
        "paths are relative to\nWould fix 7 findings in 1 file (7 findings not shown).\n").encode()
    inside = lint("--diff", tmp_path / "pkg" / "sub" / "deep.py", "./plain.py", cwd=tmp_path)
    headers = [line for line in inside.stdout.split(b"\n") if line.startswith((b"--- ", b"+++ "))]
    assert headers == [b"--- a/plain.py", b"+++ b/plain.py", b"--- a/pkg/sub/deep.py", b"+++ b/pkg/sub/deep.py"]
    check = subprocess.run(["patch", "-p1", "--dry-run"], input=inside.stdout, cwd=tmp_path, capture_output=True)
    assert check.returncode == 0, check.stdout
    assert os.listdir(tmp_path / "pkg" / "sub") == ["deep.py"]
