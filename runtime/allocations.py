"""Count the array memory numpy allocates while a block runs: the executor's outside-arena check.

``count_allocations()`` installs, for the calling thread, a numpy data-memory handler
(``PyDataMem_SetHandler``, numpy's documented hook for the memory of every array's data)
whose ``malloc``/``calloc``/``realloc`` count the bytes they hand out before calling the C
library's, and whose ``free`` counts what comes back; the previous handler is restored on
exit. So every array a kernel makes -- a reference kernel's result copied into its
destination, a ufunc's temporary, a fallback composite's intermediate values -- is counted,
however it was made; nothing is listed by hand.

    with count_allocations() as counted:
        executor.run()
    counted.bytes, counted.count, counted.peak, counted.largest

What it does not see, and why that is acceptable for the arena executor:

* numpy's handler is a context variable: threads other than the caller's keep the default
  handler. ``Executor.outside_arena`` therefore measures with a one-thread executor, where
  every kernel call happens in the calling thread (the kernels are the same for any thread
  count; only the cuts into chunks differ);
* memory the C libraries take themselves: oneDNN runs with a user scratchpad in the step's
  planned workspace (``runtime.dnnl``), and the native C kernels never allocate;
* numpy's fixed-size iteration buffers (at most 8192 elements per operand of a buffered ufunc
  call, from numpy's raw allocator, not the data handler): they do not grow with the model.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["Counted", "count_allocations"]

_SET_HANDLER_INDEX = 304
"""``PyDataMem_SetHandler``'s slot in numpy's C-API table (numpy/__multiarray_api.h, since
numpy 1.22; the table's layout only grows)."""

_MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_CALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_REALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class _Allocator(ctypes.Structure):
    _fields_ = [
        ("ctx", ctypes.c_void_p),
        ("malloc", _MALLOC),
        ("calloc", _CALLOC),
        ("realloc", _REALLOC),
        ("free", _FREE),
    ]


class _Handler(ctypes.Structure):
    """numpy's ``PyDataMem_Handler`` (numpy/ndarraytypes.h), version 1."""

    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8), ("allocator", _Allocator)]


@dataclass
class Counted:
    """What the handler handed out while it was installed."""

    bytes: int = 0
    """Bytes of all allocations (a reallocation counts its new size)."""
    count: int = 0
    """Number of allocations."""
    live: int = 0
    """Bytes allocated and not yet freed."""
    peak: int = 0
    """Largest ``live`` seen: the most array memory held at once beyond what existed before."""
    largest: int = 0
    """Largest single allocation."""
    active: bool = False
    where: list[tuple[int, str]] | None = None
    """With ``count_allocations(where=True)``: ``(bytes, innermost Python frames)`` of every
    allocation (which kernel made it)."""

    def _take(self, n: int) -> None:
        if not self.active:
            return
        if self.where is not None:
            stack = traceback.extract_stack(limit=8)[:-3]
            self.where.append((n, " <- ".join(f"{f.name} ({f.filename.rsplit('/', 1)[-1]}:{f.lineno})" for f in reversed(stack))))
        self.bytes += n
        self.count += 1
        self.live += n
        self.largest = max(self.largest, n)
        self.peak = max(self.peak, self.live)


class _State:
    """The handler's C structure and callbacks, made once per process and kept alive (arrays
    made under it are freed through it, possibly long after the block)."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None)
        self.malloc = libc.malloc
        self.malloc.argtypes, self.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
        self.calloc = libc.calloc
        self.calloc.argtypes, self.calloc.restype = [ctypes.c_size_t, ctypes.c_size_t], ctypes.c_void_p
        self.realloc = libc.realloc
        self.realloc.argtypes, self.realloc.restype = [ctypes.c_void_p, ctypes.c_size_t], ctypes.c_void_p
        self.free = libc.free
        self.free.argtypes, self.free.restype = [ctypes.c_void_p], None
        self.counted = Counted()
        self.lock = threading.Lock()
        self.sizes: dict[int, int] = {}
        self.callbacks = (
            _MALLOC(self._malloc),
            _CALLOC(self._calloc),
            _REALLOC(self._realloc),
            _FREE(self._free),
        )
        self.handler = _Handler(b"xrelay_counting_allocator", 1, _Allocator(None, *self.callbacks))
        capsule_new = ctypes.pythonapi.PyCapsule_New
        capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        capsule_new.restype = ctypes.py_object
        self.capsule = capsule_new(ctypes.addressof(self.handler), b"mem_handler", None)
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        get_pointer.restype = ctypes.c_void_p
        table = get_pointer(np._core._multiarray_umath._ARRAY_API, None)
        slot = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))[_SET_HANDLER_INDEX]
        self.set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(slot)

    def _malloc(self, ctx: int | None, n: int) -> int | None:
        p = self.malloc(n)
        self._note(p, n)
        return p

    def _calloc(self, ctx: int | None, k: int, n: int) -> int | None:
        p = self.calloc(k, n)
        self._note(p, k * n)
        return p

    def _realloc(self, ctx: int | None, ptr: int | None, n: int) -> int | None:
        with self.lock:
            old = self.sizes.pop(ptr, 0) if ptr else 0
            self.counted.live -= old if self.counted.active else 0
        p = self.realloc(ptr, n)
        self._note(p, n)
        return p

    def _free(self, ctx: int | None, ptr: int | None, size: int) -> None:
        if ptr:
            with self.lock:
                n = self.sizes.pop(ptr, None)
                if n is not None and self.counted.active:
                    self.counted.live -= n
        self.free(ptr)

    def _note(self, p: int | None, n: int) -> None:
        if p:
            with self.lock:
                self.sizes[p] = n
                self.counted._take(n)


_STATE: list[_State] = []
_ACTIVE = threading.Lock()


@contextlib.contextmanager
def count_allocations(where: bool = False) -> Iterator[Counted]:
    """Count every numpy array allocation the calling thread makes inside the block (see
    the module docstring); yields the ``Counted`` it fills. ``where`` also records the Python
    frames of each allocation. One block at a time per process (a second one waits)."""
    with _ACTIVE:
        if not _STATE:
            _STATE.append(_State())
        state = _STATE[0]
        counted = Counted(active=True, where=[] if where else None)
        state.counted = counted
        previous = state.set_handler(state.capsule)
        try:
            yield counted
        finally:
            state.set_handler(previous)
            counted.active = False
