"""Random relay programs for testing passes: a seeded family of valid dataflow DAGs.

``random_dag(seed, num_ops)`` builds ``func.func @main`` over an NCHW input ``%x`` and weight
parameters ``%w0, %w1, ...``, mixing the ops that passes care about: ``nn.conv2d``
(3x3 and 1x1, stride 1 or 2, grouped/depthwise), ``nn.dense``, pooling (max, avg, global avg),
elementwise ops, broadcasting binaries against parameters or scalar constants, reductions
(with ``keepdims`` so they broadcast back into diamonds), ``transpose``, ``reshape``,
``nn.batch_flatten``, ``concatenate``, ``split`` (both results used), ``nn.softmax`` and
``expand_dims``/``squeeze``. Operands are drawn from every value built so far, so values
fan out and paths re-join (diamonds). Every value that nothing uses is returned, so no op is
dead; the function may return several values.

All shapes are static and every dtype is float32; the ops used keep values finite on inputs in
[-1, 1) (no ``exp``, ``log``, ``sqrt`` or ``divide``). The same seed and arguments give the
same program (text-identical).

>>> mod = random_dag(0, num_ops=12)
>>> sum(1 for op in mod.walk() if op.name.startswith("relay.")) >= 12
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from xrelay.dialects.relay import RELAY_OPS, ConstantOp, shape_of, tensor_type

__all__ = ["TARGET_ATTR", "random_dag", "random_dags", "random_target_graph", "target_predicates"]

_WINDOW = 48
"""Operands come from the newest values (and rarely older ones): long chains, linear time."""

_UNARY = ("nn.relu", "tanh", "sigmoid", "negative", "abs")
_BINARY = ("add", "multiply", "subtract", "maximum", "minimum")


class _Builder:
    def __init__(self, rng: np.random.Generator, block: Block, in_shape: Sequence[int]):
        self.rng = rng
        self.block = block
        self.values: list[SSAValue] = []
        self.by_shape: dict[tuple[int | None, ...], list[SSAValue]] = {}
        self.add_value(block.args[0])
        self.num_weights = 0
        self.num_ops = 0

    # ---- helpers ----------------------------------------------------------------------------

    def weight(self, shape: Sequence[int]) -> SSAValue:
        arg = self.block.insert_arg(tensor_type(shape, "float32"), len(self.block.args))
        arg.name_hint = f"w{self.num_weights}"
        self.num_weights += 1
        return arg

    def op(self, name: str, operands: Sequence[SSAValue], **attrs: Any) -> list[SSAValue]:
        new = RELAY_OPS[name].make(list(operands), **attrs)
        self.block.add_op(new)
        self.num_ops += 1
        results = list(new.results)
        for r in results:
            self.add_value(r)
        return results

    def add_value(self, value: SSAValue) -> None:
        self.values.append(value)
        self.by_shape.setdefault(shape_of(value.type), []).append(value)

    def pick(self, pred=lambda s: True) -> SSAValue | None:
        """A value whose shape satisfies ``pred``, preferring recent ones."""
        window = self.values[-_WINDOW:]
        cands = [v for v in window if pred(shape_of(v.type))]
        if not cands:
            cands = [v for v in self.values if pred(shape_of(v.type))]
            if not cands:
                return None
        # geometric preference for the newest values keeps chains long, with fan-out
        k = min(int(self.rng.geometric(0.35)) - 1, len(cands) - 1)
        return cands[len(cands) - 1 - k]

    def same_shape_pair(self) -> tuple[SSAValue, SSAValue] | None:
        a = self.pick()
        assert a is not None
        others = [v for v in self.by_shape[shape_of(a.type)][-_WINDOW:] if v is not a]
        if not others:
            return None
        return a, others[int(self.rng.integers(len(others)))]

    # ---- one random step --------------------------------------------------------------------

    def step(self) -> None:
        rng = self.rng
        kinds = [
            "conv", "conv", "dense", "unary", "unary", "binary", "binary", "bias", "scalar",
            "reduce", "pool", "transpose", "reshape", "concat", "split", "softmax", "expand",
        ]
        for _ in range(20):
            kind = kinds[int(rng.integers(len(kinds)))]
            if self._try(kind):
                return
        a = self.pick()
        assert a is not None
        self.op("nn.relu", [a])

    def _try(self, kind: str) -> bool:  # noqa: C901 - one branch per op family
        rng = self.rng
        is4 = lambda s: len(s) == 4  # noqa: E731
        is2 = lambda s: len(s) == 2  # noqa: E731
        if kind == "conv":
            x = self.pick(lambda s: is4(s) and s[1] <= 16)
            if x is None:
                return False
            n, c, h, w = shape_of(x.type)
            k = int(rng.choice([1, 3]))
            stride = 2 if h >= 4 and rng.random() < 0.25 else 1
            groups = c if c > 1 and rng.random() < 0.2 else 1
            out = c if groups > 1 else int(rng.choice([2, 4, 6, 8]))
            wt = self.weight((out, c // groups, k, k))
            self.op(
                "nn.conv2d", [x, wt], strides=(stride, stride), padding=(k // 2,) * 4,
                groups=groups, channels=out, kernel_size=(k, k),
            )
        elif kind == "dense":
            x = self.pick(lambda s: is2(s) and s[1] <= 256)
            if x is None:
                return False
            units = int(rng.choice([4, 8, 16]))
            self.op("nn.dense", [x, self.weight((units, shape_of(x.type)[1]))], units=units)
        elif kind == "unary":
            x = self.pick()
            assert x is not None
            self.op(_UNARY[int(rng.integers(len(_UNARY)))], [x])
        elif kind == "binary":
            pair = self.same_shape_pair()
            if pair is None:
                return False
            self.op(_BINARY[int(rng.integers(len(_BINARY)))], list(pair))
        elif kind == "bias":
            x = self.pick(lambda s: len(s) in (2, 4))
            assert x is not None
            s = shape_of(x.type)
            bshape = (s[1], 1, 1) if len(s) == 4 else (s[1],)
            self.op(("add", "multiply")[int(rng.integers(2))], [x, self.weight(bshape)])
        elif kind == "scalar":
            x = self.pick()
            assert x is not None
            const = ConstantOp.from_numpy(np.array(rng.uniform(0.5, 1.5), dtype=np.float32))
            self.block.add_op(const)
            self.op(("multiply", "add")[int(rng.integers(2))], [x, const.result])
        elif kind == "reduce":
            x = self.pick(lambda s: is4(s) or is2(s))
            assert x is not None
            rank = len(shape_of(x.type))
            axis = (2, 3) if rank == 4 else (1,)
            (r,) = self.op(("mean", "sum", "max")[int(rng.integers(3))], [x], axis=axis, keepdims=True)
            if rng.random() < 0.7:  # re-join: a diamond through the reduction
                self.op(("add", "multiply", "subtract")[int(rng.integers(3))], [x, r])
        elif kind == "pool":
            x = self.pick(is4)
            if x is None:
                return False
            h, w = shape_of(x.type)[2:]
            choice = int(rng.integers(3))
            if choice == 0 and h >= 2 and h % 2 == 0 and w >= 2:  # a 2x2 window must fit
                self.op("nn.max_pool2d", [x], pool_size=(2, 2), strides=(2, 2))
            elif choice == 1:
                self.op("nn.avg_pool2d", [x], pool_size=(3, 3), padding=(1, 1, 1, 1))
            else:
                (g,) = self.op("nn.global_avg_pool2d", [x])
                if rng.random() < 0.5:
                    self.op("nn.batch_flatten", [g])
        elif kind == "transpose":
            x = self.pick(lambda s: is4(s) and s[2] == s[3])
            if x is None:
                x = self.pick(is2)
                if x is None:
                    return False
                (t,) = self.op("transpose", [x], axes=(1, 0))
                self.op("transpose", [t], axes=(1, 0))
                return True
            self.op("transpose", [x], axes=(0, 1, 3, 2))
        elif kind == "reshape":
            x = self.pick(is4)
            if x is None:
                return False
            n, c, h, w = shape_of(x.type)
            if rng.random() < 0.5:
                self.op("nn.batch_flatten", [x])
            else:
                (r,) = self.op("reshape", [x], newshape=(n, c, h * w))
                self.op("reshape", [r], newshape=(n, c, h, w))
        elif kind == "concat":
            x = self.pick(lambda s: len(s) in (2, 4))
            assert x is not None
            s = shape_of(x.type)
            mates = [
                v for v in self.values[-_WINDOW:]
                if len(shape_of(v.type)) == len(s)
                and shape_of(v.type)[0] == s[0]
                and shape_of(v.type)[2:] == s[2:]
            ]
            k = int(rng.integers(1, min(3, len(mates)) + 1))
            parts = [x] + [mates[int(rng.integers(len(mates)))] for _ in range(k)]
            if sum(shape_of(p.type)[1] for p in parts) > 64:
                return False
            self.op("concatenate", parts, axis=1)
        elif kind == "split":
            x = self.pick(lambda s: len(s) in (2, 4) and s[1] % 2 == 0)
            if x is None:
                return False
            a, b = self.op("split", [x], indices_or_sections=2, axis=1)
            self.op(_UNARY[int(rng.integers(len(_UNARY)))], [a])
            if rng.random() < 0.5:
                self.op(_BINARY[int(rng.integers(len(_BINARY)))], [a, b])
        elif kind == "softmax":
            x = self.pick(is2)
            if x is None:
                return False
            self.op("nn.softmax", [x])
        elif kind == "expand":
            x = self.pick(is2)
            if x is None:
                return False
            (e,) = self.op("expand_dims", [x], axis=1)
            self.op("squeeze", [e], axis=(1,))
        else:  # pragma: no cover - the kinds are listed above
            raise AssertionError(kind)
        return True


def random_dag(
    seed: int,
    num_ops: int = 30,
    *,
    input_shape: Sequence[int] = (1, 4, 8, 8),
) -> ModuleOp:
    """A random, valid relay module with at least ``num_ops`` relay ops, deterministic in
    ``seed``. The input is ``%x`` of ``input_shape`` (NCHW, float32); weights are further
    parameters ``%w0, %w1, ...``; all values nothing uses are returned."""
    if num_ops < 1:
        raise ValueError(f"num_ops must be >= 1, got {num_ops}")
    if len(input_shape) != 4:
        raise ValueError(f"input_shape must be NCHW (4 dims), got {tuple(input_shape)}")
    rng = np.random.default_rng(seed)
    block = Block(arg_types=[tensor_type(input_shape, "float32")])
    block.args[0].name_hint = "x"
    builder = _Builder(rng, block, input_shape)
    while builder.num_ops < num_ops:
        builder.step()
    sinks = [v for v in builder.values[1:] if not v.uses] or [builder.values[-1]]
    # join same-shaped results pairwise: fewer outputs, more re-joining paths
    by_shape: dict[tuple[int | None, ...], list[SSAValue]] = {}
    for v in sinks:
        by_shape.setdefault(shape_of(v.type), []).append(v)
    sinks = []
    for group in by_shape.values():
        acc = group[0]
        for v in group[1:]:
            (acc,) = builder.op(_BINARY[int(rng.integers(len(_BINARY)))], [acc, v])
        sinks.append(acc)
    block.add_op(func.ReturnOp(*sinks))
    fn = func.FuncOp(
        "main",
        ([a.type for a in block.args], [v.type for v in sinks]),
        Region(block),
    )
    return ModuleOp([fn])


def random_dags(count: int, num_ops: int = 30, first_seed: int = 0) -> list[ModuleOp]:
    """``count`` random modules with seeds ``first_seed, first_seed + 1, ...``."""
    return [random_dag(first_seed + i, num_ops) for i in range(count)]


TARGET_ATTR = "test.target"
"""The attribute ``random_target_graph`` marks each op's target with (``""``: no target)."""

