"""Every zoo model (``xrelay.testing.zoo``, exported by torch's default ONNX exporter), imported
and built at ``opt_level=3`` with the defaults as a user would, runs without allocating
anything outside its planned arena and its constants (``Executor.outside_arena``: the
temporaries its steps hold, and every array a run allocates, counted by numpy's allocation
hook), and its output is finite, close to onnxruntime's and depends on the input.

The closeness asserted here is 1e-3 of the output's magnitude; the 1e-4 target of the zoo is
measured by ``benchmarks/zoo.py`` (``max rel err``), which Winograd F(4x4, 3x3) still misses
on Inception-v3 (see the benchmarks page of the user guide)."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.testing import zoo

pytest.importorskip("torch", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")
pytest.importorskip("transformers", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")


def _rel(out: np.ndarray, ref: np.ndarray) -> float:
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    assert out.shape == ref.shape and np.all(np.isfinite(out))
    return float(np.max(np.abs(out - ref))) / max(float(np.max(np.abs(ref))), 1e-30)


MORE = ["whisper_encoder", "poolformer_s12", "hrnet_w18_small", "llama_small", "tresnet_m", "roberta",
        "botnet26t_256", "fastvit_t8", "gemma_small", "fnet", "funnel", "speech_bigru", "spatial_transformer",
        "style_transfer", "convtasnet", "unet3d", "raft_small"]
"""A few of ``zoo.EXTRA_MODELS`` (``benchmarks/zoo.py --more``), one per mechanism they needed:
1-D convolutions, GroupNorm as instance norm, nearest upsampling, Llama's RMSNorm/rotary/GQA
attention, reflect padding and leaky ReLU, a gather_nd of computed indices in the workspace
(RoBERTa), no oneDNN reference primitive (BoTNet's transposed attention products), a GELU
read twice (FastViT), a gated GELU (Gemma), DFTs in the workspace (FNet), a scatter_nd of
constant indices (Funnel), recurrent layers unrolled into 400 time steps (a bidirectional GRU),
grid_sample (a spatial transformer), instance norms after channels-last convolutions (style
transfer), PReLU and GroupNorm(1) of 1-D data (Conv-TasNet), 3-D pools (a 3-D U-Net), a correlation
volume read by bilinear grid_sample and a convolutional GRU iterated 12 times (RAFT)."""


@pytest.mark.parametrize("name", list(zoo.MODELS) + MORE)
def test_zoo_model_runs_inside_its_arena(name):
    import onnx
    import onnxruntime as ort

    import xrelay
    from xrelay.frontends.onnx import from_onnx

    path = zoo.onnx_path(name)
    mod, params = from_onnx(onnx.load(path))
    # one thread: the allocation hook sees the calling thread (the kernels are the same for
    # any thread count)
    m = xrelay.build(mod, params, opt_level=3, threads=1)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = []
    for seed in (0, 1):
        feeds = zoo.inputs(name, seed)
        m.set_input(**feeds)
        m.run()
        got = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
        refs = sess.run(None, feeds)
        assert len(got) == len(refs)
        for g, r in zip(got, refs):
            assert _rel(g, r) <= 1e-3, f"{name}: {_rel(g, r):.2e} from onnxruntime (seed {seed})"
        outputs.append(got[0])
    assert _rel(outputs[0], outputs[1]) > 0.01  # the output depends on the input
    report = m.executor.outside_arena()  # runs once more, step by step, counting
    assert report.held_bytes == 0, f"{name}: steps hold {report.held_bytes} bytes outside the arena"
    assert report.run_bytes == 0, f"{name}: a run allocates outside the arena: {report.steps[:5]}"
