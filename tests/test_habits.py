"""What users expect of a linter's command line: .gitignore respected, -q, colour on a terminal,
--statistics in JSON, the rule command, --exit-non-zero-on-fix, a folder named like a subcommand."""
import json
import os
import pty
import subprocess
import textwrap

import pytest

from .conftest import run, tool

pytestmark = pytest.mark.lintpath

LEAKY = "class A:\n    def __init__(self):\n        self.me = self\n"
FIXABLE = textwrap.dedent(
    """\
    import torch
    def fit(model, loader):
        total = torch.zeros(())
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            total += loss
        return total
    """)


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def linted(proc):
    return sorted({line.split(":")[0] for line in proc.stdout.splitlines() if ": CYC" in line})


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_gitignore_is_respected_in_folders(tmp_path, cyclelint):
    for rel in ("src/a.py", "src/scratch.py", "data/dump.py", "wandb/run1/files/code.py", "gen/model.gen.py",
                "gen/keep.gen.py", "gen/tracked.gen.py"):
        write(tmp_path, rel, LEAKY)
    write(tmp_path, ".gitignore", "data/\nwandb/\n*.gen.py\n!keep.gen.py\n")
    write(tmp_path, "src/.gitignore", "scratch.py\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-f", "gen/tracked.gen.py")  # a tracked file is never ignored
    expected = ["./gen/keep.gen.py", "./gen/tracked.gen.py", "./src/a.py"]
    assert linted(cyclelint("--no-cache", ".", cwd=tmp_path)) == expected
    assert linted(cyclelint("--no-cache", "src", cwd=tmp_path)) == ["src/a.py"]
    # named on the command line, a file is linted whatever git says
    assert linted(cyclelint("--no-cache", "data/dump.py", cwd=tmp_path)) == ["data/dump.py"]
    everything = linted(cyclelint("--no-cache", "--no-respect-gitignore", ".", cwd=tmp_path))
    assert len(everything) == 7 and "./wandb/run1/files/code.py" in everything


def test_outside_git_nothing_is_ignored(tmp_path, cyclelint):
    write(tmp_path, ".gitignore", "*.py\n")
    write(tmp_path, "a.py", LEAKY)
    assert linted(cyclelint("--no-cache", ".", cwd=tmp_path)) == ["./a.py"]


def test_quiet(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("--no-cache", "-q", "a.py", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.splitlines() == [line for line in proc.stdout.splitlines()
                                                                 if line.startswith("a.py:3:9: CYC203 ")]
    assert len(proc.stdout.splitlines()) == 1
    write(tmp_path, "fit.py", FIXABLE)
    fixed = cyclelint("--no-cache", "--quiet", "--fix", "fit.py", cwd=tmp_path)
    assert fixed.returncode == 0 and fixed.stdout == "" and fixed.stderr == ""


def on_a_terminal(args, cwd, **env):
    """Run the installed command with its stdout on a pseudo-terminal; what it wrote there."""
    main, child = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    proc = subprocess.run([tool("cyclelint"), *args], cwd=cwd, stdout=child, stderr=subprocess.PIPE,
                          env={**environ, "TERM": "xterm", **env}, timeout=600)
    os.close(child)
    out = b""
    try:
        while chunk := os.read(main, 65536):
            out += chunk
    except OSError:  # the terminal is closed once everything is read
        pass
    os.close(main)
    assert proc.returncode == 1, proc.stderr
    return out.decode()


def test_colour_on_a_terminal_unless_no_color(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY)
    red_code = "\x1b[1m\x1b[31mCYC203\x1b[0m"
    assert red_code in on_a_terminal(["--no-cache", "a.py"], tmp_path)
    assert "\x1b[" not in on_a_terminal(["--no-cache", "a.py"], tmp_path, NO_COLOR="1")
    assert "\x1b[" not in on_a_terminal(["--no-cache", "--color=never", "a.py"], tmp_path)
    assert "\x1b[" not in cyclelint("--no-cache", "a.py", cwd=tmp_path).stdout  # a pipe: no colour
    forced = run([tool("cyclelint"), "--no-cache", "--color=always", "a.py"], cwd=tmp_path,
                 env={**os.environ, "NO_COLOR": "1"})  # the flag wins over the environment
    assert red_code in forced.stdout
    assert "\x1b[" not in on_a_terminal(["--no-cache", "-o", "report.txt", "a.py"], tmp_path)
    assert "\x1b[" not in (tmp_path / "report.txt").read_text()


def test_statistics_in_json(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY + "        self.me2 = self\n")
    write(tmp_path, "fit.py", FIXABLE)
    doc = json.loads(cyclelint("--no-cache", "--format", "json", "--statistics", ".", cwd=tmp_path).stdout)
    assert doc["statistics"] == [{"code": "CYC203", "name": "self-reference", "count": 2, "fixable": 0},
                                 {"code": "CYC301", "name": "graph-accumulated", "count": 1, "fixable": 1}]
    assert "statistics" not in json.loads(cyclelint("--no-cache", "--format", "json", ".", cwd=tmp_path).stdout)


def test_rule_command_prefixes_all_and_help(cyclelint):
    family = cyclelint("rule", "cyc3")
    assert family.returncode == 0
    assert [line for line in family.stdout.splitlines() if line.startswith("# CYC")] == [
        "# CYC301 graph-accumulated", "# CYC302 graph-collected", "# CYC303 graph-concatenated",
        "# CYC304 device-tensors-collected", "# CYC305 graph-accumulated-state"]
    every = cyclelint("rule", "--all")
    assert every.returncode == 0 and every.stdout.count("\n# CYC") + every.stdout.startswith("# CYC") == 19
    helped = cyclelint("rule", "--help")
    assert helped.returncode == 0 and "--all" in helped.stdout and "cyclelint ./rule" in helped.stdout
    for args in ([], ["CYC7"], ["--all", "CYC1"]):
        bad = cyclelint("rule", *args)
        assert bad.returncode == 2 and bad.stdout == "" and "Traceback" not in bad.stderr


def test_exit_non_zero_on_fix(tmp_path, cyclelint):
    write(tmp_path, "fit.py", FIXABLE)
    assert cyclelint("--no-cache", "--fix", "fit.py", cwd=tmp_path).returncode == 0
    write(tmp_path, "fit.py", FIXABLE)
    proc = cyclelint("--no-cache", "--fix", "--exit-non-zero-on-fix", "fit.py", cwd=tmp_path)
    assert proc.returncode == 1 and "Fixed 1 finding in 1 file." in proc.stderr and proc.stdout == ""
    again = cyclelint("--no-cache", "--fix", "--exit-non-zero-on-fix", "fit.py", cwd=tmp_path)
    assert again.returncode == 0


def test_folders_named_like_subcommands(tmp_path, cyclelint):
    write(tmp_path, "rule/a.py", LEAKY)
    write(tmp_path, "server/b.py", LEAKY)
    assert linted(cyclelint("--no-cache", "./rule", "./server", cwd=tmp_path)) == ["./rule/a.py", "./server/b.py"]
    assert "write ./rule or ./server" in " ".join(cyclelint("--help", cwd=tmp_path).stdout.split())
