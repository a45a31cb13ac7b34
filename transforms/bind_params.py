"""``bind-params``: replace ``main``'s parameters by named constants (Relay's ``bind_params_by_name``).

Weights usually arrive as function parameters next to a dict of arrays. Binding turns each
parameter whose name is in the dict into a ``relay.constant @name`` of the same type, so that
fold-constant and fold-scale-axis can fold real weights. Parameters are matched by their SSA name
hints (``%conv0_weight``); an array whose shape or dtype differs from the parameter's type is an
error naming both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.relay import ConstantOp, numpy_dtype, shape_of
from xrelay.dialects.relay.dtypes import from_stored
from xrelay.error import TVMError
from xrelay.runtime.npz import NpzError, read_npz


class BindParamsError(DiagnosticException, TVMError):
    pass


def bind_params_by_name(
    module: ModuleOp, params: Mapping[str, np.ndarray], entry: str = "main"
) -> list[str]:
    """Bind ``entry``'s parameters named in ``params``; return the names bound."""
    fn = next(
        (op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None
    )
    if fn is None:
        raise BindParamsError(f"bind-params: no function @{entry}")
    if fn.is_declaration:
        raise BindParamsError(f"bind-params: @{entry} has no body")
    block = fn.body.block
    bound: list[str] = []
    keep = []
    for arg in list(block.args):
        name = arg.name_hint
        if name is None or name not in params:
            keep.append(arg)
            continue
        array = from_stored(np.asarray(params[name]), arg.type.element_type)
        want_shape = shape_of(arg.type)
        want_dtype = numpy_dtype(arg.type.element_type)
        if tuple(array.shape) != tuple(want_shape) or array.dtype != want_dtype:
            raise BindParamsError(
                f"bind-params: parameter %{name} has type {arg.type} but the array has shape "
                f"{tuple(array.shape)} and dtype {array.dtype}"
            )
        const = ConstantOp.from_numpy(array, param_name=name, dtype=None if array.dtype != np.bool_ else "bool")
        Rewriter.insert_op(const, InsertPoint.at_start(block))
        const.result.name_hint = name
        arg.replace_all_uses_with(const.result)
        bound.append(name)
    if bound:
        # erase bound arguments from the highest index down so indices stay valid
        for arg in sorted((a for a in block.args if a not in keep), key=lambda a: -a.index):
            block.erase_arg(arg)
        fn.properties["function_type"] = FunctionType.from_lists(
            [a.type for a in block.args], list(fn.function_type.outputs.data)
        )
    return bound


@dataclass(frozen=True)
class BindParamsPass(ModulePass):
    """Bind main's parameters to the arrays of an ``.npz`` file, by name."""

    name = "bind-params"
    relay_name: ClassVar[str] = "BindParams"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    file: str = ""
    entry: str = "main"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.file:
            raise BindParamsError("bind-params needs file=PATH.npz")
        try:
            params = read_npz(self.file)
        except NpzError as e:  # (an OSError, e.g. no such file, the tools report as such)
            raise BindParamsError(f"bind-params: cannot read '{self.file}': {e}") from None
        bind_params_by_name(op, params, self.entry)
