"""The oneDNN engine at compile time: Relay's dnnl pattern table and supported ops
(``patterns``), the partitioning of a module into ``relay.compiler = "dnnl"`` functions
(``partition``) and their scratch. What runs those functions is ``xrelay.runtime.dnnl``."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from xrelay.backend.dnnl import partition
from xrelay.backend.dnnl.patterns import pattern_table, supported
from xrelay.runtime.dnnl.library import dnnl_library

__all__ = ["offloads", "partition_module", "pattern_table", "state_scratch", "supported"]


def offloads(module: ModuleOp) -> bool:
    """Whether ``xrelay.build`` partitions ``module`` for oneDNN (``partition-for-engines``):
    the library loads and the module computes in float32 (or bfloat16) without qnn ops (seen
    before the pre-fusion passes lower them; quantized models keep the int8 kernels)."""
    return partition.float32_only(module) and dnnl_library() is not None


def partition_module(module: ModuleOp, mixed_precision: str | None = None) -> ModuleOp:
    """``partition-for-engines`` for oneDNN, on a module after the pre-fusion passes: with
    ``mixed_precision``, ``to-mixed-precision`` first (a matmul by a weight becomes the dense
    it stands for, as dense is ALWAYS and matmul is not; the weights' casts are folded so they
    are rounded once), then ``partition.partition_for_backend``."""
    if mixed_precision is not None:
        from xrelay.dialects import module_op
        from xrelay.transforms.infra import get_pass
        from xrelay.transforms.to_mixed_precision import to_mixed_precision

        partition.matmul_to_dense(module)
        to_mixed_precision(module, mixed_precision)
        module = module_op(get_pass("FoldConstant")(module))
    return partition.partition_for_backend(module)


def state_scratch(module: ModuleOp, threads: int | None = None) -> None:
    """oneDNN's scratch of every dnnl function (its planned workspace), when the module has
    such functions and the library loads (else they run on the native kernels)."""
    if partition.dnnl_functions(module) and dnnl_library() is not None:
        partition.state_scratch(module, threads)
