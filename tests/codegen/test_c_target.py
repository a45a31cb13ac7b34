"""The C target: generated C compiled with strict flags, run, and compared with the reference
interpreter; the planned arenas; the errors for what has no C lowering."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import build_c
from xrelay.backend.c import CodegenError, emit_function
from xrelay.testing import mlp, mobilenet, resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.transforms.planners import ALGORITHMS

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")


def reference(mod, inputs, params=None):
    out = xrelay.run(mod, inputs, params)
    outs = out if isinstance(out, list | tuple) else [out]
    return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in outs]


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "{name}.h"
/* Reads each input's raw bytes from argv[i + 1], runs, writes each output's to stdout. */
int main(int argc, char **argv) {{
  static unsigned char in_buf[{nin}][{in_bytes}];
  static unsigned char out_buf[{nout}][{out_bytes}];
  {name}_inputs in;
  {name}_outputs out;
  {bind}
  for (int i = 0; i < {nin}; ++i) {{
    FILE *f = fopen(argv[i + 1], "rb");
    if (!f || fread(in_buf[i], 1, sizeof in_buf[i], f) == 0) return 2;
    fclose(f);
  }}
  {blob}
  if ({name}_run(&in, &out) != 0) return 3;
  for (int i = 0; i < {nout}; ++i) fwrite(out_buf[i], 1, sizeof out_buf[i], stdout);
  (void)argc;
  return 0;
}}
"""


def compile_and_run(lib, inputs, tmp_path):
    """Export the program, compile it with a driver under -Wall -Wextra -Werror, run it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    prog = lib.c_program
    lib.export(tmp_path)
    name = prog.name
    in_bytes = max(int(np.prod(t.get_shape())) * 8 for _, t in prog.inputs)
    out_bytes = max(int(np.prod(t.get_shape())) * 8 for _, t in prog.outputs)
    bind = " ".join(
        [f"in.{n} = (const void *)in_buf[{i}];" for i, (n, _) in enumerate(prog.inputs)]
        + [f"out.{n} = (void *)out_buf[{i}];" for i, (n, _) in enumerate(prog.outputs)]
    )
    blob = ""
    if prog.blob is not None:
        blob = (f'static unsigned char b[{len(prog.blob)}]; FILE *bf = fopen("{tmp_path}/{name}.bin", "rb");'
                f" if (!bf || fread(b, 1, sizeof b, bf) != sizeof b) return 4; fclose(bf);"
                f" if ({name}_set_blob(b, sizeof b)) return 5;")  # fmt: skip
    (tmp_path / "driver.c").write_text(DRIVER.format(
        name=name, nin=len(prog.inputs), nout=len(prog.outputs), in_bytes=in_bytes,
        out_bytes=out_bytes, bind=bind, blob=blob))  # fmt: skip
    exe = tmp_path / "run"
    subprocess.run([CC, *STRICT, "-I", str(tmp_path), str(tmp_path / f"{name}.c"),
                    str(tmp_path / "driver.c"), "-o", str(exe), "-lm"], check=True,
                   capture_output=True, text=True)  # fmt: skip
    files = []
    for i, (n, _) in enumerate(prog.inputs):
        path = tmp_path / f"in{i}.bin"
        path.write_bytes(np.ascontiguousarray(inputs[n]).tobytes())
        files.append(str(path))
    res = subprocess.run([str(exe), *files], capture_output=True, check=True)
    outs, at = [], 0
    for _, t in prog.outputs:
        dt = np.float32
        n = int(np.prod(t.get_shape())) * 8
        outs.append(np.frombuffer(res.stdout[at : at + n], dtype=np.uint8)[: int(np.prod(t.get_shape())) * 4]
                    .view(dt).reshape(t.get_shape()))  # fmt: skip
        at += out_bytes
    return outs


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_mlp_every_planner_compiles_strictly_and_matches(algorithm, tmp_path):
    mod, params = mlp.get_workload(batch_size=2)
    lib = build_c(mod, params, plan=algorithm, time_limit=5)
    x = np.random.default_rng(1).standard_normal((2, 1, 28, 28)).astype("float32")
    (got,) = compile_and_run(lib, {"data": x}, tmp_path)
    (want,) = reference(mod, {"data": x}, params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # The pool is exactly the plan's arena, and the C declares it at that size.
    size = lib.summary.pools["global"]
    assert f"model_pool_global[{size}]" in lib.get_source()
    assert size == lib.plan_info[2].total_size


@pytest.mark.parametrize("workload,kw", [(resnet, {"num_layers": 18}), (mobilenet, {})])
def test_models_run_with_weights_in_a_blob(workload, kw, tmp_path):
    mod, params = workload.get_workload(batch_size=1, **kw)
    lib = build_c(mod, params, constants="blob")
    lib.export(tmp_path)
    subprocess.run([CC, *STRICT, "-fsyntax-only", "-I", str(tmp_path), str(tmp_path / "model.c")],
                   check=True, capture_output=True)  # fmt: skip
    shape = lib.c_program.inputs[0][1].get_shape()
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    lib.run(data=x)
    (want,) = reference(mod, {"data": x}, params)
    np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-4, atol=1e-6)
    # ROM for constants: the bytes of every constant the planned program keeps (the
    # weights after folding), each once; the blob holds them at 64-byte boundaries.
    consts = [op.numpy().nbytes for op in lib.planned.walk() if op.name == "relay.constant"]
    assert lib.summary.constants == sum(consts)
    assert sum(consts) <= len(lib.c_program.blob) < sum(consts) + 64 * len(consts)
    assert "malloc" not in lib.get_source()


SMALL = {
    "resnet18": (resnet, {"num_layers": 18, "image_shape": (3, 32, 32), "num_classes": 10}),
    "mobilenetv2": (mobilenet, {"image_shape": (3, 32, 32), "num_classes": 10}),
}


@pytest.mark.parametrize("model", SMALL)
def test_resnet_and_mobilenet_every_planner_compile_strictly_and_match(model, tmp_path):
    """ResNet-18 and MobileNetV2 (32x32 images: the same layers, small maps) planned by every
    algorithm; each distinct program (planners that place every tensor alike emit the same C)
    is compiled with the strict flags and a driver, run, and compared with the reference
    interpreter; its pool is the plan's arena."""
    workload, kw = SMALL[model]
    mod, params = workload.get_workload(batch_size=1, **kw)
    x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype("float32")
    (want,) = reference(mod, {"data": x}, params)
    programs: dict[str, list[str]] = {}
    for algorithm in ALGORITHMS:
        lib = build_c(mod, params, plan=algorithm, time_limit=5, constants="blob")
        assert lib.summary.pools == dict(lib.plan_info[2].pool_sizes)
        source = lib.get_source()
        if source in programs:
            programs[source].append(algorithm)
            continue
        programs[source] = [algorithm]
        (got,) = compile_and_run(lib, {"data": x}, tmp_path / algorithm)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=algorithm)
    # The planners do differ here: several distinct programs were compiled and run.
    assert len(programs) >= 3, list(programs.values())


