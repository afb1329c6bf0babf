"""A local container annotated with the types of its items, none of which holds a tensor (``set[str]``,
``dict[str, int]``), keeps no graph whatever is stored into it: transformer-lens 3.0's Hugging Face scraper adds each
listed model's ``model.id`` to ``seen_models: set[str]``, and names alone made ``model.id`` an output of a model. A
bare ``set`` or ``list``, items annotated as tensors or ``Any``, and ``float`` items (code annotates as ``float`` the
0-dim tensors it passes) stay reported."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

LOOP = """\
from typing import Any

import torch


def evaluate(model, loader):
    {declared}
    for batch in loader:
        out = model(batch)
        kept{store}
    return len(kept)
"""


@pytest.mark.parametrize(("declared", "store", "reported"), [
    ("kept: set[str] = set()", ".add(out.label)", False),
    ("kept: dict[str, int] = {}", "[batch.name] = out.count", False),
    ("kept: list[tuple[int, str]] = []", ".append(out.pair)", False),
    ("kept: set = set()", ".add(out.label)", True),
    ("kept = set()", ".add(out.label)", True),
    ("kept: list[torch.Tensor] = []", ".append(out.label)", True),
    ("kept: list[Any] = []", ".append(out.label)", True),
    ("kept: dict[str, float] = {}", "[batch.name] = out.count", True),
])
def test_a_container_annotated_with_plain_items(declared, store, reported):
    assert reports(LOOP.format(declared=declared, store=store), "CYC302") is reported


def test_a_rebinding_without_the_annotation_drops_it():
    source = LOOP.format(declared="kept: set[str] = set()\n    kept = set()", store=".add(out.label)")
    assert reports(source, "CYC302")
