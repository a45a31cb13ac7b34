"""partition-graph on a block of many interleaved regions: each region is outlined once, the
calls stand where a depth-first sort of the block would put them, and the meaning is kept."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.partition_graph import PartitionGraphPass

T = "tensor<4xf32>"
UNITS = 30


def _unit(i: int, x: str) -> list[str]:
    """Four regions A, D, B, C of target ``t`` on input ``x``, numbered in this order (of their
    first ops). A's members (tanh, multiply) stand apart: a default op (negative) uses A's first
    output before A's last end, and A takes D's output, whose ops stand after that use, listed
    in another order than a depth-first walk from A would place them. B has a member (multiply,
    whose result is unused) after its last end, on a value (abs) defined after that end. C
    uses A, B and the negative."""

    def op(kind: str, name: str, *args: str) -> str:
        types = ", ".join([T] * len(args))
        attrs = ' {compiler = "t"}' if kind.startswith("annotation.") else ""
        return f"%{name}{i} = relay.{kind} {', '.join(args)}{attrs} : ({types}) -> {T}"

    def begin(name: str, arg: str) -> str:
        return op("annotation.compiler_begin", name, arg)

    def end(name: str, arg: str) -> str:
        return op("annotation.compiler_end", name, arg)

    return [
        op("exp", "s", x),
        begin("ba", x),
        op("tanh", "a1", f"%ba{i}"),
        end("ea1", f"%a1{i}"),
        op("negative", "n", f"%ea1{i}"),
        begin("bq", f"%s{i}"),  # D, its second operand's chain first
        op("sigmoid", "q", f"%bq{i}"),
        begin("bp", x),
        op("tanh", "p", f"%bp{i}"),
        op("add", "r", f"%p{i}", f"%q{i}"),
        end("er", f"%r{i}"),
        begin("bd", f"%er{i}"),
        begin("bb", x),
        op("sigmoid", "b1", f"%bb{i}"),
        op("multiply", "a2", f"%a1{i}", f"%bd{i}"),
        end("ea2", f"%a2{i}"),
        end("eb", f"%b1{i}"),
        op("abs", "m", f"%n{i}"),
        begin("bm", f"%m{i}"),
        op("multiply", "b2", f"%b1{i}", f"%bm{i}"),
        begin("bc1", f"%n{i}"),
        begin("bc2", f"%ea2{i}"),
        begin("bc3", f"%eb{i}"),
        op("add", "c1", f"%bc1{i}", f"%bc2{i}"),
        op("subtract", "c2", f"%c1{i}", f"%bc3{i}"),
        end("ec", f"%c2{i}"),
    ]


def _module():
    lines, x = [], "%x"
    for i in range(UNITS):
        lines += _unit(i, x)
        x = f"%ec{i}"
    body = "\n    ".join(lines)
    text = f"func.func @main(%x: {T}) -> {T} {{\n    {body}\n    func.return {x} : {T}\n}}"
    return Parser(make_context(), text).parse_module()


def _names(block) -> list[str]:
    return [
        op.callee.root_reference.data if isinstance(op, func.CallOp) else op.name
        for op in block.ops
    ]


def test_interleaved_regions_are_outlined_in_place():
    module = _module()
    check_semantics(PartitionGraphPass(), module)
    PartitionGraphPass().apply(make_context(), module)
    module.verify()
    funcs = {f.sym_name.data: f for f in module.ops}
    assert len(funcs) == 4 * UNITS + 1
    main = funcs.pop("main").body.block
    expected = []
    bodies = {
        "a": (["relay.tanh", "relay.multiply"], 2, 2),
        "d": (["relay.tanh", "relay.sigmoid", "relay.add"], 2, 1),
        "b": (["relay.sigmoid", "relay.multiply"], 2, 1),
        "c": (["relay.add", "relay.subtract"], 3, 1),
    }
    for i in range(UNITS):
        names = {k: f"tvmgen_default_t_main_{4 * i + n}" for n, k in enumerate("adbc")}
        # A's call goes up before the negative that uses its first output, D's ops (then
        # its call) before it; the abs B needs goes up before B's call
        expected += [
            "relay.exp",
            names["d"],
            names["a"],
            "relay.negative",
            "relay.abs",
            names["b"],
            names["c"],
        ]
        for k, (ops, inputs, outputs) in bodies.items():
            fn = funcs[names[k]]
            assert _names(fn.body.block) == [*ops, "func.return"], k
            assert (len(fn.function_type.inputs), len(fn.function_type.outputs)) == (
                inputs,
                outputs,
            ), k
    assert _names(main) == [*expected, "func.return"]
    # each call takes its region's inputs in the block's order when it is outlined:
    # D (x, exp), A (x, D), B (x, abs), C (negative, A, B)
    calls = [op for op in main.ops if isinstance(op, func.CallOp)]
    for i in range(1, UNITS):
        d, a, b, c = calls[4 * i : 4 * i + 4]
        x = calls[4 * i - 1].results[0]
        assert d.operands[0] is x and d.operands[1].owner.name == "relay.exp"
        assert a.operands[0] is x and a.operands[1] is d.results[0]
        assert b.operands[0] is x and b.operands[1].owner.name == "relay.abs"
        assert c.operands[0].owner.name == "relay.negative"
        assert c.operands[1] is a.results[1] and c.operands[2] is b.results[0]
