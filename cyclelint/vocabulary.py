"""Names the rules and the pre-filter agree on (no libcst here: the pre-filter must stay light)."""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# -- containers, steps and in-place updates -----------------------------------
STORE_METHODS = {
    "append": 0, "add": 0, "appendleft": 0, "extend": 0, "extendleft": 0, "update": 0,
    "insert": 1, "setdefault": 1, "__setitem__": 1, "add_module": 1, "register_module": 1, "put": 0,
}
# Classes whose ``append``/``update``/``put``... store what they are given, as a list's or a dict's do.
CONTAINER_CLASSES = frozenset({
    "list", "dict", "set", "OrderedDict", "Counter", "ChainMap", "UserDict", "UserList", "defaultdict", "deque",
    "Deque", "DefaultDict", "MutableMapping", "MutableSequence", "MutableSet", "Queue", "SimpleQueue", "LifoQueue",
    "PriorityQueue", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Sequential", "WeakSet",
    "WeakValueDictionary", "WeakKeyDictionary", "TensorDict",
})
CLEAR_METHODS = frozenset({"clear", "pop", "popleft", "popitem", "remove", "discard"})
STEP_METHODS = frozenset({"backward", "manual_backward", "step", "zero_grad"})
# Identifiers in a loop's iterable that make each iteration a step over data. Weak ones
# (chunks, samples) also name forward-pass sub-steps, so they do not count inside nn.Module methods.
STRONG_DATA = frozenset(
    {"loader", "loaders", "dataloader", "dataloaders", "dataset", "datasets", "batches", "minibatches",
     "epoch", "epochs", "episodes", "requests", "queue", "stream"}
)
WEAK_DATA = frozenset(
    {"chunks", "samples", "examples", "prompts", "data", "train", "val", "valid", "validation", "test", "eval",
     "iterator", "images", "texts", "records"}
)
# Module methods that return the module itself (``model.to(device)``).
MODULE_PASSTHROUGH = frozenset({"to", "cuda", "cpu", "train", "eval", "half", "float", "double", "requires_grad_"})
MODULE_ITER_RE = re.compile(r"(layers|blocks|heads|stages|models|nets|modules|children|experts)$", re.IGNORECASE)
NOT_DATA_CALLEES = frozenset({"range", "enumerate", "zip", "iter", "tqdm", "len", "reversed", "sorted", "list", "tuple"})
APPENDS = frozenset({"append", "extend", "insert", "add", "appendleft", "extendleft"})
CONCAT_FUNCS = frozenset({"cat", "concat", "concatenate", "stack", "vstack", "hstack", "dstack", "column_stack", "row_stack",
                          "pad_sequence"})
