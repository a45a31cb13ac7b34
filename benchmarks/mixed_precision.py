"""Accuracy of ``to-mixed-precision`` (float16) against float32 on ResNet-18.

Both builds (``xrelay.build(mod, params)`` and ``xrelay.build(..., mixed_precision="float16")``)
run the same random inputs (standard normal, one generator seed); reported: the largest
absolute difference of the outputs (softmax probabilities), the largest relative difference
over entries of at least 1e-4, and how often the top-1 classes agree.

    python benchmarks/mixed_precision.py [--inputs 100] [--image 224]
"""

from __future__ import annotations

import argparse

import numpy as np
from tabulate import tabulate

import xrelay
from xrelay.testing import resnet


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    shape = (1, 3, args.image, args.image)
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=shape[1:])
    m32 = xrelay.build(mod, params)
    m16 = xrelay.build(mod, params, mixed_precision="float16")
    rng = np.random.default_rng(args.seed)
    max_abs = max_rel = 0.0
    agree = 0
    for _ in range(args.inputs):
        x = rng.standard_normal(shape).astype("float32")
        outs = []
        for m in (m32, m16):
            m.set_input("data", x)
            m.run()
            outs.append(m.get_output(0).numpy().astype("float64"))
        a, b = outs
        diff = np.abs(a - b)
        max_abs = max(max_abs, float(diff.max()))
        big = np.abs(a) >= 1e-4
        if big.any():
            max_rel = max(max_rel, float((diff[big] / np.abs(a[big])).max()))
        agree += int(a.argmax() == b.argmax())
    print(
        tabulate(
            [["ResNet-18", f"{shape}", args.inputs, f"{max_abs:.3g}", f"{max_rel:.3g}", f"{agree}/{args.inputs}"]],
            headers=["model", "input", "inputs", "max abs err", "max rel err (|p| >= 1e-4)", "top-1 agree"],
        )
    )


if __name__ == "__main__":
    main()
