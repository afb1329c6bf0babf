"""Which ``--fix`` rewrites cannot break a program that runs.

``x.detach()`` needs ``x`` to be a tensor on every path (else AttributeError); ``float(x.detach())``
needs a tensor of one element (else ValueError). Both are proved from the code, not guessed from
names: a model's output may be a tuple or a ModelOutput, ``criterion`` may be built with
``reduction="none"``. What cannot be proved gets no rewrite: the finding stays, without ``[*]``.

What proves a tensor here: a loss of ``torch.nn.functional`` or of a ``torch.nn`` loss module (one
element unless its ``reduction`` says otherwise), a torch function or tensor method known to return
one tensor, indexing or arithmetic with a tensor operand (torch's operators give a tensor with
numbers, tensors and arrays), a local name every binding of which is such a value, and a name whose
``.backward()`` (which accepts one element only) ran earlier in the same loop iteration."""
from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..analysis.exprs import callee, child_nodes, last_part
from ..vocabulary import is_functional, is_torch
from .store_shapes import NOT_A_TENSOR

NONE, TENSOR, ONE = 0, 1, 2  # not proved; a tensor on every path; a tensor of one element on every path

# torch.nn.functional losses -> positional arguments before the optional ones (reduction among them)
F_LOSSES = {
    "binary_cross_entropy": 2, "binary_cross_entropy_with_logits": 2, "cross_entropy": 2, "nll_loss": 2,
    "kl_div": 2, "l1_loss": 2, "mse_loss": 2, "smooth_l1_loss": 2, "huber_loss": 2, "soft_margin_loss": 2,
    "multilabel_margin_loss": 2, "multilabel_soft_margin_loss": 2, "multi_margin_loss": 2,
    "poisson_nll_loss": 2, "hinge_embedding_loss": 2, "gaussian_nll_loss": 3, "cosine_embedding_loss": 3,
    "margin_ranking_loss": 3, "triplet_margin_loss": 3, "triplet_margin_with_distance_loss": 3, "ctc_loss": 4,
}
NN_LOSSES = frozenset({
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss", "KLDivLoss", "L1Loss", "MSELoss",
    "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "PoissonNLLLoss", "HingeEmbeddingLoss", "GaussianNLLLoss", "CosineEmbeddingLoss",
    "MarginRankingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
})
# Tensor methods that give back one tensor of the receiver's number of elements (argument-free
# ones and those whose arguments only move, retype or reshape it)...
KEEP_SIZE = frozenset({
    "cpu", "cuda", "to", "float", "double", "half", "bfloat16", "clone", "contiguous", "detach", "abs", "exp",
    "log", "sqrt", "neg", "sigmoid", "tanh", "relu", "square", "squeeze", "unsqueeze", "flatten", "view",
    "reshape", "softmax", "log_softmax", "sign", "reciprocal", "exp_", "abs_",
})
# ...ones that give one tensor of some size, and the reductions that give one element when given no argument
ANY_SIZE = frozenset({
    "add", "sub", "mul", "div", "pow", "matmul", "clamp", "masked_fill", "t", "transpose", "permute", "expand",
    "repeat", "gather", "index_select", "sum", "mean", "norm", "prod", "std", "var", "amax", "amin",
    "cumsum", "softplus", "where", "type_as", "expand_as", "view_as", "reshape_as",
})
REDUCTIONS = frozenset({"sum", "mean", "norm", "prod", "std", "var", "amax", "amin", "max", "min"})
TORCH_TENSOR = frozenset({
    "cat", "stack", "exp", "log", "abs", "sqrt", "matmul", "mm", "bmm", "softmax", "log_softmax", "sigmoid",
    "tanh", "relu", "clamp", "square", "pow", "mul", "add", "sub", "div", "neg", "einsum", "sum", "mean",
    "norm", "logsumexp", "dist", "dot",
})
TORCH_ONE = frozenset({"sum", "mean", "norm", "prod", "dist", "dot"})  # one positional argument (two for dist, dot)
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
              cst.MatrixMultiply)


