"""``tvm.relay.prelude``: Relay's Prelude is written with algebraic data types (``List``,
``Option``, ``nat``, ``match``), which xrelay does not implement; ``Prelude`` refuses by name."""

from __future__ import annotations

from typing import Any

__all__ = ["Prelude"]


class Prelude:
    """Relay's Prelude (``List``, ``Option``, ``nat`` and their functions). Refused: xrelay's
    Relay has no algebraic data types or ``match``."""

    def __init__(self, mod: Any = None) -> None:
        raise NotImplementedError(
            "relay.prelude.Prelude needs algebraic data types (type definitions, constructors, match), "
            "which xrelay does not implement"
        )
