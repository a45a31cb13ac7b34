"""``relay.op.contrib.dnnl``: offload to oneDNN (DNNL) through Relay's BYOC passes.

``pattern_table()`` is Relay's dnnl pattern table (composite functions such as
``dnnl.conv2d_bias_relu``); ``partition_for_dnnl(mod, params)`` runs the partitioning
pipeline and returns the module with ``tvmgen_default_dnnl_main_<n>`` functions
(``relay.compiler = "dnnl"``) called from ``main``::

    from xrelay.relay.op.contrib.dnnl import partition_for_dnnl
    mod = partition_for_dnnl(mod, params)
"""

from __future__ import annotations

from typing import Any

from xrelay.backend.dnnl.patterns import SUPPORTED_OPS, pattern_table, supported
from xrelay.relay.build_module import bind_params_by_name

__all__ = ["SUPPORTED_OPS", "partition_for_dnnl", "pattern_table", "supported"]


def partition_for_dnnl(mod: Any, params: dict[str, Any] | None = None) -> Any:
    """Partition ``mod`` for dnnl as Relay's ``partition_for_dnnl`` did: bind ``params``,
    then CanonicalizeOps, InferType, SimplifyInference, FoldConstant, FoldScaleAxis,
    SimplifyExpr, FoldConstant, MergeComposite(pattern_table()), AnnotateTarget("dnnl"),
    MergeCompilerRegions, PartitionGraph. Returns the module (changed in place)."""
    import xrelay.relay.transform as transform

    if params:
        mod["main"] = bind_params_by_name(mod["main"], params)
    seq = transform.Sequential(
        [
            transform.CanonicalizeOps(),
            transform.InferType(),
            transform.SimplifyInference(),
            transform.FoldConstant(),
            transform.FoldScaleAxis(),
            transform.SimplifyExpr(),
            transform.FoldConstant(),
            transform.MergeComposite(pattern_table()),
            transform.AnnotateTarget(["dnnl"]),
            transform.MergeCompilerRegions(),
            transform.PartitionGraph(),
        ]
    )
    with transform.PassContext(opt_level=3):
        return seq(mod)
