"""``convert-layout``: convert ops to desired data layouts (Relay's ConvertLayout).

``desired_layouts`` names, per op, the layout of each input (Relay's dict form)::

    ConvertLayout({"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NHWC"]})
    relay-opt -p 'convert-layout{desired-layouts="nn.conv2d=NHWC,default;nn.max_pool2d=NHWC"}'

``"default"`` for a convolution's kernel picks Relay's partner layout (``NHWC`` -> ``HWIO``, or
``HWOI`` for a depthwise convolution; ``NCHW`` -> ``OIHW``). The ops that can be converted are
the convolutions and the 2-D pools; every other op follows its producers through its layout rule
(elementwise and broadcasting ops, ``batch_norm``'s and ``concatenate``'s axis, ``split``,
reductions, ``pad``, ``strided_slice``, ``transpose``, ``squeeze``, the other pools), and a
``layout_transform`` is inserted where an op cannot follow, exactly where Relay puts one (see
``_layout_rewrite``). A convertible op left out of ``desired_layouts`` follows its producer and
is logged (Relay's "Desired layout(s) not specified" warning).

```mlir
%y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
%r = relay.nn.relu %y : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// convert-layout{desired-layouts="nn.conv2d=NHWC,default"}
%0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : ...
%1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : ...
%2 = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : ...
%3 = relay.nn.relu %2 : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
%r = relay.layout_transform %3 {src_layout = "NHWC", dst_layout = "NCHW"} : ...
```

``with LayoutConfig(skip_layers=[0]):`` keeps chosen convolutions as they are (Relay's
LayoutConfig). Like Relay, the pass requires ``CanonicalizeOps`` (``nn.bias_add`` has no layout rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, RelayOp
from xrelay.dialects.relay.layout import CONVERT_LAYOUT, Layout, LayoutError
from xrelay.transforms._layout_rewrite import LayoutRewriter, logger


class LayoutConfig:
    """Relay's ``relay.transform.LayoutConfig``: inside ``with LayoutConfig(skip_layers=[0, 2]):``
    convert-layout leaves the ``nn.conv2d`` calls with those indices (counted in program order
    over every conversion made in the scope) in their layouts."""

    current: ClassVar[LayoutConfig | None] = None

    def __init__(self, skip_layers: Sequence[int] | None = None):
        self.skip_counter = 0
        self.skip_layers = list(skip_layers) if skip_layers is not None else []

    def check_skip(self) -> bool:
        """Whether the next convolution is skipped (and count it)."""
        skip = self.skip_counter in self.skip_layers
        self.skip_counter += 1
        return skip

    def reset(self) -> None:
        self.skip_counter = 0
        self.skip_layers = []

    def __enter__(self) -> LayoutConfig:
        self._outer = LayoutConfig.current
        LayoutConfig.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        LayoutConfig.current = self._outer


def parse_desired_layouts(text: str) -> dict[str, list[str]]:
    """``"nn.conv2d=NHWC,default;nn.max_pool2d=NHWC"`` -> Relay's dict form (checked)."""
    out: dict[str, list[str]] = {}
    for item in filter(None, (s.strip() for s in text.split(";"))):
        op, sep, layouts = item.partition("=")
        if not sep or not layouts:
            raise ValueError(f"convert-layout: expected 'op=layout[,layout]', got '{item}'")
        out[op.strip()] = [s.strip() for s in layouts.split(",")]
    return check_desired_layouts(out)


def check_desired_layouts(desired: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for op, layouts in desired.items():
        if op not in RELAY_OPS and op not in QNN_OPS:
            raise ValueError(f"convert-layout: unknown op '{op}'")
        if isinstance(layouts, str) or not layouts:
            raise ValueError(f"convert-layout: '{op}' needs a list of layouts, got {layouts!r}")
        if op not in CONVERT_LAYOUT:
            # Relay ignores desired layouts of an op without FTVMConvertOpLayout (it follows
            # its producers through its layout rule); say so
            known = ", ".join(sorted(CONVERT_LAYOUT))
            logger.warning("convert-layout: op '%s' has no layout conversion; its desired layouts are ignored (convertible: %s)", op, known)
            continue
        for lay in layouts:
            if lay != "default":
                try:
                    Layout(lay)
                except LayoutError as e:
                    raise ValueError(f"convert-layout: {op}: {e}") from None
        # [data, kernel] for convolutions, [data, regions] for the region pools
        arity = 2 if op.endswith(("conv2d", "conv2d_transpose", "conv3d")) or op.startswith("vision.roi_") else 1
        if len(layouts) != arity:
            raise ValueError(f"convert-layout: '{op}' needs {arity} desired layout(s), got {list(layouts)}")
        if layouts[0] == "default":
            raise ValueError(f"convert-layout: '{op}': data layout cannot be 'default'")
        out[op] = [str(s) for s in layouts]
    return out


def format_desired_layouts(desired: Mapping[str, Sequence[str]]) -> str:
    return ";".join(f"{op}={','.join(layouts)}" for op, layouts in desired.items())


@dataclass(frozen=True)
class ConvertLayoutPass(ModulePass):
    """Convert convolutions and pools to desired layouts; the rest follows with minimal transforms."""

    name = "convert-layout"
    relay_name: ClassVar[str] = "ConvertLayout"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType", "CanonicalizeOps")

    desired_layouts: str = ""

    def __post_init__(self) -> None:
        # Relay's dict form from the Python API; the text form from the command line
        value: Any = self.desired_layouts
        if isinstance(value, Mapping):
            text = format_desired_layouts(check_desired_layouts(value))
        elif isinstance(value, str):
            text = format_desired_layouts(parse_desired_layouts(value))
        else:
            raise TypeError(f"ConvertLayout: desired_layouts must be a dict, got {type(value).__name__}")
        object.__setattr__(self, "desired_layouts", text)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        desired = parse_desired_layouts(self.desired_layouts)

        def new_call(
            o: RelayOp, attrs: dict[str, Any], types: list[TensorType], args: list[SSAValue]
        ) -> tuple[str, dict[str, Any], list[SSAValue]]:
            name = o.RELAY_NAME
            convert = CONVERT_LAYOUT.get(name)
            if convert is None:
                return name, attrs, args
            if name not in desired:
                logger.warning("Desired layout(s) not specified for op: %s", name)
                return name, attrs, args
            config = LayoutConfig.current
            if name in ("nn.conv2d", "nn.deformable_conv2d") and config is not None and config.check_skip():
                return name, attrs, args
            new_name, new_attrs = convert(attrs, types, desired[name])
            return new_name or name, new_attrs, args

        LayoutRewriter(new_call).run(op)
