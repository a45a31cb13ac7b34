"""``relay.qnn``: Relay's quantized operators and their passes, shaped like ``tvm.relay.qnn``.

``relay.qnn.op.conv2d(...)``, ``relay.qnn.op.requantize(...)`` build calls of the ``qnn``
dialect's ops (scales and zero points are expressions, as in Relay);
``relay.qnn.transform.CanonicalizeOps()`` and ``Legalize()`` lower them to integer relay ops.
"""

from xrelay.dialects.qnn import requantize_config
from xrelay.relay.qnn import op, transform
from xrelay.relay.qnn.op import *  # noqa: F403 - relay.qnn.requantize etc., as tvm.relay.qnn exports them
from xrelay.relay.qnn.op import __all__ as _op_all

__all__ = ["op", "requantize_config", "transform", *_op_all]
