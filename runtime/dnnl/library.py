"""Loading oneDNN: the ``onednn-cpu-gomp`` wheel's ``libdnnl.so.3`` and xrelay's C shim over it.

The wheel (pinned in ``pyproject.toml``) installs ``libdnnl.so.3`` (oneDNN v3.2, OpenMP
threading) into the environment's ``lib`` directory, without headers; ``dnnl_api.h`` declares
the part of oneDNN's C API that ``dnnl_shim.c`` uses. The shim is compiled once per machine
with the system compiler (``$CC``, default ``cc``) against that library into xrelay's private
cache (``runtime.compile_cache``: ``$XRELAY_CACHE_DIR``, default ``~/.cache/xrelay``), keyed by
the hash of the sources, the flags and the library file, as the native kernels are.

``dnnl_library()`` returns the loaded shim, or None with one warning per process when the
library is missing, fails to load, or the shim does not compile; ``XRELAY_DNNL=0`` turns the
backend off without a warning and ``XRELAY_DNNL_LIB`` names another ``libdnnl.so.3``.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import warnings
from typing import Any

from xrelay.runtime.compile_cache import build_errors, cached_library
from xrelay.runtime.native import library as native

__all__ = ["dnnl_library", "dnnl_unavailable_reason", "library_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = (
    os.path.join(_HERE, "dnnl_shim.c"),
    os.path.join(_HERE, "dnnl_api.h"),
    os.path.join(_HERE, "packed_gemm.h"),
    os.path.join(_HERE, "grouped_conv.h"),
    os.path.join(native.HERE, "native_nhwc.h"),
    os.path.join(native.HERE, "native_concat.h"),
    os.path.join(native.HERE, "winograd_core.h"),
    os.path.join(native.HERE, "winograd4.h"),
)
"""The shim's C: its source, the oneDNN declarations and the packed dense kernel beside this module, and the native
engine's channels-last Winograd transforms and concatenation kernel it includes."""
_FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC", "-pthread"]
"""The native kernels' flags (the shim includes their Winograd transforms; it runs them on
libgomp's threads through libgomp's ABI, with no OpenMP flag)."""
_STATE: dict[str, Any] = {}

