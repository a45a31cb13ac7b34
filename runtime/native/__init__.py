"""The native engine: the arena executor's fast kernels (``fast_kernels``, channels-last
``fast_nhwc``, int8 ``fast_int8``) and their C (``native_kernels.c`` with its headers,
``int8_gemm.c``), compiled once per machine and loaded by ``library``."""
