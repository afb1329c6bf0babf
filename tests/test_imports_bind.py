"""An import inside a function binds its names and reads none: ms-swift 4.6.0 template/base.py:2421-2434 defines
``_flash_attention_forward`` and, inside it, ``from transformers... import _flash_attention_forward as
flash_attention_forward``. The nested function never refers to itself, so its closure makes no cycle (CYC403); one
that calls itself is what the rule is about. A module, or a name of one, imported in a function lives for good: a
nested function that captures it and is stored on it keeps nothing more (transformers' ``patched_gather``, CYC102),
while an object the function made is kept by that cycle."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

PATCH = """\
import torch


def patch(module, model):
    original = module.attention

    def attention(*args, **kwargs):
        {body}
        return impl(*args, position=model.position, **kwargs)

    module.attention = attention
    return original
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("body", "reported"), [
    ("from transformers.utils import attention as impl", False),
    ("import attention as impl", False),
    ("from transformers import utils as impl", False),
    ("impl = attention if kwargs else original", True),  # reads its own name: function -> cell -> function
    ("from transformers.utils import attention\n        impl = attention", False),  # the import's, no cell
])
def test_an_import_reads_no_local(body, reported, prefilter):
    result = lint_source(PATCH.format(body=body), "patch.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert ("CYC403" in {f.code for f in result.findings}) is reported


MODULE_PATCH = """\
def patch_gather():
    {bind}

    def patched_gather(*args, **kwargs):
        return original(*args, **kwargs).to(torch.float32)

    original = torch.gather
    torch.gather = patched_gather
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("bind", "reported"), [
    ("import torch", False),  # transformers 5.23.0 utils/import_utils.py:548: a module lives for good
    ("from torch import nn as torch", False),
    ("torch = make_namespace()", True),  # an object the function made: the cycle keeps it
])
def test_a_module_imported_in_the_function_and_patched(bind, reported, prefilter):
    result = lint_source(MODULE_PATCH.format(bind=bind), "patch.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert ("CYC102" in {f.code for f in result.findings}) is reported
