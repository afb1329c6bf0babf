"""Released packages from the package registry, downloaded with pip and unpacked once into the data folder.

Layout: ``DATA/<name>-<version>/`` holds the unpacked wheel; ``DATA/<name>-<version>-sdist/`` the contents of
the sdist's top folder (one release can be needed both ways: a library from its wheel, its examples from its
sdist). A folder appears only when complete: it is unpacked beside its final name and renamed into place.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

DATA_ENV = "CYCLELINT_BENCH_DATA"


class FetchError(Exception):
    """A release that could not be downloaded or unpacked (one line, shown to the user)."""


@dataclass(frozen=True)
class Release:
    """One release to fetch. A package with native code has wheels per platform and Python, all with the same
    Python sources: ``platforms`` (any of them) and ``python_versions`` (tried in turn) pick one of them."""

    name: str
    version: str
    source: str = "wheel"  # "wheel" or "sdist"
    platforms: tuple[str, ...] = ()
    python_versions: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}" + ("-sdist" if self.source == "sdist" else "")


def default_data(repo_root: Path) -> Path:
    return Path(os.environ.get(DATA_ENV) or repo_root / "bench-data")


def fetch(release: Release, data: Path) -> Path:
    """The unpacked release under ``data``, downloaded first when missing."""
    dest = data / release.folder
    if dest.is_dir():
        return dest
    data.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=data, prefix=f".{release.folder}.") as tmp:
        archive = _download(release, Path(tmp) / "download")
        unpacked = Path(tmp) / "unpacked"
        _unpack(archive, unpacked)
        top = _sdist_top(unpacked) if release.source == "sdist" else unpacked
        try:
            top.rename(dest)
        except OSError:  # another run unpacked it meanwhile
            if not dest.is_dir():
                raise
    return dest


def _download(release: Release, where: Path) -> Path:
    """pip downloads the archive; the release is only read, never installed, so its Python requirement is
    ignored. Each way of asking is tried in turn: per Python version for a wheel; for an sdist, which pip builds
    to read its metadata, in an isolated build environment and then (old setup.py files that import what they
    build with) in this one."""
    base = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--ignore-requires-python", "-d", str(where)]
    if release.source == "sdist":
        tries = [["--no-binary=:all:"], ["--no-binary=:all:", "--no-build-isolation"]]
    else:
        platforms = [arg for p in release.platforms for arg in ("--platform", p)]
        tries = [["--only-binary=:all:", *platforms, *(["--python-version", v] if v else [])]
                 for v in release.python_versions or [None]]
    why = ""
    for args in tries:
        proc = subprocess.run(base + args + [release.spec], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              check=False)
        files = [f for f in where.iterdir() if f.name.endswith((".tar.gz", ".zip", ".whl"))] if where.is_dir() else []
        if proc.returncode == 0 and len(files) == 1:
            return files[0]
        lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR")] or lines[-1:] or [f"pip exited {proc.returncode}"]
        why = why or errors[0]
    raise FetchError(f"cannot download {release.source} {release.spec}: {why}")


def _unpack(archive: Path, dest: Path) -> None:
    try:
        if archive.name.endswith(".tar.gz"):
            with tarfile.open(archive) as tf:
                tf.extractall(dest, filter="data")  # refuses absolute paths, links out of dest
        else:
            with zipfile.ZipFile(archive) as zf:
                _check_zip_names(zf, archive)
                zf.extractall(dest)
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise FetchError(f"cannot unpack {archive.name}: {exc}") from exc


def _check_zip_names(zf: zipfile.ZipFile, archive: Path) -> None:
    for name in zf.namelist():
        if name.startswith("/") or ".." in Path(name).parts:
            raise FetchError(f"cannot unpack {archive.name}: unsafe member {name}")


def _sdist_top(unpacked: Path) -> Path:
    """An sdist holds one top folder, ``<name>-<version>/``."""
    entries = list(unpacked.iterdir())
    if len(entries) != 1 or not entries[0].is_dir():
        raise FetchError(f"unexpected sdist layout: {sorted(e.name for e in entries)}")
    return entries[0]