_TARGET_UNARY = ("nn.relu", "tanh", "sigmoid", "abs")  # no negative: -x + x is 0 too
_TARGET_BINARY = ("add", "multiply", "maximum")  # no subtract: x - x is 0 whatever x is


def random_target_graph(seed: int, num_ops: int, targets: Sequence[str] = ("a", "b")) -> ModuleOp:
    """A random elementwise DAG over ``%x, %y`` (``tensor<4xf32>``) whose ops each carry a
    target in ``TARGET_ATTR``: the first target twice as often as the others, some none. Operands
    come mostly from the six newest values, so regions of a target interleave with the others'
    on short paths (what region merging must keep convex). One to three values are returned,
    the last op's among them (it reads ``%x``)."""
    rng = np.random.default_rng(seed)
    t = tensor_type((4,), "float32")
    block = Block(arg_types=[t, t])
    values: list[SSAValue] = list(block.args)
    if rng.random() < 0.5:
        const = ConstantOp.from_numpy(np.full(4, 0.5, np.float32), "k")
        block.add_op(const)
        values.append(const.result)
    choices = [targets[0], *targets, ""]
    for i in range(num_ops):
        recent = values[-6:]
        if i == num_ops - 1:  # the last op adds %x: the outputs depend on the inputs
            op = RELAY_OPS["add"].make([recent[int(rng.integers(len(recent)))], block.args[0]])
        elif rng.random() < 0.5:
            pool = recent if rng.random() < 0.7 else values
            op = RELAY_OPS[_TARGET_UNARY[int(rng.integers(len(_TARGET_UNARY)))]].make(
                [pool[int(rng.integers(len(pool)))]]
            )
        else:
            op = RELAY_OPS[_TARGET_BINARY[int(rng.integers(len(_TARGET_BINARY)))]].make(
                [recent[int(rng.integers(len(recent)))], values[int(rng.integers(len(values)))]]
            )
        op.attributes[TARGET_ATTR] = StringAttr(choices[int(rng.integers(len(choices)))])
        block.add_op(op)
        values.append(op.results[0])
    picked = rng.choice(
        np.arange(2, len(values) - 1),
        size=min(len(values) - 3, int(rng.integers(0, 3))),
        replace=False,
    )
    outs = [values[int(i)] for i in picked] + [values[-1]]
    block.add_op(func.ReturnOp(*outs))
    return ModuleOp([func.FuncOp("main", ([t, t], [o.type for o in outs]), Region(block))])


def target_predicates(targets: Sequence[str] = ("a", "b")) -> dict[str, Any]:
    """annotate-target's ``supported`` predicates for the targets of ``random_target_graph``."""

    def supports(target: str) -> Any:
        def pred(op: Operation) -> bool:
            attr = op.attributes.get(TARGET_ATTR)
            return isinstance(attr, StringAttr) and attr.data == target

        return pred

    return {target: supports(target) for target in targets}