# What a loop's bound reads from a tensor: ``range(0, x.shape[2], step)`` walks the positions of one tensor.
SHAPE_READS = frozenset({"shape", "size"})
CONSTANT_NAMES = frozenset({"None", "True", "False"})  # names that are values: no tensor, no view of one
# Module methods that yield the module itself first (with the slot of a (name, module) pair).
MODULE_ITERS = {"modules": None, "named_modules": 1}
INPLACE = frozenset({"add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "lerp_"})

# Hooks of a LightningModule that the trainer runs with grad off (its evaluation and prediction loops run under
# torch.no_grad or inference_mode; training_step is not one of them).
EVAL_STEPS = frozenset({"validation_step", "test_step", "predict_step"})


def called_unnamed(method: str) -> bool:
    """A method that something outside its class runs without the class's code naming it: ``forward`` (through
    ``self(x)``), a dunder, a framework's hook (``on_*``, ``training_step``)."""
    return method in ("forward", "training_step") or method.startswith(("on_", "__"))
# Methods of a model that run (part of) its forward pass.
FORWARD_METHODS = frozenset(
    {"forward", "encode", "decode", "embed", "predict", "extract_features", "forward_features", "forward_head",
     "compute_loss", "training_step", "validation_step", "shared_step", "loss", "score"}
)

# -- callables and hooks -------------------------------------------------------
HOOK_RE = re.compile(r"^register_\w*hook$")
KEEPERS = frozenset({"defaultdict", "Thread", "Timer", "property", "partialmethod"})
PARTIALS = frozenset({"partial", "MethodType", "partialmethod"})
# Thread.run dels its target when it returns: a started thread's hold on the target ends with it.
# a thread or process started by the call that builds it drops its target: Thread.run when the target returns,
# Process.start at once in the parent (bpo-30775)
THREADS = frozenset({"Thread", "Process"})
# The parameter (after a method's ``self``) of a module hook that receives what the module computed: a forward
# hook's output, a pre-hook's input, a backward hook's grad_output. ``with_kwargs=True`` puts kwargs before output.
MODULE_HOOK_SLOTS = {"register_forward_hook": 2, "register_forward_pre_hook": 1, "register_full_backward_hook": 2,
                     "register_backward_hook": 2}
# Hooks on a tensor or autograd node (not a module): they live as long as that tensor's graph.
TENSOR_HOOKS = frozenset({"register_hook", "register_prehook", "register_post_accumulate_grad_hook"})
# Saved-tensor hooks: the call, or the base class whose __init__, takes (pack_hook, unpack_hook). The pack hook is
# given each tensor autograd saves, grad_fn and all, and runs with grad off.
PACK_HOOK_REGISTRARS = frozenset({"saved_tensors_hooks", "_register_default_hooks", "set_saved_tensors_default_hooks"})
# Tensor methods whose result is a view of (the same autograd history as) their receiver.
# Zero-copy handles on a tensor (a DLPack capsule, a tensor or array built from one): they keep the tensor.
ZERO_COPY = frozenset({"to_dlpack", "from_dlpack"})
VIEW_METHODS = frozenset({"view", "view_as", "reshape", "transpose", "permute", "narrow", "select", "squeeze",
                          "unsqueeze", "expand", "expand_as", "flatten", "unflatten", "t", "contiguous"})
# Calls that return a wrapper keeping the callable they are given: tf.function(self.serve).
WRAPPERS = frozenset({"tf.function", "torch.compile"})
CLASS_NAMES = frozenset({"cls", "klass", "mcs", "metacls", "mcls"})

# -- exceptions, frames, caches ------------------------------------------------
CACHES = frozenset({"lru_cache", "cache"})
# Modules whose ``lru_cache``/``cache`` keep their arguments as functools' do (streamlit's ``st.cache`` keys by a
# hash of them, methodtools' caches per instance: neither keeps the instance).
ARGUMENT_CACHES = frozenset({"functools", "cachetools.func", "backports.functools_lru_cache"})
# Annotations that say a value is of size: a tensor or a module.
TENSOR_TYPES = frozenset({"Tensor", "Parameter", "FloatTensor", "LongTensor", "DTensor"})
GRAD_TENSOR_TYPES = TENSOR_TYPES - {"LongTensor"}  # an integer tensor cannot require grad
INTEGER_DTYPES = frozenset({"int64", "long", "int32", "int", "int16", "short", "int8", "uint8", "bool"})
# the bases a class may have that run none of its methods for their callers (no wrapper turns grad off)
OBJECT_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})  # of a class that is no module by them
PLAIN_BASES = OBJECT_BASES | {"Module", "nn.Module", "torch.nn.Module"}
MODULE_TYPES = frozenset({"Module", "ModuleList", "ModuleDict", "Sequential"})
# typing constructs an annotation may name instead of a class of the code
TYPING_NAMES = frozenset({"Any", "Callable", "Optional", "Union", "Type", "Dict", "List", "Tuple", "Set", "Sequence",
                          "Mapping", "Iterable", "Iterator", "Literal", "TypeVar", "Self"})
# Annotations whose values hold no graph: integers (an integer tensor cannot require grad), strings, their
# containers, devices and dtypes. Not ``float``: code annotates as ``float`` the 0-dim tensors it passes (trl 0.8.3
# ``store_metrics(self, metrics: Dict[str, float])`` is given graph-attached losses).
PLAIN_TYPES = frozenset({"int", "bool", "str", "bytes", "None", "List", "list", "Tuple", "tuple", "Sequence",
                         "Optional", "Union", "Dict", "dict", "Set", "set", "Literal", "device", "dtype", "Size"})
FRAME_CALLS = frozenset({"currentframe", "_getframe", "stack", "trace"})
# Decorators of the language, typing and torch that neither cache a method nor hide what it does with grad
# (no need to ask the project about them).
KNOWN_DECORATORS = frozenset({
    "property", "cached_property", "setter", "getter", "deleter", "abstractmethod", "overload", "override", "wraps",
    "contextmanager", "asynccontextmanager", "no_grad", "inference_mode", "enable_grad", "unused", "ignore", "export",
    "deprecated", "staticmethod", "classmethod"})