_P = ctypes.c_void_p
_I = ctypes.c_int
_I64P = ctypes.POINTER(ctypes.c_int64)
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "xr_dnnl_last_status": (_I, []),
    "xr_dnnl_open": (_I, [_I]),
    "xr_dnnl_set_threads": (None, [_I]),
    "xr_dnnl_threads": (_I, []),
    "xr_dnnl_md": (_P, [_I, _P, _I, _P]),
    "xr_dnnl_pd_md": (_P, [_P, _I, _I]),
    "xr_dnnl_submemory": (_P, [_P, _I, _P, _P]),
    "xr_dnnl_md_free": (None, [_P]),
    "xr_dnnl_md_size": (ctypes.c_size_t, [_P]),
    "xr_dnnl_md_equal": (_I, [_P, _P]),
    "xr_dnnl_attr": (_P, [_I, _P, _P, _P, _P, _P, _I]),
    "xr_dnnl_attr_free": (None, [_P]),
    "xr_dnnl_conv": (_P, [_I, _P, _P, _P, _P, _P, _I, _P, _P, _P, _P]),
    "xr_dnnl_matmul": (_P, [_P, _P, _P, _P, _P]),
    "xr_dnnl_pool": (_P, [_P, _I, _P, _P, _I, _P, _P, _P, _P, _P]),
    "xr_dnnl_softmax": (_P, [_P, _P, _P, _I]),
    "xr_dnnl_layer_norm": (_P, [_P, _P, _P, ctypes.c_float, ctypes.c_uint]),
    "xr_dnnl_eltwise": (_P, [_P, _I, _P, _P, ctypes.c_float, ctypes.c_float]),
    "xr_dnnl_binary": (_P, [_P, _I, _P, _P, _P]),
    "xr_dnnl_reorder": (_P, [_P, _P]),
    "xr_dnnl_impl": (ctypes.c_char_p, [_P]),
    "xr_dnnl_pd_free": (None, [_P]),
    "xr_dnnl_primitive": (_P, [_P]),
    "xr_dnnl_primitive_free": (None, [_P]),
    "xr_dnnl_memory": (_P, [_P, _P]),
    "xr_dnnl_memory_free": (None, [_P]),
    "xr_dnnl_run": (_I, [_I, _P, _P, _P, _P, _P]),
    "xr_dnnl_wino": (_P, [_I, _I, _P]),
    "xr_dnnl_wino_free": (None, [_P]),
    "xr_dnnl_concat": (_P, [_P, _P, _P, _P]),
    "xr_dnnl_concat_free": (None, [_P]),
    "xr_dnnl_copies": (_P, [_P, _P]),
    "xr_dnnl_copies_free": (None, [_P]),
    "xr_dnnl_native": (_P, [ctypes.c_int64, _P]),
    "xr_dnnl_native_free": (None, [_P]),
    "xr_dnnl_silu": (_P, [ctypes.c_int64, ctypes.c_float, ctypes.c_float]),
    "xr_dnnl_silu_free": (None, [_P]),
    "xr_dnnl_gemm_built": (_I, []),
    "xr_dnnl_gemm": (_P, [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, _I, _P, _P, _P]),
    "xr_dnnl_gemm_block": (ctypes.c_int64, [_P]),
    "xr_dnnl_gemm_free": (None, [_P]),
    "xr_dnnl_gemm_packed_bytes": (ctypes.c_int64, [_P]),
    "xr_dnnl_gconv": (_P, [_P, ctypes.c_int64, _I, _P, _P, _P]),
    "xr_dnnl_gconv_free": (None, [_P]),
    "xr_dnnl_parts": (_P, [_I, _I, _P, _P, _P, _P]),
    "xr_dnnl_parts_free": (None, [_P]),
    "xr_dnnl_part_workers": (_I, []),
    "xr_dnnl_parts_taken": (ctypes.c_int64, []),
    "xr_dnnl_parts_spin": (None, [ctypes.c_int64]),
    "xr_dnnl_parts_rescue": (None, [ctypes.c_int64]),
    "xr_dnnl_parts_rescued": (ctypes.c_int64, []),
    "xr_dnnl_parts_hold": (None, [ctypes.c_int64]),
    "xr_dnnl_parts_whole": (_I, [_P, _P, _I, _P, _P]),
    "xr_dnnl_parts_mode": (None, [_I]),
    "xr_dnnl_parts_cpu": (ctypes.c_double, []),
}


def library_path() -> str | None:
    """Where ``libdnnl.so.3`` is: ``$XRELAY_DNNL_LIB``, else the wheel's file in this
    environment's ``lib`` directory (found through the package's record), else None."""
    explicit = os.environ.get("XRELAY_DNNL_LIB")
    if explicit:
        return explicit
    recorded = _recorded_library()
    if recorded is not None:
        return recorded
    try:  # (an installation without a plain RECORD file: importlib.metadata's other finders)
        from importlib import metadata

        dist = metadata.distribution("onednn-cpu-gomp")
        for f in dist.files or ():
            if f.name == "libdnnl.so.3":
                return str(f.locate().resolve())
    except Exception:  # not installed, or a record without the file
        pass
    candidate = os.path.join(sys.prefix, "lib", "libdnnl.so.3")
    return candidate if os.path.exists(candidate) else None


def _recorded_library() -> str | None:
    """``libdnnl.so.3`` as the wheel's ``RECORD`` lists it, read directly: what
    ``importlib.metadata`` finds, without importing it (with ``email`` and ``csv``: 3 MB of
    every process that loads a model)."""
    for entry in sys.path:
        for record in sorted(glob.glob(os.path.join(entry or ".", "onednn_cpu_gomp-*.dist-info", "RECORD"))):
            try:
                with open(record, encoding="utf-8") as f:
                    for line in f:
                        path = line.split(",", 1)[0]
                        if os.path.basename(path) == "libdnnl.so.3":
                            found = os.path.realpath(os.path.join(entry or ".", path))
                            return found if os.path.exists(found) else None
            except OSError:
                continue
    return None


