"""``tvm.parser``: Relay's text format under the name older TVM scripts import it by
(``from tvm.parser import parse``); the same functions as ``xrelay.relay.parse``,
``fromtext`` and ``parse_expr`` (``xrelay.relay.parser``)."""

from xrelay.relay.parser import RelayTextError, fromtext, parse, parse_expr

__all__ = ["RelayTextError", "fromtext", "parse", "parse_expr"]
