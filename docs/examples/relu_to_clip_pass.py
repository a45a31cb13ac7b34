"""A Relay-style pass: tvm.relay's function_pass with an ExprMutator, as a TVM script writes it.

relay-opt model.mlir --load-pass-plugin docs/examples/relu_to_clip_pass.py -p ReluToClip
"""

from xrelay import relay
from xrelay.relay.expr_functor import ExprMutator


class _ReluToClip(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, relay.Op) and new.op.name == "nn.relu":
            return relay.clip(new.args[0], 0.0, 3.4e38)
        return new


@relay.transform.function_pass(opt_level=0, name="ReluToClip")
class ReluToClip:
    """Every ``nn.relu(x)`` becomes ``clip(x, 0, FLT_MAX)``."""

    def transform_function(self, func, mod, ctx):
        return _ReluToClip().visit(func)


relu_to_clip = ReluToClip()
