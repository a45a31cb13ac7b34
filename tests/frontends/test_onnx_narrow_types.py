"""The narrow element types end to end: float8 (E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, E8M0),
float4 (E2M1), int4/uint4, int2/uint2.

ONNX's casts and (de)quantization are checked bit for bit against onnx's reference
(``onnx.reference.ReferenceEvaluator``) on edge values (saturation, NaN, infinities, ties,
subnormals, the E8M0 rounding modes) in both backend modes; the arena holds one byte per
element; the types print, parse and load from ``.npz`` files.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper
from onnx.reference import ReferenceEvaluator

import xrelay
from xrelay import relay
from xrelay.dialects.relay import byte_size, numpy_dtype, tensor_type
from xrelay.dialects.relay.dtypes import dtype_bits, dtype_of, element_type, from_stored
from xrelay.kernels import KERNELS
from xrelay.runtime.data_type import DataType
from xrelay.runtime.params import ParamsFormatError, load_param_dict, save_param_dict
from xrelay.testing.onnx_backend import MODES, XrelayBackend

FLOAT8 = [T.FLOAT8E4M3FN, T.FLOAT8E5M2, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2FNUZ]
SUB_BYTE_INTS = [T.INT4, T.UINT4, T.INT2, T.UINT2]

# Per float8 type: its largest finite value and the halfway points around it, the tie just
# above 1 (to even: down), the smallest subnormal and half of it (a tie: to even, zero),
# overflow, infinities, NaN, -0.
EDGES = {
    T.FLOAT8E4M3FN: [448, 464, 465, 480, 1 + 2**-4, 1 + 3 * 2**-4, 2**-9, 2**-10, 3 * 2**-10],
    T.FLOAT8E5M2: [57344, 61440, 61441, 65536, 1 + 2**-3, 1 + 3 * 2**-3, 2**-16, 2**-17, 3 * 2**-17],
    T.FLOAT8E4M3FNUZ: [240, 248, 249, 256, 1 + 2**-4, 1 + 3 * 2**-4, 2**-10, 2**-11, 3 * 2**-11],
    T.FLOAT8E5M2FNUZ: [57344, 61440, 61441, 65536, 1 + 2**-3, 1 + 3 * 2**-3, 2**-17, 2**-18, 3 * 2**-18],
}
SPECIAL = [0.0, -0.0, 1e9, -1e9, np.inf, -np.inf, np.nan, -np.nan, 0.1, -3.3]


def _model(nodes, inputs, outputs, opset=25):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.uint8)


def _run_both(m, feeds: list[np.ndarray]) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    names = [i.name for i in m.graph.input]
    want = ReferenceEvaluator(m).run(None, dict(zip(names, feeds, strict=True)))
    return want, [XrelayBackend.prepare(m, mode=mode).run(feeds) for mode in MODES]


def _cast_model(src: int, to: int, n: int, **attrs):
    return _model(
        [helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)],
        [helper.make_tensor_value_info("x", src, [n])],
        [helper.make_tensor_value_info("y", to, [n])],
    )


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("to", FLOAT8, ids=T.DataType.Name)
@pytest.mark.parametrize("src", [np.float32, np.float16], ids=["FLOAT", "FLOAT16"])
def test_cast_to_float8_matches_onnx_bit_for_bit(src, to, saturate):
    edges = np.array(EDGES[to], np.float64)
    with np.errstate(over="ignore"):  # 1e9 is inf in float16: one more edge
        x = np.concatenate([edges, -edges, SPECIAL]).astype(src)
    m = _cast_model(helper.np_dtype_to_tensor_dtype(np.dtype(src)), to, x.size, saturate=saturate)
    (want,), got = _run_both(m, [x])
    assert want.dtype == numpy_dtype(dtype_of(element_type(_DTYPE[to])))
    for (y,) in got:
        assert y.dtype == want.dtype
        np.testing.assert_array_equal(_bits(y), _bits(want))


_DTYPE = {
    T.FLOAT8E4M3FN: "float8_e4m3fn", T.FLOAT8E5M2: "float8_e5m2", T.FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
    T.FLOAT8E5M2FNUZ: "float8_e5m2fnuz", T.FLOAT8E8M0: "float8_e8m0fnu", T.FLOAT4E2M1: "float4_e2m1fn",
    T.INT4: "int4", T.UINT4: "uint4", T.INT2: "int2", T.UINT2: "uint2",
}  # fmt: skip


def test_saturation_clips_and_keeps_nan_while_relay_cast_overflows():
    # ONNX's default (saturate=1) gives the largest finite value for 1e9 and inf; Relay's cast
    # (and saturate=0) gives NaN for E4M3FN (no infinity) and inf for E5M2.
    x = np.array([1e9, np.inf, -np.inf, np.nan], np.float32)
    (sat,) = XrelayBackend.run_model(_cast_model(T.FLOAT, T.FLOAT8E4M3FN, 4), [x])
    np.testing.assert_array_equal(sat.astype(np.float32), [448, 448, -448, np.nan])
    (raw,) = XrelayBackend.run_model(_cast_model(T.FLOAT, T.FLOAT8E4M3FN, 4, saturate=0), [x])
    assert np.isnan(raw.astype(np.float32)).all()
    e5 = KERNELS["cast"](x, dtype="float8_e5m2").astype(np.float32)
    np.testing.assert_array_equal(e5, [np.inf, np.inf, -np.inf, np.nan])
    # FNUZ: one NaN (0x80), no negative zero
    fnuz = KERNELS["cast"](np.array([np.nan, -0.0], np.float32), dtype="float8_e4m3fnuz")
    np.testing.assert_array_equal(_bits(fnuz), [0x80, 0x00])


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
def test_cast_to_e8m0_follows_the_rounding_mode(round_mode, saturate):
    x = np.array(
        [1.0, 1.5, 1.25, 1.75, 3.0, 0.75, 2.0**127, 1.5 * 2.0**127, 2.0**-127, 1e-45, 0.0, -3.0,
         np.inf, -np.inf, np.nan, 3.4e38],
        np.float32,
    )  # fmt: skip
    m = _cast_model(T.FLOAT, T.FLOAT8E8M0, x.size, saturate=saturate, round_mode=round_mode)
    (want,), got = _run_both(m, [x])
    for (y,) in got:
        np.testing.assert_array_equal(_bits(y), _bits(want))
    # the modes differ here: 1.5 goes up, down, and to 2 (nearest)
    assert y[1].astype(np.float32) == {"up": 2.0, "down": 1.0, "nearest": 2.0}[round_mode]


@pytest.mark.parametrize("to", [T.FLOAT4E2M1, *SUB_BYTE_INTS], ids=T.DataType.Name)
def test_cast_to_and_from_sub_byte_types_matches_onnx(to):
    # float -> int4/int2 truncates then wraps (ml_dtypes' and ONNX's reference conversion)
    x = np.array([0, 0.5, 1.5, -1.5, 2.5, -2.7, 7, 7.9, 8, -8, -9, 15, 16, 100, -100, 3.25, 6.5, 1e6],
                 np.float32)  # fmt: skip
    (want,), got = _run_both(_cast_model(T.FLOAT, to, x.size), [x])
    for (y,) in got:
        assert y.dtype == want.dtype
        np.testing.assert_array_equal(_bits(y), _bits(want))
    back = _cast_model(to, T.FLOAT16, x.size)
    (want16,), got16 = _run_both(back, [want])
    for (y,) in got16:
        np.testing.assert_array_equal(y, want16)


@pytest.mark.parametrize("to", SUB_BYTE_INTS, ids=T.DataType.Name)
def test_integer_casts_between_int8_and_sub_byte_ints_wrap(to):
    x = np.arange(-128, 128, dtype=np.int8 if to in (T.INT4, T.INT2) else np.int16).astype(
        np.int8 if to in (T.INT4, T.INT2) else np.uint8
    )
    src = T.INT8 if x.dtype == np.int8 else T.UINT8
    (want,), got = _run_both(_cast_model(src, to, x.size), [x])
    for (y,) in got:
        np.testing.assert_array_equal(_bits(y), _bits(want))


def _quantize_model(out_type, shape, scale, zp=None, **attrs):
    inits = [helper.make_tensor("s", T.FLOAT, list(np.shape(scale)), np.ravel(scale).tolist())]
    ins = ["x", "s"]
    if zp is not None:
        inits.append(helper.make_tensor("z", out_type, list(np.shape(zp)), np.ravel(zp).tolist()))
        ins.append("z")
    else:
        attrs["output_dtype"] = out_type
    g = helper.make_graph(
        [helper.make_node("QuantizeLinear", ins, ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", T.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", out_type, list(shape))], initializer=inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])


@pytest.mark.parametrize("to", SUB_BYTE_INTS, ids=T.DataType.Name)
def test_quantize_to_sub_byte_ints_rounds_half_to_even_and_clips(to):
    # per-axis scales and zero points; x / scale hits the ties 0.5, 1.5, 2.5 and the range ends
    x = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 100.0], [1.0, 3.0, 5.0, -1.0, -3.0, -100.0]], np.float32)
    scale = np.array([1.0, 2.0], np.float32)
    zp = np.array([1, 0]) if to in (T.INT4, T.INT2) else np.array([1, 2])
    m = _quantize_model(to, x.shape, scale, zp, axis=0)
    (want,), got = _run_both(m, [x])
    for (y,) in got:
        assert y.dtype == want.dtype
        np.testing.assert_array_equal(_bits(y), _bits(want))


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("to", [*FLOAT8, T.FLOAT4E2M1], ids=T.DataType.Name)
def test_quantize_to_narrow_floats_follows_saturate(to, saturate):
    x = np.array([[0.0, 1.0, -3.0, 1e5, np.inf, np.nan], [7.0, -7.0, 1e-3, -1e9, 0.3, 12.0]], np.float32)
    m = _quantize_model(to, x.shape, np.float32(0.5), None, saturate=saturate)
    (want,), got = _run_both(m, [x])
    for (y,) in got:
        np.testing.assert_array_equal(_bits(y), _bits(want))


@pytest.mark.parametrize("src", [*FLOAT8, T.FLOAT4E2M1, *SUB_BYTE_INTS], ids=T.DataType.Name)
def test_dequantize_with_blocked_scales(src):
    # a blocked scale (block_size 2 along axis 1, the last block cut short) and a zero point
    # for the integer types; float8/float4 have none
    dt = numpy_dtype(_DTYPE[src])
    x = np.array([[1, -2, 3, 0, -1], [2, 1, -1, 1, 0]], np.float32)
    if src in (T.UINT4, T.UINT2):
        x = np.abs(x)
    x = x.astype(dt)
    scale = np.array([[0.5, 2.0, 4.0], [1.0, 0.25, 3.0]], np.float32)
    inits = [helper.make_tensor("s", T.FLOAT, [2, 3], scale.ravel().tolist())]
    ins = ["x", "s"]
    if src in SUB_BYTE_INTS:
        inits.append(helper.make_tensor("z", src, [2, 3], [1, 0, 1, 0, 1, 0]))
        ins.append("z")
    g = helper.make_graph(
        [helper.make_node("DequantizeLinear", ins, ["y"], axis=1, block_size=2)], "g",
        [helper.make_tensor_value_info("x", src, [2, 5])],
        [helper.make_tensor_value_info("y", T.FLOAT, [2, 5])], initializer=inits,
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    (want,), got = _run_both(m, [x])
    for (y,) in got:
        np.testing.assert_array_equal(y, want)


def test_packed_int4_initializers_are_unpacked():
    # ONNX packs two int4 to a byte in tensor protos (odd counts padded); onnx.numpy_helper unpacks
    vals = [-8, 7, -1, 3, 5]
    w = helper.make_tensor("w", T.INT4, [5], vals)
    assert list(w.int32_data) == [0x78, 0x3F, 0x05]  # low nibble first: (-8, 7), (-1, 3), (5, pad)
    g = helper.make_graph(
        [helper.make_node("Cast", ["w"], ["y"], to=T.INT8)], "g", [],
        [helper.make_tensor_value_info("y", T.INT8, [5])], initializer=[w],
    )  # fmt: skip
    for mode in MODES:
        (y,) = XrelayBackend.run_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)]), [], mode=mode)
        np.testing.assert_array_equal(y, vals)


def test_dtypes_map_one_to_one_and_sub_byte_elements_take_a_byte():
    for name in _DTYPE.values():
        elem = element_type(name)
        assert dtype_of(elem) == name
        assert numpy_dtype(name) == np.dtype(getattr(ml_dtypes, name))
        assert str(DataType(name)) == name  # TVM's spelling
        assert byte_size(tensor_type([7], name)) == 7  # ceil(bits / 8) per element, as Relay sizes
    assert [str(element_type(n)) for n in ("float8_e4m3fn", "float8_e8m0fnu", "int4", "uint2")] == [
        "f8E4M3FN", "f8E8M0FNU", "i4", "ui2",
    ]  # fmt: skip
    assert dtype_bits("float4_e2m1fn") == 4 and dtype_bits("float8_e5m2fnuz") == 8
    assert DataType("float8_e4m3fn").type_code == 10 and DataType("float4_e2m1fnx2").lanes == 2


def test_the_arena_plans_one_byte_per_element():
    x = relay.var("x", shape=(3, 5), dtype="float32")
    q = relay.cast(relay.nn.relu(x), "int4")
    y = relay.cast(relay.add(q, q), "float32")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    m = xrelay.build(mod)
    feed = np.array([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [1.5, 2.5, 3.5, 4.5, -1]], np.float32)
    m.set_input("x", feed)
    m.run()
    want = np.trunc(np.maximum(feed, 0))
    want = ((want + 8) % 16 - 8) * 2
    want = (want + 8) % 16 - 8  # int4 adds wrap
    np.testing.assert_array_equal(m.get_output(0).numpy(), want)
    (ref,) = xrelay.run(mod, {"x": feed})
    np.testing.assert_array_equal(ref, want)


def test_npz_files_give_narrow_arrays_back_as_raw_bytes_and_loaders_view_them(tmp_path):
    a = np.array([1.5, np.nan, -448], np.float32).astype(ml_dtypes.float8_e4m3fn)
    np.savez(tmp_path / "p.npz", a=a)
    with np.load(tmp_path / "p.npz") as d:
        raw = d["a"]
    assert raw.dtype.kind == "V" and raw.dtype.itemsize == 1
    back = from_stored(raw, "float8_e4m3fn")
    assert back.dtype == a.dtype and _bits(back).tolist() == _bits(a).tolist()
    assert from_stored(raw, "float16") is raw  # a width mismatch is left for the caller to refuse


def test_tvm_params_hold_float8_and_refuse_sub_byte_types():
    a = np.array([1, 2, np.nan], np.float32).astype(ml_dtypes.float8_e5m2)
    back = load_param_dict(save_param_dict({"a": a}))["a"].numpy()
    assert back.dtype == a.dtype and _bits(back).tolist() == _bits(a).tolist()
    with pytest.raises(ParamsFormatError, match="int4 parameters cannot be saved"):
        save_param_dict({"w": np.zeros(4, ml_dtypes.int4)})


def test_the_c_target_refuses_narrow_types_by_name():
    x = relay.var("x", shape=(4,), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.cast(relay.cast(x, "float8_e4m3fn"), "float32")))
    with pytest.raises(Exception, match="float8_e4m3fn, which the C target does not compute in"):
        xrelay.build(relay.transform.InferType()(mod), target="c")


def test_kernels_compute_narrow_floats_in_float32_and_round_once():
    rng = np.random.default_rng(0)
    f8 = np.dtype(ml_dtypes.float8_e4m3fn)
    a = rng.standard_normal((3, 4)).astype(f8)
    b = rng.standard_normal((4, 5)).astype(f8)
    got = KERNELS["nn.matmul"](a, b)
    assert got.dtype == f8
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(f8)
    np.testing.assert_array_equal(_bits(got), _bits(want))
    # out of range: NaN for e4m3fn (no infinity), the result of a float32 sum rounded once
    big = np.array([448.0, 448.0], np.float32).astype(f8)
    assert np.isnan(KERNELS["add"](big, big).astype(np.float32)).all()
    # int4 arithmetic wraps; comparisons give bools
    i4 = np.array([7, -8, 3], np.int8).astype(ml_dtypes.int4)
    np.testing.assert_array_equal(KERNELS["add"](i4, i4).astype(np.int8), [-2, 0, 6])
    assert KERNELS["less"](i4, i4).dtype == np.bool_


def test_relay_text_names_the_types_and_its_metadata_refuses_them():
    from xrelay.relay.text_metadata import MetadataError, encode_ndarray

    m = relay.fromtext('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float8_e4m3fn]) { cast(%x, dtype="int4") }')
    assert "Tensor[(2), int4]" in m.astext()
    with pytest.raises(MetadataError, match="no type code for int4"):
        encode_ndarray(np.zeros(2, ml_dtypes.int4), "int4")


def test_a_nonzero_float8_zero_point_is_refused():
    from xrelay.frontends import OnnxImportError

    g = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])], "g",
        [helper.make_tensor_value_info("x", T.FLOAT8E4M3FN, [2])],
        [helper.make_tensor_value_info("y", T.FLOAT, [2])],
        initializer=[helper.make_tensor("s", T.FLOAT, [], [2.0]), helper.make_tensor("z", T.FLOAT8E4M3FN, [], [1.0])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match="a float8 zero point must be 0"):
        XrelayBackend.prepare(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]))


NARROW_MODULE = """
func.func @main(%x: tensor<2x4xf32>, %q: tensor<2x4xi4>) -> (tensor<2x4xf32>, tensor<2x4xi4>) {
  %c = relay.constant dense<[1.0, -2.0, 0.5, 448.0]> : tensor<4xf8E4M3FN>
  %c2 = relay.cast %c {dtype = "float32"} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  %a = relay.cast %x {dtype = "float8_e5m2"} : (tensor<2x4xf32>) -> tensor<2x4xf8E5M2>
  %b = relay.cast %a {dtype = "float32"} : (tensor<2x4xf8E5M2>) -> tensor<2x4xf32>
  %d = relay.add %b, %c2 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %i = relay.cast %d {dtype = "int4"} : (tensor<2x4xf32>) -> tensor<2x4xi4>
  %j = relay.add %i, %i : (tensor<2x4xi4>, tensor<2x4xi4>) -> tensor<2x4xi4>
  %k = relay.subtract %j, %q : (tensor<2x4xi4>, tensor<2x4xi4>) -> tensor<2x4xi4>
  func.return %d, %k : tensor<2x4xf32>, tensor<2x4xi4>
}
"""


def test_passes_keep_the_meaning_of_narrow_typed_modules():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.testing.semantics import check_semantics

    mod = Parser(make_context(), NARROW_MODULE).parse_module()
    # simplify-expr must not drop the lossy float32 -> float8 -> float32 round trip; x + x
    # becomes x * 2 in wrapping int4 arithmetic; random inputs stay in int4's range
    before, after = check_semantics("simplify-expr,fold-constant,fuse-ops", mod, trials=3)
    assert after[1].dtype == np.dtype(ml_dtypes.int4)