@pytest.mark.parametrize(("seed", "algorithm"), list(enumerate(ALGORITHMS)))
def test_random_dags_every_planner(seed, algorithm, tmp_path):
    mod = random_dag(seed, num_ops=20)
    lib = xrelay.build(mod, target="c", plan=algorithm, time_limit=5)
    inputs = {n: np.random.default_rng(seed).standard_normal(t.get_shape()).astype("float32")
              for n, t in lib.c_program.inputs}  # fmt: skip
    outs = compile_and_run(lib, inputs, tmp_path)
    for got, want in zip(outs, reference(mod, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_relay_build_c_as_the_seed_does():
    x = relay.var("x", shape=(20, 20))
    y1 = relay.add(x, x)
    y = relay.add(relay.sum(relay.add(y1, y1), axis=-1), relay.sum(relay.add(y1, y1), axis=-1))
    func = relay.Function([x], y)
    with xrelay.transform.PassContext(opt_level=0):
        graph, lib, params = relay.build(func, target="c", params=None)
    src = lib.get_source()
    assert "XRELAY_FN void model_fused_" in src and "int model_run(" in src
    assert '"nodes"' in graph and params == {}
    data = np.random.default_rng(0).standard_normal((20, 20)).astype("float32")
    m = lib["default"](xrelay.cpu())
    m.set_input("x", data)
    m.run()
    np.testing.assert_allclose(m.get_output(0), 8 * data.sum(-1), rtol=1e-5)


def test_dynamic_shape_is_refused_naming_the_value():
    x = relay.var("x", shape=(relay.Any(), 4))
    mod = xrelay.IRModule.from_expr(relay.nn.relu(x))
    with pytest.raises(xrelay.TVMError, match="dynamic shape"):
        xrelay.build(mod, target="c")


def test_op_without_c_lowering_is_refused_naming_it():
    x = relay.var("x", shape=(1, 4, 8, 8))
    grid = relay.var("grid", shape=(1, 2, 3, 3))
    y = relay.image.grid_sample(x, grid, method="bicubic")
    mod = xrelay.IRModule.from_expr(relay.Function([x, grid], y))
    with pytest.raises(CodegenError, match=r"image.grid_sample \(NCHW, bicubic, f32\) has no C lowering: only "
                       r"NCHW float32 data, nearest or bilinear"):  # fmt: skip
        xrelay.build(mod, target="c")


def test_names_that_are_not_c_identifiers_are_refused():
    x = relay.var("x", shape=(4,))
    mod = xrelay.IRModule.from_expr(relay.nn.relu(x))
    with pytest.raises(CodegenError, match="program name 'my-model' is not a C identifier"):
        build_c(mod, name="my-model")
    with pytest.raises(CodegenError, match="program name 'int' is not a C identifier"):
        build_c(mod, name="int")
    fn = next(f for f in build_c(mod).planned.ops if getattr(f, "sym_name", None)
              and f.sym_name.data != "main" and hasattr(f, "body"))  # fmt: skip
    with pytest.raises(CodegenError, match="function name '1st' is not a C identifier"):
        emit_function(fn, "1st")


def small_convnet():
    x = relay.var("data", shape=(1, 3, 12, 12))
    w1 = relay.var("w1", shape=(8, 3, 3, 3))
    w2 = relay.var("w2", shape=(10, 8 * 6 * 6))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, kernel_size=(3, 3), padding=(1, 1), channels=8))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.softmax(relay.nn.dense(relay.nn.batch_flatten(y), w2, units=10))
    mod = xrelay.IRModule.from_expr(relay.Function([x, w1, w2], y))
    rng = np.random.default_rng(3)
    params = {"w1": rng.standard_normal((8, 3, 3, 3)).astype("float32"),
              "w2": rng.standard_normal((10, 288)).astype("float32") * 0.1}  # fmt: skip
    return mod, params


