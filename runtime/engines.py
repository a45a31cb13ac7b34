"""The engines that run a program's steps, declared once.

Each engine is one line of ``ENGINES`` and two folders: ``runtime/<name>/`` holds what runs its
steps (its Python beside its C) and ``backend/<name>/`` what it needs at compile time (the
composite patterns and supported ops the BYOC passes offload to it, the scratch it states
before ``lower-to-memory``). ``xrelay.backend.engines`` finds that compile-time side by the
name. The order is the preference: a step runs on the first engine that takes it, and
``native`` takes every step.
"""

from __future__ import annotations

__all__ = ["ENGINES"]

ENGINES: dict[str, str] = {
    "dnnl": 'oneDNN primitives, for the functions partitioned to it (relay.compiler = "dnnl")',
    "native": "numpy/BLAS and the C loop kernels compiled for this machine; runs every step",
}
