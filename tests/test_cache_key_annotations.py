"""A module-level cache keyed by a parameter is judged by what the parameter is before what it is named: liger-kernel
0.8.5's ``_rope_block_s(seq_len: int, head_dim: int)`` caches block sizes by two numbers, though ``head_dim`` is
named after a model part. Unannotated, a name that says a size or a count (unsloth 2026.10.9's ``_sdpa_choice(device,
dtype, head_dim, n_heads, ...)``, which builds ``torch.empty(1, n_heads, 128, head_dim)``) names no model either. A
parameter named like a model part, or annotated as a module, keeps the finding; a class annotation (``Type[nn.Module]``)
holds no weights."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

CACHED = """\
import functools
from typing import Type

import torch.nn as nn


@functools.lru_cache(maxsize=64)
def block_size(seq_len: int, {param}) -> int:
    return seq_len
"""


@pytest.mark.parametrize(("param", "kept"), [
    ("head_dim: int", False),
    ("head_dim: int | None", False),
    ("head: Type[nn.Module]", False),
    ("head", True),
    ("head_dim", False),  # unsloth's _sdpa_choice(device, dtype, head_dim, n_heads, ...): a size, a count
    ("n_heads", False),
    ("num_heads", False),
    ("encoder_len", False),
    ("head: nn.Module", True),
    ("block: nn.Module", True),
])
def test_a_cache_key_by_its_annotation(param, kept):
    assert reports(CACHED.format(param=param), "CYC402") is kept
