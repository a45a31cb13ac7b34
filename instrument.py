"""
Pass instruments, mirroring `tvm.instrument` (`tvm.ir.instrument`).

This module re-exports `xrelay.transforms.instrument`; see there for the semantics.
"""

from xrelay.transforms.instrument import (
    OpCountDiff,
    PassInstrument,
    PassPrintingInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
    count_ops,
    pass_instrument,
)

__all__ = [
    "OpCountDiff",
    "PassInstrument",
    "PassPrintingInstrument",
    "PassTimingInstrument",
    "PrintAfterAll",
    "PrintBeforeAll",
    "count_ops",
    "pass_instrument",
]
