"""The page of each rule (docs/rules/CYCnnn.md), shipped inside the wheel as cyclelint/rule_pages."""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
_PLACES = (_HERE / "rule_pages", _HERE.parent / "docs" / "rules")


def rule_page(code: str) -> str | None:
    for place in _PLACES:
        page = place / f"{code.upper()}.md"
        if page.is_file():
            return page.read_text(encoding="utf-8")
    return None
