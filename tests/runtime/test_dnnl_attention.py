"""Attention as exporters write it: the heads' reshapes and transposes around the batched
matmuls are the matmuls' strides (``dnnl_partition.fold_views`` + the reader's views), not
copies, and the results stay within 1e-4 of onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing import platform
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)
E, H = 32, 4  # model width, heads
D = E // H


def _attention(batch: int, seq: int, k_form: str, scale: str, mask_rows: int = 1):
    """One self-attention block as torch exports it: Q, K, V projections, heads split by
    Reshape + Transpose, Q K^T scaled, the additive mask, Softmax, times V, heads joined by
    Transpose + Reshape, the output projection. ``mask_rows``: 1 (a key-padding mask,
    (batch, 1, 1, seq)) or ``seq`` (BERT's exported mask, (batch, 1, seq, seq))."""
    g = GraphBuilder(7)

    def proj(x):
        w = g.init(g.name("w"), (RNG.standard_normal((E, E)) * 0.3).astype("float32"))
        b = g.init(g.name("b"), (RNG.standard_normal(E) * 0.1).astype("float32"))
        return g.node("Add", [g.node("MatMul", [x, w]), b])

    def heads(x, perm):
        shape = g.const(np.array([batch, seq, H, D], np.int64))
        return g.node("Transpose", [g.node("Reshape", [x, shape])], perm=perm)

    q = heads(proj("data"), [0, 2, 1, 3])
    if k_form == "transposed":  # K^T in one transpose (GPT-2 / BERT as exported)
        kt = heads(proj("data"), [0, 2, 3, 1])
    else:  # key.transpose(-1, -2) of the (B, H, S, D) heads
        kt = g.node("Transpose", [heads(proj("data"), [0, 2, 1, 3])], perm=[0, 1, 3, 2])
    v = heads(proj("data"), [0, 2, 1, 3])
    if scale == "sdpa":  # torch's scaled_dot_product_attention: sqrt(scale) on Q and on K^T
        root = g.const(np.float32(np.sqrt(1 / np.sqrt(D))))
        q, kt = g.node("Mul", [q, root]), g.node("Mul", [kt, root])
    s = g.node("MatMul", [q, kt])
    if scale == "divide":
        s = g.node("Div", [s, g.const(np.float32(np.sqrt(D)))])
    elif scale == "multiply":
        s = g.node("Mul", [s, g.const(np.float32(1 / np.sqrt(D)))])
    s = g.node("Add", [s, "mask"])
    p = g.node("Softmax", [s], axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [p, v])], perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.const(np.array([batch, seq, E], np.int64))])
    y = proj(ctx)
    model = g.model({"data": ([batch, seq, E], np.float32), "mask": ([batch, 1, mask_rows, seq], np.float32)},
                    [y], "attention", opset=17)  # fmt: skip
    mask = np.zeros((batch, 1, mask_rows, seq), np.float32)
    mask[..., seq - seq // 4 :] = -1e4  # the padded positions
    inputs = {"data": RNG.standard_normal((batch, seq, E)).astype("float32"), "mask": mask}
    return model, inputs


def _build(model, inputs, **kw):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, **kw)
    m.set_input(**inputs)
    m.run()
    return m, m.get_output(0).numpy()


def _steps(m):
    return [(b, o) for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends)]


