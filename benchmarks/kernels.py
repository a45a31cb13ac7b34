"""Time the numpy conv2d kernel on ResNet-18's 21 convolutions (224x224, batch 1, float32)
against a single-node onnxruntime Conv on the same data, and print the ratios.

Usage: ``python benchmarks/kernels.py [--repeat N] [--layout NCHW|NHWC]``.
Each timing is the best of ``--repeat`` runs; ours writes into a preallocated output.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from xrelay.kernels import KERNELS


def resnet18_convs() -> list[tuple[str, int, int, int, int, int, int]]:
    """(name, in_ch, out_ch, hw_in, kernel, stride, pad) for the TVM-style ResNet-18."""
    convs = [("conv0", 3, 64, 224, 7, 2, 3)]
    hw, cin = 56, 64
    for stage, cout in enumerate([64, 128, 256, 512], start=1):
        for unit in (1, 2):
            stride = 2 if unit == 1 and stage > 1 else 1
            name = f"stage{stage}_unit{unit}"
            convs.append((f"{name}_conv1", cin, cout, hw, 3, stride, 1))
            hw_out = hw // stride
            convs.append((f"{name}_conv2", cout, cout, hw_out, 3, 1, 1))
            if unit == 1:  # dim_match=False in the first unit of every stage
                convs.append((f"{name}_sc", cin, cout, hw, 1, stride, 0))
            cin, hw = cout, hw_out
    return convs


def _best(fn, repeat: int) -> float:
    fn()  # warm up (BLAS threads, first-touch)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _ort_conv(x, w, stride, pad):
    import onnxruntime as ort
    from onnx import TensorProto, helper

    node = helper.make_node("Conv", ["x", "w"], ["y"], strides=[stride] * 2, pads=[pad] * 4)
    graph = helper.make_graph(
        [node],
        "conv",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, list(w.shape)),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return lambda: sess.run(None, {"x": x, "w": w})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--layout", choices=["NCHW", "NHWC"], default="NCHW")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    conv = KERNELS["nn.conv2d"]
    rows = []
    tot_ours = tot_ort = 0.0
    for name, cin, cout, hw, k, s, p in resnet18_convs():
        x = rng.standard_normal((1, cin, hw, hw), dtype=np.float32)
        w = rng.standard_normal((cout, cin, k, k), dtype=np.float32)
        attrs = dict(strides=(s, s), padding=(p,) * 4)
        if args.layout == "NHWC":
            xk, wk = (
                np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
                np.ascontiguousarray(w.transpose(2, 3, 1, 0)),
            )
            attrs.update(data_layout="NHWC", kernel_layout="HWIO")
        else:
            xk, wk = x, w
        ref = _ort_conv(x, w, s, p)
        expect = ref()[0]
        out = np.empty(
            expect.shape if args.layout == "NCHW" else expect.transpose(0, 2, 3, 1).shape,
            np.float32,
        )
        ours = _best(
            lambda xk=xk, wk=wk, out=out, attrs=attrs: conv(xk, wk, out=out, **attrs), args.repeat
        )
        theirs = _best(ref, args.repeat)
        got = out if args.layout == "NCHW" else out.transpose(0, 3, 1, 2)
        err = float(np.max(np.abs(got - expect)) / max(1.0, float(np.max(np.abs(expect)))))
        tot_ours += ours
        tot_ort += theirs
        rows.append(
            (name, f"{cin}->{cout} k{k} s{s} @{hw}", ours * 1e3, theirs * 1e3, ours / theirs, err)
        )
    rows.append(
        ("total", "21 convs", tot_ours * 1e3, tot_ort * 1e3, tot_ours / tot_ort, float("nan"))
    )
    try:
        from tabulate import tabulate

        print(
            tabulate(
                rows,
                headers=["conv", "shape", "numpy ms", "onnxruntime ms", "ratio", "max rel err"],
                floatfmt=(".3f", "", ".3f", ".3f", ".2f", ".1e"),
            )
        )
    except ImportError:  # pragma: no cover
        for r in rows:
            print(*r)
    print(
        f"\nResNet-18 convs ({args.layout}): numpy {tot_ours * 1e3:.1f} ms, onnxruntime "
        f"{tot_ort * 1e3:.1f} ms, ratio {tot_ours / tot_ort:.2f}x"
    )


if __name__ == "__main__":
    main()
