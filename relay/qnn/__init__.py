"""``relay.qnn``: Relay's quantized operators and their passes, shaped like ``tvm.relay.qnn``.

``relay.qnn.op.conv2d(...)``, ``relay.qnn.op.requantize(...)`` build calls of the ``qnn``
dialect's ops (scales and zero points are expressions, as in Relay);
``relay.qnn.transform.CanonicalizeOps()`` and ``Legalize()`` lower them to integer relay ops.
"""

from xrelay.relay.qnn import op, transform

__all__ = ["op", "transform"]