@pytest.mark.parametrize("k_form", ["transposed", "transpose_of_heads"])
@pytest.mark.parametrize("scale", ["divide", "multiply", "sdpa"])
@pytest.mark.parametrize("mask_rows", [1, 16])
def test_attention_heads_are_matmul_strides(k_form, scale, mask_rows):
    model, inputs = _attention(1, 16, k_form, scale, mask_rows)
    m, out = _build(model, inputs)
    ref = run_onnxruntime(model, inputs)[0]
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    steps = _steps(m)
    # the scale and the mask are the scores' matmul's post-ops (fold_views' epilogue; the
    # factors on Q and K^T leave the matmul first: canonicalize-arith's ScalarOutOfMatmul)
    assert [o for _, o in steps if o.startswith("nn.batch_matmul")] == ["nn.batch_matmul+multiply+add", "nn.batch_matmul"], steps
    assert not [o for b, o in steps if b == "dnnl" and o in ("transpose", "reshape", "copy")], steps
    # no copy anywhere: the inputs' copies in (the only native steps), the rest oneDNN: 4
    # projections, 2 matmuls and the softmax
    assert [b for b, _ in steps] == ["native"] * 2 + ["dnnl"] * 7, steps
    # the output does not ignore its input
    inputs2 = dict(inputs, data=inputs["data"] + 1.0)
    m.set_input(**inputs2)
    m.run()
    assert float(np.max(np.abs(m.get_output(0).numpy() - out))) > 1e-2


def test_two_images_heads_are_two_batch_dims():
    """With two images the (batch, heads) pair is no single batch stride: the matmuls read
    Q, K and V over both batch dims (``primitives.matmul_view``), no reorder before them;
    the context's transpose back stays one reorder; the results are onnxruntime's."""
    model, inputs = _attention(2, 8, "transposed", "divide")
    m, out = _build(model, inputs)
    ref = run_onnxruntime(model, inputs)[0]
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    ops = [o.split("+")[0] for _, o in _steps(m)]
    assert ops.count("nn.batch_matmul") == 2
    assert ops.count("transpose") == 1 and ops.index("transpose") > ops.index("nn.softmax"), ops


def test_strided_matmul_equals_numpy_for_every_head_permutation():
    """The reader's strides for operands and result through reshapes and transposes of every
    order, on oneDNN, against numpy's einsum on the same values."""
    from xrelay import relay

    x = relay.var("x", shape=(6, 24))
    y = relay.var("y", shape=(6, 24))
    a = relay.reshape(relay.transpose(relay.reshape(x, (6, 3, 8)), (1, 0, 2)), (3, 6, 8))  # heads
    b = relay.reshape(relay.transpose(relay.reshape(y, (6, 3, 8)), (1, 2, 0)), (3, 8, 6))  # K^T
    s = relay.nn.batch_matmul(a, b, transpose_b=False)  # (3, 6, 6)
    out = relay.reshape(relay.transpose(s, (1, 2, 0)), (6, 18))  # (6, 6, 3): heads last
    mod = xrelay.IRModule.from_expr(relay.Function([x, y], out))
    xv = RNG.standard_normal((6, 24)).astype("float32")
    yv = RNG.standard_normal((6, 24)).astype("float32")
    m = xrelay.build(mod, None, opt_level=3)
    m.set_input(x=xv, y=yv)
    m.run()
    got = m.get_output(0).numpy()
    ref = np.einsum("qhd,khd->qkh", xv.reshape(6, 3, 8), yv.reshape(6, 3, 8)).reshape(6, 18)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # the inputs copied in, then oneDNN only. A result with the heads innermost has no unit
    # stride in its matrices: as one strided matmul oneDNN offers only its reference code
    # (ref:any, refused), so the transposes run as oneDNN reorders around a plain matmul
    steps = _steps(m)
    assert steps[:2] == [("native", "copy"), ("native", "copy")] and ("dnnl", "nn.batch_matmul") in steps
    assert all(b == "dnnl" for b, _ in steps[2:]), steps
    impls = [s.impl for _, _, c in m.executor.steps if hasattr(c, "dnnl_plan") for s in c.dnnl_plan.steps]
    assert not any(i.startswith("ref") for i in impls), impls


