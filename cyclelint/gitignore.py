"""``.gitignore`` respected in folder walks, read by git itself (nested .gitignore files,
.git/info/exclude, the global excludes file; a tracked file is never ignored): asked once per
folder named on the command line. Files named on the command line are linted whatever git says;
outside a git work tree, or without git, nothing is ignored."""
from __future__ import annotations

import os


def ignored_under(top: str) -> set[str]:
    """The files and folders under ``top`` that git ignores, as ``os.path.join(top, ...)`` normalised."""
    import subprocess  # folder walks only: a run on named files (pre-commit) never pays for it

    try:
        proc = subprocess.run(["git", "-C", top, "ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                               "--directory"], capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return set()
    if proc.returncode != 0:
        return set()
    # "./" is ``top`` itself: a folder named on the command line is linted even if git ignores it
    return {os.path.normpath(os.path.join(top, os.fsdecode(entry))) for entry in proc.stdout.split(b"\0")
            if entry and entry != b"./"}
