"""``tvm.transform``: the pass infrastructure under its TVM name.

``from xrelay import transform`` gives ``PassContext``, ``Sequential``, ``Pass``,
``PassInfo``, ``module_pass`` / ``ModulePass`` and ``function_pass`` / ``FunctionPass`` -- the
same objects as ``xrelay.relay.transform`` and ``xrelay.transforms.infra`` (one
implementation, re-exported), so ``tvm.transform.PassContext(opt_level=3)`` ports as
``xrelay.transform.PassContext(opt_level=3)``.
"""

import sys
from typing import Any

from xrelay.relay.transform import FunctionPass, function_pass
from xrelay.transforms.infra import (
    ModulePassAdapter,
    Pass,
    PassContext,
    PassInfo,
    PythonModulePass,
    Sequential,
    module_pass,
)
from xrelay.transforms.instrument import PassInstrument

ModulePass = PythonModulePass
"""The class of passes made by ``module_pass`` (TVM's ``tvm.transform.ModulePass``)."""

__all__ = [
    "FunctionPass",
    "ModulePass",
    "ModulePassAdapter",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PrintIR",
    "Sequential",
    "function_pass",
    "module_pass",
]


def PrintIR(header: str = "", show_meta_data: bool = False) -> Pass:  # noqa: N802 - TVM's name
    """``tvm.transform.PrintIR``: a module pass that writes ``PrintIR(header):`` and the module
    to stderr (where TVM's log goes) and returns the module unchanged."""

    def print_ir(mod: Any, ctx: PassContext) -> Any:
        sys.stderr.write(f"PrintIR({header}):\n{mod}\n")
        return mod

    return module_pass(print_ir, opt_level=0, name="PrintIR")