class Proofs:
    """What one scope (a function, or the module) proves about its values."""

    def __init__(self, scope: cst.CSTNode | None, params: Iterable[str]):
        self.scope = scope
        self.params = set(params)
        self._scope_index: _BindingIndex | None = None
        self._busy: set[str] = set()
        self._where: tuple[cst.CSTNode, cst.CSTNode | None] | None = None  # the statement judged, its loop

    def rewrite(self, expr: cst.BaseExpression, how: str, at: cst.CSTNode, loop: cst.CSTNode | None,
                attached) -> list[tuple[cst.BaseExpression, str]] | None:
        """The (expression, how) pairs that detach ``expr`` safely at statement ``at`` in ``loop``:
        the whole of it, or the branches of a conditional that hold a graph; None when there are none.
        ``how`` is "float" for a Python-number accumulator: kept only for a one-element tensor."""
        self._where = (at, loop)
        try:
            kind = self.kind(expr)
        finally:
            self._where = None
        if kind == ONE:
            return [(expr, how)]
        if kind == TENSOR:
            return [(expr, "detach")]
        if isinstance(expr, cst.IfExp):
            out = []
            for branch in (expr.body, expr.orelse):
                if attached(branch):
                    part = self.rewrite(branch, how, at, loop, attached)
                    if part is None:
                        return None
                    out += part
            return out or None
        return None

    def kind(self, expr: cst.BaseExpression) -> int:
        if isinstance(expr, cst.Name):
            return max(self._name(expr.value, self.kind), self._stepped(expr.value))
        if isinstance(expr, cst.Call):
            return self._call(expr)
        if isinstance(expr, cst.Subscript):
            return TENSOR if self.kind(expr.value) else NONE
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.kind(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC):
            left, right = self.kind(expr.left), self.kind(expr.right)
            if not (left or right):
                return NONE
            one = all(k == ONE or self.number(e) for k, e in ((left, expr.left), (right, expr.right)))
            return ONE if one and not isinstance(expr.operator, cst.MatrixMultiply) else TENSOR
        if isinstance(expr, cst.IfExp):
            return min(self.kind(expr.body), self.kind(expr.orelse))
        return NONE

    def number(self, expr: cst.BaseExpression) -> bool:
        """A Python number on every path."""
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.Name):
            return self._name(expr.value, lambda e: self.number(e)) == 1
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.number(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC):
            return self.number(expr.left) and self.number(expr.right)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "item":
            return not expr.args and bool(self.kind(expr.func.value))
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("float", "int", "len"):
            return not self.bindings().get(expr.func.value)  # the builtin, not a local of that name
        return False

    # -- calls -------------------------------------------------------------
    def _call(self, call: cst.Call) -> int:
        name = callee(call)
        last = last_part(name)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if name and is_functional(name) and last in F_LOSSES:
            return _reduced(call, len(positional) <= F_LOSSES[last])
        loss_module = self._loss_module(call.func)
        if loss_module:
            return loss_module
        if name and is_torch(name) and not is_functional(name) and last in TORCH_TENSOR:
            if last in TORCH_ONE and not [a for a in call.args if a.keyword is not None]:
                one_arg = len(positional) == (2 if last in ("dist", "dot") else 1)
                return ONE if one_arg and all(self.kind(a.value) for a in positional) else TENSOR
            return TENSOR
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            recv = self.kind(call.func.value)
            if not recv:
                return NONE
            if method in REDUCTIONS and not call.args:
                return ONE
            if method in KEEP_SIZE:
                return recv
            if method in ANY_SIZE:
                return TENSOR
        return NONE

    def _loss_module(self, func: cst.BaseExpression) -> int:
        """Calling a torch.nn loss module: ``nn.MSELoss()(a, b)`` or ``crit(a, b)``, ``crit`` bound to one."""
        if isinstance(func, cst.Call):
            name = callee(func)
            if name and last_part(name) in NN_LOSSES and (is_torch(name) or name.startswith("nn.")):
                return _reduced(func, not [a for a in func.args if a.keyword is None])
            return NONE
        if isinstance(func, cst.Name):
            return self._name(func.value, self._loss_module)
        return NONE

    # -- names -------------------------------------------------------------
    def _name(self, name: str, judge) -> int:
        """The least ``judge`` gives over every binding of ``name`` in the scope (NONE for a
        parameter, a global, a name bound by unpacking, a loop, an import...)."""
        values = self.bindings().get(name)
        if not values or name in self.params or None in values or name in self._busy:
            return NONE
        self._busy.add(name)
        where, self._where = self._where, None  # a bound value was computed elsewhere: no step evidence
        try:
            return min(int(judge(v)) for v in values)
        finally:
            self._busy.discard(name)
            self._where = where

    def bindings(self) -> dict[str, list]:
        """name -> the value of each of its bindings in the scope, None where it has none to judge."""
        return self._index().values

    def _index(self) -> _BindingIndex:
        if self._scope_index is None:
            self._scope_index = _BindingIndex(self.scope)
        return self._scope_index

    def _stepped(self, name: str) -> int:
        """ONE for a name of the statement judged whose ``name.backward()`` is an unconditional
        statement of the loop's body before the one holding the statement, with no binding of the
        name in between: backward() accepts one element only, so the name holds a one-element tensor."""
        index = self._index()
        if self._where is None or self._where[1] is None or name in index.shared:
            return NONE
        at, loop = self._where
        body = {id(s): i for i, s in enumerate(getattr(loop.body, "body", ()))}
        step = next((body[id(s)] for s in loop.body.body if _backward_of(s, name)), None) if body else None
        here = index.position(at, body)
        if step is None or here is None or here <= step:
            return NONE
        between = [k for k in (index.position(b, body) for b in index.bound_at.get(name, ())) if k is not None]
        return NONE if any(step <= k <= here for k in between) else ONE


