"""The oneDNN engine at compile time: Relay's dnnl pattern table and supported ops
(``patterns``), the partitioning of a module into ``relay.compiler = "dnnl"`` functions
(``partition``) and their scratch. What runs those functions is ``xrelay.runtime.dnnl``."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from xrelay.backend.dnnl import partition
from xrelay.backend.dnnl.patterns import pattern_table, supported
from xrelay.runtime.dnnl.library import dnnl_library

__all__ = ["pattern_table", "state_scratch", "supported"]


def state_scratch(module: ModuleOp, threads: int | None = None) -> None:
    """oneDNN's scratch of every dnnl function (its planned workspace), when the module has
    such functions and the library loads (else they run on the native kernels)."""
    if partition.dnnl_functions(module) and dnnl_library() is not None:
        partition.state_scratch(module, threads)
