"""``relay.dataflow_pattern``: Relay's pattern language (``is_op``, ``wildcard``, ...).

The patterns match SSA values of the relay dialect; see
``xrelay.transforms._dataflow_pattern`` for what matches what. Used by ``MergeComposite``
pattern tables::

    from xrelay.relay.dataflow_pattern import is_op, wildcard
    pat = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))
    mod = relay.transform.MergeComposite([("my.conv2d_relu", pat)])(mod)
"""

from xrelay.transforms import _dataflow_pattern
from xrelay.transforms._dataflow_pattern import *  # noqa: F403 - the pattern language

__all__ = _dataflow_pattern.__all__
