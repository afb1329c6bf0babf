"""A cycle through an instance that holds nothing of size costs nothing when the collector frees it late: CYC1xx,
CYC203, CYC402, CYC403 and CYC404 on the instance are withdrawn when the project shows no instance of its class (or of a subclass
running the method) may hold a tensor, a module, an optimizer or a state dict. Judged from what the values are
(instance_holds.py), across files (project/sizes.py): its stores, its bases, its subclasses, the objects it keeps
and what its constructor calls pass. The clean shapes come from real code (catalyst, composer, torchrl, espnet,
mmpose, torchtnt, mmdet); each leak beside them is the same code holding something of size."""
import ast
import json
import textwrap

import pytest

from cyclelint.instance_holds import class_holds, torch_bound
from cyclelint.project.imports import import_origins

pytestmark = pytest.mark.lintpath


def holds(source: str):
    tree = ast.parse(textwrap.dedent(source))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    functions = [f for f in node.body if isinstance(f, ast.FunctionDef)]
    return class_holds(functions, False, torch_bound(import_origins(tree)))


@pytest.mark.parametrize("body, why", [
    ("def __init__(self, n):\n    self.buf = torch.zeros(n)", "self.buf = torch.zeros(...)"),
    ("def __init__(self, n):\n    self.register_buffer('b', torch.zeros(n))", "it calls self.register_buffer(...)"),
    ("def __init__(self, w: torch.Tensor):\n    self.w = w", "self.w = w, annotated torch.Tensor"),
    ("def __init__(self, optims: Dict[str, torch.optim.Optimizer]):\n    self.optims = optims",
     "self.optims = optims, annotated Dict[str, torch.optim.Optimizer]"),
    ("def __init__(self, model):\n    self.model = model", "self.model = model, named like a model"),
    ("def __init__(self, name):\n    self.lm = AutoModel.from_pretrained(name)", "self.lm = a AutoModel"),
    ("def __init__(self, model):\n    super().__init__(model)", "it hands model, named like a model to a base's __init__"),
    ("def __init__(self, x):\n    self.cache = self.embed(x)\ndef embed(self, x):\n    return torch.ones(3)",
     "self.cache = self.embed(), which returns torch.ones(...)"),
    ("def __init__(self, w: torch.Tensor):\n    self.ce = nn.CrossEntropyLoss(weight=w)",
     "self.ce = CrossEntropyLoss(w, annotated torch.Tensor)"),
    ("def __init__(self):\n    self.x = None\ndef set(self, t):\n    y = t.to('cuda')\n    self.x = y", "self.x = y = .to()"),
])
def test_what_shows_an_instance_holds_something_of_size(body, why):
    found = holds("import torch\nfrom torch import nn\n\nclass C:\n" + textwrap.indent(body, "    "))
    assert found.why == why


@pytest.mark.parametrize("body, passed_in", [
    # torchrl's specs: a shape, a dtype, a device and numbers
    ("def __init__(self, n, device=None):\n    self.n = n\n    self.shape = torch.Size([n])\n"
     "    self.dtype = torch.long\n    self.device = torch.device(device)\n    self.encode = self._encode", ["n"]),
    # catalyst's BatchTransformCallback: a transform and key names the caller picks
    ("def __init__(self, transform, keys):\n    self.transform = transform\n    self.keys = keys\n"
     "    self.handle = self._handle", ["transform", "keys"]),
    # espnet: an attribute named like a model holding an epoch number
    ("def __init__(self):\n    self.best_model = -1\ndef update(self, trainer):\n"
     "    self.best_model = trainer.updater.epoch", []),
    # espnet's parameter-free activations and a loss without weights
    ("def __init__(self):\n    self.softmax = nn.Softmax(dim=1)\n    self.ce = nn.CrossEntropyLoss()", []),
    # a comprehension keeps its iterable's items, as keys or values: only the callers can say what they are
    ("def __init__(self, layers):\n    self.layers = [layer for layer in layers]", ["layers"]),
    ("def __init__(self, keys):\n    self.edges = {key: [] for key in keys}", ["keys"]),
])
def test_what_shows_nothing_of_size(body, passed_in):
    found = holds("import torch\nfrom torch import nn\n\nclass C:\n" + textwrap.indent(body, "    "))
    assert found.why == ""
    assert list(found.params) == passed_in


def test_own_init_and_the_methods_that_store():
    found = holds("""\
        class C(Base):
            def __init__(self, n):
                self.n = n

            def hook(self, module, inputs):
                module.weight.data.clamp_(-1, 1)

            def collect(self, module, inputs):
                self.last = inputs
        """)
    assert found.own_init and found.storing == ("collect",)
    assert not holds("class C(B):\n    def __init__(self):\n        super().__init__()\n").own_init


