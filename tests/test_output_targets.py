"""``-o`` through the installed command: what is at the path decides how it is written. Regular files
and new paths are replaced atomically (new ones with the umask's mode), a link's target is replaced,
FIFOs, devices, sockets and /dev/stdout are written in place, a folder is one error line."""
import os
import socket
import stat
import subprocess
import sys
import threading

import pytest

from .conftest import tool
from .test_cli import LEAKY, write


def lint(*args, cwd, umask=None, stdout=subprocess.PIPE):
    return subprocess.run([tool("cyclelint"), "--no-cache", *map(str, args)], cwd=cwd, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=120, preexec_fn=(lambda: os.umask(umask)) if umask else None)


@pytest.fixture
def leaky(tmp_path):
    write(tmp_path, "a.py", LEAKY)
    expected = lint("a.py", cwd=tmp_path).stdout
    assert b"a.py:4:9: CYC101" in expected
    return tmp_path, expected


def fifo_reader(tmp, name):
    """A FIFO and a thread that reads it to the end, as a consumer of the report would."""
    fifo = tmp / name
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    return fifo, reader, got


def leftovers(folder):
    return [p for p in os.listdir(folder) if p.startswith(".cyclelint-")]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_report_gets_the_mode_the_umask_gives(leaky, umask, mode):
    tmp, expected = leaky
    proc = lint("a.py", "-o", "report.txt", cwd=tmp, umask=umask)
    assert proc.returncode == 1 and proc.stdout == b"" and proc.stderr == b""
    assert (tmp / "report.txt").read_bytes() == expected
    assert stat.S_IMODE((tmp / "report.txt").stat().st_mode) == mode
    assert leftovers(tmp) == []


def test_an_existing_report_is_replaced_whole_and_keeps_its_mode(leaky):
    tmp, expected = leaky
    old = tmp / "report.txt"
    old.write_bytes(b"x" * 100_000)
    os.chmod(old, 0o604)
    assert lint("a.py", "-o", old.name, cwd=tmp).returncode == 1
    assert old.read_bytes() == expected and stat.S_IMODE(old.stat().st_mode) == 0o604


def test_a_link_is_followed_and_its_target_replaced(leaky):
    tmp, expected = leaky
    (tmp / "reports").mkdir()
    (tmp / "reports" / "real.txt").write_text("old report\n")
    (tmp / "latest.txt").symlink_to("reports/real.txt")
    (tmp / "dangling.txt").symlink_to("reports/new.txt")
    assert lint("a.py", "-o", "latest.txt", cwd=tmp).returncode == 1
    assert lint("a.py", "-o", "dangling.txt", cwd=tmp).returncode == 1
    assert os.readlink(tmp / "latest.txt") == "reports/real.txt"
    assert (tmp / "reports" / "real.txt").read_bytes() == expected
    assert os.readlink(tmp / "dangling.txt") == "reports/new.txt"
    assert (tmp / "reports" / "new.txt").read_bytes() == expected


def test_a_fifo_is_written_in_place_for_its_reader(leaky):
    tmp, expected = leaky
    fifo, reader, got = fifo_reader(tmp, "pipe")
    proc = lint("a.py", "-o", fifo, cwd=tmp)
    reader.join(60)
    assert proc.returncode == 1 and proc.stderr == b""
    assert got == [expected]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a file that took its place


def test_a_character_device_is_written_in_place(leaky):
    tmp, _ = leaky
    if os.geteuid() != 0:
        pytest.skip("only root may make a device node (mknod)")
    null = tmp / "null"  # the machine's /dev/null device, as a node of our own: the real one is never at risk
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    proc = lint("a.py", "-o", null, cwd=tmp)
    assert proc.returncode == 1 and proc.stderr == b""
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def test_a_unix_socket_receives_the_report(leaky):
    tmp, expected = leaky
    path = tmp / "report.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    got = []

    def serve():
        conn, _ = server.accept()
        with conn:
            chunks = iter(lambda: conn.recv(65536), b"")
            got.append(b"".join(chunks))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    proc = lint("a.py", "-o", path, cwd=tmp)
    thread.join(60)
    server.close()
    assert proc.returncode == 1 and proc.stderr == b""
    assert got == [expected] and stat.S_ISSOCK(os.lstat(path).st_mode)


def test_dev_stdout_is_the_descriptor_cyclelint_was_given(leaky):
    tmp, expected = leaky
    piped = lint("a.py", "-o", "/dev/stdout", cwd=tmp)
    assert piped.returncode == 1 and piped.stdout == expected
    out = tmp / "captured.txt"
    with open(out, "wb") as fh:
        fh.write(b"written before cyclelint ran\n")
        fh.flush()
        inode = os.fstat(fh.fileno()).st_ino
        proc = lint("a.py", "-o", "/dev/stdout", cwd=tmp, stdout=fh)
    assert proc.returncode == 1
    # the shell's file itself, at its offset: neither replaced by a new file nor truncated
    assert out.stat().st_ino == inode
    assert out.read_bytes() == b"written before cyclelint ran\n" + expected


def test_a_folder_or_a_missing_folder_is_one_error_before_any_linting(leaky):
    tmp, _ = leaky
    (tmp / "out").mkdir()
    (tmp / "out" / "keep.txt").write_text("mine\n")
    proc = lint("a.py", "-o", "out", cwd=tmp)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr == b"cyclelint: error: cannot write out: Is a directory\n"
    assert os.listdir(tmp / "out") == ["keep.txt"] and leftovers(tmp) == []
    proc = lint("a.py", "-o", "no/such/report.txt", cwd=tmp)
    assert proc.returncode == 2
    assert proc.stderr == b"cyclelint: error: cannot write no/such/report.txt: No such file or directory\n"
    # --confirm-report is checked the same way, before the command would run
    proc = lint("a.py", "--confirm", "--confirm-report", "out", "--", "false", cwd=tmp)
    assert proc.returncode == 2 and proc.stderr == b"cyclelint: error: cannot write out: Is a directory\n"


def test_the_confirm_report_is_written_the_same_way(leaky):
    tmp, _ = leaky
    fifo, reader, got = fifo_reader(tmp, "page")
    proc = lint("a.py", "--confirm", "--confirm-report", fifo, "--", sys.executable, "-c", "pass", cwd=tmp)
    reader.join(60)
    assert proc.returncode == 1, proc.stderr
    assert len(got) == 1 and got[0].startswith(b"<!DOCTYPE html>") and got[0].rstrip().endswith(b"</html>")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
