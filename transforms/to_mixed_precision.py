"""``to-mixed-precision``: compute in float16 or bfloat16 where it is safe.

Relay's ToMixedPrecision (src/relay/transforms/to_mixed_precision.cc, op lists from
python/tvm/relay/transform/mixed_precision.py). Each op has a conversion category:

* ALWAYS (convolutions, dense, batch_matmul): computed in the mixed type, its float operands
  cast to it, ``out_dtype`` (the accumulation type) set to it;
* FOLLOW (elementwise arithmetic, activations, pooling, shape ops, ...): computed in the mixed
  type when every float operand already is (a function parameter or a constant can be cast,
  so it counts as mixed), else in float32;
* NEVER (exp, softmax, sums and means, layer_norm, ...): computed in float32, operands cast
  back;
* an op without a registered category counts as FOLLOW, with a warning (``missing_op_mode=1``,
  the default), silently (``2``) or as an error (``0``).

Casts are cached per value and type, and a cast's source is reused when the original type is
wanted again, so no value is cast twice and none is cast back and forth::

    %w16 = relay.cast %w {dtype = "float16"}          // before: conv2d(%x, %w) -> softmax
    %x16 = relay.cast %x {dtype = "float16"}
    %c = relay.nn.conv2d %x16, %w16 {out_dtype = "float16"}  : ... -> tensor<...xf16>
    %c32 = relay.cast %c {dtype = "float32"}
    %s = relay.nn.softmax %c32

Function parameters keep their types; results take the type their last op computes in, unless
the config ``relay.ToMixedPrecision.keep_orig_output_dtype`` casts them back. A call of another
function is NEVER (its float arguments go to float32, as Relay's for function literals);
integer and bool values are never cast. A ``clip`` whose bounds the mixed type cannot hold stays
in float32. ``register_mixed_precision_conversion(op_name, func)`` overrides an op's category
as Relay's ``FTVMMixedPrecisionConversionType``: ``func(op, mixed_type)`` returns
``[category, accumulation_dtype, output_dtype]``; when the two dtypes differ the op accumulates
in the first and its result is cast to the second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayOp, dtype_of
from xrelay.error import TVMError
from xrelay.transforms.infra import PassContext

__all__ = [
    "DEFAULT_ALWAYS_LIST",
    "DEFAULT_FOLLOW_LIST",
    "DEFAULT_NEVER_LIST",
    "MIXED_PRECISION_ALWAYS",
    "MIXED_PRECISION_FOLLOW",
    "MIXED_PRECISION_NEVER",
    "ToMixedPrecisionError",
    "ToMixedPrecisionPass",
    "register_mixed_precision_conversion",
]

logger = logging.getLogger(__name__)

MIXED_PRECISION_ALWAYS = 0
MIXED_PRECISION_FOLLOW = 1
MIXED_PRECISION_NEVER = 2

DEFAULT_ALWAYS_LIST = (
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.dense", "nn.batch_matmul",
)  # fmt: skip
DEFAULT_FOLLOW_LIST = (
    # ops that add data or change shape
    "nn.pad", "nn.batch_flatten", "concatenate", "zeros", "split", "squeeze", "transpose",
    "expand_dims", "reshape", "dyn.reshape", "broadcast_to_like", "dyn.broadcast_to",
    "strided_slice", "dyn.strided_slice", "take", "argwhere", "where", "tile", "dyn.tile",
    "scatter", "scatter_elements", "scatter_nd", "full", "dyn.full", "nn.depth_to_space",
    # comparisons
    "less", "greater", "less_equal", "greater_equal",
    # copies and casts depend on their inputs
    "copy", "cast", "cast_like",
    # simple arithmetic
    "add", "subtract", "multiply", "divide", "nn.bias_add", "nn.batch_norm", "sqrt", "shape_of",
    # simple activations
    "max", "min", "maximum", "minimum", "argmax", "argmin", "nn.relu", "nn.leaky_relu",
    "nn.prelu", "nn.dropout",
    # activations that saturate in a narrow range
    "sigmoid", "tanh", "fast_tanh", "fast_exp", "fast_erf", "clip",
    # pooling
    "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
    "nn.avg_pool3d", "nn.global_max_pool2d", "nn.adaptive_max_pool1d", "nn.adaptive_max_pool2d",
    "nn.adaptive_max_pool3d", "image.resize2d",
)  # fmt: skip
DEFAULT_NEVER_LIST = (
    # |f(x)| >> |x| for expected inputs
    "exp", "power", "nn.cross_entropy", "nn.cross_entropy_with_logits", "nn.softmax",
    "nn.l2_normalize", "erf", "arange",
    # large summations
    "nn.global_avg_pool2d", "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d",
    "nn.adaptive_avg_pool3d", "sum", "mean", "variance", "nn.layer_norm",
)  # fmt: skip

_MIXED_TYPES = ("float16", "bfloat16", "float32", "float64")
_MAX_FINITE = {"float16": 65504.0, "bfloat16": 3.38953139e38}

ConversionFunc = Callable[[RelayOp, str], list[Any]]
_CONVERSIONS: dict[str, ConversionFunc] = {}


class ToMixedPrecisionError(ValueError, TVMError):
    """A bad mixed precision type or missing op categories with ``missing_op_mode=0``."""


def _generic(category: int) -> ConversionFunc:
    def conversion(op: RelayOp, mixed_type: str) -> list[Any]:
        return [category, mixed_type, mixed_type]

    return conversion


def register_mixed_precision_conversion(op_name: str, func: ConversionFunc | None = None, level: int = 10) -> Any:
    """Set the conversion of ``op_name`` (Relay's ``register_mixed_precision_conversion``):
    ``func(op, mixed_type) -> [category, accumulation_dtype, output_dtype]``. Usable as a
    decorator. ``level`` is accepted for Relay's signature (a later registration wins)."""

    def register(f: ConversionFunc) -> ConversionFunc:
        _CONVERSIONS[op_name] = f
        return f

    return register(func) if func is not None else register


for _names, _category in (
    (DEFAULT_ALWAYS_LIST, MIXED_PRECISION_ALWAYS),
    (DEFAULT_FOLLOW_LIST, MIXED_PRECISION_FOLLOW),
    (DEFAULT_NEVER_LIST, MIXED_PRECISION_NEVER),
):
    for _name in _names:
        register_mixed_precision_conversion(_name, _generic(_category))


def _is_float(dtype: str) -> bool:
    """The types this pass converts (float8/float4 values are left as they are)."""
    return dtype in _MIXED_TYPES


class _Converter:
    """Rewrites one function's ops in place, in program order (operands before users)."""

    def __init__(self, mixed: str, missing: dict[str, int], signatures: dict[str, FunctionType]):
        self.mixed = mixed
        self.missing = missing
        self.signatures = signatures  # converted functions' types, for their callers
        self.casts: dict[tuple[SSAValue, str], SSAValue] = {}
        self.changed: set[SSAValue] = set()

    def cast(self, v: SSAValue, wanted: str, before: Operation) -> SSAValue:
        """``v`` as ``wanted`` (float values only), through the cache."""
        t = v.type
        if not isinstance(t, TensorType):
            return v
        have = dtype_of(t)
        if not _is_float(have) or have == wanted:
            return v
        cached = self.casts.get((v, wanted))
        if cached is not None:
            return cached
        op = RELAY_OPS["cast"].make([v], dtype=wanted)
        Rewriter.insert_op(op, InsertPoint.before(before))
        out = op.results[0]
        self.casts[(v, wanted)] = out
        self.casts[(out, have)] = v  # asking for the original type again gives the original
        return out

    def _all_mixed(self, v: SSAValue) -> bool:
        owner = v.owner
        if not isinstance(owner, Operation) or isinstance(owner, ConstantOp):
            return True  # a parameter or a constant can be cast
        dtype = dtype_of(v.type) if isinstance(v.type, TensorType) else ""
        return not _is_float(dtype) or dtype == self.mixed

    def _category(self, op: RelayOp) -> tuple[int, str, str]:
        conv = _CONVERSIONS.get(op.RELAY_NAME)
        if conv is None:
            self.missing[op.RELAY_NAME] = self.missing.get(op.RELAY_NAME, 0) + 1
            return MIXED_PRECISION_FOLLOW, self.mixed, self.mixed
        result = conv(op, self.mixed)
        if len(result) != 3:
            raise ToMixedPrecisionError(
                f"the mixed precision conversion of {op.RELAY_NAME} returned {len(result)} values "
                "(expected [category, accumulation_dtype, output_dtype])"
            )
        return int(result[0]), str(result[1]), str(result[2])

    def _applicable(self, op: RelayOp) -> bool:
        if op.RELAY_NAME != "clip":
            return True
        bound = _MAX_FINITE.get(self.mixed)
        if bound is None:
            return True
        a = op.attrs
        return -bound <= a["a_min"] and a["a_max"] <= bound

    def rewrite(self, op: Operation) -> None:
        if isinstance(op, func.CallOp):
            self._call(op)
        elif isinstance(op, RelayOp) and not isinstance(op, ConstantOp):
            self._relay(op)

    def _call(self, op: func.CallOp) -> None:
        # Relay leaves calls of global functions alone and runs function literals in float32;
        # here every call passes its callee's parameter types and takes its (new) result types
        sig = self.signatures.get(op.callee.root_reference.data)
        if sig is None:
            return
        args = [self.cast(a, dtype_of(t), op) if isinstance(t, TensorType) else a for a, t in zip(op.operands, sig.inputs.data)]
        outs = list(sig.outputs.data)
        if args == list(op.operands) and outs == [r.type for r in op.results]:
            return
        new = func.CallOp(op.callee, args, outs)
        self._replace(op, new)

    def _relay(self, op: RelayOp) -> None:
        category, accumulation, output = self._category(op)
        if category == MIXED_PRECISION_FOLLOW:
            category = MIXED_PRECISION_ALWAYS if all(self._all_mixed(v) for v in op.operands) else MIXED_PRECISION_NEVER
        applicable = category == MIXED_PRECISION_ALWAYS and self._applicable(op)
        wanted = self.mixed if applicable else "float32"
        args = [self.cast(v, wanted, op) for v in op.operands]
        attrs = op.attrs
        if applicable:
            for key in ("out_dtype", "dtype") if op.RELAY_NAME != "cast" else ():
                # the accumulation type (out_dtype) or the type of a new tensor (zeros' dtype)
                if key in attrs and (attrs[key] in ("", None) or _is_float(attrs[key])):
                    attrs[key] = accumulation
        if args == list(op.operands) and attrs == op.attrs and not any(v in self.changed for v in op.operands):
            return
        new = type(op).make(args, **attrs)
        self._replace(op, new)
        if applicable and accumulation != output:
            v = new.results[0]
            uses = list(v.uses)
            out = self.cast(v, output, new.next_op)  # type: ignore[arg-type] # a terminator follows
            for use in uses:
                use.operation.operands[use.index] = out
            self.changed.add(out)

    def _replace(self, old: Operation, new: Operation) -> None:
        Rewriter.insert_op(new, InsertPoint.before(old))
        new.attributes.update(old.attributes)
        for a, b in zip(old.results, new.results):
            b.name_hint = a.name_hint
            if a.type != b.type:
                self.changed.add(b)
            a.replace_all_uses_with(b)
        Rewriter.erase_op(old)


def _callees_first(module: ModuleOp) -> list[func.FuncOp]:
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration}
    order: list[func.FuncOp] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in funcs:
            return
        seen.add(name)
        for op in funcs[name].walk():
            if isinstance(op, func.CallOp):
                visit(op.callee.root_reference.data)
        order.append(funcs[name])

    for name in funcs:
        visit(name)
    return order