def write(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))


def rows(cyclelint, cwd, *args):
    proc = cyclelint("--format", "json", "--select", "CYC1,CYC202,CYC203,CYC402,CYC403,CYC404", *args, cwd=cwd)
    return sorted((f["path"].removeprefix("./"), f["line"], f["code"]) for f in json.loads(proc.stdout)["findings"])


def judged(cyclelint, tmp_path, files, staged):
    """Findings linting the tree without the cache, from the cache, and of the staged file alone with its project
    (the pre-commit case): all three must agree."""
    write(tmp_path, files)
    cold = rows(cyclelint, tmp_path, "--no-cache", "--jobs", "1", ".")
    assert rows(cyclelint, tmp_path, ".") == cold
    assert rows(cyclelint, tmp_path, ".") == cold  # from the cache
    (tmp_path / "pyproject.toml").write_text("")
    assert rows(cyclelint, tmp_path, staged) == [r for r in cold if r[0] == staged]
    return cold


CALLBACK = """\
    class TransformCallback:
        def __init__(self, transform, keys):
            self.transform = transform
            self.keys = keys
            self.handle = self._handle_value if len(keys) == 1 else self._handle_keys

        def _handle_value(self, batch):
            return self.transform(batch[self.keys[0]])

        def _handle_keys(self, batch):
            return {k: self.transform(batch[k]) for k in self.keys}
    """


def test_a_callback_given_a_function_and_key_names_is_quiet(tmp_path, cyclelint):
    main = "from callbacks import TransformCallback\n\ncb = TransformCallback(lambda x: x * 2, keys=['image'])\n"
    assert judged(cyclelint, tmp_path, {"callbacks.py": CALLBACK, "main.py": main}, "callbacks.py") == []


@pytest.mark.parametrize("call", [
    "TransformCallback(torch.nn.Linear(4, 4), keys=['image'])",  # a module, by what it is
    "TransformCallback(model, ['image'])",  # by the name of what is passed
    "TransformCallback(transform=Scale(torch.ones(4)), keys=['image'])",  # an object of a class keeping a tensor
])
def test_the_same_callback_given_something_of_size_by_a_caller_is_reported(tmp_path, cyclelint, call):
    main = f"""\
        import torch
        from callbacks import TransformCallback
        from scale import Scale


        def build(model):
            return {call}
        """
    scale = "class Scale:\n    def __init__(self, factor):\n        self.factor = factor\n"
    found = judged(cyclelint, tmp_path, {"callbacks.py": CALLBACK, "main.py": main, "scale.py": scale}, "callbacks.py")
    assert found == [("callbacks.py", 5, "CYC103")]


def test_a_base_the_tree_does_not_define_may_hold_anything(tmp_path, cyclelint):
    source = textwrap.dedent(CALLBACK).replace("class TransformCallback:", "class TransformCallback(lightning.Callback):")
    assert judged(cyclelint, tmp_path, {"callbacks.py": "import lightning\n\n\n" + source}, "callbacks.py") == [
        ("callbacks.py", 8, "CYC103")]


PLUGGABLE = """\
    class Pluggable:
        def __init__(self):
            self.hooks = {}
            self.dispatch = self._dispatch

        def _dispatch(self, event):
            for hook in self.hooks.get(event, ()):
                hook()
    """


@pytest.mark.parametrize("trainer, found", [
    # flair's ModelTrainer(Pluggable) holds the model: self in Pluggable.__init__ is a trainer
    ("class Trainer(Pluggable):\n    def __init__(self, model):\n        super().__init__()\n        self.model = model\n",
     [("pluggable.py", 4, "CYC103")]),
    # espnet's extensions replace the base's __init__ without calling it: the base's cycle is never made for them
    ("class Trainer(Pluggable):\n    def __init__(self, model):\n        self.model = model\n", []),
    # a subclass holding only numbers runs the cycle, which holds nothing of size
    ("class Counter(Pluggable):\n    def __init__(self):\n        super().__init__()\n        self.count = 0\n", []),
])
def test_self_in_a_base_is_an_instance_of_any_subclass(tmp_path, cyclelint, trainer, found):
    files = {"pluggable.py": PLUGGABLE, "trainer.py": "from pluggable import Pluggable\n\n\n" + trainer}
    assert judged(cyclelint, tmp_path, files, "pluggable.py") == found


def test_a_torch_base_of_the_same_name_holds_parameters(tmp_path, cyclelint):
    conv = """\
        import torch.nn as nn


        class Conv2d(nn.Conv2d):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if self.kernel_size == (2, 2):
                    self.forward = self.padded_forward

            def padded_forward(self, x):
                return super().forward(x)
        """
    assert judged(cyclelint, tmp_path, {"conv.py": conv}, "conv.py") == [("conv.py", 8, "CYC103")]


