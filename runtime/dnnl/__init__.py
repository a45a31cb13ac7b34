"""The oneDNN engine at run time: ``primitives`` runs ``relay.compiler = "dnnl"`` functions as
oneDNN primitives through the C shim (``dnnl_shim.c``) that ``library`` compiles and loads.
Partitioning a module for it is compile time (``xrelay.backend.dnnl``)."""
