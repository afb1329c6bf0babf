"""What a real repository holds besides good Python: each case gives at most one error line for
the file concerned, and the other files are still linted."""
import os

import pytest

from cyclelint.engine import run_jobs
from cyclelint.selection import enabled_codes

from .test_cli import LEAKY, findings, write

pytestmark = pytest.mark.lintpath


def errors(proc):
    return [line for line in proc.stderr.splitlines() if line.startswith("cyclelint: error: ")]


def test_fifo_named_py_is_an_error_not_a_hang(tmp_path, cyclelint):
    write(tmp_path, "ok.py", LEAKY)
    os.mkfifo(tmp_path / "pipe.py")
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 1 and len(findings(proc)) == 2
    assert errors(proc) == ["cyclelint: error: ./pipe.py: cannot read: not a regular file"]


def test_dangling_and_looping_links_named_py(tmp_path, cyclelint):
    write(tmp_path, "ok.py", LEAKY)
    os.symlink("gone.py", tmp_path / "dangling.py")
    os.symlink("loop.py", tmp_path / "loop.py")
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 1 and len(findings(proc)) == 2
    assert [e.split(": ")[2] for e in errors(proc)] == ["./dangling.py", "./loop.py"]
    assert all("cannot read: " in e for e in errors(proc))


def test_file_that_vanishes_before_it_is_read(tmp_path):
    """Discovery and reading are separate steps: a file deleted in between is one error."""
    path = write(tmp_path, "a.py", LEAKY)
    other = write(tmp_path, "b.py", LEAKY)
    jobs = [(str(path), enabled_codes(None)), (str(other), enabled_codes(None))]
    path.unlink()
    gone, kept = run_jobs(jobs, workers=1)
    assert gone.error == "cannot read: No such file or directory" and not gone.findings
    assert kept.error is None and len(kept.findings) == 2


def test_folder_named_like_a_module_is_walked(tmp_path, cyclelint):
    write(tmp_path, "odd.py/inner.py", LEAKY)
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 1 and len(findings(proc)) == 2 and not errors(proc)


@pytest.mark.parametrize("prefix, newline", [(b"", b"\r\n"), (b"\xef\xbb\xbf", b"\n"), (b"\xef\xbb\xbf", b"\r\n")])
def test_bom_and_crlf_give_the_same_findings(tmp_path, cyclelint, prefix, newline):
    write(tmp_path, "plain.py", LEAKY)
    write(tmp_path, "odd.py", prefix + LEAKY.encode().replace(b"\n", newline))
    proc = cyclelint("--no-cache", "--format", "json", ".", cwd=tmp_path)
    import json

    rows = json.loads(proc.stdout)["findings"]
    where = {p: [(f["line"], f["column"], f["end_line"], f["end_column"], f["code"]) for f in rows if f["path"].endswith(p)]
             for p in ("plain.py", "odd.py")}
    assert where["odd.py"] == where["plain.py"] and len(where["odd.py"]) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists folders whatever their permissions")
def test_unlistable_folder_is_reported(tmp_path, cyclelint):
    write(tmp_path, "ok.py", LEAKY)
    write(tmp_path, "closed/a.py", LEAKY)
    (tmp_path / "closed").chmod(0)
    try:
        proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    finally:
        (tmp_path / "closed").chmod(0o755)
    assert proc.returncode == 1 and "closed: cannot list folder" in proc.stderr


def test_many_classes_of_one_name_resolve_quickly(tmp_path, cyclelint):
    """Constructor calls are resolved through every class of a name: each class is searched once,
    not once per path through the bases (which never ended on CPython's standard library)."""
    for i in range(40):
        write(tmp_path, f"m{i}.py", "class Base(Mixin):\n    pass\n\nclass Mixin(Base):\n    pass\n")
    write(tmp_path, "owner.py", "class Owner:\n    def __init__(self):\n        self.part = Base(self)\n")
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
