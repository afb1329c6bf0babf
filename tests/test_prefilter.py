"""The ast pre-filter is an optimisation only: it may send a clean file to the full analysis,
but it must never keep a finding (or a class the project-wide CYC202 needs) from it."""
import textwrap

import pytest

from benchmarks.prefilter_check import differences
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES, RULES
from cyclelint.project.resolve import resolve_project

from .conftest import FIXTURES, SHARED

pytestmark = pytest.mark.lintpath

SOURCES = sorted(FIXTURES.rglob("*.py")) + sorted((SHARED / "eval" / "cases").glob("*.py"))
EXTRA = {
    # found reading the pre-filter's capture test against the rule's: a wrapper of an attribute of an
    # attribute (the pre-filter looked for self.step only)
    "nested_slot_wrapper": (
        "def with_counter(fn, obj):\n    def wrapper(*a):\n        obj.count += 1\n        return fn(*a)\n"
        "    return wrapper\nclass Trainer:\n    def __init__(self, opt):\n        self.opt = opt\n"
        "        self.opt.step = with_counter(self.opt.step, self.opt)\n"
    ),
    # drifts the differential test (test_prefilter_differential.py) found
    "base_init_keyword_method": (
        "class Sampler:\n    def __init__(self, propose):\n        self.propose = propose\n"
        "class Exp(Sampler):\n    def __init__(self):\n        Sampler.__init__(self, propose=self._propose)\n"
        "    def _propose(self):\n        return 1\n"
    ),
    "init_under_try": "class Text:\n    try:\n        def __init__(self, vocab):\n            self.vocab = vocab\n"
                      "    finally:\n        pass\n",
    "static_init": "class Text:\n    @staticmethod\n    def __init__(self, vocab):\n        self.vocab = vocab\n",
    "method_under_with": (
        "import torch\nclass Mean(torch.nn.Module):\n    with torch.no_grad():\n        def forward(self, x):\n"
        "            self.mean.add_(x.mean(0))\n            return x\n"
    ),
    "alias_lambda": "class A:\n    def __init__(self):\n        cb = lambda: self\n        self.cb = cb\n",
    "closure_registered": (
        "class A:\n    def __init__(self, m):\n        def hook(mod, i, o):\n            self.o = o\n"
        "        m.register_forward_hook(hook)\n"
    ),
    "thread_target": (
        "import threading\nclass A:\n    def __init__(self):\n"
        "        self.t = threading.Thread(target=self.run)\n    def run(self):\n        pass\n"
    ),
    "ctor_alias": (
        "class Head:\n    def __init__(self, owner):\n        self.owner = owner\n"
        "class M:\n    def __init__(self):\n        head = Head(self)\n        self.head = head\n"
    ),
    "raise_local": "def f(x):\n    err = ValueError(x)\n    raise err\n",
    "module_level_pair": "a = Node()\nb = Node()\na.peer = b\nb.peer = a\n",
    "meter": textwrap.dedent(
        """\
        class Mean:
            def update(self, v):
                self.total += v
        def train(model, loader, crit):
            m = Mean()
            for x, y in loader:
                m.update(crit(model(x), y))
        """),
    "meter_defined_here_fed_elsewhere": textwrap.dedent(
        """\
        class Meter:
            def update(self, value, n=1):
                self.total += value * n
                self.items.append(value)
        """),
    "meter_fed_here_defined_elsewhere": textwrap.dedent(
        """\
        from metrics import Meter, Recorder
        class Trainer:
            def __init__(self):
                self.meter = Meter()
            def step(self, model, x):
                self.meter.update(model(x).sum())
        def main(model, x):
            rec = Recorder()
            model.register_forward_hook(rec.record)
        """),
    "helper_returns": textwrap.dedent(
        """\
        def run_batch(model, x):
            return model(x)
        def fit(model, loader):
            seen = []
            for x in loader:
                seen.append(run_batch(model, x))
        """),
    "device_tensors": (
        "import torch\ndef collect(images):\n    out = []\n    for image in images:\n"
        "        out.append(torch.tensor(image))\n    return out\n"
    ),
    # calls the evaluator finds graph-attached: an item of a submodule attribute, a model bound at
    # module level or in the enclosing function
    "item_of_submodule": textwrap.dedent(
        """\
        from models import Encoder
        class Runner:
            def __init__(self):
                self.stages = Encoder()
            def run(self, loader):
                total = 0
                for batch in loader:
                    total += self.stages[0](batch).sum()
                return total
        """),
    "global_model": textwrap.dedent(
        """\
        from models import Encoder
        f = Encoder()
        def train(loader):
            total = 0
            for batch in loader:
                total += f(batch).sum()
            return total
        """),
    "enclosing_model": textwrap.dedent(
        """\
        from models import Encoder
        def outer(loader):
            f = Encoder()
            def train():
                total = 0
                for batch in loader:
                    total += f(batch).sum()
                return total
            return train
        """),
    # an unpacked parameter is not kept (its items are), a paired one is
    "unpacked_into_attributes": (
        "class Stage:\n    def __init__(self, depth, owner, size):\n        self.a, self.b = depth\n"
        "        (self.owner, self.size), self.c = (owner, size), 1\n"
    ),
    # in-place growth fed by a keyword argument: the whole call counts, not only the tensor added
    "inplace_keyword_fed": textwrap.dedent(
        """\
        class Ema:
            def update(self, scale):
                self.avg.mul_(0.9).add_(self.value, alpha=scale)
        """),
    # an in-place op given only keywords: the pre-filter once indexed its missing positional arguments
    "inplace_keyword_only": textwrap.dedent(
        """\
        import torch
        def train(model, loader):
            total = torch.zeros(())
            for x in loader:
                total.add_(other=model(x))
            return total
        class Meter:
            def update(self, value):
                self.total.add_(other=value)
        """),
    # drifts found by linting the real-world benchmark's trees with and without the pre-filter
    "range_loop_outside_a_module": (
        "def evaluate(model, x, steps):\n    outputs = []\n    for _ in range(steps):\n"
        "        outputs.append(model(x))\n    print(len(outputs))\n"
    ),
    "modules_yield_self": textwrap.dedent(
        """
        from torch import nn
        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.names = set()
                for m in self.modules():
                    for n, p in m.named_parameters(recurse=False):
                        self.names.add((m, n))
        """
    ),
    "registry_of_arguments_by_name": (
        "_seen = set()\n_models = []\n_by_name = {}\ndef track(model):\n    _seen.add(model)\n"
        "def keep(model):\n    _models.append(model)\ndef name(key, state_dict):\n    _by_name[key] = state_dict\n"
    ),
    "registry_of_an_annotated_argument": (
        "from torch import nn\n_seen = {}\ndef track(key, m: nn.Module):\n    _seen.setdefault(key, m)\n"
    ),
    "handed_to_own_method": textwrap.dedent(
        """
        import logging
        class Keeper:
            def __init__(self, log):
                self.log = log
        class RunLog(logging.Logger):
            def __init__(self, name):
                super().__init__(name)
                keeper = Keeper(self)
                self.addHandler(keeper)
        """
    ),
    "clean": "def add(a, b):\n    return a + b\n\nclass P:\n    def __init__(self, x):\n        self.x = x\n",
}


