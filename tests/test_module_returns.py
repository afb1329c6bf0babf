"""A function annotated to return a module hands back a module, not a forward pass's graph: mmdet3d 1.4.0's
``build_sa_module(cfg, *args, **kwargs) -> nn.Module`` (models/layers/pointnet_modules/builder.py:12-45) calls
``sa_module(...)``, a class named like a module, and PointNet2SASSG's ``__init__`` appends each result to
``self.SA_modules``. Without the annotation, or with one that names a tensor too, the call's result stays a
forward pass by its name."""
import pytest

from tests.conftest import lint_tree

pytestmark = pytest.mark.lintpath

BUILDER = """\
from typing import Optional, Union

import torch
from torch import nn

BLOCKS = {{}}


def build_block(cfg, *args, **kwargs){returns}:
    block_module = BLOCKS.get(cfg.pop("type"))
    module = block_module(*args, **kwargs, **cfg)
    return module
"""

NET = """\
from base import BaseNet
from builder import build_block


class Net(BaseNet):
    def __init__(self, widths, cfg):
        super().__init__()
        self.num = len(widths)
        self.blocks = []
        for i in range(self.num):
            self.blocks.append(build_block(cfg=cfg, width=widths[i]))
"""


@pytest.mark.parametrize(("returns", "kept"), [
    (" -> nn.Module", False),
    (" -> Optional[nn.Module]", False),
    (" -> torch.nn.Sequential", False),
    ("", True),
    (" -> torch.Tensor", True),
    (" -> Union[nn.Module, torch.Tensor]", True),
])
def test_a_builder_annotated_to_return_a_module(returns, kept, tmp_path):
    found = lint_tree(tmp_path, {"builder.py": BUILDER.format(returns=returns), "net.py": NET})
    assert found == ([("net.py", 11, "CYC302")] if kept else [])