HOOKS = """\
    import torch


    class ModuleHook:
        def register(self, module):
            module.register_forward_pre_hook(self.hook)

        def hook(self, module, inputs):
            raise NotImplementedError


    class WeightClip(ModuleHook):
        def __init__(self, max_norm=1.0):
            self.max_norm = max_norm

        def hook(self, module, inputs):
            {body}


    CLIP = WeightClip(max_norm=2.0)
    """


@pytest.mark.parametrize("body, found", [
    # mmpose's WeightNormClipHook: it changes the module's weights and keeps nothing
    ("module.weight.data.clamp_(-self.max_norm, self.max_norm)", []),
    # timm's FeatureHooks: what a hook keeps of a module's inputs is of size
    ("self.last = inputs[0]", [("hooks.py", 6, "CYC104")]),
    ("self.calls += 1", [("hooks.py", 6, "CYC104")]),  # any store counts: what a hook keeps is not judged
])
def test_a_hook_holds_what_it_keeps_of_a_modules_inputs(tmp_path, cyclelint, body, found):
    assert judged(cyclelint, tmp_path, {"hooks.py": HOOKS.replace("{body}", body)}, "hooks.py") == found


@pytest.mark.parametrize("kept, found", [
    ("self.values = {}", []),  # torchtnt's InMemoryLogger: a dict of floats
    ("self.model = model", [("logger.py", 7, "CYC404")]),
])
def test_an_instance_kept_until_exit(tmp_path, cyclelint, kept, found):
    logger = f"""\
        import atexit


        class Logger:
            def __init__(self, model=None):
                {kept}
                atexit.register(self.close)

            def close(self):
                pass
        """
    assert judged(cyclelint, tmp_path, {"logger.py": logger}, "logger.py") == found


SAMPLER = """\
    class Sampler:
        def __init__(self, num, pos_fraction):
            self.num = num
            self.pos_fraction = pos_fraction
            self.pos_sampler = self
    """


def test_a_sampler_that_is_its_own_positive_sampler_holds_numbers(tmp_path, cyclelint):
    head = "from sampler import Sampler\n\nSAMPLER = Sampler(num=512, pos_fraction=0.25)\n"
    assert judged(cyclelint, tmp_path, {"sampler.py": SAMPLER, "head.py": head}, "sampler.py") == []


def test_a_class_nothing_in_the_project_constructs_may_be_given_anything(tmp_path, cyclelint):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert judged(cyclelint, tmp_path / "a", {"sampler.py": SAMPLER}, "sampler.py") == [("sampler.py", 5, "CYC203")]
    callback = {"callbacks.py": CALLBACK}
    assert judged(cyclelint, tmp_path / "b", callback, "callbacks.py") == [("callbacks.py", 5, "CYC103")]
    # its own class statement names it as a call would (``class Sampler(Base):``): no caller for all that
    (tmp_path / "c").mkdir()
    based = "class Base:\n    pass\n\n\n" + textwrap.dedent(SAMPLER).replace("class Sampler:", "class Sampler(Base):")
    assert judged(cyclelint, tmp_path / "c", {"sampler.py": based}, "sampler.py") == [("sampler.py", 9, "CYC203")]


def test_a_lambda_capturing_a_tensor_besides_the_instance(tmp_path, cyclelint):
    source = """\
        import torch


        class Schedule:
            def __init__(self, steps):
                self.steps = steps
                table = torch.linspace(0, 1, steps)
                self.at = lambda i: table[i] * self.steps
        """
    assert judged(cyclelint, tmp_path, {"schedule.py": source}, "schedule.py") == [("schedule.py", 8, "CYC101")]


TIMING = """\
    import time


    class TimingContext:
        def __init__(self, timing, key):
            self._timing = timing
            self._key = key

        def __enter__(self):
            self._start = time.time()


    class Timing:
        def __init__(self, name):
            self.name = name
            self.totals = {}
            self.root = TimingContext(self, "root")
            self.clock = Clock()
            self.clock.owner = self


    class Clock:
        def __init__(self):
            self.owner = None
            self.ticks = 0
    """