def _same(source, path):
    for codes in (frozenset(RULES), DEFAULT_CODES):
        full = lint_source(source, path, codes, prefilter=False)
        for defer in (False, True):  # deferring: a file the project analyses in full once it names its methods
            assert differences(lint_source(source, path, codes, defer=defer), full) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_prefilter_keeps_every_finding(path):
    _same(path.read_bytes(), str(path))


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_prefilter_keeps_every_finding_extra(name):
    _same(EXTRA[name].encode(), f"{name}.py")


def test_prefilter_skips_plain_code():
    import ast

    from cyclelint.prefilter import may_have_findings

    assert not may_have_findings(ast.parse(EXTRA["clean"]), DEFAULT_CODES)
    assert may_have_findings(ast.parse(EXTRA["alias_lambda"]), DEFAULT_CODES)
    assert may_have_findings(ast.parse(EXTRA["inplace_keyword_only"]), DEFAULT_CODES)
    assert may_have_findings(ast.parse(EXTRA["nested_slot_wrapper"]), DEFAULT_CODES)


def test_prefilter_skips_inherited_helpers_in_a_data_loop():
    """An image processor's loop over ``images`` fills a dict from ``self.resize(...)``, a method it
    inherits: no submodule of the file, so no graph, and libcst is not needed (transformers has
    ~200 such files). The same loop calling a stored submodule does go on."""
    import ast

    from cyclelint.prefilter import may_have_findings

    processor = textwrap.dedent(
        """\
        class Processor(BaseImageProcessor):
            def _preprocess(self, images, size):
                out = {}
                for shape, stacked_images in images.items():
                    out[shape] = self.resize(stacked_images, size)
                return out
        """)
    assert not may_have_findings(ast.parse(processor), DEFAULT_CODES)
    _same(processor.encode(), "processor.py")
    stored = processor.replace("    def _preprocess", "    def __init__(self):\n        self.resize = Resizer()\n"
                                                          "    def _preprocess")
    assert may_have_findings(ast.parse(stored), DEFAULT_CODES)