def _windows(images: int, heads: int, windows: int, s: int, bias_shape, mask_shape):
    """Swin's window attention after the scores' matmul: the (images * windows * heads)
    score matrices viewed as (images * windows, heads, s, s) plus a relative-position bias,
    then as (images, windows, heads, s, s) plus the shifted windows' mask, then back; the
    softmax reads the result."""
    from xrelay import relay

    b = images * windows * heads
    q = relay.var("q", shape=(b, s, 8))
    k = relay.var("k", shape=(b, s, 8))
    bias = relay.var("bias", shape=bias_shape)
    mask = relay.var("mask", shape=mask_shape)
    sc = relay.nn.batch_matmul(q, k)  # (b, s, s)
    x = relay.reshape(sc, (images * windows, heads, s, s))
    x = relay.multiply(x, relay.const(np.float32(0.125)))
    x = relay.add(x, bias)
    x = relay.reshape(x, (images, windows, heads, s, s))
    x = relay.add(mask, x)  # the other operand first
    x = relay.reshape(x, (b, s, s))
    y = relay.nn.softmax(x)
    mod = xrelay.IRModule.from_expr(relay.Function([q, k, bias, mask], y))
    vals = {
        "q": RNG.standard_normal((b, s, 8)).astype("float32"),
        "k": RNG.standard_normal((b, s, 8)).astype("float32"),
        "bias": RNG.standard_normal(bias_shape).astype("float32"),
        "mask": np.where(RNG.random(mask_shape) < 0.3, -100.0, 0.0).astype("float32"),
    }
    sc = np.einsum("bmk,bnk->bmn", vals["q"], vals["k"]).reshape(images * windows, heads, s, s)
    ref = (sc * np.float32(0.125) + vals["bias"]).reshape(images, windows, heads, s, s) + vals["mask"]
    ref = ref.reshape(b, s, s)
    ref = np.exp(ref - ref.max(-1, keepdims=True))
    return mod, vals, ref / ref.sum(-1, keepdims=True)


@pytest.mark.parametrize(
    ("bias_shape", "mask_shape"),
    [
        ((1, 3, 7, 7), (4, 1, 7, 7)),  # Swin: bias per head, mask per window
        ((3, 7, 7), (1, 1, 1, 7)),  # a key-padding mask, bias with fewer dims
        ((8, 3, 7, 7), (2, 4, 3, 7, 7)),  # full operands
        ((1, 3, 1, 7), (2, 1, 3, 1, 1)),  # per head and column; per image and head
        ((8, 1, 7, 7), (2, 4, 1, 7, 7)),
    ],
)
def test_scores_epilogue_is_the_matmuls_post_ops(bias_shape, mask_shape, monkeypatch):
    """The scale, a bias and a mask after the scores' matmul, seen through reshapes that
    regroup the batch, are oneDNN binary post-ops of one matmul over the finest batch dims
    (images, windows, heads) where oneDNN has more than its reference code for them
    (otherwise they stay native steps): numpy's results either way (two batch groupings,
    operands broadcasting over each batch dim)."""
    from xrelay.runtime.dnnl import primitives

    impls = []
    real = primitives._Reader._finish

    def finish(self, name, family, pd, step):
        real(self, name, family, pd, step)
        impls.append((name, step.impl))

    monkeypatch.setattr(primitives._Reader, "_finish", finish)
    mod, vals, ref = _windows(2, 3, 4, 7, bias_shape, mask_shape)
    m = xrelay.build(mod, None, opt_level=3)
    m.set_input(**vals)
    m.run()
    got = m.get_output(0).numpy()
    assert np.all(np.isfinite(got)) and float(np.std(ref)) > 0.05
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    steps = _steps(m)
    fused = [impl for name, impl in impls if name.startswith("nn.batch_matmul+")]
    assert all(not impl.startswith("ref") for impl in fused), impls  # never oneDNN's reference code
    if [o for b, o in steps if b == "dnnl"] == ["nn.batch_matmul+multiply+add+add", "nn.softmax"]:
        assert fused and all(o == "copy" for b, o in steps if b == "native"), steps
    else:  # the matmul alone on oneDNN, the epilogue native
        assert [o for b, o in steps if b == "dnnl"] == ["nn.batch_matmul", "nn.softmax"], steps
        assert any("add" in o for b, o in steps if b == "native"), steps


