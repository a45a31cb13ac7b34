"""Compile time: from an optimised Relay module to something the runtime runs.

``build`` is ``xrelay.build`` (the build driver: Relay's passes, fusion, lowering to the memory
dialect, planning); ``target`` parses TVM's target strings; ``graph_json`` writes TVM's
graph-executor JSON and the three-file export. One folder per engine holds what the engine
needs at compile time: ``dnnl/`` (Relay's dnnl pattern table, partitioning, scratch) and
``c/`` (C99 emitted from a planned program). What runs the result is in ``xrelay.runtime``,
which imports nothing from here (``tests/test_layers.py``).
"""
