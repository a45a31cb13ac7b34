"""Every relay op runs in the interpreter and its kernel agrees with its type inference.

The examples come from the dialect's round-trip suite (one per op, values made by
``test.op``); here ``test.op`` results get random data and each relay op is run through
``RelayInterpreter.run_op``, which checks every result against its declared type.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.dialects import test
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.dialects.relay import RELAY_OPS, RelayOp, shape_of, tensor_type
from xrelay.runtime.interpreter import RelayInterpreter, random_array

OPS_FILE = Path(__file__).parents[1] / "filecheck" / "dialects" / "relay" / "ops.mlir"


def _chunks() -> list[str]:
    chunks = OPS_FILE.read_text().split("// -----")
    return [c for c in chunks if "relay." in c and "func.func" not in c]


def test_every_relay_op_runs_with_the_declared_result_types():
    ctx = make_context()
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for chunk in _chunks():
        mod = Parser(ctx, chunk, str(OPS_FILE)).parse_module()
        interp = RelayInterpreter(mod)
        env = {}
        for op in mod.ops:
            if isinstance(op, test.TestOp):
                # dynamic dims get size 2
                values = [
                    random_array(
                        tensor_type(
                            [2 if d is None else d for d in shape_of(r.type)], r.type.element_type
                        ),
                        rng,
                    )
                    for r in op.results
                ]
            else:
                with np.errstate(all="ignore"):  # e.g. batch_norm of a negative variance
                    values = interp.run_op(op, tuple(env[o] for o in op.operands))
                if isinstance(op, RelayOp):
                    seen.add(op.RELAY_NAME)
            env.update(zip(op.results, values))
    assert seen == set(RELAY_OPS)
