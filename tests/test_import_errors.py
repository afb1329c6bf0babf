"""An exception kept at module level from a ``try`` that only imports (an optional dependency: lightly's
``VIDEO_DATASET_ERRORMSG = e``, torchtitan's ``_HELION_IMPORT_ERROR = e``): its traceback keeps the module's frame,
whose globals live as long as the module, and the import machinery's frames. No CYC401. A module-level call that
fails, or a function's frame, keeps what they held: still reported."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

MODULE = """\
import torch

try:
{body}
except {caught} as e:
    FAILED = e
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("body", "caught", "kept"), [
    ("    import av", "ImportError", False),
    ("    from lightly.data._video import VideoDataset\n\n    AVAILABLE = True", "Exception", False),
    ("    import helion\n    import helion.language as hl\n    ERROR = None", "ImportError", False),
    # nerfstudio's tinycudann and mace's torch_sim guards: a name rebound and unbound, an annotated plain binding
    ("    import tinycudann\n\n    tcnn = tinycudann\n    del tinycudann\n    EXISTS = True", "ImportError", False),
    ("    import torch_sim as ts\n\n    IMPORT_ERROR: Optional[ImportError] = None", "ImportError", False),
    ("    import av\n    del av.logging", "ImportError", True),  # an attribute deleted: code of av's runs
    ("    import av\n    LEVEL: int = av.logging.get_level()", "ImportError", True),
    ('    WEIGHTS = torch.load("weights.pt")', "Exception", True),
    ("    import av\n    av.logging.set_level(0)", "ImportError", True),
    ("    import av\n    if av.__version__ < '9':\n        raise ImportError('old av')", "ImportError", True),
])
def test_at_module_level(body, caught, kept, prefilter):
    result = lint_source(MODULE.format(body=body, caught=caught), "optional.py", DEFAULT_CODES, prefilter=prefilter)
    assert [f.code for f in result.findings] == (["CYC401"] if kept else [])


def test_in_a_function_the_frame_is_the_function_s():
    text = "def load():\n    try:\n        import av\n    except ImportError as e:\n        err = e\n    return err\n"
    assert [f.code for f in lint_source(text, "optional.py", DEFAULT_CODES).findings] == ["CYC401"]
