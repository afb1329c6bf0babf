"""Content-hash result cache: a file whose bytes, path, rule selection and linter are unchanged is
not parsed again. Deleting ``.cyclelint_cache`` is always safe.

An entry is JSON (never pickle: anyone who can write the folder could otherwise run code inside
the linter), read back through the record's type hints (record_codec.py) and checked against the
linter that wrote it and the shape of its records. Anything bad, truncated, foreign or from another
version is a miss, and is replaced by the fresh result. Entries are written atomically, so
parallel runs can share the folder."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import __version__
from .files import read_source
from .record_codec import decode, encode, schema

CACHE_DIR = ".cyclelint_cache"
FORMAT = "cyclelint-cache-2"  # 2: fields at their default left out


def _linter_fingerprint() -> str:
    """Changes whenever the linter's own code does (not only on a release)."""
    h = hashlib.blake2b(__version__.encode(), digest_size=8)
    for src in sorted(Path(__file__).resolve().parent.rglob("*.py")):
        h.update(src.name.encode() + b"\0" + src.read_bytes())
    return h.hexdigest()


class Cache:
    def __init__(self, base: str, record: type):
        self.record = record
        self.stamp = {"format": FORMAT, "linter": _linter_fingerprint(), "schema": schema(record)}
        self.root = os.path.join(base, CACHE_DIR, f"{self.stamp['linter']}-{self.stamp['schema']}")
        self._ready = False

    @classmethod
    def open(cls, base: str) -> Cache:
        """The cache of the engine's per-file results under ``base``."""
        from .project.records import FileResult

        return cls(base, FileResult)

    @staticmethod
    def key(path: str, data: bytes, enabled: frozenset[str]) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(os.fsencode(path) + b"\0" + ",".join(sorted(enabled)).encode() + b"\0")
        h.update(data)
        return h.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key[2:] + ".json")

    def get(self, key: str):
        """The record stored under ``key``, or None."""
        try:
            entry = json.loads(read_source(self._file(key)))  # regular files only: a FIFO there cannot hang us
            if not isinstance(entry, dict) or {k: entry.get(k) for k in self.stamp} != self.stamp:
                return None
            if entry.get("key") != key:
                return None  # an entry copied from another file's name
            return decode(self.record, entry.get("result"))
        except (OSError, ValueError, RecursionError):  # JSON and shape errors are ValueErrors
            return None

    def put(self, key: str, result) -> None:
        target = self._file(key)
        try:
            text = json.dumps({**self.stamp, "key": key, "result": encode(result)})
        except (TypeError, ValueError):
            return  # a record the codec cannot write is simply not cached
        tmp = None
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
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(text)
            os.replace(tmp, target)
        except BaseException as exc:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            if not isinstance(exc, OSError):
                raise
            # a read-only tree just means no cache
