"""Fixtures of the qnn tests."""

import contextlib

import pytest

from xrelay.runtime.native import fast_int8


@pytest.fixture
def int8_library():
    """The compiled int8 kernels: the suite needs a C compiler (no skip where it has none)."""
    lib = fast_int8.vnni_library()
    assert lib is not None, "the int8 C library did not build: a C compiler is needed (and XRELAY_NATIVE unset)"
    return lib


@pytest.fixture
def counting(int8_library):
    """``counting(symbol)``: a context manager giving the list of calls of that C kernel of
    the int8 library while the block runs (built and run): a spy on the library."""

    @contextlib.contextmanager
    def spy_on(symbol: str):
        original, calls = getattr(int8_library, symbol), []

        def spy(*args):
            calls.append(args)
            return original(*args)

        setattr(int8_library, symbol, spy)
        try:
            yield calls
        finally:
            setattr(int8_library, symbol, original)

    return spy_on
