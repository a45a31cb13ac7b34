"""A linear-time string-literal pattern for xDSL 0.74's MLIR lexer.

xDSL 0.74 matches a string literal with ``"(?:[^"\\...]+|\\(?:...))*"``: a repeated group
whose first branch is itself repeated. When the closing quote is missing, Python's regex
engine tries every way of cutting the text into runs before it gives up, so each added
character doubles the time and an unterminated ``"`` in a file hangs every tool. The same
language without the inner ``+`` (one character or one escape per repetition) matches the
same literals and fails in time linear in the input.

Importing ``xrelay.dialects`` installs it (every xrelay entry point that parses MLIR builds
its context there), so the fix reaches relay-opt, relay-run, ``xrelay.runtime.load`` and the
Python API alike. The upstream pattern is checked first, so a newer xDSL that changes it is
left alone.
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

_UPSTREAM = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
"""One character or one escape per repetition: no two ways to match the same text."""


def install() -> None:
    """Replace the lexer's pattern when it is the backtracking one of xDSL 0.74."""
    current = MLIRLexer._unescaped_characters_regex
    if current.pattern == _UPSTREAM:
        MLIRLexer._unescaped_characters_regex = STRING_LITERAL


install()
