"""xrelay's dialects and passes for plain ``xdsl-opt`` (the ``xdsl.universe`` entry point).

Only xrelay's own passes are published: upstream ``cse``/``dce``/``canonicalize`` are already in
xdsl-opt, and a name published twice is an error there.
"""

from xdsl.universe import Universe

from xrelay.dialects import get_all_dialects
from xrelay.transforms import get_xrelay_passes

XRELAY_UNIVERSE = Universe(all_dialects=get_all_dialects(), all_passes=get_xrelay_passes())
