"""ONNX's ``onnx/defs/text`` operators on tensors of strings: ``StringConcat``, ``StringSplit``,
``RegexFullMatch``, ``StringNormalizer``, as the ``relay.string.*`` ops of
dialects/relay/strings.py (docs/design.md, decision 11). TVM's frontend imports none of them;
only the reference interpreter runs them (``xrelay.build`` refuses them by name).
"""

from __future__ import annotations

from typing import Any

from xrelay.dialects.relay.strings import (
    StringConcatOp,
    StringNormalizeOp,
    StringRegexFullMatchOp,
    StringSplitOp,
)
from xrelay.frontends.onnx.compose import string_op
from xrelay.frontends.onnx.registry import converter


def _text(v: Any) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


@converter("StringConcat")
def _string_concat(im, node):
    return string_op(im, node, StringConcatOp, node.inputs[:2])


@converter("RegexFullMatch")
def _regex_full_match(im, node):
    import re

    pattern = _text(node.attrs.get("pattern", ""))
    try:
        re.compile(pattern)
    except re.error as e:
        raise node.fail(f"its pattern {pattern!r} is not a regular expression Python's re reads: {e}") from None
    return string_op(im, node, StringRegexFullMatchOp, node.inputs[:1], pattern)


@converter("StringSplit")
def _string_split(im, node):
    delimiter = node.attrs.get("delimiter")
    maxsplit = node.attrs.get("maxsplit")
    return string_op(
        im, node, StringSplitOp, node.inputs[:1], None if delimiter is None else _text(delimiter),
        None if maxsplit is None else int(maxsplit),
    )


@converter("StringNormalizer")
def _string_normalizer(im, node):
    action = _text(node.attrs.get("case_change_action", "NONE"))
    if action not in StringNormalizeOp.ACTIONS:
        raise node.fail(f"case_change_action must be one of {', '.join(StringNormalizeOp.ACTIONS)}, got {action!r}")
    x = node.inputs[0]
    if im.is_string(x):
        shape = im.shape_of(x)
        if not (len(shape) == 1 or (len(shape) == 2 and shape[0] == 1)):
            raise node.fail(f"its input must be [C] or [1, C], got {list(shape)}")
    stopwords = [_text(w) for w in node.attrs.get("stopwords", [])]
    sensitive = bool(node.attrs.get("is_case_sensitive", 0))
    return string_op(im, node, StringNormalizeOp, [x], action, sensitive, stopwords)
