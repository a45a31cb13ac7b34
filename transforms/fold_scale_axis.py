"""``fold-scale-axis``: Relay's FoldScaleAxis, a sequence of three passes.

``backward-fold-scale-axis`` (scales after conv2d/dense), then ``forward-fold-scale-axis``
(scales before them), then ``fold-constant`` to turn ``weight * scale`` into new weights. Run
through the pass infrastructure it appears as a nested ``Sequential`` named ``FoldScaleAxis``
(``sequence`` below); ``apply`` runs the same three passes in order.

As in Relay, the Sequential gates its parts by the pass context's opt level, and backward- and
forward-fold-scale-axis have opt_level 3: ``relay-opt -p fold-scale-axis`` at the default level 2
runs only fold-constant (use a ``PassContext(opt_level=3)``, or name the three passes, or call
``FoldScaleAxisPass().apply`` directly, which runs all three).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xrelay.transforms.backward_fold_scale_axis import BackwardFoldScaleAxisPass
from xrelay.transforms.fold_constant import FoldConstantPass
from xrelay.transforms.forward_fold_scale_axis import ForwardFoldScaleAxisPass


@dataclass(frozen=True)
class FoldScaleAxisPass(ModulePass):
    """Fold per-channel scales into conv2d/dense weights (backward, forward, fold-constant)."""

    name = "fold-scale-axis"
    relay_name: ClassVar[str] = "FoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ()
    sequence: ClassVar[tuple[str, ...]] = (
        "backward-fold-scale-axis",
        "forward-fold-scale-axis",
        "fold-constant",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in (BackwardFoldScaleAxisPass(), ForwardFoldScaleAxisPass(), FoldConstantPass()):
            p.apply(ctx, op)