def test_arena_executor_calls_the_c_function_of_every_step():
    mod, params = small_convnet()
    # NCHW as the native runtime's steps (the C target's channel-blocked layouts off)
    with xrelay.transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        lib = xrelay.build(mod, params, target="c", debug=True)
    so = lib.library()
    # Every step is one call of its function's symbol in the module's shared library.
    steps = lib.executor.steps
    assert steps and all(len(c.thunks) == 1 for _, _, c in steps)
    for name, _, compiled in steps:
        call = compiled.thunks[0][2]
        symbol = so[lib.c_program.functions[name].name]
        assert ctypes.cast(call.func, ctypes.c_void_p).value == ctypes.cast(symbol, ctypes.c_void_p).value
    x = np.random.default_rng(0).standard_normal((1, 3, 12, 12)).astype("float32")
    lib.run(data=x)
    (want,) = reference(mod, {"data": x}, params)
    np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-5, atol=1e-6)
    # Per-step outputs match the native runtime's steps (same fused functions, same order).
    native = xrelay.build(mod, params, debug=True, inputs_in_arena=False, outputs_in_arena=False,
                          backends=("native",))
    native.run(data=x)
    assert [n for n, _, _ in native.executor.steps] == [n for n, _, _ in steps]
    for i, (name, _, _) in enumerate(steps):
        for got, exp in zip(lib.debug_get_output(i), native.debug_get_output(i), strict=True):
            np.testing.assert_allclose(got, exp, rtol=1e-4, atol=1e-5, err_msg=name)
    table = lib.profile()
    assert all(name in table for name, _, _ in steps) and "conv" in table
    # The standalone entry (static arenas, its own constants) gives the same bits.
    first = lib.get_output(0).copy()
    lib.run_aot(data=x)
    np.testing.assert_array_equal(lib.get_output(0), first)


def test_c_module_reads_loaded_params():
    mod, params = small_convnet()
    lib = xrelay.build(mod, params, target="c")
    x = np.random.default_rng(1).standard_normal((1, 3, 12, 12)).astype("float32")
    lib.run(data=x)
    before = lib.get_output(0).copy()
    lib.load_params({k: np.zeros_like(v) for k, v in lib.get_params().items()})
    lib.run(data=x)
    # All weights zero: the logits are zero, softmax is uniform.
    np.testing.assert_allclose(lib.get_output(0), np.full((1, 10), 0.1, "float32"), rtol=1e-6)
    assert not np.allclose(before, 0.1)