def _compile(lib_path: str) -> ctypes.CDLL:
    """The shim, compiled against ``lib_path`` into the private cache (``compile_cache``)."""
    parts = []
    for path in _SOURCES:
        with open(path, encoding="utf-8") as f:
            parts.append(f.read())
    st = os.stat(lib_path)
    compiler = os.environ.get("CC", "cc")
    lib_dir = os.path.dirname(lib_path)

    def build(out: str) -> None:
        import subprocess

        # -Xlinker passes the directory as one argument (-Wl, would split it at commas)
        subprocess.run(
            [compiler, *_FLAGS, "-I", _HERE, "-I", native.HERE, _SOURCES[0], "-o", out,
             f"-L{lib_dir}", f"-l:{os.path.basename(lib_path)}", "-Xlinker", "-rpath", "-Xlinker", lib_dir, "-lm"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip

    key = [*parts, compiler, *_FLAGS, lib_path, str(st.st_size), str(st.st_mtime_ns)]
    return cached_library("xrelay_dnnl", key, build)


def _load() -> tuple[ctypes.CDLL | None, str]:
    if os.environ.get("XRELAY_DNNL", "1") == "0":
        return None, "XRELAY_DNNL=0"
    lib_path = library_path()
    if lib_path is None:
        return None, "the onednn-cpu-gomp package (libdnnl.so.3) is not installed"
    _short_omp_spin()
    try:
        # Loaded first by path, so a broken library is reported as such (not as a link error).
        ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        return None, f"cannot load {lib_path}: {e}"
    try:
        shim = _compile(lib_path)
    except build_errors() as e:
        detail = getattr(e, "stderr", b"") or b""
        return None, f"cannot build the oneDNN shim: {e} {detail.decode(errors='replace')[:300]}"
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(shim, name)
        fn.restype = restype
        fn.argtypes = argtypes
    status = shim.xr_dnnl_open(1)
    if status != 0:
        return None, f"oneDNN could not create a CPU engine (status {status})"
    _STATE["path"] = os.path.realpath(lib_path)  # (as /proc/self/maps names it: release_code_pages)
    return shim, ""


OMP_SPIN = "10000"
"""``GOMP_SPINCOUNT`` set before OpenMP starts, unless the user chose a wait policy: libgomp's
idle threads spin 300,000 rounds (milliseconds) after each oneDNN step by default, taking a
core from the native steps and from whatever the process runs after ``run()``; 10,000 rounds
(a fraction of a millisecond) still bridge the gap between consecutive oneDNN steps."""


def _short_omp_spin() -> None:
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return
    try:
        with open("/proc/self/maps") as f:
            if "libgomp" in f.read():
                return  # OpenMP already read its settings
    except OSError:
        return
    os.environ["GOMP_SPINCOUNT"] = OMP_SPIN


def dnnl_library() -> ctypes.CDLL | None:
    """The shim (loaded on first use), or None after one warning per process."""
    if "lib" not in _STATE:
        lib, reason = _load()
        _STATE["lib"], _STATE["reason"] = lib, reason
        if lib is None and reason != "XRELAY_DNNL=0":
            warnings.warn(
                f"xrelay: the oneDNN backend is unavailable ({reason}); using the native kernels",
                RuntimeWarning,
                stacklevel=2,
            )
    return _STATE["lib"]


_MADV_DONTNEED = 4


def release_code_pages() -> int:
    """Hands back the resident pages of oneDNN's code (the executable mapping of
    ``libdnnl.so.3``): creating primitives runs through much of its 41 MB of code (20 MB of
    it resident after SqueezeNet's build), running them through little of it (the kernels
    are code oneDNN generated in memory of its own), so once an executor has bound its steps
    the pages go back (``madvise(MADV_DONTNEED)``: the mapping stays, and a page used again
    is read back from the page cache, the same unwritten code). Returns the bytes advised
    (0 without the library, ``/proc/self/maps`` or ``madvise``)."""
    path = _STATE.get("path")
    if not path or _STATE.get("lib") is None:
        return 0
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    advised = 0
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or "x" not in fields[1] or fields[5] != path:
            continue
        start, end = (int(v, 16) for v in fields[0].split("-"))
        if madvise(start, end - start, _MADV_DONTNEED) == 0:
            advised += end - start
    return advised


def dnnl_unavailable_reason() -> str:
    """Why ``dnnl_library()`` is None ("" when it loaded)."""
    dnnl_library()
    return _STATE["reason"]