def test_clean_file_never_imports_libcst(tmp_path):
    import subprocess
    import sys

    (tmp_path / "ok.py").write_text(EXTRA["clean"])
    code = "import sys\nfrom cyclelint.cli import main\nmain(['ok.py', '--no-cache'])\nassert 'libcst' not in sys.modules\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_overloaded_init_is_described_by_its_last_definition():
    src = (
        "from typing import overload\nclass S:\n    @overload\n    def __init__(self) -> None: ...\n"
        "    @overload\n    def __init__(self, owner) -> None: ...\n    def __init__(self, owner=None):\n"
        "        self.owner = owner\n"
    )
    _same(src.encode(), "stub.py")


def test_prefilter_skips_a_module_built_in_init():
    """``__init__`` appending new layers to ``self.layers`` builds modules, it runs none: no graph.
    Calling one there does give one."""
    import ast

    from cyclelint.prefilter import may_have_findings

    init = textwrap.dedent(
        """\
        class Encoder(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.layers = nn.ModuleList()
                for i in range(config.num_layers):
                    layer = EncoderLayer(config)
                    self.layers.append(layer)
        """)
    assert not may_have_findings(ast.parse(init), DEFAULT_CODES)
    _same(init.encode(), "encoder.py")
    probe = init + "            self.probes.append(layer(config.probe))\n"
    probed = lint_source(probe.encode(), "probe.py", DEFAULT_CODES)
    resolve_project([probed])  # a class with bases: judged once its bases' own grad wrappers are known
    assert [f.code for f in probed.findings] == ["CYC305"]
    _same(probe.encode(), "probe.py")


def test_prefilter_skips_functions_called_from_a_table():
    """``init_fn`` comes from a table and from ``.items()`` of a dict of functions: no module of the
    file, so calling it is no graph. A loop over something named like modules (``.blocks``) may be."""
    import ast

    from cyclelint.prefilter import may_have_findings

    rotary = textwrap.dedent(
        """\
        class Rotary(nn.Module):
            def __init__(self, config):
                super().__init__()
                for layer_type in config.layer_types:
                    init_fn = ROPE_INIT_FUNCTIONS[layer_type]
                    self.init_fns[layer_type] = init_fn
                    self.inv_freq[layer_type] = init_fn(config)
        def reset(module):
            for layer_type, init_fn in module.init_fns.items():
                init_fn(module.config)
        """)
    assert not may_have_findings(ast.parse(rotary), DEFAULT_CODES)
    _same(rotary.encode(), "rotary.py")
    blocks = rotary.replace("module.init_fns.items()", "module.blocks.items()")
    assert may_have_findings(ast.parse(blocks), DEFAULT_CODES)
    _same(blocks.encode(), "blocks.py")