def test_without_a_compiler_the_source_is_there_and_running_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path / "cache"))
    x = relay.var("x", shape=(4,))
    lib = xrelay.build(xrelay.IRModule.from_expr(relay.nn.relu(x)), target="c")
    assert "XRELAY_FN void model_fused_nn_relu(" in lib.get_source()
    with pytest.raises(xrelay.TVMError, match="no-such-cc' could not run"):
        lib.run(x=np.ones(4, "float32"))


def test_scratch_slots_are_reused_once_their_values_are_dead(tmp_path):
    """Inside one function a scratch slot is free again after the last read of its value or
    of a view of it. a = x + 1 lives to the end; b = T(a), d = T(R(b)), f = T(R(d)) (T a
    transpose, R a reshape: a view, same slot) each need a slot: b's is free once d is
    computed, so f takes it: three slots, not four. d must not take b's slot while its view
    R(b) is read (a transpose in place is wrong): the C must compute the reference's bits."""
    x = relay.var("x", shape=(1, 4, 8, 16))
    a = x + relay.const(1.0)
    t = a
    for _ in range(3):
        t = relay.reshape(relay.transpose(t, (0, 1, 3, 2)), (1, 4, 8, 16))
    y = t * relay.const(2.0) + a
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = build_c(mod)
    (fn,) = [f for f in lib.planned.ops if getattr(f, "sym_name", None) and f.sym_name.data != "main"
             and hasattr(f, "body") and not f.is_declaration]  # fmt: skip
    assert [op.name for op in fn.body.block.ops].count("relay.transpose") == 3
    slot = 1 * 4 * 8 * 16 * 4
    assert emit_function(fn, "f").scratch_bytes == 3 * slot
    data = np.random.default_rng(0).standard_normal((1, 4, 8, 16)).astype("float32")
    (got,) = compile_and_run(lib, {"x": data}, tmp_path)
    (want,) = reference(mod, {"x": data})
    np.testing.assert_array_equal(got, want)


def test_a_reshaped_result_is_computed_in_its_out_pointer(tmp_path):
    """A function returning a view (reshape) of a value read nowhere else computes that value
    in the out pointer (same bytes): no scratch, no copy (a GELU's result reshaped back to
    tokens needed a scratch slot the size of the activation)."""
    x = relay.var("x", shape=(2, 8, 16))
    t = relay.transpose(x, (0, 2, 1))
    y = relay.reshape(t * relay.const(0.5) * (relay.erf(t) + relay.const(1.0)), (2, 128))
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = build_c(mod)
    (fn,) = [f for f in lib.planned.ops if getattr(f, "sym_name", None) and f.sym_name.data != "main"
             and hasattr(f, "body") and not f.is_declaration]  # fmt: skip
    cfn = emit_function(fn, "f")
    assert "relay.reshape" in [op.name for op in fn.body.block.ops]
    slot = 2 * 8 * 16 * 4
    # the transpose in the out pointer, the GELU chain one loop over it in place: no scratch
    # (3 slots before views took their operand's out pointer, 2 before elementwise chains)
    assert cfn.scratch_bytes == 0 and slot
    data = np.random.default_rng(0).standard_normal((2, 8, 16)).astype("float32")
    (got,) = compile_and_run(lib, {"x": data}, tmp_path)
    (want,) = reference(mod, {"x": data})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _only_function(lib):
    (fn,) = [f for f in lib.planned.ops if getattr(f, "sym_name", None) and f.sym_name.data != "main"
             and hasattr(f, "body") and not f.is_declaration]  # fmt: skip
    return fn


