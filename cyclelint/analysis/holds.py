"""Whether a variable can hold something of size: a tensor, a module, a state dict or a
checkpoint, or a module's ``self``. Judged from what the value is (how it was bound, the
annotation of the parameter that received it, the class of ``self``); the name only when
nothing else says. A cycle or a cache that holds none of these holds small values only."""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..vocabulary import MODULE_TYPES, PLAIN_TYPES, TENSOR_TYPES, TYPING_NAMES, name_holds
from .exprs import all_params, child_nodes, dotted, last_part

if TYPE_CHECKING:
    from .scopes import Function


def defining_scope(name: str, fn: Function) -> Function | None:
    """The enclosing function whose local ``name`` is (module and class scopes are no closure's)."""
    scope: Function | None = fn
    while scope is not None and scope.node is not None:
        if name in scope.params or name in scope.stored:
            return scope
        scope = scope.parent
    return None


def annotation_of(name: str, fn: Function) -> cst.BaseExpression | None:
    if fn.node is None:
        return None
    for p in all_params(fn.node.params):
        if p.name.value == name and p.annotation is not None:
            return p.annotation.annotation
    return None


def alternatives(ann: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The types an annotation admits but None: ``A | B``, ``Optional[A]``, ``"A | None"`` unparsed."""
    if isinstance(ann, cst.SimpleString) and isinstance(ann.evaluated_value, str):
        try:
            ann = cst.parse_expression(ann.evaluated_value)
        except cst.ParserSyntaxError:
            return []
    found: list[cst.BaseExpression] = []
    stack = [ann] if ann is not None else []
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.BitOr):
            stack += [cur.left, cur.right]
        elif isinstance(cur, cst.Subscript) and last_part(dotted(cur.value)) == "Optional" and len(cur.slice) == 1 \
                and isinstance(cur.slice[0].slice, cst.Index):
            stack.append(cur.slice[0].slice.value)
        elif not (isinstance(cur, cst.Name) and cur.value == "None"):
            found.append(cur)
    return found


def flag_or_count(ann: cst.BaseExpression | None) -> bool:
    """``torch.Tensor | bool``, ``Union[int, Tensor]``: a tensor that stands for a flag or a count (agilerl's
    ``counted: torch.Tensor | bool``), of a bool or integer dtype, which cannot require grad. ``Union[float, Tensor]``
    is a real value, which may."""
    kinds, names = alternatives(ann), set()
    while kinds:
        cur = kinds.pop()
        if isinstance(cur, cst.Subscript) and last_part(dotted(cur.value)) == "Union":
            kinds += [e.slice.value for e in cur.slice if isinstance(e.slice, cst.Index)]
        else:
            names.add(last_part(dotted(cur) or "") or "")
    return bool(names & TENSOR_TYPES) and bool(names & {"bool", "int"}) and names <= TENSOR_TYPES | {"bool", "int", "None"}


def named_type(ann: cst.BaseExpression | None) -> str | None:
    """The one type an annotation names, by its last name (``teacher: SentenceTransformer``,
    ``Optional[nn.Module]``, ``"Trainer | None"`` unparsed), when it names exactly one that is no typing construct."""
    named = [last_part(dotted(cur) or "") or "" for cur in alternatives(ann)]
    if len(named) != 1 or not named[0] or named[0] in TYPING_NAMES:
        return None
    return named[0]


def list_annotation(ann: cst.BaseExpression | None) -> bool:
    """``list[torch.Tensor] | None``, ``Optional[List[Tensor]]``: the value is a list (or None), which ``x[i] = v``
    cannot grow."""
    kinds = alternatives(ann)
    return len(kinds) == 1 and last_part(dotted(kinds[0].value if isinstance(kinds[0], cst.Subscript) else kinds[0])
                                         or "") in ("list", "List")


def plain_items(ann: cst.BaseExpression | None) -> bool:
    """``set[str]``, ``dict[str, int]``, ``list[tuple[int, int]]``: a container whose annotation names the types
    of its items, none of which holds a tensor. A bare ``list`` or ``dict`` says nothing of its items."""
    return isinstance(ann, cst.Subscript) and plain_annotation(ann)


def code_class(ann: cst.BaseExpression | None) -> str | None:
    """The type an annotation names (:func:`named_type`) when it is a class of the code: no tensor or module
    type of torch, no builtin."""
    kind = named_type(ann)
    return kind if kind and kind[:1].isupper() and kind not in TENSOR_TYPES | MODULE_TYPES else None


def is_class_annotation(ann: cst.BaseExpression | None) -> bool:
    """``Type[nn.Module]``: the value is a class, which holds no weights whatever it is named."""
    return isinstance(ann, cst.Subscript) and last_part(dotted(ann.value)) in ("Type", "type")


def plain_annotation(ann: cst.BaseExpression | None) -> bool:
    """``int``, ``List[int]``, ``Tuple[int, ...]``, ``Optional[str]``, ``torch.device``: a value of that type
    holds no tensor, so no graph (``new_size: List[int]`` beside the tensor a ``forward`` is given)."""
    stack = [ann] if ann is not None else []
    while stack:
        cur = stack.pop()
        path = dotted(cur)
        if path is not None:
            if last_part(path) not in PLAIN_TYPES:
                return False
        elif isinstance(cur, cst.Subscript):
            stack.append(cur.value)
            stack.extend(e.slice.value for e in cur.slice if isinstance(e.slice, cst.Index))
        elif isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.BitOr):
            stack.extend((cur.left, cur.right))
        elif not isinstance(cur, cst.Ellipsis):
            return False  # a string, a call: what it names is not read here
    return ann is not None


def declares_plain_return(node: cst.FunctionDef) -> bool:
    """``-> float``, ``-> int``, ``-> Tuple[int, str]``: the function says it returns a Python number or another
    value that holds no tensor. ``float`` counts here though not for parameters (PLAIN_TYPES): a caller may pass a
    0-dim tensor as a float, but a body is read, and a return it shows to hold a tensor outweighs the annotation."""
    ann = node.returns.annotation if node.returns else None
    return plain_annotation(ann) or (ann is not None and dotted(ann) == "float")


def declares_module_return(node: cst.FunctionDef, module_classes: set[str]) -> bool:
    """``-> nn.Module``, ``-> Optional[PointSAModule]``: the function hands back a module, which holds parameters,
    not a forward pass's graph (mmdet3d's ``build_sa_module(cfg) -> nn.Module``, whose body calls ``sa_module(...)``,
    a class named like a module)."""
    ann = node.returns.annotation if node.returns else None
    return annotation_names(ann, MODULE_TYPES | module_classes) is not None and annotation_names(ann, TENSOR_TYPES) is None


def annotation_holds(ann: cst.BaseExpression | None, module_classes: set[str]) -> str | None:
    """``torch.Tensor``, ``nn.Module``, ``dict[str, Tensor]``, a module class of the project."""
    return annotation_names(ann, TENSOR_TYPES | MODULE_TYPES | module_classes)


def annotation_names(ann: cst.BaseExpression | None, types: frozenset[str] | set[str]) -> str | None:
    """``annotated X`` when the annotation names one of ``types`` by its last name, anywhere inside it
    (``Optional[Tensor]``, ``Union[float, Tensor]``, ``"Tensor | None"``); a class (``Type[...]``) does not count,
    nor a callable's signature (``Callable[[Tensor], Tensor]``: what it takes and returns, not what it holds)."""
    stack = [ann] if ann is not None else []
    while stack:
        cur = stack.pop()
        path = dotted(cur)
        if path is not None:
            if last_part(path) in types:
                return f"annotated {path}"
        elif isinstance(cur, cst.Subscript):
            if is_class_annotation(cur) or last_part(dotted(cur.value)) == "Callable":
                continue
            stack.append(cur.value)
            stack.extend(e.slice.value for e in cur.slice if isinstance(e.slice, cst.Index))
        elif isinstance(cur, cst.BinaryOperation):  # Tensor | None
            stack.extend((cur.left, cur.right))
        elif isinstance(cur, cst.SimpleString):  # "nn.Module"
            text = cur.evaluated_value
            if isinstance(text, str) and set(text.replace("[", " ").replace(".", " ").split()) & types:
                return f"annotated {text}"
    return None