def test_prefilter_skips_state_rebuilt_from_itself_alone():
    """``self.n = self.n // 2 + 1`` or ``self.d = self.d if self.d is not None else {}`` grows
    nothing a caller could attach a graph to: no call, no other name."""
    import ast

    from cyclelint.prefilter import may_have_findings

    config = textwrap.dedent(
        """\
        class Config:
            def post_init(self):
                self.window = self.window // 2 + 1
                self.params = self.params if self.params is not None else {}
                self.total.add_(self.bias)
        """)
    assert not may_have_findings(ast.parse(config), DEFAULT_CODES)
    _same(config.encode(), "config.py")
    fed = config.replace("self.bias)", "self.bias, alpha=scale)").replace("(self):", "(self, scale):")
    assert may_have_findings(ast.parse(fed), DEFAULT_CODES)


def test_a_prefilter_crash_costs_speed_not_the_file(monkeypatch):
    import cyclelint.engine as engine

    def broken(tree, enabled):
        raise IndexError("list index out of range")

    source = EXTRA["inplace_keyword_only"].encode()
    full = lint_source(source, "t.py", DEFAULT_CODES, prefilter=False)
    monkeypatch.setattr(engine, "scan_file", broken)
    fast = lint_source(source, "t.py", DEFAULT_CODES)
    assert fast.error is None
    assert [f.to_dict() for f in fast.findings] == [f.to_dict() for f in full.findings]
    assert [f.code for f in full.findings] == ["CYC301"]


def test_prefilter_skips_a_tensor_argument_kept_in_a_local_container():
    """CYC404 reports a module or tensor argument kept in a registry (a module-level binding or a class's
    attribute); the same store into a local dict, a parameter or an attribute of one is no registry, and
    transformers' models have 80 files of such stores (``cache[idx] = hidden_states``) that need no libcst."""
    import ast

    from cyclelint.prefilter import may_have_findings

    local = textwrap.dedent(
        """\
        import torch

        def update(layer_idx: int, states: torch.Tensor, cache: dict):
            seen = {}
            seen[layer_idx] = states
            cache.layers[layer_idx] = states
            return seen
        """)
    assert not may_have_findings(ast.parse(local), DEFAULT_CODES)
    _same(local.encode(), "local_container.py")
    registry = "REGISTRY = {}\n" + local.replace("seen[layer_idx]", "REGISTRY[layer_idx]")
    in_class = "class Registry:\n    seen = {}\n\n    @staticmethod\n" + textwrap.indent(
        local.replace("import torch\n\n", "").replace("seen[layer_idx]", "Registry.seen[layer_idx]"), "    ")
    for kept in (registry, "import torch\n" + in_class):
        assert may_have_findings(ast.parse(kept), DEFAULT_CODES)
        _same(kept.encode(), "registry.py")
        assert "CYC404" in {f.code for f in lint_source(kept.encode(), "registry.py", DEFAULT_CODES).findings}


def test_cyc304_sends_every_loop_that_grows_a_container_to_the_analysis():
    """Which loops walk data is the walker's to judge; with CYC304 on (off by default), a container grown
    in any loop goes on. kornia's transplantation.py (a loop over ``range(len(params[...]))``) lost its
    CYC304 to the narrower condition of the graph-carrying rules."""
    import ast

    from cyclelint.prefilter import may_have_findings

    source = ("def pick(params, mask):\n    labels = []\n    for d in range(len(params['ids'])):\n"
              "        labels.append(mask[d].unique())\n    return labels\n")
    assert may_have_findings(ast.parse(source), frozenset({"CYC304"}))
    assert not may_have_findings(ast.parse(source), DEFAULT_CODES)
    _same(source.encode(), "pick.py")
    over_data = source.replace("range(len(params['ids']))", "loader")
    assert may_have_findings(ast.parse(over_data), frozenset({"CYC304"}))