# -- naming: what a called name says about the value -------------------------
MODEL_NOUNS = frozenset(
    {"model", "models", "net", "network", "module", "encoder", "decoder", "backbone", "head", "heads", "policy",
     "actor", "critic", "generator", "discriminator", "classifier", "predictor", "transformer", "teacher",
     "student", "unet", "vae", "forward", "lm", "resnet", "convnet", "mlp"}
)
LOSS_NOUNS = frozenset({"loss", "losses", "criterion", "crit", "nll", "mse", "kl", "div", "entropy"})
# A name starting with a verb is a function that builds or fetches (get_model), not a model; one ending in a verb
# does that to the model (pydantic's ``model_dump``, ``model_validate``; ``model_init``), not a forward pass; ``copy``
# at the end is the noun (``model_copy = deepcopy(model)``).
VERBS = frozenset(
    {"get", "build", "make", "create", "load", "setup", "init", "wrap", "unwrap", "prepare", "configure", "save",
     "to", "from", "find", "is", "has", "register", "freeze", "unfreeze", "copy", "convert", "compile", "resolve",
     "apply", "update", "set", "reset", "check", "validate", "log", "print", "dump", "parse", "move", "patch",
     "enable", "disable", "export", "import", "replace", "instantiate", "download", "push", "sync"}
)
FINAL_VERBS = VERBS - {"copy"}
COUNTS = frozenset({"n", "num", "number"})  # ...nor one starting with these: a count of them (``n_heads``)
# ...and one ending in one of these names a thing about the model (model_config), not the model.
NOT_CALLED = frozenset(
    {"checkpoint", "config", "cfg", "name", "names", "path", "dir", "type", "kwargs", "args", "id", "ids", "key",
     "keys", "class", "cls", "summary", "registry", "state", "dict", "list", "info", "size", "card", "file",
     "hub", "url", "scale", "scaler", "weight", "weights", "meter", "tracker", "history", "logger", "version",
     "fn_name", "params", "parameters", "hook", "hooks", "wrapper", "factory", "builder", "cache", "map", "mapping",
     # a model's optimizer or learning-rate scheduler (``self.policy_scheduler(step)``) gives no forward pass
     "optimizer", "optimizers", "optim", "scheduler", "schedulers", "sched",
     # a size or a count of the model's parts (``head_dim``, ``hidden_len``), a number
     "dim", "dims", "len", "count"}
)
_TOKEN_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@lru_cache(maxsize=8192)
def name_tokens(name: str) -> tuple[str, ...]:
    """``("ddp", "model")`` for ``_ddp_model``, ``("model", "checkpoint")`` for ``ModelCheckpoint``. Remembered:
    a tree's names repeat, and the pre-filter and the walker each ask of most of them."""
    return tuple(t.lower() for t in _TOKEN_RE.findall(name))


# what the data or the environment says: ``y_true``, ``targets``, ``labels``, ``gt_boxes``, ``rewards``
GROUND_TRUTH_NOUNS = frozenset({"target", "targets", "label", "labels", "gt", "truth", "true", "reward", "rewards"})


def ground_truth(name: str) -> bool:
    """A parameter named as ground truth (``y_true``, ``targets``, ``rewards``): the last resort where only a ``Tensor``
    annotation speaks for it. Labels come from the dataset and rewards from the environment, without a graph."""
    return any(t in GROUND_TRUTH_NOUNS for t in name_tokens(name))


REGISTERING_VERBS = frozenset({"add", "register", "append", "attach", "subscribe"})


def registers(method: str) -> bool:
    """A method named as one that keeps what it is given (``add_callback``, ``register_handler``): the
    last resort for a method no code of the project defines."""
    tokens = name_tokens(method)
    return bool(tokens) and tokens[0] in REGISTERING_VERBS


_METHOD_KINDS = ("staticmethod", "classmethod", "property", "cached_property")
# What Python makes of these methods without a decorator: their first parameter is the class.
_IMPLICIT_KINDS = {"__new__": "staticmethod", "__init_subclass__": "classmethod", "__class_getitem__": "classmethod"}


def method_kind(name: str, decorators: set[str] | list[str]) -> str:
    """What the method ``name`` is, from the last parts of its decorators' names: one of ``_METHOD_KINDS``
    (``@x.setter`` and its kin are still the property ``x``; ``__new__`` is a staticmethod and
    ``__init_subclass__`` a classmethod by themselves) or ``"method"``."""
    if any(d in ("setter", "getter", "deleter") for d in decorators):
        return "property"
    return next((k for k in _METHOD_KINDS if k in decorators), _IMPLICIT_KINDS.get(name, "method"))


def binds_instance(kind: str) -> bool:
    """A method of this kind gets the instance as its first positional parameter."""
    return kind not in ("staticmethod", "classmethod")