def to_mixed_precision(
    module: ModuleOp, mixed_precision_type: str = "float16", missing_op_mode: int = 1, keep_orig_output_dtype: bool = False
) -> None:
    """Convert every function of ``module`` (see the module docstring)."""
    if mixed_precision_type not in _MIXED_TYPES:
        raise ToMixedPrecisionError(
            f"to-mixed-precision: only IEEE floating point types and bfloat16 are supported, got "
            f"{mixed_precision_type!r} (use float16 or bfloat16)"
        )
    if missing_op_mode not in (0, 1, 2):
        raise ToMixedPrecisionError(f"to-mixed-precision: missing_op_mode must be 0, 1 or 2, got {missing_op_mode}")
    missing: dict[str, int] = {}
    signatures: dict[str, FunctionType] = {}
    for fn in _callees_first(module):
        if "relay.compiler" in fn.attributes:  # handed to an external compiler: left as is
            signatures[fn.sym_name.data] = fn.function_type
            continue
        conv = _Converter(mixed_precision_type, missing, signatures)
        for op in list(fn.walk()):
            if op.parent is not None:
                conv.rewrite(op)
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        if keep_orig_output_dtype:
            originals = list(fn.function_type.outputs.data)
            ret.operands = [
                conv.cast(v, dtype_of(t), ret) if isinstance(t, TensorType) else v
                for v, t in zip(ret.operands, originals)
            ]
        fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), [v.type for v in ret.operands])
        signatures[fn.sym_name.data] = fn.function_type
    if missing and missing_op_mode != 2:
        for name, count in sorted(missing.items()):
            logger.warning('Op "%s" not registered FTVMMixedPrecisionConversionType appears %d times in graph.', name, count)
    if missing and missing_op_mode == 0:
        raise ToMixedPrecisionError(
            "to-mixed-precision: missing ops were found (no mixed precision conversion registered): "
            + ", ".join(sorted(missing))
        )


@dataclass(frozen=True)
class ToMixedPrecisionPass(ModulePass):
    """Compute in ``mixed_precision_type`` (float16 or bfloat16) where it is safe."""

    name = "to-mixed-precision"
    relay_name: ClassVar[str] = "ToMixedPrecision"
    opt_level: ClassVar[int] = 0

    mixed_precision_type: str = "float16"
    missing_op_mode: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:

        keep = bool(PassContext.current().get_config("relay.ToMixedPrecision.keep_orig_output_dtype", False))
        to_mixed_precision(op, self.mixed_precision_type, self.missing_op_mode, keep)
