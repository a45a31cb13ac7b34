"""Winograd's C transforms alone, this tree against another revision (alternating A/B).

    python -m xrelay.benchmarks.winograd [--base main] [--repeat 60]

Builds the native kernels of ``--base`` (its ``runtime/native`` C, read with ``git show``)
and of this tree with the library's own flags into a temporary folder, loads both through
ctypes and times each Winograd input and output transform (F(2x2) and F(4x4), channels first
and channels last, float32, ResNet shapes with C = O and padding 1, one thread), the two
builds called alternately in one process; prints the median microseconds and the ratio
this / base. Write the machine's load (``uptime``) beside the figures.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import tempfile
import time

import numpy as np

from xrelay.runtime.native import library
from xrelay.runtime.native.fast_kernels import wino_matrices
from xrelay.runtime.native.workspace import winograd_scratch_bytes, winograd_slice_bytes

_SHAPES = [(64, 56), (128, 28), (256, 14), (512, 7)]


def _build(folder: str, sources: dict[str, str]) -> ctypes.CDLL:
    for name, text in sources.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
    out = os.path.join(folder, "kernels.so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, *library._FLAGS, "-I", folder, os.path.join(folder, "native_kernels.c"), "-o", out, "-lm"],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    return ctypes.CDLL(out)


def _base_sources(rev: str) -> dict[str, str]:
    root = subprocess.run(["git", "-C", library.HERE, "rev-parse", "--show-toplevel"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    names = subprocess.run(["git", "-C", root, "ls-tree", "--name-only", rev, "runtime/native/"],
                           check=True, capture_output=True, text=True).stdout.split()  # fmt: skip
    return {
        os.path.basename(n): subprocess.run(["git", "-C", root, "show", f"{rev}:{n}"],
                                            check=True, capture_output=True, text=True).stdout  # fmt: skip
        for n in names
        if n.endswith((".c", ".h"))
    }


def _here_sources() -> dict[str, str]:
    names = [n for n in os.listdir(library.HERE) if n.endswith((".c", ".h"))]
    return {n: open(os.path.join(library.HERE, n), encoding="utf-8").read() for n in names}


def _bound(lib: ctypes.CDLL, name: str, *args):
    cargs, _keep = library._CONVERTERS[name](args[0].dtype, *args)
    fn = getattr(lib, name + "_f32")
    fn.restype = None
    return lambda: fn(*cargs)  # the arrays live as long as main's loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--repeat", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        libs = {"base": _build(a, _base_sources(args.base)), "this": _build(b, _here_sources())}
        rng = np.random.default_rng(0)
        dt = np.dtype("float32")
        print("| kernel | layer | base us | this us | this / base |\n| --- | --- | --- | --- | --- |")
        for tile in (2, 4):
            for c, hw in _SHAPES:
                th = tw = -(-hw // tile)
                nt, count = th * tw, (tile + 2) ** 2
                ws = np.zeros(winograd_scratch_bytes(c, c, tile * th, tile * tw, 4, tile) + 4096, np.uint8)
                for last in (False, True):
                    sfx = "_nhwc" if last else ""
                    stem = "wino" if tile == 2 else "wino4"
                    x = rng.standard_normal((hw, hw, c) if last else (c, hw, hw)).astype(dt)
                    out = np.zeros_like(x)
                    rows, cols = (nt, c) if last else (c, nt)
                    v = wino_matrices(ws, 0, count, rows, cols, dt)
                    m = wino_matrices(ws, count * winograd_slice_bytes(c, nt, 4), count, rows, cols, dt)
                    m[...] = rng.standard_normal(m.shape)
                    for kernel, kargs in (
                        (f"{stem}_input{sfx}", (x, v, 0, c, 0, th, tw, 1, 1)),
                        (f"{stem}_output{sfx}", (m, tw, out, 0, c, 0, th)),
                    ):
                        fns = {key: _bound(lib, kernel, *kargs) for key, lib in libs.items()}
                        times: dict[str, list[float]] = {"base": [], "this": []}
                        for rep in range(args.repeat):
                            for key in ("base", "this") if rep % 2 == 0 else ("this", "base"):
                                t0 = time.perf_counter()
                                for _ in range(3):
                                    fns[key]()
                                times[key].append((time.perf_counter() - t0) / 3)
                        base, this = (float(np.median(times[k])) * 1e6 for k in ("base", "this"))
                        print(f"| {kernel} | F({tile}x{tile}) {c} x {hw}x{hw} | {base:.1f} | {this:.1f} | {this / base:.2f} |")


if __name__ == "__main__":
    main()
