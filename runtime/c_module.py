"""Compile and run a model built for the C target (``xrelay.build(..., target="c")``).

``runtime.build.build_c(mod, params, ...)`` runs the build pipeline (fusion included), states every fused
function's C scratch before ``lower-to-memory`` (so each step's planned workspace is what its
C needs), plans, and emits the program (``xrelay.codegen``). The ``CModule`` it returns has
``get_source()`` (the C, as TVM's ``lib.get_source()``), ``export(dir)`` (the files
``relay-build`` writes) and, like a graph module, ``set_input`` / ``run`` / ``get_output``: it
compiles the C with the system compiler (``$CC``, default ``cc``; ``-std=c99 -O2``) into a
shared library in the xrelay cache and calls ``<name>_run`` through ctypes, so what runs here
is exactly the generated program, in its own static arenas of the planned sizes.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from xrelay.codegen import CodegenError, CProgram
from xrelay.codegen.aot import KERNELS_HEADER
from xrelay.dialects.relay import numpy_dtype
from xrelay.error import TVMError

C_FLAGS = ["-std=c99", "-O2", "-fPIC", "-shared"]
"""How ``CModule`` compiles the program for this machine (no ``-march``: the C is portable)."""


class CompileError(TVMError):
    """The system C compiler is missing or rejected the generated program."""


def compiler() -> str:
    return os.environ.get("CC", "cc")


class CModule:
    """A program built for the C target (see the module docstring)."""

    def __init__(self, program: CProgram, plan_info: Any = None, planned: Any = None):
        self.program = program
        self.plan_info = plan_info
        self.planned = planned
        """The planned memory-dialect program the C was emitted from (a ``ModuleOp``)."""
        self._lib: ctypes.CDLL | None = None
        self._inputs = {
            n: np.zeros(t.get_shape(), numpy_dtype(t.element_type)) for n, t in program.inputs
        }
        self._outputs = [
            np.zeros(t.get_shape(), numpy_dtype(t.element_type)) for _, t in program.outputs
        ]
        self._blob = (
            np.frombuffer(program.blob, dtype=np.uint8).copy() if program.blob is not None else None
        )

    # TVM's forms: lib.get_source(), lib["default"](dev) -> a module with set_input/run/...
    def get_source(self, fmt: str = "c") -> str:
        """The generated C (``model.c``; ``fmt="h"`` for the header)."""
        return self.program.header if fmt == "h" else self.program.source

    def __getitem__(self, key: str):
        if key != "default":
            raise KeyError(f"a C module has only 'default', not '{key}'")
        return lambda *devices: self

    def get_graph_json(self) -> str:
        """TVM's graph-executor JSON of the planned program the C runs."""
        import json

        from xrelay.runtime.graph_json import graph_json

        if self.planned is None:
            raise CodegenError("this C module was made without its planned program")
        return json.dumps(graph_json(self.planned, "main", "default"))

    def get_params(self) -> dict[str, np.ndarray]:
        """Empty: the weights are inside the C (arrays or the blob)."""
        return {}

    def __iter__(self):
        # TVM's legacy ``graph, lib, params = relay.build(..., target="c")``.
        return iter((self.get_graph_json(), self, self.get_params()))

    @property
    def summary(self):
        return self.program.summary

    def export(self, out_dir: str | Path) -> list[Path]:
        """Write ``<name>.c``, ``<name>.h``, ``xrelay_kernels.h`` (and ``<name>.bin``)."""
        return self.program.write(out_dir)

    def _library(self) -> ctypes.CDLL:
        if self._lib is not None:
            return self._lib
        cc = compiler()
        key = hashlib.sha256("\0".join(
            [self.program.source, self.program.header, KERNELS_HEADER.read_text(), cc, *C_FLAGS]
        ).encode()).hexdigest()[:16]  # fmt: skip
        cache = Path(os.environ.get("XRELAY_CACHE_DIR") or Path.home() / ".cache" / "xrelay")
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError:
            cache = Path(tempfile.gettempdir())
        lib_path = cache / f"c_{self.program.name}_{key}.so"
        if not lib_path.exists():
            with tempfile.TemporaryDirectory() as tmp:
                self.program.write(tmp)
                out = Path(tmp) / "model.so"
                cmd = [cc, *C_FLAGS, "-I", tmp, str(Path(tmp) / f"{self.program.name}.c"),
                       "-o", str(out), "-lm"]  # fmt: skip
                try:
                    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                except (OSError, subprocess.SubprocessError) as e:
                    raise CompileError(f"the C compiler '{cc}' could not run: {e}") from None
                if res.returncode != 0:
                    first = (res.stderr.strip().splitlines() or ["(no message)"])[0]
                    raise CompileError(f"'{cc}' rejected the generated C: {first}")
                staged = lib_path.with_suffix(f".{os.getpid()}.tmp")
                staged.write_bytes(out.read_bytes())
                os.replace(staged, lib_path)
        lib = ctypes.CDLL(str(lib_path))
        name = self.program.name
        lib[f"{name}_run"].restype = ctypes.c_int
        if self._blob is not None:
            set_blob = lib[f"{name}_set_blob"]
            set_blob.restype = ctypes.c_int
            if set_blob(ctypes.c_void_p(self._blob.ctypes.data), ctypes.c_size_t(self._blob.size)):
                raise CompileError("the weights blob was refused (wrong size)")
        self._lib = lib
        return lib

    # Graph-module forms.
    def set_input(self, key: str | int | None = None, value: Any = None, **inputs: Any) -> None:
        if key is not None:
            inputs[key if isinstance(key, str) else self.program.inputs[key][0]] = value
        for k, v in inputs.items():
            if k not in self._inputs:
                known = ", ".join(self._inputs)
                raise KeyError(f"no input named '{k}' (inputs: {known})")
            arr = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
            dst = self._inputs[k]
            if arr.shape != dst.shape:
                raise ValueError(f"input '{k}' has shape {arr.shape}, the program takes {dst.shape}")
            np.copyto(dst, arr, casting="same_kind")

    def run(self, **inputs: Any) -> None:
        if inputs:
            self.set_input(**inputs)
        lib = self._library()

        class Ptrs(ctypes.Structure):
            _fields_ = [(n, ctypes.c_void_p) for n in self._inputs]

        class Outs(ctypes.Structure):
            _fields_ = [(f"output{i}", ctypes.c_void_p) for i in range(len(self._outputs))]

        ins = Ptrs(*[a.ctypes.data for a in self._inputs.values()])
        outs = Outs(*[a.ctypes.data for a in self._outputs])
        if lib[f"{self.program.name}_run"](ctypes.byref(ins), ctypes.byref(outs)) != 0:
            raise CodegenError(f"{self.program.name}_run failed (weights blob not set)")

    def get_output(self, index: int = 0) -> np.ndarray:
        return self._outputs[index].copy()

    def get_num_outputs(self) -> int:
        return len(self._outputs)
