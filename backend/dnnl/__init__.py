"""The oneDNN engine at compile time: Relay's dnnl pattern table (``patterns``) and the
partitioning of a module into ``relay.compiler = "dnnl"`` functions (``partition``). What runs
those functions is ``xrelay.runtime.dnnl``."""