@pytest.mark.parametrize("change, found", [
    # sample-factory's Timing and its contexts: names, floats and each other
    ({}, []),
    # a caller hands the timing a module: both cycles hold it
    ({"main.py": ("'main'", "torch.nn.Linear(4, 4)")}, [("timing.py", 18, "CYC202"), ("timing.py", 20, "CYC202")]),
    # nothing in the tree constructs the timing: it may be given anything
    ({"main.py": ("TIMING = Timing('main')", "")}, [("timing.py", 18, "CYC202"), ("timing.py", 20, "CYC202")]),
    # an object on one side of a cycle holds a tensor: the timing keeps both, each cycle holds the tensor
    ({"timing.py": ("self._key = key", "self._key = torch.zeros(1024)")}, [("timing.py", 18, "CYC202"),
                                                                           ("timing.py", 20, "CYC202")]),
    ({"timing.py": ("self.ticks = 0", "self.ticks = torch.zeros(1024)")}, [("timing.py", 18, "CYC202"),
                                                                          ("timing.py", 20, "CYC202")]),
])
def test_mutual_links_between_objects_that_hold_nothing_of_size(tmp_path, cyclelint, change, found):
    files = {"timing.py": "import torch\n" + textwrap.dedent(TIMING),
             "main.py": "import torch\nfrom timing import Timing\n\nTIMING = Timing('main')\n"}
    for name, (old, new) in change.items():
        files[name] = files[name].replace(old, new)
    assert judged(cyclelint, tmp_path, files, "timing.py") == found


GRAPH = """\
    class DependencyGraph:
        def __init__(self, keys):
            self.edges = {key: [] for key in keys}

        def order(self):
            seen = set()

            def visit(key):
                seen.add(key)
                for child in self.edges[key]:
                    if child not in seen:
                        yield from visit(child)
                yield key

            return [k for key in self.edges for k in visit(key)]
    """


@pytest.mark.parametrize("changes, found", [
    # speechbrain's DependencyGraph: a recursive walk that captures only the graph of keys it orders, and a set
    ([], []),
    # the same graph given tensors by its caller: the closure's cycle holds them until the collector runs
    ([("main.py", "['a', 'b']", "[torch.zeros(1024)]")], [("graph.py", 11, "CYC403")]),
    # nothing in the tree builds the graph: it may be given anything
    ([("main.py", "GRAPH = DependencyGraph(['a', 'b'])", "")], [("graph.py", 11, "CYC403")]),
    # a module's instance is reported whatever it holds
    ([("graph.py", "class DependencyGraph:", "class DependencyGraph(torch.nn.Module):")], [("graph.py", 11, "CYC403")]),
    # and so is a closure that captures a state dict besides the instance
    ([("graph.py", "seen = set()", "seen, state_dict = set(), {}"),
      ("graph.py", "seen.add(key)", "seen.add(key) or state_dict.pop(key, None)")], [("graph.py", 11, "CYC403")]),
])
def test_a_recursive_closure_that_captures_an_instance_holding_nothing_of_size(tmp_path, cyclelint, changes, found):
    files = {"graph.py": "import torch\n\n\n" + textwrap.dedent(GRAPH),
             "main.py": "import torch\nfrom graph import DependencyGraph\n\nGRAPH = DependencyGraph(['a', 'b'])\n"}
    for name, old, new in changes:
        assert old in files[name]
        files[name] = files[name].replace(old, new)
    assert judged(cyclelint, tmp_path, files, "graph.py") == found


DEPTH = """\
    import functools


    class DynamicDepth:
        def __init__(self, parents):
            self.parents = list(parents)

        @functools.lru_cache(maxsize=None)
        def depth(self, index):
            parent = self.parents[index]
            return 0 if parent < 0 else self.depth(parent) + 1


    def parse_depths(parents):
        found = DynamicDepth([-1, 0, 1])
        return [found.depth(i) for i in range(len(parents))]
    """


@pytest.mark.parametrize("changes, found", [
    # stanza's DynamicDepth: an unbounded cache of depth tables, each a list of ints (stanza names them ``heads``,
    # which the last-resort name test reads as a model's heads: that one stays reported)
    ([], []),
    # the same cache on instances given a tensor: every instance ever used keeps one
    ([("depth.py", "[-1, 0, 1]", "torch.ones(1024)")], [("depth.py", 9, "CYC402")]),
    # a base of another package may hold anything
    ([("depth.py", "class DynamicDepth:", "class DynamicDepth(lightning.Callback):"),
      ("depth.py", "import functools", "import functools\nimport lightning")], [("depth.py", 10, "CYC402")]),
    # a bounded cache keeps up to maxsize instances: reported when the file builds them with a tensor
    ([("depth.py", "maxsize=None", "maxsize=128"), ("depth.py", "[-1, 0, 1]", "torch.ones(1024)")],
     [("depth.py", 9, "CYC402")]),
])
def test_an_unbounded_method_cache_on_instances_that_hold_nothing_of_size(tmp_path, cyclelint, changes, found):
    files = {"depth.py": "import torch\n" + textwrap.dedent(DEPTH)}
    for name, old, new in changes:
        assert old in files[name]
        files[name] = files[name].replace(old, new)
    assert judged(cyclelint, tmp_path, files, "depth.py") == found