def is_module_class(bases: list[str], module_classes: set[str]) -> bool:
    """A class statement's bases (dotted) make an ``nn.Module``: ``nn.*``, a module class of the file,
    or a base named like ...Module / ...Model (``PreTrainedModel``)."""
    return any(b and (b.startswith(("nn.", "torch.nn.")) or b.rsplit(".", 1)[-1] in module_classes
                      or name_tokens(b.rsplit(".", 1)[-1])[-1:] in (("module",), ("model",))) for b in bases)


def no_module_class(bases: list[str], is_module: bool) -> bool:
    """A class statement's bases say it is no ``nn.Module``: none, or only ``object``/``ABC``/``Generic``/``Protocol``
    (a base of another file may be one, ``ModelMixin``)."""
    return not is_module and all(b.rsplit(".", 1)[-1] in OBJECT_BASES for b in bases)


def _named_like(name: str, nouns: frozenset[str]) -> bool:
    tokens = name_tokens(name)
    if not tokens or tokens[0] in VERBS or tokens[-1] in FINAL_VERBS or tokens[0] in COUNTS or tokens[-1] in NOT_CALLED:
        return False
    return any(t in nouns for t in tokens)


def cache_decorator(path: str, origins: dict[str, str]) -> str | None:
    """The cache of :data:`ARGUMENT_CACHES` a decorator's dotted ``path`` names, through the file's imports
    (``origins``, see ``project.imports.import_origins``): ``"lru_cache"`` or ``"cache"``. A name the file does not
    import (defined or star-imported here) or imports from the project (a relative import) is judged by its last
    part; one imported from another package (``st.cache``) is no such cache."""
    head, _, rest = path.partition(".")
    origin = origins.get(head)
    if origin is None or origin.startswith("."):
        last = path.rpartition(".")[2]
        return last if last in CACHES else None
    module, _, last = (f"{origin}.{rest}" if rest else origin).rpartition(".")
    return last if last in CACHES and module in ARGUMENT_CACHES else None


def model_like(name: str) -> bool:
    """A callable named like a model or module: ``model``, ``self.net``, ``teacher_model``."""
    return _named_like(name, MODEL_NOUNS)


def name_holds(name: str, models: bool = True) -> str | None:
    """The last resort: ``state_dict``, ``ckpt``, ``checkpoint``, ``output_tensors``, ``model``."""
    tokens = name_tokens(name)
    if ("state" in tokens and "dict" in tokens) or "ckpt" in tokens or "checkpoint" in tokens:
        return "named like a state dict or checkpoint"
    if tokens and tokens[-1] in ("tensor", "tensors"):
        return "named like tensors"
    if models and model_like(name):
        return "named like a model"
    return None


def loss_like(name: str) -> bool:
    """A callable named like a loss: ``criterion``, ``loss_fn``, ``compute_loss``, ``F.cross_entropy``."""
    tokens = name_tokens(name)
    if tokens[:1] in (("compute",), ("calc",), ("calculate",), ("get",)):
        tokens = tokens[1:]
    return bool(tokens) and tokens[-1] not in NOT_CALLED and any(t in LOSS_NOUNS for t in tokens)


def dunder(name: str) -> bool:
    """``__init__``, ``__call__``: methods Python calls, never called by name on an object."""
    return name.startswith("__") and name.endswith("__")


def object_class(cls: str | None, bases: Iterable[str] = ()) -> bool:
    """``cls`` names a class of the code that is no container: ``buffer.update(strategy)`` on one of its objects
    calls the class's own method, which keeps its argument or not as the class says (project.records.MethodKeeps),
    not ``dict.update``. ``bases``: those of ``cls`` where the file defines it (``class History(list)`` stores)."""
    return bool(cls) and not {cls, *(b.rsplit(".", 1)[-1] for b in bases)} & CONTAINER_CLASSES


def constructed_class(name: str | None) -> str | None:
    """The class ``SomeClass(...)`` names when called (``name``: the callee's dotted path), if it is not PyTorch's."""
    last = (name or "").rsplit(".", 1)[-1]
    return last if last.lstrip("_")[:1].isupper() and not torch_rooted(name) else None


# torch.nn classes whose instances hold no parameter or buffer (as built without a ``weight``): activations,
# dropout, pooling, reshaping, distances and unweighted losses. A class keeping only these holds nothing of size.
SIZELESS_MODULES = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Softplus", "Softsign", "Softmax",
    "LogSoftmax", "Softmin", "ELU", "SELU", "CELU", "GLU", "Hardtanh", "Hardswish", "Hardsigmoid", "Hardshrink",
    "Softshrink", "Tanhshrink", "LogSigmoid", "Threshold", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "AlphaDropout", "Identity", "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
    "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity",
    "PairwiseDistance", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss", "BCEWithLogitsLoss",
    "CrossEntropyLoss", "NLLLoss"})