def test_scores_epilogue_that_splits_rows_is_not_a_post_op():
    """A reshape that splits the scores' rows (not only the batch) gives the post-ops no
    batch dims: the matmul and the add stay separate steps, and the results numpy's."""
    from xrelay import relay

    q = relay.var("q", shape=(4, 6, 8))
    k = relay.var("k", shape=(4, 6, 8))
    bias = relay.var("bias", shape=(1, 1, 3, 6))
    x = relay.reshape(relay.nn.batch_matmul(q, k), (4, 2, 3, 6))
    y = relay.nn.softmax(relay.reshape(relay.add(x, bias), (4, 6, 6)))
    mod = xrelay.IRModule.from_expr(relay.Function([q, k, bias], y))
    vals = {n: RNG.standard_normal(sh).astype("float32") for n, sh in (("q", (4, 6, 8)), ("k", (4, 6, 8)), ("bias", (1, 1, 3, 6)))}
    m = xrelay.build(mod, None, opt_level=3)
    m.set_input(**vals)
    m.run()
    sc = np.einsum("bmk,bnk->bmn", vals["q"], vals["k"]).reshape(4, 2, 3, 6) + vals["bias"]
    sc = sc.reshape(4, 6, 6)
    ref = np.exp(sc - sc.max(-1, keepdims=True))
    np.testing.assert_allclose(m.get_output(0).numpy(), ref / ref.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    # (the add and the reshape: one elementwise loop writing the destination seen unsplit)
    assert ("dnnl", "nn.batch_matmul") in _steps(m) and ("native", "add, reshape as one loop") in _steps(m), _steps(m)


def test_scores_epilogue_that_onednn_refuses_runs_as_steps(monkeypatch):
    """Post-ops oneDNN refuses (here: every binary post-op) leave the matmul plain (the
    views still fold) and the scale and adds native steps, with numpy's results."""
    from xrelay.runtime.dnnl import primitives

    real = primitives._Reader._attr

    def attr(self, post):
        if any(p[0] == 2 for p in post):
            raise primitives.DnnlUnsupported("binary post-ops refused (test)")
        return real(self, post)

    monkeypatch.setattr(primitives._Reader, "_attr", attr)
    mod, vals, ref = _windows(2, 3, 4, 7, (1, 3, 7, 7), (4, 1, 7, 7))
    m = xrelay.build(mod, None, opt_level=3)
    m.set_input(**vals)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    ops = [o for b, o in _steps(m) if b == "dnnl"]
    assert ops == ["nn.batch_matmul", "nn.softmax"], _steps(m)
    assert any("add" in o for b, o in _steps(m) if b == "native"), _steps(m)


def _packed_attention(form: str, seq: int = 12, windows: int = 1):
    """Self-attention on one image whose Q, K and V come from one packed projection (width
    3E), split as exporters write it: ``mha`` (torchvision's ``MultiheadAttention``,
    sequence first: view as (seq, 1, 3, E), unsqueeze, move the 3 first, squeeze, take each
    index), ``permute`` (timm's and Swin's ``reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4)``,
    then take each index; ``windows``: B, Swin's windows), ``split`` (GPT-2: ``Split`` of
    the last axis in three)."""
    g = GraphBuilder(7)
    w = g.init("w", (RNG.standard_normal((E, 3 * E)) * 0.3).astype("float32"))
    b = g.init("b", (RNG.standard_normal(3 * E) * 0.1).astype("float32"))
    x = "data" if form != "mha" else g.node("Transpose", ["data"], perm=[1, 0, 2])  # (seq, 1, E)
    qkv = g.node("Add", [g.node("MatMul", [x, w]), b])

    def gather(t, i):
        return g.node("Gather", [t, g.const(np.array(i, np.int64))], axis=0)

    if form == "mha":
        r = g.node("Reshape", [qkv, g.const(np.array([seq, 1, 3, E], np.int64))])
        r = g.node("Unsqueeze", [r, g.const(np.array([0], np.int64))])
        r = g.node("Squeeze", [g.node("Transpose", [r], perm=[3, 1, 2, 0, 4]), g.const(np.array([-2], np.int64))])
        parts = []
        for i in range(3):  # (seq, 1, E) -> (heads, seq, D)
            t = g.node("Reshape", [gather(r, i), g.const(np.array([seq, H, D], np.int64))])
            parts.append(g.node("Transpose", [t], perm=[1, 0, 2]))
        q, k, v = parts
        kt = g.node("Transpose", [k], perm=[0, 2, 1])
    elif form == "permute":
        r = g.node("Reshape", [qkv, g.const(np.array([windows, seq, 3, H, D], np.int64))])
        r = g.node("Transpose", [r], perm=[2, 0, 3, 1, 4])  # (3, windows, H, seq, D)
        q, k, v = (gather(r, i) for i in range(3))
        kt = g.node("Transpose", [k], perm=[0, 1, 3, 2])
    else:
        parts = g.node("Split", [qkv, g.const(np.array([E] * 3, np.int64))], n_out=3, axis=2)
        q, k, v = (
            g.node("Transpose", [g.node("Reshape", [p, g.const(np.array([1, seq, H, D], np.int64))])], perm=[0, 2, 1, 3])
            for p in parts
        )
        kt = g.node("Transpose", [k], perm=[0, 1, 3, 2])
    s = g.node("Mul", [g.node("MatMul", [q, kt]), g.const(np.float32(1 / np.sqrt(D)))])
    ctx = g.node("MatMul", [g.node("Softmax", [s], axis=-1), v])
    if form == "mha":  # (heads, seq, D) -> (seq, heads, D) -> (1, seq, E)
        ctx = g.node("Reshape", [g.node("Transpose", [ctx], perm=[1, 0, 2]), g.const(np.array([1, seq, E], np.int64))])
    else:
        ctx = g.node("Reshape", [g.node("Transpose", [ctx], perm=[0, 2, 1, 3]), g.const(np.array([windows, seq, E], np.int64))])
    model = g.model({"data": ([windows, seq, E], np.float32)}, [ctx], "packed_attention", opset=17)
    return model, {"data": RNG.standard_normal((windows, seq, E)).astype("float32")}


@pytest.mark.parametrize(("form", "windows"), [("mha", 1), ("permute", 1), ("split", 1), ("permute", 4)])
def test_packed_qkv_is_read_in_place(form, windows):
    """The packed projection's Q, K and V are slices of its rows that each matmul reads in
    place (``canonicalize-views`` moves the slices before the permutation, ``fold_views``
    takes them, and a ``split`` feeding a matmul, as slices): no copy of the projection,
    permuted or sliced, runs; onnxruntime's results within 1e-4. With Swin's 4 windows each
    matmul's batch (windows x heads) is two strided runs of the projection, which no single
    stride spans (``primitives.matmul_view``): the matmuls read over both batch dims, and
    only the context's transpose back to (windows, seq, E), the model's output, is a copy:
    one oneDNN reorder in the run (``offload_movement``), not a native step."""
    model, inputs = _packed_attention(form, seq=12 if windows == 1 else 7, windows=windows)
    m, out = _build(model, inputs)
    ref = run_onnxruntime(model, inputs)[0]
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    steps = _steps(m)
    # the input's copy in, then oneDNN: the projection, the scores' matmul with its scale,
    # the softmax and the context's matmul (writing the joined heads)
    want = [("native", "copy"), ("dnnl", "dnnl.dense_bias(nn.dense+add)"),
            ("dnnl", "nn.batch_matmul+multiply"), ("dnnl", "nn.softmax"), ("dnnl", "nn.batch_matmul")]  # fmt: skip
    if windows > 1:
        want.append(("dnnl", "transpose"))
    assert steps == want, steps
    m.set_input(data=inputs["data"] + 1.0)
    m.run()
    assert float(np.max(np.abs(m.get_output(0).numpy() - out))) > 1e-2



def test_heads_merged_into_one_batch_dim_run_as_rank_4_matmuls():
    """Attention over (heads, seq, D) tensors, the heads merged into one batch dim (torch's
    ``bmm`` attention as Whisper exports it): each matmul reads the projections' interleaved
    heads through strides and is described to oneDNN at rank 4, (1, heads, rows, cols),
    where its brgemm matmul takes the strided heads; at rank 3 it ran gemm:jit:f32 (Whisper's
    encoder 5% slower). onnxruntime's results within 1e-4."""
    from xrelay.runtime.dnnl import primitives

    seq, heads, d = 24, 3, 16
    width = heads * d
    g = GraphBuilder(7)

    def proj(x):
        return g.node(
            "MatMul",
            [x, g.init(g.name("w"), (RNG.standard_normal((width, width)) * 0.3).astype("float32"))],
        )

    def split(x):  # (1, seq, width) -> (heads, seq, d)
        t = g.node(
            "Transpose",
            [g.node("Reshape", [x, g.const(np.array([1, seq, heads, d], np.int64))])],
            perm=[0, 2, 1, 3],
        )
        return g.node("Reshape", [t, g.const(np.array([heads, seq, d], np.int64))])

    q, k, v = split(proj("data")), split(proj("data")), split(proj("data"))
    s = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 2, 1])])
    p = g.node("Softmax", [g.node("Mul", [s, g.const(np.float32(d**-0.5))])], axis=-1)
    ctx = g.node(
        "Reshape", [g.node("MatMul", [p, v]), g.const(np.array([1, heads, seq, d], np.int64))]
    )
    ctx = g.node(
        "Reshape",
        [
            g.node("Transpose", [ctx], perm=[0, 2, 1, 3]),
            g.const(np.array([1, seq, width], np.int64)),
        ],
    )
    model = g.model({"data": ([1, seq, width], np.float32)}, [proj(ctx)], "bmm_attention", opset=17)
    inputs = {"data": RNG.standard_normal((1, seq, width)).astype("float32")}
    m, out = _build(model, inputs)
    ref = run_onnxruntime(model, inputs)[0]
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    matmuls = [s for (_, _, c) in m.executor.steps if isinstance(getattr(c, "dnnl_plan", None), primitives.FunctionPlan)
               for s in c.dnnl_plan.steps if s.name.startswith("nn.batch_matmul")]  # fmt: skip
    assert [s.name for s in matmuls] == ["nn.batch_matmul+multiply", "nn.batch_matmul"]
    for s in matmuls:
        args = (primitives._ARG_SRC, primitives._ARG_WEIGHTS, primitives._ARG_DST)
        assert all(s.logical[a][0][:2] == [1, heads] and len(s.logical[a][0]) == 4 for a in args), (
            s.logical
        )
        # oneDNN's brgemm matmul where the CPU has AVX-512 (oneDNN 3.2 has none for AVX2, whose
        # float32 matmul is its jit GEMM); never the reference code
        assert s.impl.startswith("brg" if platform.avx512() else "gemm:jit"), (s.name, s.impl)
    m.set_input(data=inputs["data"] + 1.0)
    m.run()
    assert float(np.max(np.abs(m.get_output(0).numpy() - out))) > 1e-2


@pytest.mark.parametrize(
    ("batches", "fine"),
    [
        ([[64, 3], [192]], [64, 3]),
        ([[192], [64, 3], [1]], [64, 3]),  # a batch of one broadcasts
        ([[2, 12], [24], [1, 2, 12]], [2, 12]),
        ([[4, 6], [6, 4]], None),  # cut incompatibly
        ([[6], [8]], None),  # other sizes
        ([[1], [1, 1]], []),
    ],
)
def test_refine_batches(batches, fine):
    from xrelay.runtime.dnnl.primitives import refine_batches

    assert refine_batches(batches) == fine


def test_batch_strides_split_and_broadcast():
    from xrelay.runtime.dnnl.primitives import batch_strides

    # Swin's Q: windows (stride 49 * 288) and heads (stride 32) stay two dims
    assert batch_strides([64, 3], [14112, 32], [64, 3]) == [14112, 32]
    assert batch_strides([192], [1568], [64, 3]) == [4704, 1568]  # a contiguous run splits
    assert batch_strides([64, 3], [14112, 32], [192]) is None  # no single stride
    assert batch_strides([1], [0], [64, 3]) == [0, 0]
