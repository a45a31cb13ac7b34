"""Counterparts of ``tvm.contrib`` modules that Relay scripts import (``graph_executor``)."""
