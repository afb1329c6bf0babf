"""The examples of each rule page (docs/rules/CYCnnn.md) are what the linter does: the "Example" block gets
that rule's finding, the "Use instead" block gets no finding at all (every rule switched on)."""
import re
from pathlib import Path

import pytest

from cyclelint.api import lint_paths
from cyclelint.findings import RULES

PAGES = Path(__file__).resolve().parents[1] / "docs" / "rules"
BLOCK = re.compile(r"^## (?P<title>Example|Use instead)\n+```python\n(?P<code>.*?)^```", re.M | re.S)
# CYC001 (unused noqa) and CYC900 (found only by --confirm) have no code example to lint.
WITHOUT_EXAMPLES = {"CYC001", "CYC900"}


def blocks(page: Path) -> dict[str, str]:
    return {m["title"]: m["code"] for m in BLOCK.finditer(page.read_text(encoding="utf-8"))}


def codes_of(source: str, path: Path) -> list[str]:
    """Linted as the CLI lints a file, with the project step that resolves constructors across classes."""
    path.write_text(source, encoding="utf-8")
    findings, errors = lint_paths([str(path)], select=list(RULES), jobs=1)
    assert errors == []
    return sorted(f.code for f in findings)


PAGED = sorted(p for p in PAGES.glob("CYC*.md") if p.stem not in WITHOUT_EXAMPLES)


def test_every_rule_has_a_page_with_both_examples():
    assert {p.stem for p in PAGES.glob("CYC*.md")} == set(RULES)
    for page in PAGED:
        assert set(blocks(page)) == {"Example", "Use instead"}, page.name


@pytest.mark.parametrize("page", PAGED, ids=lambda p: p.stem)
def test_example_is_flagged(page, tmp_path):
    assert page.stem in codes_of(blocks(page)["Example"], tmp_path / "example.py")


@pytest.mark.parametrize("page", PAGED, ids=lambda p: p.stem)
def test_use_instead_is_clean(page, tmp_path):
    assert codes_of(blocks(page)["Use instead"], tmp_path / "use_instead.py") == []
