"""Writes that never leave a half-written file: a temporary file in the same folder, then a rename."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, data: str | bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cyclelint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # the file keeps its permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
