"""Compile and run a model built for the C target (``xrelay.build(..., target="c")``).

``backend.build.build_c(mod, params, ...)`` runs the build pipeline (fusion included), states
every fused function's C scratch before ``lower-to-memory`` (so each step's planned workspace
is what its C needs), plans, and emits the program (``xrelay.backend.c``). The ``CModule`` it
returns is a ``GraphModule`` whose steps are the generated C: the primitive functions
(``CProgram.steps_source()``: the functions of ``model.c`` and nothing else, so every plan of
a model shares it) are compiled once with the system compiler (``$CC``, default ``cc``;
``-std=c99 -O3`` and the host's ``HOST_FLAGS``) into one shared library in the xrelay cache, each function an exported
symbol (``-DXRELAY_FN=``), and the arena executor calls the function of each step through
ctypes with pointers into its planned arenas, the step's constants and its planned
workspace. So ``set_input`` / ``run`` / ``get_output``, ``profile()``, ``debug=True`` with
``debug_get_output(step)`` and ``load_params`` work as for the native runtime, and what
computes is exactly the emitted C. ``run_aot()`` instead compiles the whole program and calls
its ``<name>_run`` entry (its static arenas; the weights in a blob, which the compiler reads
in no time where it would spend minutes on millions of float literals), as a standalone
build would.
``get_source()`` is the C (as TVM's ``lib.get_source()``); ``export(dir)`` writes the files
``relay-build`` writes.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects.relay import RelayOp, dtype_of, numpy_dtype
from xrelay.error import TVMError
from xrelay.runtime.compile_cache import cached_library
from xrelay.runtime.compiled import CompiledFunction
from xrelay.runtime.graph_executor import GraphModule

if TYPE_CHECKING:
    from xrelay.backend.c import CProgram  # what backend.build_c emits and hands to CModule

C_FLAGS = ["-std=c99", "-O3", "-fPIC", "-shared", "-DXRELAY_FN="]
"""How ``CModule`` compiles the C: ``-O3`` (GCC vectorises the loops and keeps the blocked
convolutions' tiles in registers), no fast-math, ``XRELAY_FN`` empty (every primitive function
is an exported symbol)."""

HOST_FLAGS = ["-march=native", "-ffp-contract=fast"]
"""Added for the machine the library runs on (the C stays portable; a standalone build picks
its own flags): its vector width (AVX's 8 float lanes for the ``XR_F8`` tiles where SSE has 4)
and fused multiply-adds, which round once per product and sum (results within float rounding
of the reference, as every float sum here). A compiler that rejects them compiles without."""


class CompileError(TVMError):
    """The system C compiler is missing or rejected the generated program."""


class CModuleError(TVMError):
    """A C module that cannot run as asked: a step whose function was not emitted, arrays its C
    does not take, too little scratch."""


def compiler() -> str:
    return os.environ.get("CC", "cc")


@functools.cache
def host_float_lanes() -> int:
    """Float lanes of the widest vector the C compiler targets here with ``HOST_FLAGS``: 16
    where it defines ``__AVX512F__``, else 8 (AVX's; SSE's and NEON's 4 take 8 lanes as two
    vectors). ``build_c`` blocks float convolutions' channels by it."""
    try:
        res = subprocess.run([compiler(), *HOST_FLAGS, "-dM", "-E", "-x", "c", os.devnull],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return 8
    return 16 if res.returncode == 0 and "#define __AVX512F__ 1" in res.stdout else 8


def _family(fn: func.FuncOp) -> str:
    """The profiler's op family of a step (its heaviest op)."""
    names = {op.RELAY_NAME for op in fn.body.walk() if isinstance(op, RelayOp)}
    for fam, ops in (
        ("conv", ("nn.conv2d", "nn.conv2d_transpose", "qnn.conv2d")),
        ("matmul", ("nn.dense", "nn.batch_matmul", "nn.matmul", "qnn.dense")),
        ("pool", ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d")),
    ):
        if names.intersection(ops):
            return fam
    return "elementwise" if names else "copy"


def _compile(files: dict[str, str], support: dict[str, str], stem: str) -> ctypes.CDLL:
    """Compile ``files`` (the first is the translation unit) beside the headers ``support``
    (``xrelay_kernels.h``) with the system compiler into a shared library in xrelay's private cache
    (``runtime.compile_cache``), keyed by content."""
    cc = compiler()

    def build(out: str) -> None:
        src = os.path.dirname(out)  # the build's private temporary directory
        for name, text in {**files, **support}.items():
            Path(src, name).write_text(text)
        cmd = [cc, *C_FLAGS, "-I", src, os.path.join(src, next(iter(files))), "-o", out, "-lm"]
        try:
            res = subprocess.run([*cmd[:2], *HOST_FLAGS, *cmd[2:]], capture_output=True, text=True, timeout=600)
            if res.returncode != 0:  # a compiler without the host flags: the portable build
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            raise CompileError(f"the C compiler '{cc}' could not run: {e}") from None
        if res.returncode != 0:
            first = (res.stderr.strip().splitlines() or ["(no message)"])[0]
            raise CompileError(f"'{cc}' rejected the generated C: {first}")

    return cached_library(f"c_{stem}", [*files, *files.values(), *support.values(), cc, *C_FLAGS, *HOST_FLAGS], build)


class CModule(GraphModule):
    """A program built for the C target (see the module docstring)."""

    def __init__(
        self, program: CProgram, plan_info: Any = None, planned: ModuleOp | None = None,
        *, debug: bool = False, runtime_program: CProgram | None = None,
    ):  # fmt: skip
        if planned is None:
            raise CModuleError("a C module needs the planned program its C was emitted from")
        self.c_program = program
        self.runtime_program = runtime_program or program
        """The program compiled to run here: ``program`` itself, or the same program with its
        weights in a blob (``constants="blob"``), which compiles in seconds, not minutes."""
        self._lib: ctypes.CDLL | None = None
        self._aot_lib: ctypes.CDLL | None = None
        blob = self.runtime_program.blob
        self._blob = np.frombuffer(blob, dtype=np.uint8).copy() if blob is not None else None
        super().__init__(
            planned, debug=debug, plan_info=plan_info, step_compiler=self._bind_step
        )

    @property
    def planned(self) -> ModuleOp:
        """The planned memory-dialect program the C was emitted from."""
        return self.program

    # TVM's forms: lib.get_source(), lib["default"](dev) -> a module with set_input/run/...
    def get_source(self, fmt: str = "c") -> str:
        """The generated C (``model.c``; ``fmt="h"`` for the header)."""
        return self.c_program.header if fmt == "h" else self.c_program.source

    def __getitem__(self, key: str):
        if key == "default":
            return lambda *devices: self
        return super().__getitem__(key)

    def get_graph_json(self) -> str:
        """TVM's graph-executor JSON of the planned program the C runs."""
        return json.dumps(self.graph_json())

    def __iter__(self):
        # TVM's legacy ``graph, lib, params = relay.build(..., target="c")``.
        return iter((self.get_graph_json(), self, self.get_params()))

    @property
    def plan_info(self) -> Any:
        """``(buffers, pools, plan)`` of the memory plan the C's arenas come from."""
        return self._plan_info

    @property
    def summary(self):
        return self.c_program.summary

    def export(self, out_dir: str | Path, main: bool = False) -> list[Path]:  # type: ignore[override]
        """Write ``<name>.c``, ``<name>.h``, ``xrelay_kernels.h`` (``<name>.bin`` with the
        weights in a blob; ``main.c``, a program running the model on raw files, with
        ``main``)."""
        return self.c_program.write(out_dir, main)

    # -- the compiled libraries ---------------------------------------------------------------
    def library(self) -> ctypes.CDLL:
        """The step functions compiled into a shared library, each an exported symbol (built
        once, cached by content: every plan of a model shares it)."""
        if self._lib is None:
            prog = self.runtime_program
            self._lib = _compile({f"{prog.name}_steps.c": prog.steps_source()}, prog.support, f"{prog.name}_steps")
        return self._lib

    def aot_library(self) -> ctypes.CDLL:
        """The whole program (``<name>_run``, its static arenas) compiled into a shared library."""
        if self._aot_lib is None:
            prog = self.runtime_program
            self._aot_lib = _compile(
                {f"{prog.name}.c": prog.source, f"{prog.name}.h": prog.header}, prog.support, prog.name
            )
        return self._aot_lib

    def _bind_step(
        self, fn: func.FuncOp, ins: list[np.ndarray], outs: list[np.ndarray], ws: np.ndarray | None
    ) -> CompiledFunction:
        """The step calling ``fn``: its C function bound to these arrays' pointers."""
        sym = fn.sym_name.data
        cfn = self.runtime_program.functions.get(sym)
        if cfn is None:
            raise CModuleError(f"@{sym} was not emitted as C")
        arrays = []
        for what, arrs, types in (("operand", ins, cfn.param_types), ("result", outs, cfn.result_types)):
            for k, (a, t) in enumerate(zip(arrs, types, strict=True)):
                want = np.dtype(numpy_dtype(dtype_of(t.element_type)))
                if a.dtype != want or a.shape != tuple(t.get_shape()):
                    raise CModuleError(f"@{sym}: {what} {k} is {a.dtype} {a.shape}, its C takes {t}")
                if not a.flags.c_contiguous:
                    if what == "result":
                        raise CModuleError(f"@{sym}: result {k} is not a contiguous buffer")
                    a = np.ascontiguousarray(a)
                arrays.append(a)
        if cfn.scratch_bytes and (ws is None or ws.nbytes < cfn.scratch_bytes):
            have = 0 if ws is None else ws.nbytes
            raise CModuleError(f"@{sym} needs {cfn.scratch_bytes} bytes of scratch, its step has {have}")
        try:
            lib = self.library()
        except CompileError as e:
            # No compiler here: the module still builds (get_source, export); running says why.
            def unavailable(error: CompileError = e) -> None:
                raise error

            compiled = CompiledFunction(sym)
            compiled.thunks.append(("c", _family(fn), unavailable))
            return compiled
        c_fn = lib[cfn.name]
        c_fn.restype = None
        c_fn.argtypes = [ctypes.c_void_p] * (len(arrays) + 1)
        call = functools.partial(c_fn, *[a.ctypes.data for a in arrays], None if ws is None else ws.ctypes.data)
        call.keep = (arrays, ws)  # type: ignore[attr-defined]  # what the pointers point into
        ops = ", ".join(dict.fromkeys(op.RELAY_NAME for op in fn.body.walk() if isinstance(op, RelayOp)))
        compiled = CompiledFunction(sym)
        compiled.thunks.append((ops or "copy", _family(fn), call))
        return compiled

    # -- the standalone entry ----------------------------------------------------------------
    def run_aot(self, **inputs: Any) -> None:
        """Run the program's own ``<name>_run`` (its static arenas, its weights) on the
        module's inputs, into its outputs: what a standalone build of ``model.c`` does (with
        ``constants="arrays"``, the compiled program is that C with the weights in a blob)."""
        if inputs:
            self.set_input(**inputs)
        lib = self.aot_library()
        name = self.runtime_program.name
        if self._blob is not None:
            set_blob = lib[f"{name}_set_blob"]
            set_blob.restype = ctypes.c_int
            if set_blob(ctypes.c_void_p(self._blob.ctypes.data), ctypes.c_size_t(self._blob.size)):
                raise CompileError("the weights blob was refused (wrong size)")
        ex = self.executor
        ins = ex.input_buffers  # @main's parameters, in order, as the C's inputs

        class Ins(ctypes.Structure):
            _fields_ = [(n, ctypes.c_void_p) for n, _ in self.c_program.inputs]

        class Outs(ctypes.Structure):
            _fields_ = [(n, ctypes.c_void_p) for n, _ in self.c_program.outputs]

        args = (Ins(*[a.ctypes.data for a in ins]), Outs(*[o.ctypes.data for o in ex.outputs]))
        entry = lib[f"{name}_run"]
        entry.restype = ctypes.c_int
        if entry(ctypes.byref(args[0]), ctypes.byref(args[1])) != 0:
            raise CModuleError(f"{name}_run failed (weights blob not set)")