def test_prefilter_skips_weak_callbacks_as_the_rule_does():
    """``self.cb = weakref.WeakMethod(self.step)`` keeps no strong reference: the rule and the pre-filter ask
    one ``judgements.is_weak``, so the file is answered without libcst; the strong twin is sent on."""
    import ast

    from cyclelint.prefilter import may_have_findings

    weak = textwrap.dedent(
        """\
        import weakref
        class Loop:
            def __init__(self):
                self.on_step = weakref.WeakMethod(self.step)
                self.hooks = Hooks(weakref.proxy(self), weakref.ref(self.step))

            def step(self):
                return 1
        """)
    assert not may_have_findings(ast.parse(weak), DEFAULT_CODES)
    _same(weak.encode(), "weak.py")
    strong = weak.replace("weakref.WeakMethod(self.step)", "Wrapper(self.step)")
    assert may_have_findings(ast.parse(strong), DEFAULT_CODES)
    _same(strong.encode(), "strong.py")


def test_prefilter_sends_an_object_built_with_the_instance_and_handed_to_its_own_method():
    """``keeper = Keeper(self); self.addHandler(keeper)`` goes on to the analysis; a bound method handed to a
    method of the instance (``self.fetch(x, fn=sample)`` with ``sample = partial(self.sample, ...)``) is no
    such object, and transformers' video processors stay answered by the pre-filter."""
    import ast

    from cyclelint.prefilter import may_have_findings

    assert may_have_findings(ast.parse(EXTRA["handed_to_own_method"]), DEFAULT_CODES)
    inline = EXTRA["handed_to_own_method"].replace("keeper = Keeper(self)\n        self.addHandler(keeper)",
                                                   "self.addHandler(Keeper(self))")
    assert inline != EXTRA["handed_to_own_method"] and may_have_findings(ast.parse(inline), DEFAULT_CODES)
    processor = textwrap.dedent(
        """\
        from functools import partial
        class VideoProcessor:
            def __call__(self, videos, fps):
                sample = partial(self.sample_frames, fps=fps)
                return self.fetch_videos(videos, sample_indices_fn=sample)

            def sample_frames(self, metadata, fps):
                return list(range(0, metadata, fps))
        """)
    assert not may_have_findings(ast.parse(processor), DEFAULT_CODES)
    _same(processor.encode(), "processor.py")


def test_module_level_caches_go_on_only_with_a_parameter_that_may_hold_a_tensor_or_a_module():
    """CYC402 reports a module-level ``lru_cache`` keyed by a parameter that may hold a tensor or a model,
    keyword-only and ``*args`` ones included (the pre-filter once looked at positional parameters only,
    and dropped those findings). Caches keyed by sizes, strings or nothing (transformers' image
    processors and ``is_torch_available``: 21 files) need no libcst."""
    import ast

    from cyclelint.prefilter import may_have_findings

    clean = textwrap.dedent(
        """\
        from functools import lru_cache

        @lru_cache(maxsize=100)
        def get_optimal_tiled_canvas(original_image_size: tuple[int, int], max_image_tiles: int):
            return original_image_size, max_image_tiles

        @lru_cache
        def is_torch_available():
            return True
        """)
    assert not may_have_findings(ast.parse(clean), DEFAULT_CODES)
    _same(clean.encode(), "sizes.py")
    for kept in ("def load(*, model):", "def load(*tensors):", "def load(**state_dict):",
                 "def load(x: 'torch.Tensor', /):", "def load(net: nn.Module):"):
        src = clean.replace("def is_torch_available():", kept)
        assert may_have_findings(ast.parse(src), DEFAULT_CODES), kept
        assert "CYC402" in {f.code for f in lint_source(src.encode(), "kept.py", DEFAULT_CODES).findings}, kept
        _same(src.encode(), "kept.py")


