"""``tvm.ir.instrument``: the pass instruments (the same objects as ``xrelay.instrument``)."""

from xrelay.instrument import *  # noqa: F403
from xrelay.instrument import __all__  # noqa: F401
