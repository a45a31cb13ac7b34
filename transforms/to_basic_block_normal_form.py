"""``to-basic-block-normal-form``: Relay's ToBasicBlockNormalForm, which xrelay's lowering has
already done.

Relay's ToBasicBlockNormalForm puts each expression in the scope (basic block) of its uses: a
value that two scopes share (both branches of an If, or a branch and what follows the If) is
let-bound in the innermost scope that encloses them, so it is computed once and in a scope that
dominates its uses; everything else stays a graph node. xrelay's IR is made that way when a
function is lowered (``xrelay.relay.module``): ``scf.if`` branches are regions, a value both
branches use is emitted before the If, and SSA dominance (which the verifier checks) is that
scoping. So the pass leaves the module unchanged; it exists so that Relay's build pipelines and
scripts calling ``relay.transform.ToBasicBlockNormalForm()`` port without edits.

```mlir
// before and after
%t = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
%c = tensor.extract %cond[] : tensor<i1>
%r = scf.if %c -> (tensor<2xf32>) { ... uses %t ... } else { ... uses %t ... }
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class ToBasicBlockNormalFormPass(ModulePass):
    """Leave the module unchanged: its values already live in the scopes of their uses."""

    name = "to-basic-block-normal-form"
    relay_name: ClassVar[str] = "ToBasicBlockNormalForm"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
