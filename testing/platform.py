"""What this CPU's kernels guarantee, for tests whose strongest claim depends on it.

The runtime's bitwise claims (a step cut in parts gives the whole step's bits; a plan or a
thread count does not change a model's bits) rest on the libraries' kernels. They held on the
AVX-512 machines the project was measured on (oneDNN's brgemm kernels, OpenBLAS's SkylakeX
kernels); on an AVX2 CPU (an AMD EPYC, Zen 3) oneDNN's float32 products are its jit GEMM and
OpenBLAS's change their last bits with where a call's rows start. There the tests assert
agreement to float32 rounding instead, and say so (docs/guide/testing.md).
"""

from __future__ import annotations

import functools

import numpy as np

from xrelay.runtime.compile_cache import host_cpu_flags

__all__ = ["avx512", "blas_splits_exact", "cpu_flags"]


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where there is none)."""
    return host_cpu_flags()


def avx512() -> bool:
    """Whether the CPU has AVX-512 (F, BW, VL, DQ: oneDNN's ``avx512_core``), where oneDNN runs
    brgemm float32 products and bfloat16 primitives."""
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= cpu_flags()


@functools.cache
def blas_splits_exact() -> bool:
    """Whether numpy's float32 matrix product (OpenBLAS), on one thread, gives every row the
    same bits when the rows are computed in two calls cut anywhere: probed on a 64 x 576 x 3136
    product (a convolution's) cut after 8, 16, 32 and 37 rows."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 576)).astype(np.float32)
    b = rng.standard_normal((576, 3136)).astype(np.float32)
    with threadpool_limits(1):
        whole = a @ b
        return all(np.array_equal(np.concatenate([a[:c] @ b, a[c:] @ b]), whole) for c in (8, 16, 32, 37))