def test_a_cache_on_a_static_method_needs_no_libcst():
    """A cache on a staticmethod or classmethod keeps no instance, and CYC402 reports caches on methods
    only for what the instance holds: transformers' position embeddings cache their tables this way
    (``@staticmethod @compile_compatible_method_lru_cache``, 19 files). The same cache on a plain method
    of the module keeps the module and goes on, whether the decorator is ``lru_cache`` or a helper."""
    import ast

    from cyclelint.prefilter import may_have_findings

    clean = textwrap.dedent(
        """\
        from functools import lru_cache
        from torch import nn
        from .pytorch_utils import compile_compatible_method_lru_cache

        class SinePositionEmbedding(nn.Module):
            @staticmethod
            @compile_compatible_method_lru_cache(maxsize=32)
            def build_table(*args, **kwargs):
                return build(*args, **kwargs)

            @classmethod
            @lru_cache(maxsize=8)
            def grid(cls, height: int, width: int):
                return height * width
        """)
    assert not may_have_findings(ast.parse(clean), DEFAULT_CODES)
    _same(clean.encode(), "embeddings.py")
    # whether the helper wraps lru_cache is known once the project is read (PendingCache): sent on
    helper = clean.replace("    @staticmethod\n", "").replace("(*args, **kwargs)", "(self, *args, **kwargs)", 1)
    plain = clean.replace("    @classmethod\n", "")
    for kept, reported in ((helper, set()), (plain, {"CYC402"})):
        assert may_have_findings(ast.parse(kept), DEFAULT_CODES)
        assert {f.code for f in lint_source(kept.encode(), "kept.py", DEFAULT_CODES).findings} == reported
        _same(kept.encode(), "kept.py")


def test_a_torch_function_named_like_a_loss_is_no_graph_of_its_own():
    """``torch.div`` and ``F.kl_div`` are PyTorch functions: the evaluator gives their result a graph only
    through their arguments, so their names (``div`` is a loss noun) are no graph evidence for the
    pre-filter either. transformers' segmentation post-processing (``torch.div(topk_indices, ...)`` in a
    loop over the batch, 7 files) needs no libcst; the same loop over a model's outputs does."""
    import ast

    from cyclelint.prefilter import may_have_findings

    clean = textwrap.dedent(
        """\
        import torch
        import torch.nn.functional as F

        def post_process(outputs, num_classes, threshold=0.5):
            class_logits, mask_logits = outputs.class_queries_logits, outputs.masks_queries_logits
            results = []
            for i in range(class_logits.shape[0]):
                scores = F.softmax(class_logits[i], dim=-1)[:, :-1]
                scores_per_image, topk_indices = scores.flatten(0, 1).topk(10, sorted=False)
                topk_indices = torch.div(topk_indices, num_classes, rounding_mode="floor")
                pred_masks = (mask_logits[i][topk_indices] > 0).float()
                results.append({"masks": pred_masks, "scores": scores_per_image})
            return results
        """)
    assert not may_have_findings(ast.parse(clean), DEFAULT_CODES)
    _same(clean.encode(), "post_process.py")
    trained = clean.replace("def post_process(outputs,", "def post_process(model, loader,").replace(
        "for i in range(class_logits.shape[0]):", "for i, batch in enumerate(loader):").replace(
        "F.softmax(class_logits[i]", "F.softmax(model(batch)").replace(
        "    return results\n", "        F.kl_div(scores, scores).backward()\n    return results\n")
    assert may_have_findings(ast.parse(trained), DEFAULT_CODES)
    assert "CYC302" in {f.code for f in lint_source(trained.encode(), "trained.py", DEFAULT_CODES).findings}
    _same(trained.encode(), "trained.py")


def test_a_tensor_star_argument_kept_in_a_registry_is_sent_on():
    """``*tensors`` is a parameter too: keeping it in a module-level list is CYC404 (the pre-filter once
    missed it)."""
    src = "KEPT = []\n\n\ndef keep(*tensors):\n    KEPT.append(tensors)\n"
    assert "CYC404" in {f.code for f in lint_source(src.encode(), "keep.py", DEFAULT_CODES).findings}
    _same(src.encode(), "keep.py")
