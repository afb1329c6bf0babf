"""An import inside a function binds its names and reads none: ms-swift 4.6.0 template/base.py:2421-2434 defines
``_flash_attention_forward`` and, inside it, ``from transformers... import _flash_attention_forward as
flash_attention_forward``. The nested function never refers to itself, so its closure makes no cycle (CYC403). A
nested function that calls itself, or that imports a module under its own name, is what the rule is about."""
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
