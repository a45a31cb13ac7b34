"""``relay.op.contrib``: external compilers' pattern tables and partitioning helpers."""
