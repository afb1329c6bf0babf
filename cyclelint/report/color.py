"""Colour for the text report: on a terminal unless NO_COLOR (https://no-color.org) is set or the
terminal is dumb; ``--color=always|never`` decides instead."""
from __future__ import annotations

import os

BOLD, RED, CYAN, RESET = "\033[1m", "\033[31m", "\033[36m", "\033[0m"


def use_color(mode: str, stream) -> bool:
    """``stream``: where the report goes (None for a file named with -o)."""
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb" or stream is None:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, *styles: str) -> str:
    return "".join(styles) + text + RESET
