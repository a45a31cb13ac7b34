"""The C engine at run time: ``module`` compiles the C that ``xrelay.backend.c`` emitted and
runs it in the arena executor (``CModule``)."""
