"""xrelay's C target: C99 from planned memory-dialect programs.

``c_function`` emits one primitive (fused) function; ``aot`` emits a whole planned program as
``model.c``/``model.h`` with static arenas of the planned sizes. ``xrelay.runtime.c.module``
builds, compiles and runs it (``xrelay.build(..., target="c")``); ``relay-build`` writes it.
"""

from xrelay.backend.c.aot import CProgram, MemorySummary, annotate_scratch, emit_program
from xrelay.backend.c.c_function import CFunction, CodegenError, emit_function

__all__ = [
    "CFunction",
    "CProgram",
    "CodegenError",
    "MemorySummary",
    "annotate_scratch",
    "emit_function",
    "emit_program",
]
