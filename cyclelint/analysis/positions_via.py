"""Names unpacked from a call of an object whose class is known (``loss, items = compute_loss(p, y)`` with
``compute_loss = ComputeLoss(model)``) but defined in another file: each position is attached through that
method's own position, which the project may know holds no graph (``return loss * bs, loss_items.detach()``)."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensors import Value

POSITION = "#"  # "Class.method#i": position ``i`` of the tuples that method returns


def through_positions(whole: Value, count: int) -> tuple[Value, ...] | None:
    """Each of ``count`` positions of ``whole``, attached only through known methods: via their positions."""
    if not whole.attached or not whole.via or any(POSITION in v for v in whole.via):
        return None
    return tuple(replace(whole, via=frozenset(f"{v}{POSITION}{i}" for v in whole.via)) for i in range(count))
