"""``xrelay.topi``: the parts of ``tvm.topi`` TVM's Relay tests use (``topi.testing``'s numpy
references); xrelay's kernels live in ``xrelay.kernels``."""