def test_elementwise_chains_are_one_loop_without_temporaries(tmp_path):
    """GELU after a transpose (x read twice, constants and a per-channel operand broadcast):
    every elementwise op inside one loop over the result, the transpose written into the
    out pointer and the chain computed over it in place, so no scratch; and values read
    outside their chain (a sum, a returned intermediate, a value broadcast into a larger
    shape) stay in memory. Results equal the reference's."""
    x = relay.var("x", shape=(2, 6, 5))
    s = relay.var("s", shape=(6,))
    t = relay.transpose(x, (0, 2, 1))
    g = t * relay.const(0.5) * (relay.erf(t * relay.const(0.7071)) + relay.const(1.0)) + s
    mod = xrelay.IRModule.from_expr(relay.Function([x, s], relay.nn.relu(g)))
    lib = build_c(mod)
    fn = _only_function(lib)
    assert [op.name for op in fn.body.block.ops].count("relay.multiply") == 3
    src = emit_function(fn, "f")
    assert src.scratch_bytes == 0
    assert src.source.count("for (int64_t i0 = 0;") == 2  # the transpose, and one chain
    inputs = {"x": np.random.default_rng(1).standard_normal((2, 6, 5)).astype("float32"),
              "s": np.random.default_rng(2).standard_normal(6).astype("float32")}  # fmt: skip
    (got,) = compile_and_run(lib, inputs, tmp_path / "gelu")
    (want,) = reference(mod, inputs)
    assert np.ptp(want) > 0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    # a = x * 2 is read by a chain and by a sum; b = a + 1 is returned as well; c = sum is
    # broadcast into the next add: three values in memory, the rest in the chains
    y = relay.var("y", shape=(4, 8))
    a = y * relay.const(2.0)
    b = a + relay.const(1.0)
    c = relay.sum(a, axis=1, keepdims=True)
    d = relay.exp(b * relay.const(0.1)) - c
    mod = xrelay.IRModule.from_expr(relay.Function([y], relay.Tuple([b, d])))
    lib = build_c(mod)
    data = {"y": np.random.default_rng(3).standard_normal((4, 8)).astype("float32")}
    got = compile_and_run(lib, data, tmp_path / "shared")
    want = reference(mod, data)
    for g_, w_ in zip(got, want, strict=True):
        assert np.ptp(w_) > 0
        np.testing.assert_allclose(g_, w_, rtol=1e-6, atol=1e-6)


def test_integer_rescaling_chain_is_bit_exact_in_one_loop(tmp_path):
    """An int32 -> int64 rescaling with a select, shifts and a clip back to int8 (the form qnn
    canonicalization writes): one loop, no scratch, the reference's bits, wrapping included."""
    x = relay.var("x", shape=(3, 16), dtype="int32")
    m = relay.const(np.arange(16, dtype="int64") * 37 + 1_000_003, dtype="int64")
    w = relay.cast(x, "int64") * m
    def i64(v):
        return relay.const(v, dtype="int64")

    r = relay.where(relay.greater_equal(w, i64(0)), w + i64(1 << 14), w - i64(1 << 14))
    r = relay.right_shift(r, i64(22)) + i64(-3)
    y = relay.cast(relay.clip(relay.cast(r, "int32"), -128, 127), "int8")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = build_c(mod)
    src = emit_function(_only_function(lib), "f")
    assert src.scratch_bytes == 0 and src.source.count("for (int64_t i0 = 0;") == 1
    big = np.iinfo("int32")
    data = np.random.default_rng(4).integers(-500, 500, (3, 16)).astype("int32")
    data[0, :4] = [big.min, big.max, 0, -1]
    compile_and_run(lib, {"x": data}, tmp_path)  # strict flags (its driver reads floats)
    (want,) = reference(mod, {"x": data})
    assert len(np.unique(want)) > 10
    lib.run(x=data)
    np.testing.assert_array_equal(lib.get_output(0), want)
    lib.run_aot()
    np.testing.assert_array_equal(lib.get_output(0), want)


def test_an_operand_of_an_inlined_op_lives_until_its_chain_is_emitted(tmp_path):
    """cast(T(y)) * 2 - cast(T(w)): the first cast is computed in the subtract's loop, after
    T(w) is written; T(y)'s slot must stay taken until then (two slots, not one)."""
    y = relay.var("y", shape=(8, 4), dtype="int32")
    w = relay.var("w", shape=(8, 4), dtype="int32")
    r = relay.cast(relay.transpose(y, (1, 0)), "float32") * relay.const(2.0) - relay.cast(
        relay.transpose(w, (1, 0)), "float32")  # fmt: skip
    mod = xrelay.IRModule.from_expr(relay.Function([y, w], r))
    lib = build_c(mod)
    fn = _only_function(lib)
    names = [op.name for op in fn.body.block.ops]
    assert names.index("relay.cast") < names.index("relay.transpose", 1) < names.index("relay.subtract")
    assert emit_function(fn, "f").scratch_bytes == 2 * 4 * 8 * 4
    rng = np.random.default_rng(5)
    data = {"y": rng.integers(-100, 100, (8, 4)).astype("int32"), "w": rng.integers(-100, 100, (8, 4)).astype("int32")}
    (got,) = compile_and_run(lib, data, tmp_path)
    (want,) = reference(mod, data)
    np.testing.assert_array_equal(got, want)
