"""Fixtures of the qnn tests."""

import pytest

from xrelay.runtime.native import fast_int8


@pytest.fixture
def int8_library():
    """The compiled int8 kernels: the suite needs a C compiler (no skip where it has none)."""
    lib = fast_int8.vnni_library()
    assert lib is not None, "the int8 C library did not build: a C compiler is needed (and XRELAY_NATIVE unset)"
    return lib