def torch_rooted(name: str | None) -> bool:
    """``nn.ModuleList``, ``torch.Generator``: a class of PyTorch, not of the linted project."""
    return bool(name) and name.split(".", 1)[0] in ("torch", "th", "nn", "F")


def is_torch(name: str | None) -> bool:
    return bool(name) and (name.startswith("torch.") or name.split(".", 1)[0] in ("torch", "th"))


def is_functional(name: str | None) -> bool:
    head = name.rsplit(".", 1)[0] if name and "." in name else ""
    return head in ("F", "functional", "nn.functional", "torch.nn.functional")


def torch_op(name: str | None) -> bool:
    """A call of a PyTorch function (``torch.div``, ``F.cross_entropy``): what it returns carries a graph only
    through its arguments, whatever its last name says (``div`` and ``kl_div`` name no loss object)."""
    return is_torch(name) or is_functional(name)


# -- what values are (analysis/tensors.py) --
# Results that never carry autograd history (integer, boolean or Python values).
SAFE_METHODS = frozenset(
    {
        "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "argmax", "argmin",
        "argsort", "eq", "ne", "lt", "le", "gt", "ge", "long", "int", "bool", "byte", "short",
        "nonzero", "any", "all", "isnan", "isinf", "isfinite", "element_size", "data_ptr",
        "stride", "storage_offset", "is_contiguous", "get_device", "backward", "keys",
        "__len__", "count_nonzero", "isclose", "equal", "format", "join", "startswith", "endswith",
        "items_count", "state_dict", "parameters", "named_parameters", "buffers", "children",
        "modules", "named_modules", "named_children", "zero_grad", "register_forward_hook", "generate",
    }
)
# What a draw from a torch.distributions object is made by: ``sample()`` draws under no_grad (``rsample()``, the
# reparameterised draw, keeps the graph). A tensor has no such method, so a graph-attached receiver is a distribution.
DRAWS = frozenset({"sample", "sample_n"})
# Reductions that, given a dim, return (values, indices): the indices are integers and hold no graph
# (``_, predicted = out.max(1)``, ``out.topk(3).indices``).
INDEXED_REDUCTIONS = frozenset({"max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax",
                                "cummin"})
# pytree functions that return (leaves, spec): the spec describes the structure and holds no tensor
TREE_FLATTENS = frozenset({"tree_flatten", "tree_flatten_with_path"})
SAFE_ATTRS = frozenset(
    {"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_leaf", "grad_fn", "layout", "names"}
)
SAFE_CALLS = frozenset(
    {
        "float", "int", "bool", "str", "len", "repr", "isinstance", "issubclass", "hasattr",
        "getattr", "print", "id", "type", "format", "hash", "callable", "range", "open",
    }
)
# Builtins whose result holds their arguments or their elements: ``dict(loss=loss)``, ``next(iter(outs))``.
HOLDING_CALLS = frozenset({"dict", "list", "tuple", "set", "frozenset", "sorted", "reversed", "zip", "enumerate",
                           "iter", "next"})
SAFE_ROOTS = frozenset({"math", "np", "numpy", "time", "os", "logging", "logger", "json", "random"})
TORCH_UNATTACHED = frozenset(
    {
        "tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye",
        "rand", "randn", "randint", "randperm", "zeros_like", "ones_like", "empty_like",
        "full_like", "rand_like", "randn_like", "randint_like", "argmax", "argmin", "argsort",
        "isnan", "isinf", "isfinite", "equal", "eq", "ne", "lt", "le", "gt", "ge", "numel",
        "is_tensor", "from_numpy", "bucketize", "searchsorted", "manual_seed", "no_grad",
        "count_nonzero", "nonzero", "unique", "bincount", "histc", "sign",
    }
)
# torch functions whose result is a plain value, no tensor: torch.device("cuda"), torch.finfo(dtype).
TORCH_NOT_TENSORS = frozenset({"device", "finfo", "iinfo", "get_default_dtype", "is_grad_enabled", "is_tensor",
                               "is_floating_point", "get_device"})
# grad off for whatever runs inside, as a context manager or a decorator
NO_GRAD_CONTEXTS = frozenset({"no_grad", "inference_mode"})