def kept_parts(exprs: list[cst.BaseExpression], spread: bool) -> list[cst.BaseExpression] | None:
    """What a store keeps, to detach: each value, or the elements of a list or tuple literal. None where there is
    nothing to detach in place: ``extend(xs)`` (``spread``) keeps the elements of xs, a display is no tensor."""
    parts: list[cst.BaseExpression] = []
    for expr in exprs:
        if isinstance(expr, (cst.List, cst.Tuple)):
            parts += [e.value for e in expr.elements if not isinstance(e, cst.StarredElement)]
        elif spread or isinstance(expr, NOT_A_TENSOR):
            return None
        else:
            parts.append(expr)
    return parts


def _reduced(call: cst.Call, no_extra_positional: bool) -> int:
    """A loss call, or a loss module's constructor: one element unless ``reduction`` (or the old
    ``reduce``/``size_average``) may say otherwise."""
    if not no_extra_positional:
        return TENSOR
    for arg in call.args:
        key = arg.keyword.value if arg.keyword else None
        if key in ("reduce", "size_average"):
            return TENSOR
        if key == "reduction":
            text = arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
            return ONE if text in ("mean", "sum", "batchmean") else TENSOR
    return ONE


def _backward_of(stmt: cst.CSTNode, name: str) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        call = small.value if isinstance(small, cst.Expr) else None
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"
                and isinstance(call.func.value, cst.Name) and call.func.value.value == name
                and not any(a.keyword is None or a.keyword.value == "gradient" for a in call.args)):
            return True
    return False


class _BindingIndex:
    """Every binding of a scope, found in one pass (an explicit stack: deep code cannot exhaust the
    recursion limit). Nested scopes count only for their ``global`` and ``nonlocal`` declarations,
    which may rebind a name of this one. A binding whose value cannot be judged is recorded as None."""

    def __init__(self, scope: cst.CSTNode | None):
        self.values: dict[str, list] = {}
        self.shared: set[str] = set()  # global or nonlocal: a call may rebind it at any time
        self.bound_at: dict[str, list[cst.CSTNode]] = {}  # the statement of each binding
        self.parent: dict[int, cst.CSTNode | None] = {}  # statement -> the statement around it
        if scope is not None:
            self._scan(scope.body if isinstance(scope, cst.FunctionDef) else scope)

    def position(self, stmt: cst.CSTNode, body: dict[int, int]) -> int | None:
        """The index in ``body`` (statement ids -> index) of the statement that holds ``stmt``."""
        cur: cst.CSTNode | None = stmt
        while cur is not None and id(cur) not in body:
            cur = self.parent.get(id(cur))
        return body[id(cur)] if cur is not None else None

    def _scan(self, root: cst.CSTNode) -> None:
        stack: list[tuple[cst.CSTNode, cst.CSTNode | None, bool]] = [(root, None, False)]
        while stack:
            node, stmt, nested = stack.pop()
            if isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
                self.parent[id(node)] = stmt
                stmt = node
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    self._bind(item.name, None, stmt)
                    self.shared.add(item.name.value)
            elif isinstance(node, cst.Lambda):
                continue  # its parameters and walruses are its own
            elif not nested:
                if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                    self._bind(node.name, None, stmt)
                    nested = True
                else:
                    self._binding(node, stmt)
            stack.extend((child, stmt, nested) for child in reversed(list(child_nodes(node))))

    def _binding(self, node: cst.CSTNode, stmt: cst.CSTNode | None) -> None:
        if isinstance(node, cst.Assign):
            for t in node.targets:
                self._bind(t.target, node.value, stmt)
        elif isinstance(node, (cst.AnnAssign, cst.NamedExpr)) and node.value is not None:
            self._bind(node.target, node.value, stmt)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            # x += v is x = x + v: a tensor when v is one (judged as that BinaryOperation)
            operator = getattr(cst, type(node.operator).__name__.replace("Assign", ""), None)
            arithmetic = isinstance(operator, type) and issubclass(operator, ARITHMETIC)
            self._bind(node.target, cst.BinaryOperation(node.target, operator(), node.value) if arithmetic else None,
                       stmt)
        elif isinstance(node, (cst.For, cst.Del)):
            self._bind(node.target, None, stmt)
        elif isinstance(node, cst.ImportAlias):
            name = node.asname.name if node.asname else node.name
            while isinstance(name, cst.Attribute):  # import a.b binds a
                name = name.value
            self._bind(name, None, stmt)
        elif isinstance(node, (cst.WithItem, cst.ExceptHandler, cst.ExceptStarHandler)):
            alias = node.asname if isinstance(node, cst.WithItem) else node.name
            if alias is not None:
                self._bind(alias.name, None, stmt)
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            self._bind(node.name, None, stmt)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            self._bind(node.rest, None, stmt)

    def _bind(self, target: cst.CSTNode, value: cst.BaseExpression | None, stmt: cst.CSTNode | None) -> None:
        if isinstance(target, cst.Name):
            self.values.setdefault(target.value, []).append(value)
            if stmt is not None:
                self.bound_at.setdefault(target.value, []).append(stmt)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value, None, stmt)  # unpacked: each part is not judged
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None, stmt)
