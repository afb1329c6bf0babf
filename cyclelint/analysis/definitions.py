"""What a ``def`` or ``class`` statement declares, read before the walker enters its body: the
function's kind, instance, grad mode and typed parameters; the class's bases and whether it is a module."""
from __future__ import annotations

import libcst as cst

from ..vocabulary import EVAL_STEPS, MODULE_TYPES, NO_GRAD_CONTEXTS, binds_instance, is_module_class, method_kind
from . import exprs as ex
from .holds import code_class, named_type
from .scopes import ClassInfo, FileFacts, Function
from .tensors import Value


def function_of(node: cst.FunctionDef, parent: Function, facts: FileFacts) -> Function:
    """The function ``node`` defines inside ``parent``; a method is also recorded on its class."""
    decos = [ex.last_part(d) for d in ex.decorator_names(node)]
    is_method = bool(parent.is_class_body)
    param_nodes = ex.all_params(node.params)
    params = [p.name.value for p in param_nodes]
    name = node.name.value
    if is_method:
        kind = method_kind(name, decos)
        if kind == "property":  # ``@x.setter`` makes ``x`` a property, whatever decorated it first
            parent.cls.methods[name] = kind  # type: ignore[union-attr]
        parent.cls.methods.setdefault(name, kind)  # type: ignore[union-attr]
        if name == "__init__":
            parent.cls.init_params = params[1:]  # type: ignore[union-attr]
        positional = [*node.params.posonly_params, *node.params.params]  # ``def f(*args)`` binds no instance
        instance = positional[0].name.value if positional and binds_instance(kind) else None
    else:
        instance = parent.instance if parent.instance not in params else None
    no_grad = any(d in NO_GRAD_CONTEXTS or d in facts.grad_off_decorators for d in decos) or (
        not is_method and not parent.grad_enabled) or (is_method and name in EVAL_STEPS and parent.cls.is_module) or (
        is_method and name in facts.loop_grad_off.get(parent.cls.name, ())) or (
        is_method and name in ("forward", "backward") and kind == "staticmethod" and parent.cls.autograd_function)
    fn = Function(node, name, parent, parent.cls if is_method else None, instance, params, no_grad=no_grad)
    fn.is_method = is_method
    if is_method and no_grad:
        parent.cls.grad_off.add(name)  # type: ignore[union-attr]
    for param in param_nodes:
        p = param.name.value
        if p != instance:
            # ``encoder: nn.Module``: calling it is a forward pass, whatever it is named; ``meter: AverageMeter``:
            # an object of that class, whose methods the project describes
            ann = param.annotation.annotation if param.annotation else None
            kind = named_type(ann)
            module = kind in MODULE_TYPES or kind in facts.module_classes
            # ``*meters: Meter`` is a tuple of meters: no method of the class is called on it
            cls = None if module or param.star in ("*", "**") else code_class(ann)
            fn.env[p] = Value(module=module, deps=frozenset((p,)), cls=cls)
    return fn


def class_of(node: cst.ClassDef, facts: FileFacts) -> ClassInfo:
    """The class ``node`` defines, recorded in the file's facts (a module class among its module classes)."""
    bases = [ex.base_path(b) for b in node.bases]
    info = ClassInfo(node, node.name.value, bases, is_module_class(bases, facts.module_classes))
    if (generated := facts.generated_inits.get(info.name)) is not None:  # a dataclass keeps its fields
        info.init_params, info.kept_params = list(generated[0]), {field: field for field in generated[1]}
    if info.is_module:
        facts.module_classes.add(info.name)
    facts.classes[info.name] = info
    return info
