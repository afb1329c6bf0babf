"""Content-hash result cache: a file whose bytes, path, rule selection and linter
are unchanged is not parsed again. Entries are written atomically, so parallel
runs can share the folder; deleting ``.cyclelint_cache`` is always safe."""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from . import __version__

CACHE_DIR = ".cyclelint_cache"


def _linter_fingerprint() -> str:
    """Changes whenever the linter's own code does (not only on a release)."""
    h = hashlib.blake2b(__version__.encode(), digest_size=8)
    for src in sorted(Path(__file__).resolve().parent.rglob("*.py")):
        st = src.stat()
        h.update(f"{src.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


class Cache:
    def __init__(self, root: str):
        self.root = root
        self._ready = False

    @classmethod
    def open(cls, base: str) -> Cache:
        return cls(os.path.join(base, CACHE_DIR, _linter_fingerprint()))

    @staticmethod
    def key(path: str, data: bytes, enabled: frozenset[str]) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(os.fsencode(path) + b"\0" + ",".join(sorted(enabled)).encode() + b"\0")
        h.update(data)
        return h.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key[2:] + ".pickle")

    def get(self, key: str):
        try:
            with open(self._file(key), "rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError):
            return None

    def put(self, key: str, result) -> None:
        target = self._file(key)
        try:
            if not self._ready:
                top = os.path.dirname(self.root)
                os.makedirs(top, exist_ok=True)
                marker = os.path.join(top, ".gitignore")
                if not os.path.exists(marker):
                    with open(marker, "w", encoding="utf-8") as fh:
                        fh.write("# created by cyclelint\n*\n")
                self._ready = True
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except OSError:
            pass  # a read-only tree just means no cache