def plain_instance(name: str, fn: Function) -> bool:
    """``name``, seen from ``fn``, is the instance of the method ``fn`` is (or is in), of a class that is no module
    and keeps none in the file: what it holds is for the project to say (project/sizes.py)."""
    scope = defining_scope(name, fn)
    return (scope is not None and scope is fn.enclosing_method() and name == scope.instance and scope.cls is not None
            and not (scope.cls.is_module or scope.cls.module_attrs))


def variable_holds(name: str, fn: Function, module_classes: set[str]) -> str | None:
    """Why the variable ``name`` seen from ``fn`` can hold something of size, or None."""
    scope = defining_scope(name, fn)
    if scope is None:
        return None
    if name == scope.instance and scope.is_method:
        cls = scope.cls
        if cls is not None and (cls.is_module or cls.module_attrs):
            return f"the instance of {cls.name}, an nn.Module" if cls.is_module else \
                f"the instance of {cls.name}, which keeps modules"
        # any object: what it holds (a tracer, graph arguments, a converter's tensors) is not visible here
        return f"the {cls.name} instance and all it holds" if cls is not None else None
    val = scope.env.get(name)
    if val is not None and (val.tensor or val.attached):
        return "a tensor"
    if val is not None and val.module:
        return "a module"
    ann = annotation_of(name, scope)
    if is_class_annotation(ann):
        return None
    why = annotation_holds(ann, module_classes)
    if not why and plain_annotation(ann):
        return None  # ``model_family_keywords: list[str] | None``: the annotation says more than the name
    if why or name in scope.params or (val is not None and val.deps):
        return why or name_holds(name)
    # a local bound to a display or a plain value: an empty list is filled later, so only a name that
    # says tensors or a state dict counts (``stage_output_tensors = []``), not a model noun (``head_dims``)
    return name_holds(name, models=False)


def comprehension_names(node: cst.CSTNode) -> set[str]:
    """Names bound by the comprehensions inside ``node`` (``[f(t) for t in v]``): local to them."""
    out: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.CompFor):
            out |= _target_names(cur.target)
        stack.extend(child_nodes(cur))
    return out


def _target_names(target: cst.CSTNode) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    return set()
