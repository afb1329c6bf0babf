"""``--fix`` and ``--diff`` through the installed command, on the ``tests/fix_cases`` pairs:
every rewrite, idempotence, encodings and line endings, and the files that must not be written."""
import difflib
import json
import os
import stat
from pathlib import Path

import pytest

from cyclelint.api import lint_paths
from cyclelint.fixes import plan_fixes, write_fix

pytestmark = pytest.mark.lintpath

CASES = Path(__file__).parent / "fix_cases"
PAIRS = sorted(p.name[: -len(".in.py")] for p in CASES.glob("*.in.py"))


def case(name: str, suffix: str) -> bytes:
    return (CASES / f"{name}.{suffix}.py").read_bytes()


@pytest.mark.parametrize("name", PAIRS)
def test_fix_rewrites_like_the_expected_file_and_is_idempotent(tmp_path, cyclelint, name):
    target = tmp_path / f"{name}.py"
    target.write_bytes(case(name, "in"))
    first = cyclelint("--no-cache", "--fix", target.name, cwd=tmp_path)
    assert target.read_bytes() == case(name, "out"), first.stdout + first.stderr
    assert "Fixed " in first.stderr and "Fixed 0 " not in first.stderr
    # everything fixable is gone from the report; what is left has no [*]
    assert "[*]" not in first.stdout
    second = cyclelint("--no-cache", "--fix", target.name, cwd=tmp_path)
    assert "Fixed 0 findings in 0 files." in second.stderr
    assert target.read_bytes() == case(name, "out")


@pytest.mark.parametrize("name", PAIRS)
def test_diff_prints_the_fix_and_changes_nothing(tmp_path, cyclelint, name):
    target = tmp_path / f"{name}.py"
    target.write_bytes(case(name, "in"))
    proc = cyclelint("--no-cache", "--diff", target.name, cwd=tmp_path)
    assert proc.returncode == 1
    assert target.read_bytes() == case(name, "in")
    expected = difflib.unified_diff(case(name, "in").decode().splitlines(True), case(name, "out").decode().splitlines(True),
                                    f"a/{name}.py", f"b/{name}.py")
    assert proc.stdout == "".join(expected)
    assert proc.stderr.startswith("Would fix ")


def test_text_output_marks_fixable_findings_and_counts_them(tmp_path, cyclelint):
    (tmp_path / "c.py").write_bytes(case("collect", "in"))
    proc = cyclelint("--no-cache", "c.py", cwd=tmp_path)
    lines = [line for line in proc.stdout.splitlines() if ": CYC" in line]
    marked = [line.split(":")[1] for line in lines if " CYC302 [*] " in line]
    assert len(lines) == 8 and marked == ["11", "14", "15", "16"]
    # a model's output (12, 13, 41) may be no tensor; extend(outs) (29) has nothing to detach in place
    unmarked = [line.split(":")[1] for line in lines if "[*]" not in line]
    assert unmarked == ["12", "13", "29", "41"]
    assert "[*] 4 fixable with --fix" in proc.stdout
    data = json.loads(cyclelint("--no-cache", "--format", "json", "c.py", cwd=tmp_path).stdout)
    assert sum(f["fixable"] for f in data["findings"]) == 4


@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_line_endings_and_bom_are_kept(tmp_path, cyclelint, newline):
    src = case("accumulate", "in").decode().replace("\n", newline)
    out = case("accumulate", "out").decode().replace("\n", newline)
    target = tmp_path / "a.py"
    target.write_bytes(b"\xef\xbb\xbf" + src.encode())
    cyclelint("--no-cache", "--fix", "a.py", cwd=tmp_path)
    assert target.read_bytes() == b"\xef\xbb\xbf" + out.encode()


def test_latin1_file_stays_latin1(tmp_path, cyclelint):
    header = "# -*- coding: latin-1 -*-\n# r\xe9sum\xe9 des pertes\n"
    target = tmp_path / "l.py"
    target.write_bytes((header + case("collect", "in").decode()).encode("latin-1"))
    proc = cyclelint("--no-cache", "--fix", "l.py", cwd=tmp_path)
    assert "Fixed 4 findings in 1 file." in proc.stderr
    assert target.read_bytes() == (header + case("collect", "out").decode()).encode("latin-1")


def test_unparsable_file_is_never_written(tmp_path, cyclelint):
    broken = tmp_path / "broken.py"
    broken.write_bytes(case("accumulate", "in") + b"\ndef oops(:\n")
    good = tmp_path / "good.py"
    good.write_bytes(case("accumulate", "in"))
    before = broken.stat().st_mtime_ns
    proc = cyclelint("--no-cache", "--fix", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert "broken.py: syntax error at line" in proc.stderr
    assert broken.read_bytes() == case("accumulate", "in") + b"\ndef oops(:\n"
    assert broken.stat().st_mtime_ns == before
    assert good.read_bytes() == case("accumulate", "out")


def test_file_changed_after_reading_is_skipped(tmp_path):
    target = tmp_path / "a.py"
    target.write_bytes(case("accumulate", "in"))
    findings, _ = lint_paths([str(target)])
    fixes, errors = plan_fixes(findings)
    assert len(fixes) == 1 and not errors
    edited = case("accumulate", "in") + b"# the user's edit, made while the fix was computed\n"
    target.write_bytes(edited)
    error = write_fix(fixes[0])
    assert error is not None and "changed" in error.message
    assert target.read_bytes() == edited


def test_fix_keeps_permissions_and_symlinks(tmp_path, cyclelint):
    real = tmp_path / "real.py"
    real.write_bytes(case("collect", "in"))
    os.chmod(real, 0o640)
    link = tmp_path / "link.py"
    link.symlink_to(real.name)
    cyclelint("--no-cache", "--fix", "link.py", cwd=tmp_path)
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert real.read_bytes() == case("collect", "out")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".cyclelint-")] == []


def test_fix_cannot_be_combined_with_confirm_or_diff(tmp_path, cyclelint):
    (tmp_path / "a.py").write_text("x = 1\n")
    assert cyclelint("--fix", "--diff", "a.py", cwd=tmp_path).returncode == 2
    proc = cyclelint("--fix", "--confirm", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and "--confirm cannot be combined" in proc.stderr
