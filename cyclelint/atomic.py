"""Writing to a path the user named (``-o``, ``--confirm-report``, a fixed source file) without harming
what is there: a regular file (or a new path) is replaced atomically, through a temporary file in the
same folder and a rename, so it is never half-written; anything else is written in place, because
replacing a FIFO, a device or a socket with a regular file breaks whoever reads it (``-o /dev/null``
as root would turn the machine's /dev/null into a file)."""
from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile

# /dev/stdout, /dev/fd/3, /proc/self/fd/1: a descriptor this process already holds
_DESCRIPTOR = re.compile(r"^/(?:dev/(?:std(?P<std>in|out|err)|fd/(?P<fd>\d+))|proc/(?P<pid>self|\d+)/fd/(?P<pfd>\d+))$")
_STD = {"in": 0, "out": 1, "err": 2}


def write_atomic(path: str, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path``. Raises OSError, ``EISDIR`` for a folder.

    A symbolic link is followed and its target replaced (the link stays); an existing file keeps its
    mode, and its owner where allowed; a new file gets the mode the umask gives, as with any tool."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    fd = _own_descriptor(path)
    if fd is not None:
        _write_all(fd, raw)
        return
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is None or stat.S_ISREG(st.st_mode):
        _replace(target, raw, st)
    elif stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    elif stat.S_ISSOCK(st.st_mode):
        _send(target, raw)
    else:  # FIFO, character or block device: whoever reads it gets the bytes, the node stays
        out = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
        try:
            _write_all(out, raw)
        finally:
            os.close(out)


def target_problem(path: str) -> str | None:
    """Why ``path`` cannot take a report, checked before the (possibly long) run; None when it may."""
    if _own_descriptor(path) is not None:
        return None
    target = os.path.realpath(path)
    if os.path.isdir(target):
        return os.strerror(errno.EISDIR)
    if not os.path.isdir(os.path.dirname(target)):
        return os.strerror(errno.ENOENT)
    return None


def _own_descriptor(path: str) -> int | None:
    """The descriptor number ``path`` names in this process. Opening it again would give a new file
    offset (and a socket cannot be opened at all), so it is written through the descriptor itself."""
    m = _DESCRIPTOR.match(path)
    if m is None or (m["pid"] not in (None, "self") and int(m["pid"]) != os.getpid()):
        return None
    fd = _STD[m["std"]] if m["std"] else int(m["fd"] or m["pfd"])
    if fd in (1, 2):
        (sys.stdout if fd == 1 else sys.stderr).flush()  # what was printed before comes first
    return fd


def _write_all(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        view = view[os.write(fd, view):]


def _send(path: str, raw: bytes) -> None:
    """A Unix socket is written by connecting to it (stream first, then datagram)."""
    import socket  # imported here, not at startup: only output to a Unix socket needs it

    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_UNIX, kind) as sock:
            try:
                sock.connect(path)
            except OSError as exc:
                if exc.errno == errno.EPROTOTYPE:
                    continue
                raise
            sock.sendall(raw)
            return
    raise OSError(errno.EPROTOTYPE, os.strerror(errno.EPROTOTYPE), path)


def _replace(path: str, raw: bytes, old: os.stat_result | None) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".cyclelint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())  # on disk before the rename makes it the file
        if old is None:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is as readable as any file
        else:
            os.chmod(tmp, old.st_mode & 0o7777)
            if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, old.st_uid, old.st_gid)
                except OSError:
                    pass  # only root may give a file away; the contents matter more than the owner
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it; set back at once (no thread of ours creates files)
    os.umask(mask)
    return mask
